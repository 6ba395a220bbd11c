#!/usr/bin/env bash
# Signals belong to the target (attaching without harm, continued from
# t_attach.sh).  While profiled,
# every signal sent to the target reaches it (none dropped, none added), a
# SIGSTOP stays a stop (and is still a stop after detaching), a SIGTERM
# kills it, and sampling a thread blocked in epoll_wait never makes the
# call fail with EINTR.  Standard signals (SIGTERM, SIGINT, SIGUSR1,
# SIGALRM, SIGCHLD) sent N times, one at a time, reach their handlers
# exactly N times; SIGSTOP and SIGCONT stop and continue the target while
# it stays profiled.
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

# --- standard signals, one at a time, each reaching its handler once ------------
# sigcount counts SIGTERM, SIGINT, SIGUSR1, SIGALRM, SIGCHLD and SIGCONT in
# handlers (on a running and on a sleeping thread).  Standard signals do not
# queue, so each is sent only once the last one is counted: N sent, N handled.
N=20
sig_count() { sed -nE "s/.*(^| )$2=([0-9]+).*/\2/p" "$1" 2>/dev/null; }
_count_is() { [ "$(sig_count "$1" "$2")" = "$3" ]; }
if start_target sigcount; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	report=$TARGET_READY.report
	out=$TMP/count.folded
	prof_bg "$TMP/count" "$pid" --threads -o "$out"
	if wait_attached "$pid"; then
		for sig in TERM INT USR1 ALRM CHLD; do
			got=ok
			for i in $(seq 1 $N); do
				kill -"$sig" "$pid"
				if ! wait_until 5 _count_is "$report" "$sig" "$i"; then
					got="after sending #$i the count is $(sig_count "$report" "$sig")"
					break
				fi
			done
			DETAIL="$got; report: $(cat "$report" 2>/dev/null)" \
				check "SIG$sig sent $N times while profiled: handled exactly $N times" \
				"[ '$got' = ok ]"
		done

		# SIGSTOP and SIGCONT while profiled (the profiler stays attached).
		kill -STOP "$pid"
		wait_until 3 all_stopped "$pid"
		states=$(for t in $(tids "$pid"); do echo -n "$t:$(proc_state "$pid" "$t") "; done)
		DETAIL="states $states" check "SIGSTOP while profiled: every thread stops" all_stopped "$pid"
		t0=$(cpu_ticks "$pid")
		sleep 0.5 # stay stopped for 50 ticks of sampling
		t1=$(cpu_ticks "$pid")
		DETAIL="CPU ticks $t0 -> $t1" \
			check "SIGSTOP while profiled: stays stopped through sampling (no CPU used)" \
			"[ \$(( $t1 - $t0 )) -le 2 ] && all_stopped $pid"
		check "SIGSTOP while profiled: the profiler is still attached" all_traced "$pid"
		kill -CONT "$pid"
		DETAIL="states: $(for t in $(tids "$pid"); do echo -n "$t:$(proc_state "$pid" "$t") "; done)" \
			check "SIGCONT while profiled: every thread runs again" wait_until 3 not_stopped "$pid"
		check "SIGCONT while profiled: target makes progress" progresses "$pid"
		check "SIGCONT while profiled: the profiler is still attached" all_traced "$pid"
		DETAIL="report: $(cat "$report" 2>/dev/null)" \
			check "SIGCONT while profiled: its handler ran once" wait_until 5 _count_is "$report" CONT 1

		kill -INT "$PROF_PID"
		prof_wait 10
		check_ran "standard signals" "$TMP/count" "$out"
		for name in sig-burn sig-sleep; do
			c=$(folded_count "$out" "^$name \\([0-9]+\\);")
			DETAIL="$c samples" check "standard signals: thread $name sampled" "[ '$c' -gt 0 ]"
		done
		# After detaching: one more of each, and nothing else arrived late.
		for sig in TERM INT USR1 ALRM CHLD; do
			kill -"$sig" "$pid"
			wait_until 5 _count_is "$report" "$sig" $((N + 1))
		done
		DETAIL="report: $(cat "$report" 2>/dev/null)" \
			check "after detach: exactly $N + 1 of each signal, no duplicates" \
			"grep -qx 'TERM=$((N + 1)) INT=$((N + 1)) USR1=$((N + 1)) ALRM=$((N + 1)) CHLD=$((N + 1)) CONT=1' '$report'"
		check_unharmed "standard signals" "$pid" "$n"
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
	stop_target "$pid"
fi

done_testing
