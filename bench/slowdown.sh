#!/usr/bin/env bash
# The target's slowdown under the always-on defaults (issue 22), measured,
# never asserted:
#     bash bench/slowdown.sh [REPS] [SECONDS]   (make bench: 7 4; QUICK=1: 3 2)
# bench/build/work (CPU-bound, 1 and 8 threads, a fixed amount of work
# lasting about SECONDS alone), in each repetition alone, then profiled
# --period 10s at the always-on default rate, then at 99 Hz, one right after
# the other (the order of the two profiled runs alternates).  A slowdown is
# the median over repetitions of (wall time profiled / wall time alone, in
# the same repetition); beside it the same ratio of the work's CPU time.
# Prints "slowdown: THREADS RATE wall RATIO cpu RATIO".
set -u
cd "$(dirname "$0")/.."
REPS=${1:-7}
SECS=${2:-4}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-slow.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
. tests/lib-core.sh
make -s cprof-attach >/dev/null 2>&1
mkdir -p bench/build
[ -x bench/build/work ] || ${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o bench/build/work bench/work.c
rate=$(bench/build/work --calibrate 1) || { echo "slowdown: calibration failed" >&2; exit 1; }
default_hz=$("$CPROF" --help | sed -nE 's/.*always on.*default ([0-9]+) Hz.*/\1/p' | head -1)
default_hz=${default_hz:-19}
RATES=${RATES:-"$default_hz 99"}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

traced() { awk '/^TracerPid/ { exit !($2 != 0) }' "/proc/$1/status" 2>/dev/null; }

# one T HZ: wall and CPU seconds of a run (HZ 0: alone).
one() {
	local t=$1 hz=$2 units prof=
	units=$(awk -v r="$rate" -v s="$SECS" -v t="$t" -v n="$(nproc)" 'BEGIN { printf "%d", r * s * (t < n ? t : n) }')
	rm -f "$TMP/ready"
	bench/build/work "$t" "$units" "$TMP/ready" >"$TMP/out" &
	local w=$!
	wait_until 10 file_ready "$TMP/ready" || { kill "$w"; return 1; }
	if [ "$hz" != 0 ]; then
		"$CPROF" "$w" --period 10s --hz "$hz" -q -o "$TMP/p-%n.pprof" 2>/dev/null &
		prof=$!
		wait_until 10 traced "$w"
	fi
	kill -USR1 "$w"
	wait "$w"
	[ -n "$prof" ] && wait "$prof"
	awk '{ print $2, $8 }' "$TMP/out"
}

for t in 1 8; do
	: >"$TMP/r.$t"
	for rep in $(seq "$REPS"); do
		alone=$(one "$t" 0) || continue
		order=$RATES
		[ $((rep % 2)) = 0 ] && order=$(echo $RATES | tr ' ' '\n' | tac | tr '\n' ' ')
		for hz in $order; do
			r=$(one "$t" "$hz") || continue
			echo "$hz $(awk -v a="$alone" -v b="$r" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.4f %.4f", y[1] / x[1], y[2] / x[2] }')" >>"$TMP/r.$t"
		done
	done
	for hz in $RATES; do
		w=$(awk -v h="$hz" '$1 == h { print $2 }' "$TMP/r.$t" | median)
		c=$(awk -v h="$hz" '$1 == h { print $3 }' "$TMP/r.$t" | median)
		echo "slowdown: $t thread(s) ${hz} Hz wall ${w}x cpu ${c}x (median of $REPS)"
	done
done
