#!/usr/bin/env bash
# Makes figures' layout fixture (figures/tests/fixtures/results/) from a results folder of a
# quick reproduction: for every figure of experiments/figures.tsv, the CSVs figures draws from
# (FILES below: figures/src/figs reads these names, ps-modes' progress.csv one folder down) at
# the top of its folder and of two more seeds' (the min-max bands), thinned to at most 120 rows
# (30 for a seed; every k-th row kept, the header always), claims.csv's header (a figure is
# drawn where it has claims; their rows are the report's, not the figure's), and its
# manifest.json's cnn section alone (what figures/src/learning.rs reads). The figures test (figures/tests/layout.rs) renders every
# figure from it and checks the layout.
#
# Usage: scripts/layout-fixture.sh RESULTS
set -euo pipefail
results=${1:?usage: scripts/layout-fixture.sh RESULTS (the results folder of a quick reproduction)}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/figures/tests/fixtures/results"
[ -d "$results" ] || { echo "no results folder $results" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
FILES="curves summary gaps reference wait_hist validation table staleness_hist scale ranking
  matrix lda_curves histogram differential_hist breakdown progress"
thin() { # file rows -> stdout: the header and at most `rows` rows spread over the file
  local lines
  lines=$(wc -l <"$1")
  awk -v n="$((lines - 1))" -v m="$2" '
    NR == 1 { print; k = (n > m) ? int((n + m - 1) / m) : 1; next }
    (NR - 2) % k == 0 { print }' "$1"
}
grep -v '^#' "$root/experiments/figures.tsv" | cut -f1 | while read -r fig; do
  [ -n "$fig" ] || continue
  src="$results/$fig"
  [ -f "$src/claims.csv" ] || { echo "no results for $fig in $results" >&2; exit 1; }
  mkdir -p "$out/$fig"
  head -1 "$src/claims.csv" >"$out/$fig/claims.csv"
  # The first seed's data are the top of the folder; seeds/<n>/ of two others draw the bands.
  others=""
  if [ -d "$src/seeds" ]; then
    others=$(cd "$src" && find seeds -mindepth 1 -maxdepth 1 -type d | sort -V | sed -n '2,3p' | tr '\n' ' ')
  fi
  for name in $FILES; do
    (cd "$src" && {
      find . -maxdepth 2 -name "$name.csv" -not -path './seeds/*' -not -path './config/*'
      for o in $others; do find "$o" -maxdepth 2 -name "$name.csv"; done
    }) | while read -r f; do
      f=${f#./}
      case "$f" in seeds/*) rows=30 ;; *) rows=120 ;; esac
      mkdir -p "$out/$fig/$(dirname "$f")"
      thin "$src/$f" "$rows" >"$out/$fig/$f"
    done
  done
  if [ -f "$src/manifest.json" ]; then
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); c=m.get("config",{}); json.dump({"config": {"cnn": c["cnn"]}} if isinstance(c,dict) and "cnn" in c else {"config": {}}, open(sys.argv[2],"w"), indent=1, sort_keys=True)' "$src/manifest.json" "$out/$fig/manifest.json"
  fi
done
du -sh "$out"
