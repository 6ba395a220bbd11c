#!/usr/bin/env bash
# bench/compare.sh OLD NEW: two builds of cprof-attach side by side, for a
# change that must not cost the target (a refactoring, a new feature on the
# sampling path).  For each thread count, every repetition runs bench/work.c
# alone, under OLD and under NEW (the order rotating from one repetition to
# the next), each profiler at 99 Hz from before the work starts until the
# workload exits; a slowdown is (wall time under the tool / wall time alone)
# in the same repetition, and the table gives the medians, and NEW/OLD.
# Only the workload's own clock is read: the two builds may print different
# summaries.  REPS (default 5), THREADS (default "1 8 64"), WORK_SECS (3).
set -euo pipefail
export LC_ALL=C
OLD=$(readlink -f "${1:?usage: bench/compare.sh OLD NEW}")
NEW=$(readlink -f "${2:?usage: bench/compare.sh OLD NEW}")
REPS=${REPS:-5}
THREADS=${THREADS:-"1 8 64"}
WORK_SECS=${WORK_SECS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/lib-core.sh"
TMP=$(mktemp -d /tmp/cprof-compare.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -g -fomit-frame-pointer -pthread -o "$TMP/work" "$ROOT/bench/work.c"
RATE=$("$TMP/work" --calibrate 1)

# one TOOL T UNITS: the workload's wall time, alone (TOOL "-") or profiled.
one() {
	local tool=$1 t=$2 units=$3 ready=$TMP/r.$RANDOM wpid ppid=
	"$TMP/work" "$t" "$units" "$ready" >"$ready.out" 2>&1 &
	wpid=$!
	wait_until 20 file_ready "$ready" || { echo "workload did not start" >&2; exit 1; }
	if [ "$tool" != - ]; then
		"$tool" "$wpid" --hz 99 -o "$TMP/p.folded" 2>"$TMP/p.err" &
		ppid=$!
		# The tracer is the profiler's tracer thread: any TracerPid but 0.
		_traced() { local t; t=$(awk '/^TracerPid/ { print $2 }' "/proc/$wpid/status"); [ -n "$t" ] && [ "$t" != 0 ]; }
		wait_until 20 _traced || { echo "profiler did not attach: $(cat "$TMP/p.err")" >&2; exit 1; }
	fi
	kill -USR1 "$wpid"
	wait "$wpid"
	[ -z "$ppid" ] || wait "$ppid" || { echo "profiler failed: $(cat "$TMP/p.err")" >&2; exit 1; }
	awk '/^wall_s/ { print $2 }' "$ready.out"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-8s %12s %12s %10s\n' threads "old slowdown" "new slowdown" "new/old"
for t in $THREADS; do
	units=$(awk -v r="$RATE" -v s="$WORK_SECS" -v t="$t" 'BEGIN { n = r * s; if (t > 2) n = n * 2; printf "%d", n }')
	: >"$TMP/old.$t"; : >"$TMP/new.$t"
	for rep in $(seq 1 "$REPS"); do
		if [ $((rep % 2)) = 1 ]; then order="- $OLD $NEW"; else order="$NEW $OLD -"; fi
		for tool in $order; do
			w=$(one "$tool" "$t" "$units")
			case $tool in -) alone=$w ;; "$OLD") old=$w ;; *) new=$w ;; esac
		done
		awk -v a="$alone" -v b="$old" 'BEGIN { print b / a }' >>"$TMP/old.$t"
		awk -v a="$alone" -v b="$new" 'BEGIN { print b / a }' >>"$TMP/new.$t"
	done
	o=$(median <"$TMP/old.$t") n=$(median <"$TMP/new.$t")
	printf '%-8s %11.3fx %11.3fx %10.3f\n' "$t" "$o" "$n" "$(awk -v a="$o" -v b="$n" 'BEGIN { print b / a }')"
done
