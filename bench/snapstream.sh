#!/usr/bin/env bash
# The SnapStream serving benchmark: llama-110m (random f32 weights) with long prompts, full
# cache against C = 1024, at 1 and 16 concurrent sequences; then aggregate decode at 1, 4 and
# 16 concurrent short requests on stories260K and llama-110m. Prints one JSON line per run, then
# a summary against the goals: measured speedups next to the ones the bytes per step predict.
# llama-110m's context is 8192: 4096-token prompts leave room for the 256 decoded tokens.
# A model file made from an older config of a different context is remade.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
binary=build/bin/snapstream
models=${SNAPSTREAM_MODELS:-../shared/models}
mkdir -p build/models
model=build/models/llama-110m-f32.gguf
if [ -f "$model" ] && ! "$binary" info "$model" --log-level warn | grep -q 'context.*8192'; then rm "$model"; fi
[ -f "$model" ] || "$binary" make-model --shape llama-110m --dtype f32 --out "$model" --log-level warn

results=$(mktemp)
trap 'rm -f "$results"' EXIT
run() {  # label, then bench arguments
  local label=$1
  shift
  "$binary" bench --json --log-level warn --bandwidth-mib 0 "$@" |
    python3 -c "import json,sys; d=json.load(sys.stdin); d['label']='$label'; print(json.dumps(d))" | tee -a "$results"
}

for concurrency in 1 16; do
  run "long full-cache x$concurrency" --model "$model" --concurrency "$concurrency" --prompt-tokens 4096 \
    --decode-tokens 256 --repeats 1 --full-cache
  run "long C=1024 x$concurrency" --model "$model" --concurrency "$concurrency" --prompt-tokens 4096 \
    --decode-tokens 256 --repeats 1 --kv-capacity 1024
done
for concurrency in 1 4 16; do
  [ -f "$models/stories260K.gguf" ] &&
    run "short stories260K x$concurrency" --model "$models/stories260K.gguf" --concurrency "$concurrency" \
      --prompt-tokens 32 --decode-tokens 128 --repeats 3
  run "short llama-110m x$concurrency" --model "$model" --concurrency "$concurrency" --prompt-tokens 32 \
    --decode-tokens 128 --repeats 3
done

python3 bench/snapstream_summary.py "$results"
