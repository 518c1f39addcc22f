#!/usr/bin/env bash
# Trains the committed retrieval model from nothing: writes each phase's instances with
# `snapstream tasks`, trains (each phase resumes from its checkpoint in RUN_DIR) and converts the
# result to one GGUF file. Usage: bash training/recipe.sh [RUN_DIR]  (default: training-run)
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=${1:-training-run}
models=${SNAPSTREAM_MODELS:-../shared/models}
snapstream=build/bin/snapstream
bash training/setup.sh >/dev/null
[ -x "$snapstream" ] || bash scripts/build.sh
mkdir -p "$run_dir/base"

# Every training haystack is 1500 stories260K samples with seed 11; the held-out sets sample their
# own with seed 12, so they are judged on text the model never saw.
tasks() {  # OUT TASKS LENGTHS COUNT [SEED]
  [ -s "$run_dir/$1" ] && return 0
  "$snapstream" --log-level warn tasks --model "$models/stories260K.gguf" --tasks "$2" --lengths "$3" --count "$4" \
    --generate 1500 --seed "${5:-11}" --out "$run_dir/$1.tmp"
  mv "$run_dir/$1.tmp" "$run_dir/$1"
}
convert() {  # DIR: DIR/model.bin as DIR/retrieval.gguf
  "$snapstream" --log-level warn convert --model "$1/model.bin" --tokenizer "$models/tok512.bin" \
    --name retrieval-tok512 --out "$1/retrieval.gguf"
}

# Phase 1: a curriculum on niah and multivalue, the two tasks whose answer needs no name told
# apart from others (training/README.md says why). Stage 1 has almost no haystack: each task at
# about its shortest, where attention over few positions finds the copying circuit in a few
# hundred steps (at 256 tokens and beyond it did not within 800). Later stages lengthen the
# haystack up to the training length, 1024.
tasks base/short-niah.jsonl niah 96 3000
tasks base/short-multivalue.jsonl multivalue 192 3000
[ -s "$run_dir/base/stage1.jsonl" ] || cat "$run_dir"/base/short-*.jsonl > "$run_dir/base/stage1.jsonl"
trained=niah,multivalue
tasks base/stage2.jsonl $trained 256,384 6000
tasks base/stage3.jsonl $trained 512,768 6000
tasks base/stage4.jsonl $trained 512,1024 6000
tasks base/held-out.jsonl $trained 1024 200 12
if [ ! -s "$run_dir/base/retrieval.gguf" ]; then
  /usr/bin/python3 training/train_retrieval.py --out-dir "$run_dir/base" --held-out "$run_dir/base/held-out.jsonl" \
    --stage "$run_dir/base/stage1.jsonl:500" --stage "$run_dir/base/stage2.jsonl:400" \
    --stage "$run_dir/base/stage3.jsonl:400" --stage "$run_dir/base/stage4.jsonl:800" \
    --haystack-weight 0 --eval-every 100 --seed 1
  convert "$run_dir/base"
fi

# Phase 2: niah alone at the lengths it is evaluated at, from phase 1's weights at half the
# learning rate. Phase 1 ended with held-out niah still climbing as its learning rate reached zero.
tasks niah.jsonl niah 512,768,1024 6000
tasks held-out.jsonl niah 1024 100 12
/usr/bin/python3 training/train_retrieval.py --out-dir "$run_dir" --held-out "$run_dir/held-out.jsonl" \
  --init-from "$run_dir/base/retrieval.gguf" --stage "$run_dir/niah.jsonl:1200" \
  --haystack-weight 0 --eval-every 100 --seed 1 --lr 1e-3 --warmup 50
convert "$run_dir"
sha256sum "$run_dir/retrieval.gguf"
