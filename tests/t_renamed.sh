#!/usr/bin/env bash
# Renamed threads.  tests/bin/renamer has a thread that
# computes in phase_a as "fa" and, on SIGUSR1, renames itself "phase-b" and
# computes in phase_b.  The switch comes about a second into a 6 s profile
# (long enough for phase_b to be sampled even when a loaded machine makes
# this script slow to see the profiler attached).
#   --threads            phase_a's samples under "fa", phase_b's under
#                        "phase-b" (before: all under the last name)
#   --threads-matching   '^fa$': the samples stop at the rename (before: up
#                        to a second of phase_b got through)
# At most 2 samples of either phase may fall on the other side: the tick
# that finds the thread renamed may have caught it just before.
. "$(dirname "$0")/lib.sh"

SLACK=2

# run_switch LABEL ARGS...: profiles a fresh renamer for 6 s with ARGS,
# sends the switch about a second in.  Sets OUT, WORKER.
run_switch() {
	local label=$1
	shift
	OUT=$TMP/$label.folded
	start_target renamer || return 1
	WORKER=$(for t in $(tids "$TARGET_PID"); do
		[ "$(cat "/proc/$TARGET_PID/task/$t/comm")" = fa ] && echo "$t"; done)
	prof_bg "$TMP/$label" "$TARGET_PID" --hz 99 --duration 6 -o "$OUT" "$@"
	wait_attached "$TARGET_PID" || return 1
	sleep 1         # a second of phase_a under "fa"
	kill -USR1 "$TARGET_PID"
	prof_wait 30
	stop_target "$TARGET_PID"
	check_ran "$label" "$TMP/$label" "$OUT"
}

# count FOLDED ROOT FN: samples whose root frame starts with ROOT (a
# literal) and that have frame FN.
count() {
	awk -v fn="$3" 'BEGIN { root = ENVIRON["ROOT_PREFIX"] }
		{ s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";")
		  if (index(f[1], root) != 1) next
		  k = split(s, g, ";"); for (i = 1; i <= k; i++) if (g[i] == fn) { n += $NF; break } }
		END { print n + 0 }' "$1"
}

if run_switch threads --threads; then
	a_fa=$(ROOT_PREFIX="fa ($WORKER)" count "$OUT" fa phase_a)
	b_fa=$(ROOT_PREFIX="fa ($WORKER)" count "$OUT" fa phase_b)
	a_pb=$(ROOT_PREFIX="phase-b ($WORKER)" count "$OUT" pb phase_a)
	b_pb=$(ROOT_PREFIX="phase-b ($WORKER)" count "$OUT" pb phase_b)
	diag "fa: phase_a $a_fa, phase_b $b_fa; phase-b: phase_a $a_pb, phase_b $b_pb"
	DETAIL="$(cut -c1-120 "$OUT" | tr '\n' '|' | head -c 400)" \
		check "--threads: phase_a's samples are under fa ($a_fa, $a_pb under phase-b)" \
		"[ $a_fa -ge 50 ] && [ $a_pb -le $SLACK ]"
	DETAIL="$(cut -c1-120 "$OUT" | tr '\n' '|' | head -c 400)" \
		check "--threads: phase_b's samples are under phase-b ($b_pb, $b_fa under fa)" \
		"[ $b_pb -ge 50 ] && [ $b_fa -le $SLACK ]"
fi

if run_switch matching --threads --threads-matching '^fa$'; then
	a=$(ROOT_PREFIX="fa ($WORKER)" count "$OUT" fa phase_a)
	b=$(ROOT_PREFIX="" count "$OUT" any phase_b)
	diag "--threads-matching '^fa\$': phase_a $a, phase_b $b"
	DETAIL="$(cut -c1-120 "$OUT" | tr '\n' '|' | head -c 400)" \
		check "--threads-matching: the thread's samples stop at its rename (phase_b: $b, phase_a: $a)" \
		"[ $a -ge 50 ] && [ $b -le $SLACK ]"
fi

done_testing
