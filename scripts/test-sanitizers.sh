#!/usr/bin/env bash
# Builds and runs the whole test suite under ASan+UBSan (build-address/, clang) and under TSan
# (build-thread/, GCC), each in its own tree (scripts/sanitizer-tree.sh). scripts/test.sh runs it
# after the plain suite.
# Every instrumented process, the servers the end-to-end tests start included, writes its
# reports to one folder; a report there fails the run even when the test that caused it passed.
# Usage: bash scripts/test-sanitizers.sh [address|thread ...]  (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=("$@")
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(address thread)

for sanitizer in "${sanitizers[@]}"; do
  build_dir=build-$sanitizer
  reports=$PWD/$build_dir/sanitizer-reports
  started=$(date +%s)
  bash scripts/sanitizer-tree.sh "$sanitizer"
  built=$(date +%s)
  rm -rf "$reports" && mkdir -p "$reports"
  status=0
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$reports/asan" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$reports/ubsan" \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan" \
    ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" || status=$?
  echo "sanitizer $sanitizer: built in $((built - started)) s, tested in $(($(date +%s) - built)) s" >&2
  if compgen -G "$reports/*" >/dev/null; then
    for report in "$reports"/*; do
      echo "== $report" >&2
      head -c 20000 "$report" >&2
    done
    echo "sanitizer $sanitizer: reports above" >&2
    status=1
  fi
  [ "$status" -eq 0 ] || exit "$status"
done
