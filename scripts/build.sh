#!/usr/bin/env bash
# Configures and builds snapstream (Release) into build/, after installing what is missing.
# Extra arguments go to CMake's configure step, e.g. -DSNAPSTREAM_SANITIZE=address; they come
# after the defaults here, so they win (scripts/test.sh turns fault injection on for its build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir=${SNAPSTREAM_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSNAPSTREAM_FAULT_INJECTION=OFF "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
