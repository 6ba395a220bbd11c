#!/usr/bin/env bash
# Where perf events are refused, as a container's seccomp profile refuses
# them: tests/bin/noperf runs the profiler under a seccomp filter that
# answers perf_event_open with EPERM (Docker's default) or EACCES.
#   1. Default capture: one note at the start ("capturing by ptrace stops:
#      ... can see EINTR", naming the seccomp filter), the summary and
#      --stats say ptrace, and wallclock's known split (a third each) holds.
#      The same run without the filter says perf and no such note: the
#      checks can fail.
#   2. --capture perf under the filter: one line, non-zero exit, nothing
#      touched (docs/safety.md).
#   3. As the user nobody against a target of nobody's: without the filter
#      (perf_event_paranoid 2 lets a user sample its own threads in user
#      mode) the capture is perf, or ptrace with the note where the kernel
#      refuses a user (a paranoid level above 2); under the filter, ptrace
#      with the note.  No sysctl is changed.
# After each, the target runs on, untraced, no thread stopped.
. "$(dirname "$0")/lib.sh"

NOTE_RE='^cprof-attach: note: capturing by ptrace stops: a thread in a call with a timeout can see EINTR'
NOBODY=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)

# run BASE COMMAND...: the profiler wrapped (60 s guard), as prof runs it.
run() {
	local base=$1
	shift
	timeout --foreground -k 5 60 "$@" >"$base.out" 2>"$base.err"
	PROF_RC=$?
}

# shares LABEL FOLDED: wallclock's split, a third each (+-5 points).
shares() {
	local label=$1 out=$2 total what n p
	total=$(folded_total "$out")
	for what in burn_cpu sleep_here 'pthread_(clock)?join|clockjoin'; do
		n=$(folded_count "$out" "$what")
		p=$(pct "$n" "$total")
		DETAIL="$p% of $total samples" \
			check "$label: wall-clock share of ${what%%|*} is 33.3% +- 5" within "$p" 33.3 5
	done
}

# fallback LABEL BASE: the run of BASE fell back to ptrace stops and said
# so once, first, naming WHY_RE.
fallback() {
	local label=$1 base=$2 stopped byperf
	DETAIL="first line: $(head -n 1 "$base.err")" \
		check "$label: the note comes first and names the cause" \
		"head -n 1 '$base.err' | grep -qE \"\$NOTE_RE\" && head -n 1 '$base.err' | grep -qE \"\$WHY_RE\""
	DETAIL="$(grep -c 'note:' "$base.err") notes" \
		check "$label: one note, said once" "[ \"\$(grep -c 'note:' '$base.err')\" = 1 ]"
	DETAIL="$(summary "$base.err" | tail -n 1)" \
		check "$label: the summary says ptrace" "grep -qE '^cprof-attach: [0-9.]+ of 99 Hz, .*, ptrace, ' '$base.err'"
	read -r stopped byperf <<<"$(capture_counts "$base.err")"
	DETAIL="$(grep -o 'stats: capture [a-z]*' "$base.err"); $stopped stopped, $byperf by perf events" \
		check "$label: --stats says ptrace: running threads stopped, none by perf events" \
		"grep -q 'stats: capture ptrace;' '$base.err' && [ '$stopped' -gt 0 ] && [ '$byperf' = 0 ]"
}

if start_target wallclock; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")

	# 1. The fallback, and the same run without the filter.
	WHY_RE='seccomp filter'
	run "$TMP/eperm" "$BIN/noperf" - EPERM "$CPROF" "$pid" --hz 99 --duration 2 --stats \
		-o "$TMP/eperm.folded"
	check_ran "seccomp EPERM" "$TMP/eperm" "$TMP/eperm.folded"
	fallback "seccomp EPERM" "$TMP/eperm"
	shares "seccomp EPERM" "$TMP/eperm.folded"
	check_unharmed "seccomp EPERM" "$pid" "$n"

	prof "$TMP/free" "$pid" --hz 99 --duration 1 --stats -o "$TMP/free.folded"
	check_ran "no filter" "$TMP/free" "$TMP/free.folded"
	if grep -qE '^cprof-attach: [0-9.]+ of 99 Hz, .*, perf, ' "$TMP/free.err"; then
		DETAIL="$(head -c 300 "$TMP/free.err")" \
			check "the test can fail: without the filter, perf capture and no ptrace note" \
			"! grep -qE \"\$NOTE_RE\" '$TMP/free.err' && grep -q 'stats: capture perf;' '$TMP/free.err'"
	else
		skip "the test can fail: without the filter, perf capture" "perf events not permitted here"
	fi

	# 2. --capture perf where it is refused: an error, nothing touched.
	expect_error "--capture perf under seccomp EACCES" \
		'cannot capture by perf events \(Permission denied: .*seccomp.*\): use --capture ptrace' \
		"$TMP/never.folded" "$pid" -- "$BIN/noperf" - EACCES "$CPROF" "$pid" --capture perf \
		--duration 1 -o "$TMP/never.folded"
	check_unharmed "after the refused --capture perf" "$pid" "$n"
	stop_target "$pid"
fi

# 3. As nobody, against nobody's target.
mkdir -m 777 "$TMP/nobody"
TARGET_READY=$TMP/nobody/wallclock.ready
"${NOBODY[@]}" "$BIN/wallclock" "$TARGET_READY" &
pid=$!
PIDS+=("$pid")
if wait_until 10 file_ready "$TARGET_READY"; then
	n=$(thread_count "$pid")
	base=$TMP/nobody/user
	run "$base" "${NOBODY[@]}" "$CPROF" "$pid" --hz 99 --duration 2 --stats -o "$base.folded"
	check_ran "nobody" "$base" "$base.folded"
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)
	if grep -qE '^cprof-attach: [0-9.]+ of 99 Hz, .*, perf, ' "$base.err"; then
		DETAIL="$(head -c 300 "$base.err")" \
			check "nobody, perf_event_paranoid $paranoid: perf capture (user mode), no ptrace note" \
			"! grep -qE \"\$NOTE_RE\" '$base.err'"
	else
		WHY_RE="perf_event_paranoid is $paranoid, which needs root or CAP_PERFMON"
		fallback "nobody, perf_event_paranoid $paranoid" "$base"
	fi
	shares "nobody" "$base.folded"
	check_unharmed "nobody" "$pid" "$n"

	WHY_RE='seccomp filter'
	base=$TMP/nobody/eacces
	run "$base" "${NOBODY[@]}" "$BIN/noperf" - EACCES "$CPROF" "$pid" --hz 99 --duration 2 \
		--stats -o "$base.folded"
	check_ran "nobody, seccomp EACCES" "$base" "$base.folded"
	fallback "nobody, seccomp EACCES" "$base"
	shares "nobody, seccomp EACCES" "$base.folded"
	check_unharmed "nobody, seccomp EACCES" "$pid" "$n"
else
	check "wallclock as nobody starts" false
fi
stop_target "$pid"

done_testing
