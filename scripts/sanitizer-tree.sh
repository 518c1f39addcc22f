#!/usr/bin/env bash
# Configures and builds one sanitizer tree, build-SANITIZER/, with the fault switch on:
#   address  ASan+UBSan with clang, the libFuzzer targets of tests/fuzz built in the same tree
#            (one instrumented build serves the suite and the fuzzers);
#   thread   TSan with GCC.
# Both at -O2 with line tables only (-g1): fast enough to run the suite, quick to compile, and
# every report still names file and line. Extra arguments: CMake build targets (default: all).
# Usage: bash scripts/sanitizer-tree.sh address|thread [TARGET ...]
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:?usage: scripts/sanitizer-tree.sh address|thread [TARGET ...]}
shift
bash scripts/setup.sh
build_dir=build-$sanitizer
options=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
         -DSNAPSTREAM_FAULT_INJECTION=ON -DSNAPSTREAM_SANITIZE="$sanitizer")
case $sanitizer in
  address)
    bash scripts/setup-clang.sh
    export CC=clang CXX=clang++
    options+=(-DSNAPSTREAM_FUZZ=ON) ;;
  thread) ;;
  *) echo "sanitizer-tree: expected address or thread, not '$sanitizer'" >&2; exit 2 ;;
esac
cmake -S . -B "$build_dir" "${options[@]}" >/dev/null
targets=()
for target in "$@"; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
