#!/usr/bin/env bash
# Installs the Debian packages snapstream needs to build and test, and any more named as
# arguments (scripts/test-mpi.sh adds Open MPI). Idempotent: it prints nothing and touches
# nothing when every package is already present.
set -euo pipefail

packages=(
  build-essential cmake git
  libboost-dev nlohmann-json3-dev libspdlog-dev libeigen3-dev catch2 prometheus-cpp-dev libcli11-dev libicu-dev libtomlplusplus-dev
  curl gnuplot-nox
  "$@"
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
