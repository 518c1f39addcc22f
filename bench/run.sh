#!/usr/bin/env bash
# Reproduces the foundation benchmark: prefill/decode tokens/s and the decode roofline share
# for stories260K and for random-weight llama-110m in f32 and q8_0, at 2 threads.
# Models are written to build/models (about 560 MB). Close other work first: the machine's
# noise shows directly in these numbers, so each figure is a median of several runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
binary=build/bin/snapstream
models=${SNAPSTREAM_MODELS:-../shared/models}
threads=${THREADS:-2}
mkdir -p build/models
for dtype in f32 q8_0; do
  out=build/models/llama-110m-$dtype.gguf
  [ -f "$out" ] || "$binary" make-model --shape llama-110m --dtype "$dtype" --out "$out" --log-level warn
done
targets=(build/models/llama-110m-f32.gguf build/models/llama-110m-q8_0.gguf)
[ -f "$models/stories260K.gguf" ] && targets=("$models/stories260K.gguf" "${targets[@]}")
for model in "${targets[@]}"; do
  "$binary" bench --model "$model" --threads "$threads" --repeats 5 --log-level warn "$@"
  echo
done
