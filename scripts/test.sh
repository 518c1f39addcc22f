#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
# Test builds read the fault switch the fault-injection tests set; builds to serve never do.
bash scripts/build.sh -DSNAPSTREAM_FAULT_INJECTION=ON "$@"
bash scripts/setup-test-clients.sh
build_dir=${SNAPSTREAM_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
