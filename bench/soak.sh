#!/usr/bin/env bash
# The soak test: a real server on a random-weight llama-110m written as Q8_0 (made once into
# the build tree's models/), CLIENTS clients of every kind for SECONDS (bench/soak.py says which and what it
# checks), then SIGTERM, which must end the server with exit code 0 within its grace period.
# Prints soak.py's JSON report. Usage: bash bench/soak.sh [SECONDS] [CLIENTS] [soak.py options]
# (default 600 32); CTest runs it for 60 s (tests/e2e/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
seconds=${1:-600}
clients=${2:-32}
# The CTest version runs the binary of its own build tree (SNAPSTREAM_BINARY), sanitizers included.
binary=${SNAPSTREAM_BINARY:-build/bin/snapstream}
export SNAPSTREAM_BINARY=$binary
[ -x "$binary" ] || bash scripts/build.sh
model=$(dirname "$binary")/../models/llama-110m-q8_0.gguf
if [ ! -s "$model" ]; then
  mkdir -p "$(dirname "$model")"
  "$binary" --log-level warn make-model --shape llama-110m --dtype q8_0 --seed 1 --out "$model.tmp"
  mv "$model.tmp" "$model"
fi
log=$(mktemp)
trap 'stop_server; rm -f "$log"' EXIT
# A capacity of 256 makes the long prompts (about 700 tokens) compress.
start_server "$log" --model "$model" --slots 8 --max-waiting 4096 --kv-capacity 256 --grace-period 5
status=0
python3 bench/soak.py --port "$SERVER_PORT" --pid "$SERVER_PID" --seconds "$seconds" --clients "$clients" "${@:3}" || status=$?
kill -TERM "$SERVER_PID"
exit_code=0
wait "$SERVER_PID" || exit_code=$?
SERVER_PID=
if [ "$exit_code" -ne 0 ]; then
  echo "soak: the server exited with $exit_code after SIGTERM; its log:" >&2
  tail -50 "$log" >&2
  status=1
fi
if grep -q -E "critical|AddressSanitizer|ThreadSanitizer|runtime error" "$log"; then
  echo "soak: the server's log reports a fault:" >&2
  grep -E -m 20 "critical|AddressSanitizer|ThreadSanitizer|runtime error" "$log" >&2
  status=1
fi
exit "$status"
