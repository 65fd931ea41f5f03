#!/usr/bin/env bash
# The PyTorch that the `cuda` feature builds and runs against (burn's LibTorch backend links an
# installed PyTorch's libtorch): makes sure it is installed, then prints the environment for it,
# to be evaluated:   eval "$(scripts/torch-env.sh)"
#
# It installs PyPI's torch wheel (with its CUDA libraries, about 4.6 GB) into a virtual
# environment outside the clone, $SYNCBENCH_TORCH_VENV (default ~/.cache/syncbench/<version>), so
# fresh clones and CI runs reuse it. The version is the GPU machine's PyTorch (2.11, CUDA 13.0):
# a binary links the libtorch it was built against, and the GPU machine runs it against its own.
# tch 0.22 was written for libtorch 2.9, hence LIBTORCH_BYPASS_VERSION_CHECK (the bindings build
# and run against 2.11: the cnn_devices tests compare its gradients with the CPU backend's).
# A GPU machine with PyTorch already installed: TORCH_PYTHON=python3 uses that one instead.
set -euo pipefail
TORCH=${TORCH:-torch==2.11.0}
if [ -n "${TORCH_PYTHON:-}" ]; then
  py=$TORCH_PYTHON
else
  venv=${SYNCBENCH_TORCH_VENV:-$HOME/.cache/syncbench/${TORCH/==/-}}
  py=$venv/bin/python
  if [ ! -x "$py" ] || ! "$py" -c 'import torch' >/dev/null 2>&1; then
    echo "installing $TORCH into $venv (PyPI, about 4.6 GB)" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "$TORCH" numpy >&2
  fi
fi
dir=$("$py" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null) || {
  echo "torch-env: $py cannot import torch" >&2
  exit 1
}
abi=$("$py" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))' 2>/dev/null)
echo "export LIBTORCH='$dir'"
echo "export LIBTORCH_CXX11_ABI=$abi"
echo "export LIBTORCH_BYPASS_VERSION_CHECK=1"
echo "export LD_LIBRARY_PATH='$dir/lib'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
echo "export SYNCBENCH_TORCH_PYTHON='$py'"
