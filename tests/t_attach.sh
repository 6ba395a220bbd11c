#!/usr/bin/env bash
# Attach without harm: whatever ends the profiler (--duration,
# SIGINT, SIGTERM, the target's exit, SIGKILL of the profiler), the target
# is left running, every thread untraced, with the same threads.  Threads
# created while sampling are sampled; forking targets are not disturbed.
. "$(dirname "$0")/lib.sh"

# check_reason LABEL ERRFILE REASON: the summary line names why it stopped.
check_reason() {
	local line
	line=$(summary "$2")
	DETAIL="summary: ${line:-none}" check "$1: the summary says '$3'" \
		"grep -qF ', $3, wrote ' <<<\"\$line\""
}

# --- ended by --duration ------------------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	prof "$TMP/dur" "$pid" --duration 1 -o "$TMP/dur.folded"
	check_ran "duration" "$TMP/dur" "$TMP/dur.folded"
	check_reason "duration" "$TMP/dur.err" "duration reached"
	secs=$(summary_field "$TMP/dur.err" seconds)
	DETAIL="summary says ${secs:-?} s" check "duration: ran about 1 s" \
		"[ -n '$secs' ] && within '$secs' 1 0.3"
	check_unharmed "duration" "$pid" "$n"
	stop_target "$pid"
fi

# --- ended by SIGINT and by SIGTERM -------------------------------------------
for sig in INT TERM; do
	start_target wallclock || continue
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	out=$TMP/sig$sig.folded
	prof_bg "$TMP/sig$sig" "$pid" -o "$out"
	if wait_attached "$pid"; then
		sleep 1 # collect samples for a second
		kill -"$sig" "$PROF_PID"
		prof_wait 10
		check_ran "SIG$sig" "$TMP/sig$sig" "$out"
		check_reason "SIG$sig" "$TMP/sig$sig.err" \
			"$([ $sig = INT ] && echo interrupted || echo terminated)"
		DETAIL="$(head -c 300 "$TMP/sig$sig.err")" \
			check "SIG$sig: nothing on stderr but the summary (2 lines)" \
			only_summary "$TMP/sig$sig.err"
		check_unharmed "SIG$sig" "$pid" "$n"
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
	stop_target "$pid"
done

# --- ended by the target's exit -----------------------------------------------
if start_target exiter 1.5 0; then
	pid=$TARGET_PID
	out=$TMP/exit.folded
	prof_bg "$TMP/exit" "$pid" -o "$out"
	wait_attached "$pid"
	check "target exit: target exits by itself while profiled" \
		wait_until 10 gone "$pid"
	prof_wait 5
	check_ran "target exit" "$TMP/exit" "$out"
	check_reason "target exit" "$TMP/exit.err" "target exited"
	n=$(folded_count "$out" 'exiter_work')
	DETAIL="exiter_work in $n samples" check "target exit: profile has exiter_work" \
		"[ '$n' -gt 0 ]"
	wait "$pid" 2>/dev/null
	rc=$?
	DETAIL="target exit status $rc" check "target exit: target's own exit status kept (0)" \
		"[ $rc = 0 ]"
fi

# --- the profiler SIGKILLed mid-run (3 times, at 1000 Hz to hit a stop) -------
if start_target wallclock; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	for i in 1 2 3; do
		out=$TMP/kill$i.folded
		# Run 2 has an older profile at the output path: written atomically,
		# it is either replaced whole or (here) left untouched.
		[ $i = 2 ] && echo "old;profile 1" >"$out"
		prof_bg "$TMP/kill$i" "$pid" --hz 1000 -o "$out"
		wait_attached "$pid" || break
		sleep 0.3 # let it sample
		kill -KILL "$PROF_PID"
		prof_wait 5
		if [ $i = 2 ]; then
			DETAIL="now: $(head -c 100 "$out" 2>/dev/null)" \
				check "SIGKILL #$i: the existing output file is untouched" \
				"[ \"\$(cat '$out' 2>/dev/null)\" = 'old;profile 1' ]"
		else
			check "SIGKILL #$i: no output file at the final path" "[ ! -e '$out' ]"
		fi
		check_unharmed "SIGKILL #$i" "$pid" "$n"
	done
	stop_target "$pid"
fi

# --- a thread created while sampling is sampled ---------------------------------
if start_target latethread; then
	pid=$TARGET_PID
	out=$TMP/late.folded
	prof_bg "$TMP/late" "$pid" --duration 2 --threads -o "$out"
	if wait_attached "$pid"; then
		kill -USR1 "$pid"
		check "new thread: SIGUSR1 reaches the target, latecomer starts" \
			wait_until 5 file_ready "$TARGET_READY.late"
		n=$(thread_count "$pid")
		prof_wait 15
		check_ran "new thread" "$TMP/late" "$out"
		c=$(folded_count "$out" 'late_work')
		DETAIL="late_work in $c samples; profile: $(cut -c1-120 "$out" | tr '\n' '|')" \
			check "new thread: late_work appears in the profile" "[ '$c' -gt 0 ]"
		c=$(folded_count "$out" '^latecomer \([0-9]+\);')
		DETAIL="$(cut -d';' -f1 "$out" | sort -u | tr '\n' '|')" \
			check "new thread: rooted at 'latecomer (TID)'" "[ '$c' -gt 0 ]"
		check_unharmed "new thread" "$pid" "$n"
	fi
	stop_target "$pid"
fi

# --- threads coming and going all the time ----------------------------------------
if start_target latethread churn; then
	pid=$TARGET_PID
	out=$TMP/churn.folded
	kill -USR1 "$pid"
	wait_until 5 file_ready "$TARGET_READY.late"
	prof "$TMP/churn" "$pid" --duration 1.5 -o "$out"
	check_ran "thread churn" "$TMP/churn" "$out"
	c=$(folded_count "$out" 'brief_work')
	DETAIL="brief_work in $c samples" \
		check "thread churn: short-lived threads sampled" "[ '$c' -gt 0 ]"
	check "thread churn: target alive" alive "$pid"
	check "thread churn: every thread untraced" untraced "$pid"
	check "thread churn: target keeps running" progresses "$pid"
	stop_target "$pid"
fi

# --- a target that forks all the time ----------------------------------------------
if start_target forker; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	out=$TMP/fork.folded
	prof_bg "$TMP/fork" "$pid" --duration 1.5 -o "$out"
	if wait_attached "$pid"; then
		kill -USR1 "$pid"
		check "forking target: SIGUSR1 reaches it, it forks a long-lived child" \
			wait_until 5 file_ready "$TARGET_READY.child"
		prof_wait 15
		check_ran "forking target" "$TMP/fork" "$out"
		c=$(folded_count "$out" 'reap_child')
		DETAIL="reap_child in $c samples" check "forking target: parent sampled" "[ '$c' -gt 0 ]"
		DETAIL="$(cat "$TARGET_READY.anomaly" 2>/dev/null)" \
			check "forking target: every child exited normally" "[ ! -e '$TARGET_READY.anomaly' ]"
		check_unharmed "forking target" "$pid" "$n"
		child=$(cat "$TARGET_READY.child" 2>/dev/null)
		if [ -n "$child" ]; then
			PIDS+=("$child")
			check "child forked while profiled: alive" alive "$child"
			check "child forked while profiled: untraced" untraced "$child"
			check "child forked while profiled: not stopped" not_stopped "$child"
		fi
	fi
	stop_target "$pid"
fi

done_testing
