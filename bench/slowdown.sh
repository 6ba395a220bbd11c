#!/usr/bin/env bash
# The target's slowdown under the always-on defaults (issue 22), measured,
# never asserted:
#     bash bench/slowdown.sh [REPS] [SECONDS] [CAPTURES]
#                                           (make bench: 7 4; QUICK=1: 3 2)
# bench/build/work (CPU-bound, 1 and 8 threads, a fixed amount of work
# lasting about SECONDS alone), in each repetition alone, then profiled
# --period 10s at each rate of RATES (default: the always-on default rate
# and 99 Hz) by each capture of CAPTURES (default "perf ptrace": cprof-attach
# --capture perf, --capture ptrace; "record": `perf record -e task-clock
# --call-graph dwarf -F RATE -p PID`, the peer, where perf is installed),
# one right after the other (the order rotates with the repetition).  A
# slowdown is the median over repetitions of (wall time profiled / wall
# time alone, in the same repetition); beside it the same ratio of the
# work's CPU time, and for cprof-attach the profiler's CPU per 1,000
# thread-samples (--stats; naming and writing the profile included).
# Prints "slowdown: THREADS RATE CAPTURE wall RATIO cpu RATIO [profiler
# N ms per 1000 thread-samples]".
set -u
cd "$(dirname "$0")/.."
REPS=${1:-7}
SECS=${2:-4}
CAPTURES=${3:-"perf ptrace"}
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

# one T HZ CAPTURE: wall and CPU seconds of a run (HZ 0: alone), and the
# profiler's ms per 1000 thread-samples (cprof-attach; else -).
one() {
	local t=$1 hz=$2 cap=${3:-} units prof= per=-
	units=$(awk -v r="$rate" -v s="$SECS" -v t="$t" -v n="$(nproc)" 'BEGIN { printf "%d", r * s * (t < n ? t : n) }')
	rm -f "$TMP/ready" "$TMP/prof.err"
	bench/build/work "$t" "$units" "$TMP/ready" >"$TMP/out" &
	local w=$!
	wait_until 10 file_ready "$TMP/ready" || { kill "$w"; return 1; }
	if [ "$hz" != 0 ] && [ "$cap" = record ]; then
		perf record -q -e task-clock -F "$hz" --call-graph dwarf -p "$w" -o "$TMP/perf.data" \
			>/dev/null 2>"$TMP/prof.err" &
		prof=$!
		sleep 0.5       # perf has no ready signal; it reads the maps first
	elif [ "$hz" != 0 ]; then
		"$CPROF" "$w" --period 10s --hz "$hz" --capture "$cap" --stats -q -o "$TMP/p-%n.pprof" \
			2>"$TMP/prof.err" &
		prof=$!
		wait_until 10 traced "$w"
	fi
	kill -USR1 "$w"
	wait "$w"
	[ -n "$prof" ] && wait "$prof"
	[ "$cap" != record ] && [ -s "$TMP/prof.err" ] &&
		per=$(sed -nE 's/.*\(([0-9.]+) ms per 1000 thread-samples\).*/\1/p' "$TMP/prof.err" | tail -1)
	echo "$(awk '{ print $2, $8 }' "$TMP/out") ${per:--}"
}

if [[ " $CAPTURES " == *" record "* ]] && ! perf record -q -e task-clock -o /dev/null -- true >/dev/null 2>&1; then
	echo "slowdown: perf record does not run here: left out" >&2
	CAPTURES=$(echo " $CAPTURES " | sed 's/ record / /')
fi

for t in 1 8; do
	: >"$TMP/r.$t"
	for rep in $(seq "$REPS"); do
		alone=$(one "$t" 0) || continue
		runs=
		for hz in $RATES; do for cap in $CAPTURES; do runs="$runs $hz:$cap"; done; done
		set -- $runs
		k=$(( (rep - 1) % $# ))
		order="${*:k+1} ${*:1:k}"
		for run in $order; do
			hz=${run%%:*} cap=${run#*:}
			r=$(one "$t" "$hz" "$cap") || continue
			echo "$hz $cap $(awk -v a="$alone" -v b="$r" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.4f %.4f %s", y[1] / x[1], y[2] / x[2], y[3] }')" >>"$TMP/r.$t"
		done
	done
	for hz in $RATES; do
		for cap in $CAPTURES; do
			w=$(awk -v h="$hz" -v c="$cap" '$1 == h && $2 == c { print $3 }' "$TMP/r.$t" | median)
			c=$(awk -v h="$hz" -v c="$cap" '$1 == h && $2 == c { print $4 }' "$TMP/r.$t" | median)
			p=$(awk -v h="$hz" -v c="$cap" '$1 == h && $2 == c && $5 != "-" { print $5 }' "$TMP/r.$t" | median)
			echo "slowdown: $t thread(s) ${hz} Hz $cap wall ${w}x cpu ${c}x${p:+ profiler $p ms per 1000 thread-samples} (median of $REPS)"
		done
	done
done
