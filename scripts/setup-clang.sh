#!/usr/bin/env bash
# Installs clang and its runtime libraries (libFuzzer and the sanitizers) from Debian when
# missing: the ASan+UBSan tree, where the libFuzzer targets live too, is built with clang.
set -euo pipefail
if command -v clang++ >/dev/null && compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  exit 0
fi
echo "setup: installing clang and libclang-rt-dev" >&2
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends clang libclang-rt-dev >/dev/null
