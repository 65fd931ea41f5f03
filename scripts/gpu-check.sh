#!/usr/bin/env bash
# The GPU check: run on a machine with an NVIDIA GPU and PyTorch, from one prebuilt
# stripped binary (`make gpu-build` writes target/gpu/syncbench: the `cuda` feature, linked
# against PyTorch 2.11's libtorch), without cargo. Into $OUT (default results/gpu-check/):
#   device.txt        the GPU, driver, CUDA, PyTorch and cuDNN versions
#   devices.md        `syncbench devices --compare cuda:0`: every model's gradients and
#                     evaluation on the GPU against the CPU backend (what the #[ignore]d GPU
#                     tests check)
#   profiles/*.toml   `syncbench profile --device cuda:0` for each paper model at the papers'
#                     batch (128) and width: measured time profiles the simulator reads
#   cnn-vs-pytorch-cuda.{csv,md}   images/s of ours against PyTorch eager on the same GPU, in
#                     one run, alternating (scripts/bench_cnn_torch.py)
#   runs/             dssp-table1 as a 4-rank cluster job on the GPU, the workers slowed to
#                     speed ratios 1x, 1x, 1.5x, 2x on their measured steps (ResNet-20,
#                     configs/dssp-table1.cnn-gpu4.quick.toml, so under
#                     runs/config/dssp-table1.cnn-gpu4/), and hop-fig20-21's CNN half,
#                     one seed each (the binary run under the experiments' names:
#                     tools/multicall.rs)
#   REPORT.md         each step's status and seconds
# Usage: scripts/gpu-check.sh [binary]; DEVICE=cuda:1, TORCH_PYTHON=/path/to/python, OUT=,
# BATCH= (128), STEPS= (20 timed steps per profile), ROUNDS= (3 bench rounds), DSSP_CONFIG= (the 4-rank run's
# configuration). A dry run without a GPU, on LibTorch's CPU side: DEVICE=torch-cpu BATCH=4
# STEPS=2 ROUNDS=1 DSSP_CONFIG=<a shortened copy> scripts/gpu-check.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-${BIN:-target/gpu/syncbench}}")
DEVICE=${DEVICE:-cuda:0}
OUT=${OUT:-results/gpu-check}
BATCH=${BATCH:-128}
STEPS=${STEPS:-20}
ROUNDS=${ROUNDS:-3}
DSSP_CONFIG=${DSSP_CONFIG:-experiments/configs/dssp-table1.cnn-gpu4.quick.toml}
PY=${TORCH_PYTHON:-python3}
[ -x "$BIN" ] || { echo "gpu-check: no binary at $BIN (make gpu-build on a machine with cargo)" >&2; exit 2; }
torchlib=$("$PY" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))') || {
  echo "gpu-check: $PY cannot import torch (TORCH_PYTHON=...)" >&2; exit 2; }
export LD_LIBRARY_PATH="$torchlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$OUT/profiles" "$OUT/runs" "$OUT/bin"
for e in dssp-table1 hop-fig20-21; do ln -sf "$BIN" "$OUT/bin/$e"; done
gpu=""
case "$DEVICE" in cuda:[0-9]*)
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader -i "${DEVICE#cuda:}" 2>/dev/null | head -1) ;;
esac
versions=$("$PY" -c 'import torch; print(f"PyTorch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}")')
note="${gpu:-unknown GPU}; $versions; burn 0.22.1 LibTorch backend"
{ echo "device: $DEVICE"; echo "gpu (name, driver, memory): ${gpu:-nvidia-smi not found}"; echo "$versions";
  echo "binary: $BIN ($(stat -c %s "$BIN") bytes)"; echo "host: $(hostname), $(nproc) cores"; } > "$OUT/device.txt"
echo "# GPU check on $(hostname): $note" > "$OUT/REPORT.md"
echo >> "$OUT/REPORT.md"
echo "| step | status | seconds |" >> "$OUT/REPORT.md"
echo "|---|---|---|" >> "$OUT/REPORT.md"
failed=0
step() {  # step NAME LOGFILE COMMAND...
  local name=$1 log=$2 s st; shift 2
  s=$(date +%s)
  echo "== $name" >&2
  if "$@" > "$log" 2>&1; then st=ok; else st="FAILED (exit $?; $log)"; failed=1; fi
  echo "| $name | $st | $(( $(date +%s) - s )) |" >> "$OUT/REPORT.md"
  tail -3 "$log" >&2
}
step "devices --compare $DEVICE" "$OUT/devices.md" "$BIN" devices --compare "$DEVICE"
# model, width, hidden, classes: the papers' networks at batch 128 on 32x32 images.
while read -r model width hidden classes; do
  step "profile $model" "$OUT/profiles/$model.log" "$BIN" profile --model "$model" --width "$width" \
    --hidden "$hidden" --classes "$classes" --batch "$BATCH" --side 32 --warmup 5 --steps "$STEPS" \
    --device "$DEVICE" --device-note "$note" --out "$OUT/profiles/$model-batch$BATCH.toml"
done <<'MODELS'
hop-cnn 64 384 10
alexnet-small 64 384 10
vgg11 64 512 10
resnet20 16 384 10
resnet50 64 384 100
resnet110 16 384 100
MODELS
step "bench: ours vs PyTorch on $DEVICE" "$OUT/bench.log" env DEVICE="$DEVICE" SYNCBENCH="$BIN" OUT="$OUT" \
  BATCH="$BATCH" PAPER_CASES=1 "$PY" scripts/bench_cnn_torch.py "$ROUNDS"
# DSSP's mixed GPUs on one GPU: 4 ranks (launched here) share it, each worker slowed to its
# speed ratio (1x, 1x, 1.5x, 2x) on its measured step; ResNet-20 at width 16, batch 128.
step "dssp-table1, 4 ranks of mixed speed on $DEVICE" "$OUT/runs/dssp-table1.log" "$BIN" launch --ranks 4 -- \
  "$OUT/bin/dssp-table1" --driver cluster --device "$DEVICE" --seeds 1 \
  --config "$DSSP_CONFIG" --out "$OUT/runs"
step "hop-fig20-21 --cnn on $DEVICE" "$OUT/runs/hop-fig20-21-cnn.log" "$OUT/bin/hop-fig20-21" --seeds 1 \
  --cnn --device "$DEVICE" --out "$OUT/runs"
{ echo; echo "## devices"; cat "$OUT/devices.md"; echo; echo "## ours vs PyTorch";
  cat "$OUT"/cnn-vs-pytorch-*.md 2>/dev/null || echo "(no table)"; } >> "$OUT/REPORT.md"
echo "report: $OUT/REPORT.md" >&2
exit $failed
