#!/usr/bin/env bash
# Calls with a timeout under a client loop see no EINTR with the default
# capture.  tests/bin/timeouts is a server and its client ping-ponging on
# a TCP socket with SO_RCVTIMEO/SO_SNDTIMEO, a thread in epoll_wait with
# a 1 s timeout and one in sem_timedwait, each woken every round: each
# thread is found now running, now blocked, as a loaded server's are; 100
# idle threads are the pool a tick visits too.
# Profiled 5 s at 99 Hz with perf capture (the default where permitted)
# no call may return EINTR, and every thread is still counted at every
# tick; then 5 s with --capture ptrace (up to 3 times) must make some return EINTR (a
# thread found running is interrupted and may be inside recv() or
# epoll_wait() by then), which shows the test can fail.  sem_timedwait
# is a futex wait the kernel restarts after a stop: its count is shown,
# 0 under either capture so far.
# The same server then runs inside a CPython process (tests/bin/libtimeouts.so
# called by tests/targets/pytimeouts.py, beside a Python thread that
# computes): a native extension's calls, in a process whose Python frames
# are read.  Those are read at the tick, right after the thread's perf
# sample, not in a stop: no thread stopped, no EINTR, and the Python
# thread's frames still named.
. "$(dirname "$0")/lib.sh"

THREADS="s-recv c-loop w-epoll w-semtimed"

# field REPORT NAME KEY: one count of one thread in the report.
field() { sed -nE "s/^$2 .*$3=([0-9]+).*/\1/p" "$1"; }

# no_eintr LABEL REPORT ERR [EINTR_ONLY]: every thread of REPORT saw no
# EINTR and no early return (with EINTR_ONLY, no EINTR: a 1 s timeout
# can pass in a process whose client loop shares the machine with a
# computing Python thread and a loaded CI); ERR's --stats: no thread
# stopped, some sampled by perf.
no_eintr() {
	local label=$1 report=$2 err=$3 only=${4:-} name c stopped byperf
	for name in $THREADS; do
		c="$(field "$report" "$name" eintr) $(field "$report" "$name" other)"
		if [ -n "$only" ]; then
			DETAIL="$name: eintr other = $c" \
				check "$label, 5 s at 99 Hz: $name saw no EINTR" "[ '${c%% *}' = 0 ]"
		else
			DETAIL="$name: eintr other = $c" \
				check "$label, 5 s at 99 Hz: $name saw no EINTR, no early return" "[ '$c' = '0 0' ]"
		fi
	done
	read -r stopped byperf <<<"$(capture_counts "$err")"
	DETAIL="$stopped stopped, $byperf by perf events" \
		check "$label: no thread stopped, running ones sampled from perf events" \
		"[ '$stopped' = 0 ] && [ '${byperf:-0}' -gt 0 ]"
}

if start_target timeouts 0 100; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	report=$TARGET_READY.report
	request_report "$pid" "$report"
	DETAIL="$(tr '\n' '|' <"$report")" \
		check "before profiling: no call returned EINTR or early" \
		"! grep -qE 'eintr=[1-9]|other=[1-9]' '$report'"
	before=$(field "$report" c-loop rounds)

	out=$TMP/perf.folded
	prof "$TMP/perf" "$pid" --hz 99 --duration 5 --threads --stats -o "$out"
	check_ran "perf capture" "$TMP/perf" "$out"
	diag "$(summary "$TMP/perf.err")"
	if ! grep -qE '^cprof-attach: [0-9.]+ of 99 Hz, .*, perf, ' "$TMP/perf.err"; then
		skip "perf capture: the calls with a timeout saw no EINTR" \
			"perf events not permitted here: $(grep -m1 'note:' "$TMP/perf.err")"
	else
		request_report "$pid" "$report"
		no_eintr "perf capture" "$report" "$TMP/perf.err"
		after=$(field "$report" c-loop rounds)
		DETAIL="$before -> $after rounds" \
			check "perf capture: the client loop went on meanwhile" "[ '$after' -gt '$((before + 1000))' ]"
		# Wall clock: every thread at about every tick, running or not.
		secs=$(summary_field "$TMP/perf.err" seconds)
		achieved=$(summary_field "$TMP/perf.err" achieved)
		ticks=$(awk -v a="$achieved" -v s="$secs" 'BEGIN { printf "%d", a * s }')
		for name in $THREADS; do
			c=$(folded_count "$out" "^$name \\(")
			DETAIL="$c samples, $ticks ticks" \
				check "perf capture, wall clock: $name sampled at >= 90% of the ticks" \
				"[ $((c * 100)) -ge $((ticks * 90)) ]"
		done
		rooted=$(summary_field "$TMP/perf.err" rooted)
		DETAIL="$rooted% reached their root" \
			check "perf capture: >= 95% of the stacks reached their root" \
			"awk -v r='$rooted' 'BEGIN { exit !(r >= 95) }'"
	fi
	check_unharmed "perf capture" "$pid" "$n"

	# The same target under ptrace stops: the detector must fire.
	request_report "$pid" "$report"
	e0=0
	for name in s-recv c-loop w-epoll; do e0=$((e0 + $(field "$report" "$name" eintr))); done
	# The race a stop needs (a thread found running that enters its call
	# before the interrupt) is timing's: up to three runs of 5 s.
	for try in 1 2 3; do
		prof "$TMP/ptrace" "$pid" --hz 99 --duration 5 --threads --capture ptrace -o "$TMP/ptrace.folded"
		request_report "$pid" "$report"
		e1=0
		for name in s-recv c-loop w-epoll; do e1=$((e1 + $(field "$report" "$name" eintr))); done
		[ "$e1" -gt "$e0" ] && break
	done
	check_ran "ptrace capture" "$TMP/ptrace" "$TMP/ptrace.folded"
	diag "after --capture ptrace: $(grep -v serial "$report" | tr '\n' ' ')"
	DETAIL="EINTR in recv/send/epoll_wait: $e0 before, $e1 after" \
		check "the test can fail: ptrace stops make recv, send or epoll_wait return EINTR" \
		"[ '$e1' -gt '$e0' ]"
	check_unharmed "ptrace capture" "$pid" "$n"
	stop_target "$pid"
fi

# --- in a CPython process ------------------------------------------------------
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
	skip "in a CPython process: no EINTR, no stop" "no python3"
elif ! grep -qE '^cprof-attach: [0-9.]+ of 99 Hz, .*, perf, ' "$TMP/perf.err" 2>/dev/null; then
	skip "in a CPython process: no EINTR, no stop" "perf events not permitted here"
else
	ready=$TMP/py.ready
	"$PY" "$ROOT/tests/targets/pytimeouts.py" "$BIN/libtimeouts.so" "$ready" &
	pid=$!
	PIDS+=("$pid")
	if ! wait_until 10 file_ready "$ready"; then
		DETAIL="no $ready after 10 s" check "pytimeouts.py starts" false
	else
		n=$(thread_count "$pid")
		report=$ready.report
		out=$TMP/py.folded
		prof "$TMP/py" "$pid" --hz 99 --duration 5 --threads --stats -o "$out"
		check_ran "CPython process" "$TMP/py" "$out"
		request_report "$pid" "$report"
		no_eintr "CPython process, perf capture" "$report" "$TMP/py.err" eintr-only
		after=$(sed -nE 's/.* ([0-9]+) of them read at the tick.*/\1/p' "$TMP/py.err")
		DETAIL="$(grep -oE 'python: [^;]*' "$TMP/py.err" | cut -c1-300)" \
			check "CPython process: Python frames read at the tick, after the perf sample" \
			"[ '${after:-0}' -gt 0 ]"
		py=$(folded_count "$out" '"py_compute"')
		named=$(folded_count "$out" '"py_compute".*;py_compute \(pytimeouts\.py:[0-9]+\)')
		DETAIL="$named of $py" \
			check "CPython process: the computing thread's samples name py_compute (>= 90%)" \
			"[ '$py' -gt 0 ] && [ \$((named * 100)) -ge \$((py * 90)) ]"
		check_unharmed "CPython process" "$pid" "$n"
	fi
	stop_target "$pid"
fi

done_testing
