#!/usr/bin/env bash
# Builds the libFuzzer targets in the ASan+UBSan tree (build-address/, clang;
# scripts/sanitizer-tree.sh) and runs one, or all, for a time each, starting from the seed
# corpus in tests/fuzz/corpus/TARGET. New inputs that reach new code go to
# build-address/corpus/TARGET (the committed seeds stay as they are); a crash is written to
# build-address/crashes/, its stack printed, and fails the run.
# Usage: bash scripts/fuzz.sh TARGET|all SECONDS
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET|all SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET|all SECONDS}
build_dir=build-address
targets=$(sed -n 's/^set(SNAPSTREAM_FUZZ_TARGETS \(.*\)$/\1/p;/^  fuzz_/p' tests/fuzz/CMakeLists.txt | tr -d ')' | xargs)
[ "$target" = all ] || targets=$target
# shellcheck disable=SC2086
bash scripts/sanitizer-tree.sh address $targets
mkdir -p "$build_dir/crashes"
for t in $targets; do
  corpus=$build_dir/corpus/$t
  mkdir -p "$corpus"
  echo "fuzz: $t for $seconds s" >&2
  # -timeout: one input taking longer than that is reported as a hang.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$build_dir/fuzz/$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$build_dir/crashes/$t-" "$corpus" "tests/fuzz/corpus/$t" 2>&1 | grep -E "^#[0-9]+.*(DONE|pulse)|^stat::|ERROR|SUMMARY|==[0-9]+==|^ +#[0-9]+ |^Base64:" || true
  if compgen -G "$build_dir/crashes/$t-*" >/dev/null; then
    echo "fuzz: $t found inputs that fail: $(ls "$build_dir/crashes/$t-"*)" >&2
    exit 1
  fi
done
