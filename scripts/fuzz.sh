#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs one, or all, for a time each,
# starting from the seed corpus in tests/fuzz/corpus/TARGET. New inputs that reach new code go
# to build-fuzz/corpus/TARGET (the committed seeds stay as they are); a crash is written to
# build-fuzz/crashes/ and fails the run.
# Usage: bash scripts/fuzz.sh TARGET|all SECONDS
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET|all SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET|all SECONDS}
bash scripts/setup.sh
# clang and its runtime libraries (libFuzzer is one of them), from Debian.
if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "fuzz: installing clang and libclang-rt-dev" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends clang libclang-rt-dev >/dev/null
fi
build_dir=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSNAPSTREAM_FUZZ=ON \
  -DSNAPSTREAM_BUILD_TESTS=OFF >/dev/null
targets=$(sed -n 's/^set(SNAPSTREAM_FUZZ_TARGETS \(.*\)$/\1/p;/^  fuzz_/p' tests/fuzz/CMakeLists.txt | tr -d ')' | xargs)
[ "$target" = all ] || targets=$target
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "$(nproc)" --target $targets
mkdir -p "$build_dir/crashes"
for t in $targets; do
  corpus=$build_dir/corpus/$t
  mkdir -p "$corpus"
  echo "fuzz: $t for $seconds s" >&2
  # -timeout: one input taking longer than that is reported as a hang.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    "$build_dir/fuzz/$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$build_dir/crashes/$t-" "$corpus" "tests/fuzz/corpus/$t" 2>&1 | grep -E "^#[0-9]+.*(DONE|pulse)|^stat::|ERROR|SUMMARY|==[0-9]+==" || true
  if compgen -G "$build_dir/crashes/$t-*" >/dev/null; then
    echo "fuzz: $t found inputs that fail: $(ls "$build_dir/crashes/$t-"*)" >&2
    exit 1
  fi
done
