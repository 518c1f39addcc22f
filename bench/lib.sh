# Helpers the bench scripts source (after `cd` to the repository root): wrk from Debian, a
# server started on a free port, and one wrk level as JSON.

# Installs wrk from Debian when it is missing.
ensure_wrk() {
  command -v wrk >/dev/null && return
  echo "bench: installing wrk" >&2
  local sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends wrk >/dev/null
}

# start_server LOG SERVE-ARGS...: runs `snapstream serve` ($SNAPSTREAM_BINARY, default
# build/bin/snapstream) on a free port in the background and waits until it serves; sets
# SERVER_PID and SERVER_PORT.
start_server() {
  local log=$1
  shift
  "${SNAPSTREAM_BINARY:-build/bin/snapstream}" serve --port 0 --log-level info "$@" 2>"$log" &
  SERVER_PID=$!
  for _ in $(seq 1200); do grep -q "serving '" "$log" && break; sleep 0.05; done
  SERVER_PORT=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log" | head -1)
  if [ -z "$SERVER_PORT" ]; then
    echo "bench: the server did not start:" >&2
    cat "$log" >&2
    return 1
  fi
}

# stop_server: ends the server start_server started, if any.
stop_server() {
  [ -n "${SERVER_PID:-}" ] || return 0
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

# wrk_level PORT CLIENTS SECONDS: short greedy completions (bench/completion.lua) from CLIENTS
# connections; prints {"clients", "requests_per_s", "p50", "p99", "errors"} as one JSON line.
wrk_level() {
  local port=$1 clients=$2 seconds=$3
  local threads=$((clients < 2 ? clients : 2))
  wrk -t "$threads" -c "$clients" -d "${seconds}s" --latency -s bench/completion.lua \
    "http://127.0.0.1:$port/v1/completions" |
    python3 -c '
import json, re, sys
text = sys.stdin.read()
def field(pattern):
    match = re.search(pattern, text, re.M)
    return match.group(1) if match else None
errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", text))
errors += sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
print(json.dumps({"clients": int(sys.argv[1]), "requests_per_s": float(field(r"Requests/sec:\s+([\d.]+)")),
                  "p50": field(r"^\s+50%\s+(\S+)"), "p99": field(r"^\s+99%\s+(\S+)"), "errors": errors}))
' "$clients"
}
