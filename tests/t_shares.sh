#!/usr/bin/env bash
# Time shares against a known schedule (tests/targets/switcher.c:
# one thread alternating phase_a and phase_b on absolute deadlines, and
# measuring the time it really spent in each over the profiled interval).
#   duty cycle   70 ms / 30 ms computing, 10 s at 99 Hz: phase_a's share
#                of the thread's samples within 2 percentage points of the
#                measured fraction.  Also 7 ms / 3 ms (phases shorter than
#                the period) and 23 ms / 9 ms asleep, within the statistical
#                error of N samples: 4 x sqrt(p(1 - p) / N), 3 s each.
#   aliasing     a 10 ms cycle (5 ms each) at --hz 100, the sampling
#                period itself: near 50/50 thanks to the random phase of
#                each tick, while the same run with evenly spaced ticks
#                (CPROF_TICK_JITTER=0, for tests) sees one phase only: the
#                check can fail.  Also 10 ms in each (a 20 ms cycle).
#   rate         the summary line's achieved rate is the average one: the
#                worker's samples over the run's seconds.
# exclusive: shares of a 10 ms cycle and evenly spaced ticks: with another
#   test beside it on 2 cores, ticks came late (90.4 of 100 Hz) and the
#   fixed-tick run stopped aliasing (17.7%, JOBS=3, load 6).
. "$(dirname "$0")/lib.sh"

# rate_of_samples: the worker's samples a second in the last shares run.
rate_of_samples() {
	awk -v n="$SH_N" -v s="$(summary_field "$SH_BASE.err" seconds)" \
		'BEGIN { if (s > 0) printf "%.1f", n / s; else print 0 }'
}

# shares LABEL A_US B_US MODE HZ SECS [ENV...]: profiles a fresh switcher
# and sets SH_MEASURED (% of the profiled interval in phase_a, measured by
# the target), SH_PROFILED (% of the worker's samples under phase_a),
# SH_N (the worker's samples), SH_BASE.  Returns non-zero if that failed.
shares() {
	local label=$1 a=$2 b=$3 mode=$4 hz=$5 secs=$6 r0 r1 worker f
	shift 6
	SH_BASE=$TMP/$label
	start_target switcher "$a" "$b" "$mode" || return 1
	request_report "$TARGET_PID" "$TARGET_READY.report" || {
		check "$label: target reports" false
		return 1
	}
	r0=$(cat "$TARGET_READY.report")
	env "$@" timeout --foreground -k 5 60 "$CPROF" "$TARGET_PID" --hz "$hz" --duration "$secs" \
		--threads ${SH_CAPTURE:+--capture "$SH_CAPTURE"} -o "$SH_BASE.folded" >"$SH_BASE.out" 2>"$SH_BASE.err"
	PROF_RC=$?
	request_report "$TARGET_PID" "$TARGET_READY.report"
	r1=$(cat "$TARGET_READY.report")
	stop_target "$TARGET_PID"
	check_ran "$label" "$SH_BASE" "$SH_BASE.folded" || return 1
	worker=$(awk '$1 == "worker" { print $2 }' <<<"$r1")
	SH_MEASURED=$(awk -v r0="$r0" -v r1="$r1" 'BEGIN {
		n = split(r0, x, "\n"); for (i = 1; i <= n; i++) { split(x[i], kv, " "); s0[kv[1]] = kv[2] }
		n = split(r1, x, "\n"); for (i = 1; i <= n; i++) { split(x[i], kv, " "); s1[kv[1]] = kv[2] }
		a = s1["a_ns"] - s0["a_ns"]; b = s1["b_ns"] - s0["b_ns"]
		printf "%.2f", 100 * a / (a + b) }')
	f=$SH_BASE.worker
	grep -E "^switcher \\($worker\\);" "$SH_BASE.folded" >"$f"
	SH_N=$(folded_total "$f")
	SH_PROFILED=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s) } s ~ /;phase_a(;|$)/ { a += $NF }
		{ n += $NF } END { if (n) printf "%.2f", 100 * a / n; else print 0 }' "$f")
	local other
	other=$(folded_count "$f" ';phase_[ab](;|$)')
	# (a thread preempted right between two phases, in worker_main's
	# loop, is found there for as long as it waits for a CPU: on a busy
	# machine, 1 sample of 300 in a CI run beside a busy loop)
	DETAIL="$other of $SH_N; $(head -n 3 "$f" | cut -c1-200 | tr '\n' '|')" \
		check "$label: the worker's samples are in phase_a or phase_b (>= 99%)" \
		"[ '$SH_N' -gt 0 ] && [ \$((other * 100)) -ge \$((SH_N * 99)) ]"
	diag "$label: measured $SH_MEASURED% in phase_a, profiled $SH_PROFILED% of $SH_N samples" \
		"(difference $(awk -v a="$SH_PROFILED" -v b="$SH_MEASURED" 'BEGIN { printf "%+.2f", a - b }') pp);" \
		"$(summary "$SH_BASE.err" | sed 's/^cprof-attach: //; s/, duration reached.*//')"
	return 0
}

# sigma4 P N: four standard deviations of a share P% estimated from N
# independent samples, in percentage points.
sigma4() { awk -v p="$1" -v n="$2" 'BEGIN { p /= 100; printf "%.2f", 400 * sqrt(p * (1 - p) / n) }'; }

# --- duty cycle: 70/30, phases longer than the period --------------------------
# Once more if the first run is off by more than 2 points, saying so: a
# machine busy with other work (another session's build) bends the
# target's phases against the profiler's ticks (-2.2 pp in a CI run at
# load 6, the only miss in its runs).
duty70_ok() { shares duty70 70000 30000 spin 99 10 && within "$SH_PROFILED" "$SH_MEASURED" 2; }
if ! duty70_ok && [ -n "${SH_MEASURED:-}" ]; then
	diag "duty 70/30: profiled $SH_PROFILED% against $SH_MEASURED% measured, more than 2 points off: once more (load $(cut -d' ' -f1 /proc/loadavg))"
	duty70_ok
fi
if [ -n "${SH_MEASURED:-}" ]; then
	DETAIL="measured $SH_MEASURED%, profiled $SH_PROFILED%" \
		check "duty 70 ms/30 ms: phase_a within 2 pp of the measured share" \
		within "$SH_PROFILED" "$SH_MEASURED" 2
	b=$(awk -v p="$SH_PROFILED" 'BEGIN { printf "%.2f", 100 - p }')
	m=$(awk -v p="$SH_MEASURED" 'BEGIN { printf "%.2f", 100 - p }')
	DETAIL="measured $m%, profiled $b%" \
		check "duty 70 ms/30 ms: phase_b within 2 pp of the measured share" within "$b" "$m" 2
	DETAIL="$SH_N samples" check "duty 70 ms/30 ms: ~990 samples of the worker (10 s at 99 Hz)" \
		"[ '$SH_N' -ge 940 ] && [ '$SH_N' -le 1000 ]"
	hz=$(summary_field "$SH_BASE.err" achieved)
	DETAIL="$hz Hz, $(rate_of_samples) samples a second" \
		check "duty 70 ms/30 ms: achieved rate is the average, the worker's samples a second (+-3%)" \
		within "${hz:-0}" "$(rate_of_samples)" 3
fi

# The sanitizer pass (CPROF_SANITIZED=1) runs the checks the issue names
# (duty 70/30 and aliasing, with its counter-proof); the variants run in the
# plain pass only, to keep make check short.
if [ "${CPROF_SANITIZED:-0}" = 1 ]; then
	skip "duty 7 ms/3 ms, asleep 23 ms/9 ms, 10 ms in each" "plain pass only"
	VARIANTS=0
else
	VARIANTS=1
fi

# --- duty cycle: phases shorter than the period ----------------------------------
# Each sample lands anywhere in the 10 ms cycle: the error is the binomial
# one of N samples (one sigma 2.7 pp for 297), whatever the profiler does.
# variant LABEL A B MODE: shares of a 3 s run at 99 Hz within 4 sigma,
# once more (saying so) if not: a busy machine bends the target's phases.
variant() {
	local try
	for try in 1 2; do
		shares "$@" 99 3 || return 1
		tol=$(sigma4 "$SH_MEASURED" "$SH_N")
		within "$SH_PROFILED" "$SH_MEASURED" "$tol" && return 0
		[ "$try" = 2 ] || diag "$1: profiled $SH_PROFILED% against $SH_MEASURED% measured, past 4 sigma ($tol pp): once more (load $(cut -d' ' -f1 /proc/loadavg))"
	done
	return 0
}
if [ "$VARIANTS" = 1 ] && variant duty7 7000 3000 spin; then
	DETAIL="measured $SH_MEASURED%, profiled $SH_PROFILED%" \
		check "duty 7 ms/3 ms: phase_a within 4 sigma ($tol pp) of the measured share" \
		within "$SH_PROFILED" "$SH_MEASURED" "$tol"
fi
if [ "$VARIANTS" = 1 ] && variant sleep23 23000 9000 sleep; then
	DETAIL="measured $SH_MEASURED%, profiled $SH_PROFILED%" \
		check "asleep 23 ms/9 ms: phase_a within 4 sigma ($tol pp) of the measured share" \
		within "$SH_PROFILED" "$SH_MEASURED" "$tol"
fi

# --- aliasing ---------------------------------------------------------------------
# A 10 ms cycle sampled every 10 ms: a fixed period sees the same moment of
# the cycle every time.
if shares alias 5000 5000 spin 100 5; then
	DETAIL="profiled $SH_PROFILED% (measured $SH_MEASURED%)" \
		check "aliasing, 10 ms cycle at 100 Hz: phase_a 40-60%" \
		"ge '$SH_PROFILED' 40 && ge 60 '$SH_PROFILED'"
	hz=$(summary_field "$SH_BASE.err" achieved)
	DETAIL="$hz Hz, $(rate_of_samples) samples a second" \
		check "aliasing: achieved rate is the average, the worker's samples a second (+-3%)" \
		within "${hz:-0}" "$(rate_of_samples)" 3
fi
# The same without jitter must alias (else the check above proves nothing).
# A tick that falls right on a switch can mix both: one more try then.
# With ptrace stops, where a thread is caught at the tick's instant: perf
# capture takes the thread's sample nearest the tick, up to a sixteenth
# of a period away, which blurs the fixed phase (35.9% in a CI run) but
# is no jitter the ticks had.
# It proves something only where the ticks and the target's 5 ms phases
# keep time: on a machine busy with other work both slip (the target
# measured 54-57% in phase_a in a CI run beside other sessions' builds,
# and the ticks fell on both phases): up to three tries, then, if the
# machine has more runnable work than CPUs, a skip saying so; on a machine
# that is not, a failure.
aliased= tries=
for try in 1 2 3; do
	SH_CAPTURE=ptrace shares fixed$try 5000 5000 spin 100 3 CPROF_TICK_JITTER=0 || break
	if ge 15 "$SH_PROFILED" || ge "$SH_PROFILED" 85; then
		aliased=1
		break
	fi
	tries="$tries try $try: profiled $SH_PROFILED%, the target measured $SH_MEASURED%, $(summary_field "$SH_BASE.err" missed) missed ticks, load $(cut -d' ' -f1 /proc/loadavg);"
done
load=$(cut -d' ' -f1 /proc/loadavg)
if [ -n "$aliased" ] || ! ge "$load" "$(nproc)"; then
	DETAIL="$tries" check "aliasing: evenly spaced ticks see one phase only (<15% or >85%)" "[ -n '$aliased' ]"
else
	skip "aliasing: evenly spaced ticks see one phase only" \
		"a busy machine (load $load on $(nproc) CPUs) moved the ticks and the target's phases:$tries"
fi
if [ "$VARIANTS" = 1 ] && shares alias10 10000 10000 spin 100 3; then
	DETAIL="profiled $SH_PROFILED% (measured $SH_MEASURED%)" \
		check "aliasing, 10 ms in each (20 ms cycle) at 100 Hz: phase_a 40-60%" \
		"ge '$SH_PROFILED' 40 && ge 60 '$SH_PROFILED'"
fi

done_testing
