#!/usr/bin/env bash
# The CNN workloads' training step against PyTorch on the same architecture, batch and image
# size, on this machine's CPU, measured in one run, alternating: images/s of forward + backward
# + SGD step for each quick model (and one model at the papers' width). Ours: `syncbench
# profile` (burn's pure-Rust backend, one thread); PyTorch with 1 thread (like for like) and with
# every core. Installs torch into target/bench-cnn-venv with pip (PyPI's Linux wheel brings its
# CUDA libraries: about 5 GB; only the CPU is used). Writes results/bench/cnn-vs-pytorch.{csv,md}.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
TORCH=${TORCH:-torch==2.15.0}
cargo build --release -q -p experiments --features cnn --bin syncbench
VENV=target/bench-cnn-venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "$TORCH"
fi
mkdir -p results/bench
"$VENV/bin/python" scripts/bench_cnn_torch.py "$ROUNDS"
