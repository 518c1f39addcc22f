#!/usr/bin/env bash
# Regenerates docs/eval/: SnapStream against StreamingLLM and random selection on the real test
# model (stories260K), L = 384, M = 128, budgets 192..32, with window, pooling and positions
# variants, on 120 stories the model samples itself. Builds first; a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
models=${SNAPSTREAM_MODELS:-../shared/models}
exec build/bin/snapstream eval --model "$models/stories260K.gguf" --generate 120 --seed 1 \
  --prompt-len 384 --continue-len 128 --budgets 192,128,96,64,32 \
  --windows 32,8,16 --pool-kernels 7,1,3 --positions original,reindexed \
  --out docs/eval --report-command "bash scripts/eval-report.sh" "$@"
