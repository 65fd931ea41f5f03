#!/usr/bin/env bash
# LIBSVM reader vs scikit-learn's load_svmlight_file on the same RCV1-shaped file (20,000 rows,
# 75 non-zeros per row, 47,236 features), measured in one run, best of N each, alternating.
# Installs scikit-learn into target/bench-venv with pip. Writes results/bench/libsvm-vs-sklearn.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
cargo build --release -q -p experiments --bin syncbench
VENV=target/bench-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q scikit-learn
fi
mkdir -p results/bench
FILE=target/bench-rcv1-20k.svm
target/release/syncbench datasets twin rcv1-train --rows 20000 --nnz-per-row 75 --seed 1 --out "$FILE"
"$VENV/bin/python" - "$FILE" "$ROUNDS" <<'PY'
import json, subprocess, sys, time, platform
import numpy as np, sklearn
from sklearn.datasets import load_svmlight_file
path, rounds = sys.argv[1], int(sys.argv[2])
ours, theirs = [], []
for _ in range(rounds):
    out = subprocess.run(["target/release/syncbench", "datasets", "inspect", "--json",
                          "--features", "47236", path], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    ours.append(r["parse_seconds"])
    t = time.perf_counter()
    X, y = load_svmlight_file(path, n_features=47236)
    X.indices = X.indices.astype(np.int32)  # 32-bit indices, as our reader holds them, before use
    theirs.append(time.perf_counter() - t)
    assert X.shape[0] == r["rows"] and X.nnz == r["nnz"], (X.shape, X.nnz, r)
res = {
    "file": path, "rows": r["rows"], "nnz": r["nnz"], "bytes": __import__("os").path.getsize(path),
    "rounds": rounds, "syncbench_seconds_best": min(ours), "sklearn_seconds_best": min(theirs),
    "syncbench_seconds": ours, "sklearn_seconds": theirs,
    "ratio_best": min(theirs) / min(ours), "sklearn_version": sklearn.__version__,
    "python": platform.python_version(), "host": platform.node(),
}
json.dump(res, open("results/bench/libsvm-vs-sklearn.json", "w"), indent=2)
print(f"syncbench {min(ours):.4f} s, scikit-learn {min(theirs):.4f} s (best of {rounds}): "
      f"{res['ratio_best']:.1f}x faster; {res['bytes']/1e6:.1f} MB, {r['nnz']} non-zeros")
PY
