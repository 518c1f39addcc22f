#!/usr/bin/env bash
# The HTTP serving benchmark: requests/s and p50/p99 latency of short completions (16 tokens,
# greedy) on stories260K at 1, 8 and 32 concurrent clients, measured with wrk (installed from
# Debian when missing). DURATION sets seconds per level (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bash scripts/build.sh
ensure_wrk
models=${SNAPSTREAM_MODELS:-../shared/models}
duration=${DURATION:-10}
log=$(mktemp)
trap 'stop_server; rm -f "$log"' EXIT
start_server "$log" --model "$models/stories260K.gguf" --slots 32

printf '%-12s %12s %10s %10s %8s\n' clients requests/s p50 p99 errors
for clients in 1 8 32; do
  wrk_level "$SERVER_PORT" "$clients" "$duration" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print('%-12s %12.2f %10s %10s %8s' % (d['clients'], d['requests_per_s'], d['p50'], d['p99'], d['errors']))"
done
