#!/usr/bin/env bash
# Runs `make reproduce-all`'s experiment binaries: the simulator's (whose result bytes do not
# depend on wall-clock time) JOBS at a time, then the wall-clock ones one at a time, alone.
#
# Why: a binary runs its seeds in parallel on every core, so a figure of 3 seeds on 2 cores
# leaves one core idle while its last seed runs (about a quarter of the machine over a quick
# reproduction); a second binary fills it. The threads driver's runs (asap-fig7, ps-modes,
# sim-validation) measure real time and would read the other binary's load, so they run after,
# with the machine to themselves.
#
# Usage: scripts/run-jobs.sh JOBS PARALLEL_LIST SERIAL_LIST
#   each list a file with one job a line: `<label>\t<command>`
# Every job's output goes to $LOGS/<label>.log (LOGS, default target/reproduce-logs) and is
# printed whole when the job ends, with its time; the first failure stops new jobs, waits for
# the running ones and exits 1 with the failed job's log.
set -uo pipefail
jobs_max=${1:?JOBS}
parallel=${2:?a file of parallel jobs}
serial=${3:?a file of serial jobs}
logs=${LOGS:-target/reproduce-logs}
if ! [[ $jobs_max =~ ^[1-9][0-9]*$ ]]; then
  echo "JOBS must be a positive whole number, not '$jobs_max'" >&2
  exit 2
fi
mkdir -p "$logs"

# `wait -n -p` (which job ended) needs bash 5.1; an older bash runs the jobs one at a time.
if (( BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1) )); then
  jobs_max=1
fi

declare -A started=() label_of=()
running=0
failed=""

# Prints a finished job's log and time; records a failure.
finish() {
  local pid=$1 code=$2 label=${label_of[$1]}
  cat "$logs/$label.log"
  echo "$label: $(( $(date +%s) - started[$pid] )) s"
  if [ "$code" -ne 0 ] && [ -z "$failed" ]; then
    failed=$label
    echo "$label failed (exit $code): $logs/$label.log" >&2
  fi
  unset "label_of[$pid]" "started[$pid]"
  running=$(( running - 1 ))
}

# Waits for any running job and finishes it.
reap() {
  local pid="" code
  if [ "$jobs_max" -gt 1 ]; then
    wait -n -p pid
    code=$?
  else
    pid=${!label_of[*]}
    wait "$pid"
    code=$?
  fi
  if [ -z "$pid" ] || [ -z "${label_of[$pid]-}" ]; then
    echo "run-jobs: lost track of a job (wait returned $code)" >&2
    exit 1
  fi
  finish "$pid" "$code"
}

# Interrupted (Ctrl-C, or a TERM from an outer timeout): stop the running jobs and wait for
# them, so that none is left writing its results after make has returned.
stop_all() {
  [ "$running" -eq 0 ] || kill -TERM "${!label_of[@]}" 2>/dev/null
  wait
  exit 130
}
trap stop_all INT TERM

start() {
  local label=$1 command=$2
  echo "started $label: $command"
  bash -c "$command" > "$logs/$label.log" 2>&1 &
  started[$!]=$(date +%s)
  label_of[$!]=$label
  running=$(( running + 1 ))
}

while IFS=$'\t' read -r label command; do
  [ -n "$label" ] || continue
  while [ "$running" -ge "$jobs_max" ]; do reap; done
  [ -z "$failed" ] || break
  start "$label" "$command"
done < "$parallel"
while [ "$running" -gt 0 ]; do reap; done
[ -z "$failed" ] || exit 1

while IFS=$'\t' read -r label command; do
  [ -n "$label" ] || continue
  start "$label" "$command"
  reap
  [ -z "$failed" ] || exit 1
done < "$serial"
