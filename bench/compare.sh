#!/usr/bin/env bash
# One run for the quantised-speed comparison: engine decode at 1 and 16 sequences and prefill of
# 512 tokens for llama-110m (random weights) in f32, f16, Q8_0 and Q4_K; decode tokens/s through
# the HTTP server at 1 and 16 clients for Q8_0, Q4_K and f32; stories260K at 1 and 16 sequences and
# its requests/s at 1 and 8 clients (wrk, from Debian). Prints one JSON line per run, then a
# table next to llama.cpp's figures (configs/bench/llama-cpp-reference.json) and the goals.
# ROUNDS sets how many times each engine configuration and server level runs (default 3; the
# table shows the best round, a goal the median round's ratio) and SECONDS_PER_LEVEL each server
# level's length (default 15). Models go to build/models (about
# 1.2 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
binary=build/bin/snapstream
models=${SNAPSTREAM_MODELS:-../shared/models}
seconds=${SECONDS_PER_LEVEL:-15}
rounds=${ROUNDS:-3}
mkdir -p build/models
source bench/lib.sh
ensure_wrk
results=$(mktemp)
log=$(mktemp)
trap 'stop_server; rm -f "$results" "$log"' EXIT

record() {  # label, then a command printing one JSON object
  local label=$1
  shift
  "$@" | python3 -c "import json,sys; d=json.load(sys.stdin); d['label']='$label'; print(json.dumps(d))" | tee -a "$results"
}
engine() {  # label, model, then bench arguments
  local label=$1 model=$2
  shift 2
  record "$label" "$binary" bench --json --log-level warn --model "$model" --repeats 3 --bandwidth-mib 256 "$@"
}
decode_levels() {  # name, model, client counts...: 128-token completions, tokens/s from their usage
  local name=$1 model=$2
  shift 2
  start_server "$log" --model "$model" --slots 16
  for clients in "$@"; do
    record "$name server x$clients" python3 bench/server_load.py --port "$SERVER_PORT" --clients "$clients" \
      --seconds "$seconds" --max-tokens 128
  done
  stop_server
}

for dtype in f32 f16 q8_0 q4_k; do
  model=build/models/llama-110m-$dtype.gguf
  [ -f "$model" ] || "$binary" make-model --shape llama-110m --dtype "$dtype" --out "$model" --log-level warn
done
# Rounds over every configuration in turn: other work on a shared machine only ever slows a run
# down, so the summary takes each configuration's best round, measured close in time to the
# configurations it is compared with.
for round in $(seq "$rounds"); do
  echo "compare: engine round $round of $rounds" >&2
  for dtype in f32 f16 q8_0 q4_k; do
    model=build/models/llama-110m-$dtype.gguf
    engine "$dtype x1" "$model" --concurrency 1
    engine "$dtype x16" "$model" --concurrency 16
    # The cache is f16 by default, as llama.cpp's; batched decode over an f32 one, for reference.
    case $dtype in q8_0 | q4_k) engine "$dtype x16 f32 cache" "$model" --concurrency 16 --kv-dtype f32 ;; esac
    engine "$dtype prefill 512" "$model" --prompt-tokens 512 --decode-tokens 1
  done
  engine "stories260K x1" "$models/stories260K.gguf" --concurrency 1
  engine "stories260K x16" "$models/stories260K.gguf" --concurrency 16
done
# The server levels go in rounds too: a ratio of two levels is taken within a round.
for round in $(seq "$rounds"); do
  echo "compare: server round $round of $rounds" >&2
  decode_levels q8_0 build/models/llama-110m-q8_0.gguf 1 16
  decode_levels q4_k build/models/llama-110m-q4_k.gguf 1 16
  decode_levels f32 build/models/llama-110m-f32.gguf 1 16
  # Short requests come from wrk: a Python client would spend as much CPU as the server it measures.
  start_server "$log" --model "$models/stories260K.gguf" --slots 16
  for clients in 1 8; do record "stories260K server x$clients" wrk_level "$SERVER_PORT" "$clients" "$seconds"; done
  stop_server
done
python3 bench/compare_summary.py "$results" configs/bench/llama-cpp-reference.json
