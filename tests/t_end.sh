#!/usr/bin/env bash
# The end of a run, every way, as the target sees it.  (The profiler ended by
# SIGINT, SIGTERM, --duration and the target's own exit are in t_attach.sh.)
#  - the target is SIGKILLed from outside while profiled: the profiler
#    writes what it had, says "target exited", exits 0;
#  - the target is SIGKILLed while in a group-stop (SIGSTOP first): same;
#  - the profiler is SIGKILLed 50 times, 0-300 ms after it starts (half of
#    them in the first 15 ms, during attach): every time the target keeps running, every thread
#    untraced and not stopped, making progress, no call made to return
#    EINTR, and no output file or temporary file is left behind.
. "$(dirname "$0")/lib.sh"

# killed_target LABEL STOP_FIRST: profile wallclock, SIGKILL it (after a
# SIGSTOP if STOP_FIRST=1), check the profiler's end.
killed_target() {
	local label=$1 stop_first=$2 pid out base rc states reason
	start_target wallclock || return
	pid=$TARGET_PID
	base=$TMP/$3
	out=$base.folded
	prof_bg "$base" "$pid" -o "$out"
	if wait_attached "$pid"; then
		sleep 0.5 # collect samples
		if [ "$stop_first" = 1 ]; then
			kill -STOP "$pid"
			wait_until 3 all_stopped "$pid"
			states=$(for t in $(tids "$pid"); do echo -n "$t:$(proc_state "$pid" "$t") "; done)
			DETAIL="states $states" check "$label: the target is in a group-stop first" all_stopped "$pid"
			sleep 0.3 # sample it stopped for a while
		fi
		kill -KILL "$pid"
		check "$label: target dies" wait_until 5 gone "$pid"
		wait "$pid" 2>/dev/null
		rc=$?
		DETAIL="exit status $rc" check "$label: target died of SIGKILL (status 137)" "[ $rc = 137 ]"
		prof_wait 10
		check_ran "$label" "$base" "$out"
		reason=$(summary "$base.err")
		DETAIL="summary: ${reason:-none}" \
			check "$label: the summary says the target exited" \
			"grep -q ', target exited, wrote ' <<<\"\$reason\""
		DETAIL="$(grep -c . "$base.err") lines: $(head -c 300 "$base.err" | tr '\n' '|')" \
			check "$label: nothing on stderr but the summary (2 lines)" only_summary "$base.err"
		c=$(folded_count "$out" 'burn_cpu')
		DETAIL="burn_cpu in $c samples" check "$label: the profile has what was collected (burn_cpu)" \
			"[ '$c' -gt 0 ]"
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
	stop_target "$pid"
}

killed_target "target SIGKILLed while profiled" 0 kill
killed_target "target SIGKILLed in a group-stop" 1 stopkill

# --- the profiler SIGKILLed 50 times at random moments --------------------------
# The target is tests/bin/eintr: ten threads blocked in calls a stop would
# make fail with EINTR (or restart), one burning CPU, main in sigwaitinfo.

# traced_count PID: how many threads have a tracer right now (builtins
# only, so that it hardly delays the kill that follows).
traced_count() {
	local t k v n=0
	for t in /proc/$1/task/*; do
		while read -r k v; do
			[ "$k" = TracerPid: ] || continue
			[ "$v" != 0 ] && n=$((n + 1))
			break
		done 2>/dev/null <"$t/status"
	done
	echo $n
}

if start_target eintr; then
	pid=$TARGET_PID
	nthreads=$(thread_count "$pid")
	report=$TARGET_READY.report
	dir=$TMP/kills
	mkdir -p "$dir"
	not_alive= traced= stopped= stuck= status= fewer=
	before_attach=0 during_attach=0 attached=0
	for i in $(seq 1 50); do
		# Half the kills in the first 15 ms, where attaching happens.
		if [ $((i % 2)) = 1 ]; then delay=$((RANDOM % 15)); else delay=$((RANDOM % 300)); fi
		prof_bg "$dir/k$i" "$pid" --hz 999 -o "$dir/k$i.folded"
		sleep "$(printf '0.%03d' "$delay")" # the random moment: the point of the test
		seen=$(traced_count "$pid")
		kill -KILL "$PROF_PID"
		prof_wait 5
		case $seen in
		0) before_attach=$((before_attach + 1)) ;;
		"$nthreads") attached=$((attached + 1)) ;;
		*) during_attach=$((during_attach + 1)) ;;
		esac
		[ "$PROF_RC" = 137 ] || status="$status #$i(${delay}ms):rc=$PROF_RC"
		DETAIL=
		alive "$pid" || { not_alive="$not_alive #$i(${delay}ms)"; break; }
		untraced "$pid" || traced="$traced #$i(${delay}ms): $DETAIL;"
		DETAIL=
		not_stopped "$pid" || stopped="$stopped #$i(${delay}ms): $DETAIL;"
		DETAIL=
		progresses "$pid" || stuck="$stuck #$i(${delay}ms)"
		DETAIL=
		n=$(thread_count "$pid")
		[ "$n" = "$nthreads" ] || fewer="$fewer #$i:$n"
	done
	diag "killed before any thread was seized: $before_attach, while seizing: $during_attach, once all $nthreads were: $attached"
	DETAIL="$status" check "50 SIGKILLs of the profiler: each one died of the SIGKILL (not before)" \
		"[ -z \"\$status\" ]"
	DETAIL="dead after$not_alive" check "50 SIGKILLs of the profiler: target alive every time" \
		"[ -z \"\$not_alive\" ]"
	DETAIL="$traced" check "50 SIGKILLs: every thread untraced every time (TracerPid 0)" \
		"[ -z \"\$traced\" ]"
	DETAIL="$stopped" check "50 SIGKILLs: no thread stopped (T/t) after any of them" \
		"[ -z \"\$stopped\" ]"
	DETAIL="no progress after$stuck" check "50 SIGKILLs: target making progress after each" \
		"[ -z \"\$stuck\" ]"
	DETAIL="thread counts:$fewer" check "50 SIGKILLs: all $nthreads threads still there after each" \
		"[ -z \"\$fewer\" ]"
	left=$(ls -A "$dir" | grep -vE '^k[0-9]+\.(out|err)$' | tr '\n' ' ')
	DETAIL="left: $left" check "50 SIGKILLs: no output or temporary file left behind" "[ -z '$left' ]"
	if request_report "$pid" "$report"; then
		DETAIL="$(grep -v serial "$report" | tr '\n' ' ')" \
			check "50 SIGKILLs: no blocked call returned (no EINTR, no early return)" \
			"! grep -qE 'eintr=[1-9]|other=[1-9]' '$report'"
	else
		check "50 SIGKILLs: the target still answers SIGUSR1" false
	fi
	stop_target "$pid"
fi

done_testing
