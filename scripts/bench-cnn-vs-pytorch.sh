#!/usr/bin/env bash
# The CNN workloads' training step against PyTorch on the same architecture, batch and image
# size, on this machine's CPU, measured in one run, alternating: images/s of forward + backward
# + SGD step for each quick model (and one model at the papers' width). Ours: `syncbench
# profile` (burn's pure-Rust backend, one thread); PyTorch with 1 thread (like for like) and with
# every core. PyTorch is the one the `cuda` feature builds against (scripts/torch-env.sh: PyPI's
# torch 2.11 in ~/.cache/syncbench, about 4.6 GB with its CUDA libraries; only the CPU is used
# here). Writes results/bench/cnn-vs-pytorch.{csv,md}. On a GPU: scripts/gpu-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
# The Makefile's build (`make build`), so that a `make reproduce-all` before it is reused: a -p
# build unifies features differently and would compile burn and bench-core again.
cargo build --release -q --workspace --bins --features experiments/cnn
torch_env=$(scripts/torch-env.sh)
eval "$torch_env"
mkdir -p results/bench
"$SYNCBENCH_TORCH_PYTHON" scripts/bench_cnn_torch.py "$ROUNDS"
