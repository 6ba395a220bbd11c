#!/usr/bin/env bash
# Issue 40, item 2, measured, never asserted:
#     bash bench/pynames.sh [SECONDS [HZ]]        (default 180 s at 99 Hz)
# python3 running generated code (tests/targets/pygen.py: per call a chain
# of 16 new functions with long names of their own, from a "file" of their
# own), under --period 10s with the stacks' default aging (60 s): the
# profiler's RSS every 30 s and at the end, and what its Python view holds
# (--stats: code objects' KiB, those aged out).  Before names aged with the
# stacks, RSS grew for as long as the run (the symbolic frames and code
# objects of every function ever sampled); now it levels off once the
# stacks of the first minute are aged out.
# Prints one line per figure, "pynames: KEY VALUE".
set -u
cd "$(dirname "$0")/.."
SECS=${1:-180}
HZ=${2:-99}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-pynames.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT
. tests/lib-core.sh
python3 tests/targets/pygen.py "$TMP/ready" 16 300 &
PIDS+=($!)
TARGET=$!
wait_until 10 file_ready "$TMP/ready" || { echo "pynames: error pygen.py did not start"; exit 1; }
mkdir -p "$TMP/o"
"$CPROF" "$TARGET" --period 10s --hz "$HZ" --duration "$SECS" --stats -q -o "$TMP/o/p-%n.folded" 2>"$TMP/err" &
PROF=$!
PIDS+=("$PROF")
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
t0=$(date +%s)
next=30
while kill -0 "$PROF" 2>/dev/null; do
	now=$(( $(date +%s) - t0 ))
	if [ "$now" -ge "$next" ] && [ "$now" -lt "$SECS" ]; then
		echo "pynames: rss_kib_at_${next}s $(rss "$PROF")"
		next=$((next + 30))
	fi
	sleep 1         # a measurement's clock, not a synchronization
done
wait "$PROF"
echo "pynames: peak_rss_kib $(sed -nE 's/.*peak RSS ([0-9]+) KiB.*/\1/p' "$TMP/err" | tail -n 1)"
echo "pynames: rate $(grep -oE '[0-9.]+ of [0-9]+ Hz' "$TMP/err" | tail -n 1)"
echo "pynames: code_kib $(sed -nE 's/.* ([0-9]+) KiB held by the code objects named.*/\1/p' "$TMP/err" | tail -n 1)"
echo "pynames: code_aged $(sed -nE 's/.* ([0-9]+) code objects dropped, not met.*/\1/p' "$TMP/err" | tail -n 1)"
