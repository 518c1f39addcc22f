#!/usr/bin/env bash
# Builds the MPI variant (-DSNAPSTREAM_MPI=ON, Open MPI from Debian) in build-mpi/ and runs its
# distributed tests: tensor-parallel shards as 2 and 4 MPI ranks under mpirun. scripts/test.sh
# runs it after the plain suite; SNAPSTREAM_MPI_TESTS=0 there skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh libopenmpi-dev openmpi-bin
build_dir=build-mpi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSNAPSTREAM_MPI=ON >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target test_distributed test_distributed_cli
ctest --test-dir "$build_dir" --output-on-failure -R "ranks"
