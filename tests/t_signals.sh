#!/usr/bin/env bash
# Criterion 1, continued: signals belong to the target.  While profiled,
# every signal sent to the target reaches it (none dropped, none added), a
# SIGSTOP stays a stop (and is still a stop after detaching), a SIGTERM
# kills it, and sampling a thread blocked in epoll_wait never makes the
# call fail with EINTR.
. "$(dirname "$0")/lib.sh"

report_has() { grep -q "$2" "$1" 2>/dev/null; }

all_state_T() {
	local t
	for t in $(tids "$1"); do
		[ "$(proc_state "$1" "$t")" = T ] || return 1
	done
}

# --- signals delivered, no EINTR ------------------------------------------------
if start_target signals; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	report=$TARGET_READY.report
	out=$TMP/sig.folded
	prof_bg "$TMP/sig" "$pid" --duration 2 -o "$out"
	if wait_attached "$pid"; then
		for _ in 1 2 3 4 5; do
			kill -RTMIN "$pid"
		done
		wait_until 5 report_has "$report" '^rt=5 '
		DETAIL="report: $(cat "$report" 2>/dev/null)" \
			check "5 queued SIGRTMIN sent while profiled all reach the handler" \
			report_has "$report" '^rt=5 '
		prof_wait 15
		check_ran "signals" "$TMP/sig" "$out"
		c=$(folded_count "$out" 'epoll_here')
		DETAIL="epoll_here in $c samples" \
			check "the thread blocked in epoll_wait is sampled" "[ '$c' -gt 0 ]"
		c=$(folded_count "$out" 'catch_loop')
		DETAIL="catch_loop in $c samples" \
			check "the signal-handling thread is sampled" "[ '$c' -gt 0 ]"
		kill -USR2 "$pid"
		wait_until 5 report_has "$report" ' usr2=1 '
		DETAIL="report: $(cat "$report" 2>/dev/null)" \
			check "after detach: SIGUSR2 handled once, no extra SIGRTMIN" \
			report_has "$report" '^rt=5 usr2=1 '
		DETAIL="report: $(cat "$report" 2>/dev/null)" \
			check "epoll_wait never returned EINTR because of sampling" \
			report_has "$report" ' eintr=0$'
		check_unharmed "signals" "$pid" "$n"
	fi
	stop_target "$pid"
fi

# --- SIGSTOP stays a stop ----------------------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	out=$TMP/stop.folded
	prof_bg "$TMP/stop" "$pid" --duration 1.5 -o "$out"
	if wait_attached "$pid"; then
		sleep 0.3 # sample it running first
		kill -STOP "$pid"
		wait_until 3 all_stopped "$pid"
		states=$(for t in $(tids "$pid"); do echo -n "$t:$(proc_state "$pid" "$t") "; done)
		DETAIL="states $states" \
			check "SIGSTOP while profiled: every thread stops" all_stopped "$pid"
		t0=$(cpu_ticks "$pid")
		prof_wait 15
		check_ran "SIGSTOP" "$TMP/stop" "$out"
		states=$(for t in $(tids "$pid"); do echo -n "$t:$(proc_state "$pid" "$t") "; done)
		DETAIL="states $states" \
			check "SIGSTOP: still stopped (T) after the profiler detached" \
			all_state_T "$pid"
		t1=$(cpu_ticks "$pid")
		DETAIL="CPU ticks $t0 -> $t1" \
			check "SIGSTOP: no CPU used while stopped" "[ \$(( $t1 - $t0 )) -le 2 ]"
		check "SIGSTOP: untraced while stopped" untraced "$pid"
		kill -CONT "$pid"
		wait_until 3 not_stopped "$pid"
		check_unharmed "SIGCONT after SIGSTOP" "$pid" "$n"
	fi
	stop_target "$pid"
fi

# --- SIGTERM to the target kills it, the profiler then ends cleanly ------------------
if start_target wallclock; then
	pid=$TARGET_PID
	out=$TMP/term.folded
	prof_bg "$TMP/term" "$pid" -o "$out"
	if wait_attached "$pid"; then
		sleep 0.5 # collect samples
		kill -TERM "$pid"
		check "SIGTERM to the target while profiled: target dies" \
			wait_until 5 gone "$pid"
		wait "$pid" 2>/dev/null
		rc=$?
		DETAIL="exit status $rc" check "SIGTERM: target killed by SIGTERM (status 143)" \
			"[ $rc = 143 ]"
		prof_wait 10
		check_ran "SIGTERM to the target" "$TMP/term" "$out"
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
	stop_target "$pid"
fi

done_testing
