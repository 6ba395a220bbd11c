#!/usr/bin/env bash
# No EINTR in the target.  tests/bin/eintr has one thread
# blocked for good in each of epoll_wait, semop, sigtimedwait, poll, read
# (pipe), accept, recv (SO_RCVTIMEO), nanosleep, pthread_cond_wait and
# sem_wait, main in sigwaitinfo, and one thread burning CPU.  Each counts
# every return of its call.  Profiled at 99 Hz for 5 s it must see none,
# and every thread must still be sampled at about every tick (wall clock).
# Then the same target goes through a naive sampler (tests/bin/interrupter:
# PTRACE_INTERRUPT + PTRACE_CONT of every thread, 20 rounds): the calls
# signal(7) names must now report EINTR, which shows the counting works.
# With perf capture (the default where permitted) w-burn is not stopped
# either: no thread is (tests/t_timeouts.sh: threads that come and go
# between running and blocked).
. "$(dirname "$0")/lib.sh"

WAITERS="w-epoll w-semop w-sigtimed w-poll w-read w-accept w-recv w-nanosleep w-condwait w-semwait"
# The function each thread blocks in (see tests/targets/eintr.c).
declare -A FN=([w-epoll]=block_epoll [w-semop]=block_semop [w-sigtimed]=block_sigtimed
	[w-poll]=block_poll [w-read]=block_read [w-accept]=block_accept [w-recv]=block_recv
	[w-nanosleep]=block_nanosleep [w-condwait]=block_condwait [w-semwait]=block_semwait
	[w-burn]=burn_loop [eintr]=main)

# all_blocked PID: every thread but w-burn is in a system call (its
# /proc/.../syscall line starts with a number, not "running").
all_blocked() {
	local t name line
	for t in $(tids "$1"); do
		name=$(cat "/proc/$1/task/$t/comm" 2>/dev/null)
		[ "$name" = w-burn ] && continue
		line=$(cat "/proc/$1/task/$t/syscall" 2>/dev/null)
		[[ $line =~ ^[0-9]+\  ]] || return 1
	done
}


# counts REPORT NAME: "EINTR OTHER" for one thread of the report.
counts() { sed -nE "s/^$2 eintr=([0-9]+) other=([0-9]+)$/\1 \2/p" "$1"; }

if start_target eintr; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	report=$TARGET_READY.report
	check "every waiting thread is blocked in its call" wait_until 5 all_blocked "$pid"
	request_report "$pid" "$report"
	DETAIL="$(tr '\n' '|' <"$report")" \
		check "before profiling: no call has returned" \
		"! grep -qE 'eintr=[1-9]|other=[1-9]' '$report'"

	out=$TMP/eintr.folded
	prof "$TMP/eintr" "$pid" --hz 99 --duration 5 --threads --stats -o "$out"
	check_ran "eintr" "$TMP/eintr" "$out"
	diag "$(summary "$TMP/eintr.err")"

	DETAIL="no report" check "after profiling: the target reports" request_report "$pid" "$report"
	for name in $WAITERS main; do
		c=$(counts "$report" "$name")
		DETAIL="${name}: eintr other = ${c:-?}" \
			check "profiled 5 s at 99 Hz: ${FN[$name]:-sigwaitinfo} ($name) saw no EINTR, no early return" \
			"[ '$c' = '0 0' ]"
	done

	# Wall clock: every thread, blocked or not, about one sample per tick.
	secs=$(summary_field "$TMP/eintr.err" seconds)
	achieved=$(summary_field "$TMP/eintr.err" achieved)
	ticks=$(awk -v a="$achieved" -v s="$secs" 'BEGIN { printf "%d", a * s }')
	diag "samples per thread ($ticks ticks): $(awk '{ split($0, f, ";"); sub(/ \(.*/, "", f[1]); c[f[1]] += $NF }
		END { for (t in c) printf "%s=%d ", t, c[t] }' "$out")"
	for name in $WAITERS w-burn eintr; do
		fn=${FN[$name]}
		c=$(root="^$name \\([0-9]+\\);" fn=";$fn(;|$)" awk 'BEGIN { root = ENVIRON["root"]; fn = ENVIRON["fn"] }
			{ s = $0; sub(/ [0-9]+$/, "", s); if (s ~ root && s ~ fn) n += $NF } END { print n + 0 }' "$out")
		DETAIL="$c samples in $fn, $ticks ticks" \
			check "wall clock: thread $name sampled in $fn at >= 90% of the ticks" \
			"[ $((c * 100)) -ge $((ticks * 90)) ]"
	done
	total=$(summary_field "$TMP/eintr.err" samples)
	# --stats: blocked samples and those counted again from an unchanged
	# stack (an idle thread, checked without a stop) are the ones taken
	# without stopping the thread.
	unstopped=$(stats_blocked "$TMP/eintr.err")
	burn=$(folded_count "$out" '^w-burn ')
	DETAIL="$unstopped of $total samples taken without a stop; w-burn has $burn" \
		check "the blocked threads' samples (all but w-burn's) were taken without stopping them" \
		"[ -n '$unstopped' ] && [ $((unstopped * 100)) -ge $(((total - burn) * 99)) ]"
	# Perf capture (the default where permitted): w-burn, the running
	# thread, is counted from perf samples, and no thread is stopped.
	if grep -qE '^cprof-attach: [0-9.]+ of 99 Hz, .*, perf, ' "$TMP/eintr.err"; then
		read -r stopped byperf <<<"$(capture_counts "$TMP/eintr.err")"
		DETAIL="$stopped stopped, $byperf by perf events; w-burn has $burn" \
			check "perf capture: no thread stopped; w-burn counted from perf samples" \
			"[ '$stopped' = 0 ] && [ '${byperf:-0}' -gt 0 ]"
	else
		skip "perf capture: no thread stopped" "the run captured by ptrace stops"
	fi
	check_unharmed "eintr" "$pid" "$n"
	# --dump's one tick: the running thread too (perf capture waits for
	# its first sample), every waiting one in its call, and still no EINTR.
	prof "$TMP/dump" --dump -p "$pid"
	DETAIL="$(grep -A2 'w-burn' "$TMP/dump.out" | head -3 | tr '\n' '|')" \
		check "--dump: the running thread w-burn is shown in burn_loop" \
		"grep -A12 '\"w-burn\"' '$TMP/dump.out' | grep -q burn_loop"
	request_report "$pid" "$report"
	DETAIL="$(tr '\n' '|' <"$report")" \
		check "--dump: no call returned EINTR or early" "! grep -qE 'eintr=[1-9]|other=[1-9]' '$report'"

	# The same target under a naive sampler: the detector must fire.
	naive=$TMP/naive.done
	timeout 30 "$BIN/interrupter" "$naive" "$pid" 20 >"$TMP/naive.err" 2>&1
	DETAIL="$(head -c 200 "$TMP/naive.err")" \
		check "naive sampler: 20 rounds of PTRACE_INTERRUPT + PTRACE_CONT done" "[ -s '$naive' ]"
	request_report "$pid" "$report"
	diag "after the naive sampler: $(grep -v serial "$report" | tr '\n' ' ')"
	for name in w-epoll w-semop w-sigtimed w-recv main; do
		c=$(counts "$report" "$name")
		DETAIL="${name}: eintr other = ${c:-?}" \
			check "the test can fail: a naive stop makes $name return EINTR (counted: ${c%% *})" \
			"[ -n '$c' ] && [ '${c%% *}' -gt 0 ]"
	done
	check "naive sampler: target untraced afterwards" untraced "$pid"
	stop_target "$pid"
fi

done_testing
