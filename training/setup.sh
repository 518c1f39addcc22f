#!/usr/bin/env bash
# Installs what training/train_retrieval.py needs from Debian: PyTorch (CPU) and OpenBLAS.
# Debian's PyTorch calls the system BLAS; without OpenBLAS that is the reference BLAS, about
# 20x slower on matrix products. Not needed to build, test or serve.
set -euo pipefail
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
if ! /usr/bin/python3 -c "import torch" 2>/dev/null || ! dpkg -s libopenblas0-pthread >/dev/null 2>&1; then
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends python3-torch libopenblas0-pthread
fi
/usr/bin/python3 -c "import torch; print('torch', torch.__version__)"
