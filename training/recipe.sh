#!/usr/bin/env bash
# Makes the committed retrieval model: writes the instances of its last three runs with `snapstream
# tasks`, trains them one after the other from the run before (attempts/five-tasks-fresh.gguf,
# committed; the runs before that, from random weights, are told in training/README.md) and
# converts the result to one GGUF file. Each run resumes from its checkpoint in RUN_DIR.
# Usage: bash training/recipe.sh [RUN_DIR]  (default: training-run)
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=${1:-training-run}
models=${SNAPSTREAM_MODELS:-../shared/models}
snapstream=build/bin/snapstream
bash training/setup.sh >/dev/null
[ -x "$snapstream" ] || bash scripts/build.sh
mkdir -p "$run_dir"

# Every haystack is 1500 stories260K samples drawn with the instances' seed; the held-out set's
# seed (12) is none of the training sets', so it is judged on text the model never saw.
tasks() {  # OUT SEED TASKS LENGTHS COUNT [UNITS: every unit asked]
  [ -s "$run_dir/$1" ] && return 0
  local units=()
  [ -n "${6:-}" ] && units=(--units "$6" --ask-every-unit)
  "$snapstream" --log-level warn tasks --model "$models/stories260K.gguf" --tasks "$3" --lengths "$4" --count "$5" \
    "${units[@]}" --generate 1500 --seed "$2" --out "$run_dir/$1.tmp"
  mv "$run_dir/$1.tmp" "$run_dir/$1"
}
tasks vt.jsonl 21 vt 768,1024 1500 2
tasks multikey.jsonl 11 multikey 768,1024 1200 4
tasks multiquery.jsonl 11 multiquery 768,1024 1200 4
tasks niah.jsonl 11 niah 768,1024 800
tasks multivalue.jsonl 23 multivalue 768,1024 4000 2
tasks held-out.jsonl 12 niah,multikey,multiquery,multivalue,vt 1024 250
stage() {  # OUT FILES...: the instances of a run, in the order given
  local out=$1
  shift
  [ -s "$run_dir/$out" ] && return 0
  (cd "$run_dir" && cat "$@" > "$out.tmp" && mv "$out.tmp" "$out")
}
train() {  # DIR INIT STAGE STEPS LR WARMUP: one run, converted to DIR/retrieval-tok512.gguf
  mkdir -p "$run_dir/$1"
  if [ ! -s "$run_dir/$1/retrieval-tok512.gguf" ]; then
    /usr/bin/python3 training/train_retrieval.py --out-dir "$run_dir/$1" --held-out "$run_dir/held-out.jsonl" \
      --init-from "$2" --stage "$run_dir/$3:$4" --haystack-weight 0 --eval-every 100 --seed 1 --lr "$5" --warmup "$6"
    "$snapstream" --log-level warn convert --model "$run_dir/$1/model.bin" --tokenizer "$models/tok512.bin" \
      --name retrieval-tok512 --out "$run_dir/$1/retrieval-tok512.gguf"
  fi
}

# Multivalue by ordinal: 46% of the instances multivalue.
stage ordinal.jsonl vt.jsonl multikey.jsonl multiquery.jsonl niah.jsonl multivalue.jsonl
train ordinal training/attempts/five-tasks-fresh.gguf ordinal.jsonl 800 1e-3 30
# Then fresh vt instances (46%) at a third of the learning rate, the rest kept so none is forgotten.
tasks vt-fresh.jsonl 24 vt 768,1024 2500 2
[ -s "$run_dir/multivalue-kept.jsonl" ] || head -n 1500 "$run_dir/multivalue.jsonl" > "$run_dir/multivalue-kept.jsonl"
stage vt-fresh-stage.jsonl vt-fresh.jsonl vt.jsonl multikey.jsonl multiquery.jsonl niah.jsonl multivalue-kept.jsonl
train vt-fresh "$run_dir/ordinal/retrieval-tok512.gguf" vt-fresh-stage.jsonl 300 3e-4 20
# Then more vt (58%) at half the first run's rate: a third vt set before all of the above.
tasks vt-more.jsonl 25 vt 768,1024 2500 2
stage vt-more-stage.jsonl vt-more.jsonl vt-fresh.jsonl vt.jsonl multikey.jsonl multiquery.jsonl niah.jsonl \
  multivalue-kept.jsonl
train final "$run_dir/vt-fresh/retrieval-tok512.gguf" vt-more-stage.jsonl 500 5e-4 20
sha256sum "$run_dir/final/retrieval-tok512.gguf"
