#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through CTest; then, unless
# SNAPSTREAM_MPI_TESTS=0, the MPI variant's distributed tests (scripts/test-mpi.sh); then, unless
# SNAPSTREAM_SANITIZERS=0, the whole suite again under ASan+UBSan and under TSan
# (scripts/test-sanitizers.sh); then every libFuzzer target for SNAPSTREAM_FUZZ_SECONDS each
# (default 30; 0 skips them) from its committed seeds (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Test builds read the fault switch the fault-injection tests set; builds to serve never do.
bash scripts/build.sh -DSNAPSTREAM_FAULT_INJECTION=ON "$@"
bash scripts/setup-test-clients.sh
build_dir=${SNAPSTREAM_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
if [ "${SNAPSTREAM_MPI_TESTS:-1}" != 0 ]; then
  bash scripts/test-mpi.sh
fi
if [ "${SNAPSTREAM_SANITIZERS:-1}" != 0 ]; then
  bash scripts/test-sanitizers.sh
fi
fuzz_seconds=${SNAPSTREAM_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" != 0 ]; then
  bash scripts/fuzz.sh all "$fuzz_seconds"
fi
