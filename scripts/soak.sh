#!/usr/bin/env bash
# Soak: the 4-rank cluster smoke of ps-modes and asap-fig7 over tcp and shm, N times each
# (default 100), through `syncbench launch`. Prints failures / runs per (experiment, transport)
# and writes the same table to $OUT/soak.md; the log of each failed run is kept beside it.
# Exits non-zero when any run failed. Not part of `make test` (it takes a while).
#
#   scripts/soak.sh [RUNS]        env: BIN (target/release), OUT (results/soak), SCALE (quick),
#                                 RANKS (4), EXPERIMENTS, TRANSPORTS, ARGS (more experiment
#                                 arguments, e.g. --config small.toml)
#
# A transport `ofi:PROVIDER` runs --transport ofi --ofi-provider PROVIDER (a build with the ofi
# feature): TRANSPORTS="ofi:tcp;ofi_rxm ofi:shm ofi:sockets" is what `make soak TRANSPORT=ofi`
# runs.
set -uo pipefail
RUNS=${1:-${RUNS:-100}}
BIN=${BIN:-target/release}
OUT=${OUT:-results/soak}
SCALE=${SCALE:-quick}
RANKS=${RANKS:-4}
EXPERIMENTS=${EXPERIMENTS:-"ps-modes asap-fig7"}
TRANSPORTS=${TRANSPORTS:-"tcp shm"}
ARGS=${ARGS:-}
for b in syncbench $EXPERIMENTS; do
  [ -x "$BIN/$b" ] || { echo "soak: $BIN/$b not built (make build)" >&2; exit 2; }
done
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
table="| experiment | transport | runs | failures | seconds per run |
|---|---|---|---|---|"
total_fail=0
for exp in $EXPERIMENTS; do
  for tr in $TRANSPORTS; do
    fails=0
    t0=$(date +%s.%N)
    case $tr in
      ofi:*) flags=(--transport ofi --ofi-provider "${tr#ofi:}") ;;
      *) flags=(--transport "$tr") ;;
    esac
    for i in $(seq 1 "$RUNS"); do
      log="$work/run.log"
      if ! "$BIN/syncbench" launch --ranks "$RANKS" -- "$exp" --driver cluster "${flags[@]}" \
          --scale "$SCALE" --seed "$i" --seeds 1 --out "$work/results" $ARGS >"$log" 2>&1; then
        fails=$((fails + 1))
        cp "$log" "$OUT/failed-$exp-${tr//[:;]/_}-$i.log"
        echo "soak: $exp over $tr, run $i failed: $(grep -m1 'error' "$log")" >&2
      fi
      printf '\rsoak: %s over %s: %d/%d runs, %d failed' "$exp" "$tr" "$i" "$RUNS" "$fails" >&2
    done
    echo >&2
    t1=$(date +%s.%N)
    per=$(awk -v a="$t0" -v b="$t1" -v n="$RUNS" 'BEGIN { printf "%.2f", (b - a) / n }')
    table="$table
| $exp | $tr | $RUNS | $fails | $per |"
    total_fail=$((total_fail + fails))
  done
done
{
  echo "# Soak: $RANKS-rank cluster runs through syncbench launch ($SCALE scale${ARGS:+, $ARGS})"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(hostname)"
  echo
  echo "$table"
} >"$OUT/soak.md"
cat "$OUT/soak.md"
[ "$total_fail" -eq 0 ]
