#!/usr/bin/env bash
# Job control: a stopped profiler must not stop the target.  While
# attached, Ctrl-Z (SIGTSTP) is read and noted, not obeyed: the profiler
# keeps running, says so in one line, and the target's signals are still
# delivered at once (tests/bin/sigcount counts them); SIGTTOU (a background
# profiler writing to a terminal with tostop) does not stop it either.
# SIGSTOP, which cannot be caught: a watchdog process resumes the
# profiler, which ends the run (detaches, writes) rather than hold the
# target; the target's next signal is delivered at once.
# Issue 40, item 6: a profiler held without a stop of its own (another
# tracer seizes and interrupts every thread of it, as a debugger does:
# state 't', tests/targets/ptholder.py) makes no progress: its watchdog
# sees its beat stop and kills it within 2 s, which releases the target
# (before: held, its signals waiting, for as long as the debugger held it).
. "$(dirname "$0")/lib.sh"

start_target sigcount || done_testing
pid=$TARGET_PID
base=$TMP/tstp
prof_bg "$base" "$pid" -o "$base.folded"
if wait_attached "$pid"; then
	kill -TSTP "$PROF_PID"
	_noted() { grep -q 'note: Ctrl-Z ignored' "$base.err"; }
	check "SIGTSTP: one note on stderr" wait_until 5 _noted
	s=$(proc_state "$PROF_PID")
	DETAIL="state $s" check "SIGTSTP: the profiler is not stopped" "[ '$s' != T ]"
	_usr1_is() { grep -q "USR1=$1\\b" "$TARGET_READY.report" 2>/dev/null; }
	kill -USR1 "$pid"
	check "SIGTSTP: a signal sent to the target next is delivered (within 2 s)" wait_until 2 _usr1_is 1
	kill -TTOU "$PROF_PID"
	kill -USR1 "$pid"
	check "SIGTTOU: ignored, the target's next signal delivered" wait_until 2 _usr1_is 2
	check "still attached" all_traced "$pid"
	kill -INT "$PROF_PID"
	prof_wait 15
	check_ran "after Ctrl-Z" "$base" "$base.folded"
	check "target untraced afterwards" untraced "$pid"
fi

# SIGSTOP cannot be caught: the watchdog (run/watchdog.c) sees the profiler
# stopped within 20 ms, and the run ends as on Ctrl-C (detached, written),
# so the target's next signal is delivered at once.
base=$TMP/stop
prof_bg "$base" "$pid" -o "$base.folded"
if wait_attached "$pid"; then
	n0=$(sed -nE 's/.*USR1=([0-9]+).*/\1/p' "$TARGET_READY.report" 2>/dev/null)
	kill -STOP "$PROF_PID"
	kill -USR1 "$pid"
	check "SIGSTOP: a signal sent to the target is delivered (within 2 s)" \
		wait_until 2 _usr1_is $((${n0:-0} + 1))
	prof_wait 15
	check_ran "after SIGSTOP" "$base" "$base.folded"
	DETAIL="$(summary "$base.err")" check "SIGSTOP: the summary says the run ended because it was stopped" \
		"grep -q 'stopped (SIGSTOP): ended rather than hold the target' '$base.err'"
	check "SIGSTOP: target untraced afterwards" untraced "$pid"
fi

# Issue 27, item 1: the watchdog killed (or stopped) leaves the profiler
# unguarded; it notices at once (a pidfd of the watchdog), says so, and ends
# the run (detached, written), so a SIGSTOP that comes after cannot hold
# the target.  Five times: the watchdog killed, the profiler's end waited
# for, then a SIGSTOP of the profiler, and the target's signal delivered.
dog_of() { pgrep -P "$1" -x cprof-watchdog | head -1; }
for i in 1 2 3 4 5; do
	base=$TMP/dog$i
	prof_bg "$base" "$pid" -o "$base.folded"
	wait_attached "$pid" || break
	dog=$(dog_of "$PROF_PID")
	DETAIL="children: $(pgrep -P "$PROF_PID" -a | tr '\n' ' ')" check "watchdog $i: found" "[ -n '$dog' ]"
	[ -n "$dog" ] || break
	if [ "$i" = 5 ]; then kill -STOP "$dog"; else kill -KILL "$dog"; fi
	_ended_or_stoppable() { untraced "$pid" || gone "$PROF_PID"; }
	check "watchdog $i: the profiler lets the target go at once (within 2 s)" wait_until 2 _ended_or_stoppable
	kill -STOP "$PROF_PID" 2>/dev/null
	n0=$(sed -nE 's/.*USR1=([0-9]+).*/\1/p' "$TARGET_READY.report" 2>/dev/null)
	kill -USR1 "$pid"
	check "watchdog $i: then a SIGSTOP of the profiler holds nothing: the target's signal is delivered" \
		wait_until 2 _usr1_is $((${n0:-0} + 1))
	kill -CONT "$PROF_PID" 2>/dev/null
	[ "$i" = 5 ] && kill -CONT "$dog" 2>/dev/null
	prof_wait 15
	check_ran "watchdog $i" "$base" "$base.folded"
	what=killed
	[ "$i" = 5 ] && what=stopped
	DETAIL="$(summary "$base.err")" check "watchdog $i: the summary says why it ended ($what)" \
		"grep -q 'the watchdog (cprof-watchdog) was $what: ended rather than run where a SIGSTOP would hold the target' '$base.err'"
	check "watchdog $i: target untraced afterwards" untraced "$pid"
done

# --- held by another tracer (issue 40, item 6) ---------------------------------------
if command -v python3 >/dev/null; then
	base=$TMP/held
	prof_bg "$base" "$pid" -o "$base.folded"
	if wait_attached "$pid"; then
		python3 "$ROOT/tests/targets/ptholder.py" "$TMP/held.ready" "$PROF_PID" 20 &
		holder=$!
		PIDS+=("$holder")
		if wait_until 10 file_ready "$TMP/held.ready"; then
			t0=$(date +%s%N)
			check "held: the target is released (within 4 s of the profiler's hold)" wait_until 4 untraced "$pid"
			t1=$(date +%s%N)
			diag "held: $(cat "$TMP/held.ready"), target released after $(( (t1 - t0) / 1000000 )) ms"
			n0=$(sed -nE 's/.*USR1=([0-9]+).*/\1/p' "$TARGET_READY.report" 2>/dev/null)
			kill -USR1 "$pid"
			check "held: then the target's signal is delivered" wait_until 2 _usr1_is $((${n0:-0} + 1))
			check "held: the watchdog says why, on stderr" \
				"grep -q 'made no progress for 2 s (held by another tracer, or frozen): killed by its watchdog' '$base.err'"
		else
			check "held: the holder seizes the profiler" false
		fi
		kill "$holder" 2>/dev/null
		wait "$holder" 2>/dev/null
		kill -KILL "$PROF_PID" 2>/dev/null
		prof_wait 5
	fi
	check "held: target untraced afterwards" untraced "$pid"
fi
stop_target "$pid"
done_testing
