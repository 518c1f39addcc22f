#!/usr/bin/env bash
# Quantised weights: prefill and decode tokens/s and the decode roofline share of random-weight
# llama-110m written as Q8_0, Q4_K and llama.cpp's Q4_K_M mix, at 1 and 16 concurrent sequences
# (256-token prompts, 128 decoded tokens, median of 3). Prints one JSON line per run, then a
# table and the Q4_K/Q8_0 decode ratio at one sequence (fewer bytes per token should win).
# Models go to build/models (about 250 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
binary=build/bin/snapstream
mkdir -p build/models
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for dtype in q8_0 q4_k q4_k_m; do
  model=build/models/llama-110m-$dtype.gguf
  [ -f "$model" ] || "$binary" make-model --shape llama-110m --dtype "$dtype" --out "$model" --log-level warn
  for concurrency in 1 16; do
    "$binary" bench --json --log-level warn --model "$model" --concurrency "$concurrency" --prompt-tokens 256 \
      --decode-tokens 128 --repeats 3 --bandwidth-mib 256 |
      python3 -c "import json,sys; d=json.load(sys.stdin); d['dtype']='$dtype'; print(json.dumps(d))" | tee -a "$results"
  done
done
python3 - "$results" <<'SUMMARY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
print(f"\n{'weights':8} {'seqs':>4} {'prefill tok/s':>14} {'decode tok/s':>13} {'MB/step':>8} {'roofline':>9}")
for r in runs:
    print(f"{r['dtype']:8} {r['concurrency']:>4} {r['prefill_tokens_per_s']:>14.1f} {r['decode_tokens_per_s']:>13.1f} "
          f"{r['weight_bytes_per_step'] / 1e6:>8.1f} {r['decode_roofline_share']:>9.0%}")
decode = {(r['dtype'], r['concurrency']): r['decode_tokens_per_s'] for r in runs}
print(f"\nQ4_K / Q8_0 decode at one sequence: {decode[('q4_k', 1)] / decode[('q8_0', 1)]:.2f}x")
SUMMARY
