#!/usr/bin/env bash
# The HTTP serving benchmark: requests/s and p50/p99 latency of short completions (16 tokens,
# greedy) on stories260K at 1, 8 and 32 concurrent clients, measured with wrk (installed from
# Debian when missing). DURATION sets seconds per level (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
if ! command -v wrk >/dev/null; then
  echo "bench: installing wrk" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends wrk >/dev/null
fi
models=${SNAPSTREAM_MODELS:-../shared/models}
duration=${DURATION:-10}
log=$(mktemp)
build/bin/snapstream serve --model "$models/stories260K.gguf" --port 0 --slots 32 --log-level info 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 200); do grep -q "serving '" "$log" && break; sleep 0.05; done
port=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log" | head -1)

printf '%-12s %12s %10s %10s %8s\n' clients requests/s p50 p99 errors
for clients in 1 8 32; do
  threads=$((clients < 2 ? clients : 2))
  out=$(wrk -t "$threads" -c "$clients" -d "${duration}s" --latency -s bench/completion.lua "http://127.0.0.1:$port/v1/completions")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {print $NF} /Socket errors/ {print "socket:" $0}' <<<"$out")
  printf '%-12s %12s %10s %10s %8s\n' "$clients" "$rps" "$p50" "$p99" "${errors:-0}"
done
