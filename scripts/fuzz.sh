#!/usr/bin/env bash
# Fuzzing pass: every fuzz target (tcp frames, shm directory, LIBSVM, CIFAR, ratings,
# bag-of-words, graph files, format detection, config loader) for FUZZ_SECONDS each (default
# 600), JOBS targets at a time (default 2). Writes $OUT/REPORT.md: executions and crashes per
# target. Crashing inputs are kept in target/fuzz-crashes/. Exits non-zero on any crash.
set -uo pipefail
cd "$(dirname "$0")/.."
export FUZZ_SECONDS=${FUZZ_SECONDS:-600}
JOBS=${JOBS:-2}
OUT=${OUT:-results/fuzz}
CARGO=${CARGO:-cargo}
mkdir -p "$OUT" target
rm -f target/fuzz-report.txt
export FUZZ_REPORT=1
status=0
t0=$(date +%s)
$CARGO test -p bench-core --lib fuzz_ -- --test-threads="$JOBS" || status=1
$CARGO test -p bench-core --test fuzz -- --test-threads="$JOBS" || status=1
$CARGO test -p experiments --test fuzz_config || status=1
t1=$(date +%s)
{
  echo "# Fuzzing: $FUZZ_SECONDS s per target"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(hostname), $JOBS at a time, $((t1 - t0)) s in all."
  echo "Seeded mutation fuzzing (bench_core::fuzz) on stable Rust; a crash is a panic, an abort or an out-of-memory kill."
  echo
  echo "| target | executions | seconds | executions/s | crashes |"
  echo "|---|---|---|---|---|"
  sort target/fuzz-report.txt 2>/dev/null | awk -F'\t' '{ printf "| %s | %d | %.0f | %.0f | %d |\n", $1, $2, $3, $2 / ($3 > 0 ? $3 : 1), $4 }'
  [ "$status" -eq 0 ] || echo "
A target failed (crash, abort or killed): see the cargo output and target/fuzz-crashes/."
} >"$OUT/REPORT.md"
cat "$OUT/REPORT.md"
exit $status
