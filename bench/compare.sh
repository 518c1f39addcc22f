#!/usr/bin/env bash
# One run for the quantised-speed comparison: engine decode at 1 and 16 sequences and prefill of
# 512 tokens for llama-110m (random weights) in f32, f16, Q8_0 and Q4_K; decode tokens/s through
# the HTTP server at 1 and 16 clients for Q8_0 and f32; stories260K at 1 and 16 sequences and its
# requests/s at 1 and 8 clients. Prints one JSON line per run, then a table next to llama.cpp's
# figures (configs/bench/llama-cpp-reference.json) and the goals. SECONDS_PER_LEVEL sets each
# server level's length (default 15). Models go to build/models (about 1.2 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
binary=build/bin/snapstream
models=${SNAPSTREAM_MODELS:-../shared/models}
seconds=${SECONDS_PER_LEVEL:-15}
mkdir -p build/models
results=$(mktemp)
log=$(mktemp)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -f "$results" "$log"
}
trap cleanup EXIT

record() {  # label, then a command printing one JSON object
  local label=$1
  shift
  "$@" | python3 -c "import json,sys; d=json.load(sys.stdin); d['label']='$label'; print(json.dumps(d))" | tee -a "$results"
}
engine() {  # label, model, then bench arguments
  local label=$1 model=$2
  shift 2
  record "$label" "$binary" bench --json --log-level warn --model "$model" --repeats 5 --bandwidth-mib 256 "$@"
}
serve_levels() {  # name, model, max tokens, client counts...
  local name=$1 model=$2 max_tokens=$3
  shift 3
  "$binary" serve --model "$model" --port 0 --slots 16 --log-level info 2>"$log" &
  server=$!
  local port=
  for _ in $(seq 600); do
    port=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "compare: the server for $model did not start" >&2; cat "$log" >&2; exit 1; }
  for clients in "$@"; do
    record "$name server x$clients" python3 bench/server_load.py --port "$port" --clients "$clients" \
      --seconds "$seconds" --max-tokens "$max_tokens"
  done
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=
}

for dtype in f32 f16 q8_0 q4_k; do
  model=build/models/llama-110m-$dtype.gguf
  [ -f "$model" ] || "$binary" make-model --shape llama-110m --dtype "$dtype" --out "$model" --log-level warn
  engine "$dtype x1" "$model" --concurrency 1
  engine "$dtype x16" "$model" --concurrency 16
  engine "$dtype prefill 512" "$model" --prompt-tokens 512 --decode-tokens 1
done
engine "stories260K x1" "$models/stories260K.gguf" --concurrency 1
engine "stories260K x16" "$models/stories260K.gguf" --concurrency 16
serve_levels q8_0 build/models/llama-110m-q8_0.gguf 128 1 16
serve_levels f32 build/models/llama-110m-f32.gguf 128 1 16
serve_levels stories260K "$models/stories260K.gguf" 16 1 8
python3 bench/compare_summary.py "$results" configs/bench/llama-cpp-reference.json
