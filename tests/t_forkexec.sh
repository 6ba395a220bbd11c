#!/usr/bin/env bash
# Issue 4, the target's view, 4: exec and fork.
#  - fork: tests/bin/forker forks a child every ~5 ms.  While the parent is
#    profiled, no child is ever traced (TracerPid 0 in every child's
#    status, polled until 50 were seen, at most 3 s), and neither is a
#    long-lived one.
#  - exec: tests/bin/execer calls exec on cue (SIGUSR1), from main or from
#    a second thread, into itself or into /bin/sleep.  The profiler must
#    notice, say so (a stop reason mentioning exec), write what it had and
#    exit 0; the new image runs on, untraced; and no frame of the new image
#    is in the profile (never unwound with the old maps).  The thread that
#    calls exec spins until then, so at 999 Hz a stop is often asked for
#    right as it calls exec.
. "$(dirname "$0")/lib.sh"

# --- fork: children never traced while the parent is ------------------------
# children_scan PID SECONDS ENOUGH: for SECONDS (or until ENOUGH children
# were seen), list PID's children over and over and read each one's
# TracerPid; prints "SEEN TRACED DETAILS".
children_scan() {
	local pid=$1 end seen=0 traced=0 detail= c k v kids tp
	declare -A known=()
	end=$((${EPOCHREALTIME/[.,]/} + $2 * 1000000))
	# Builtins only (read, no cat or awk): a child lives about 5 ms.
	while [ "${EPOCHREALTIME/[.,]/}" -lt "$end" ] && [ "$seen" -lt "$3" ]; do
		kids=
		read -r kids 2>/dev/null <"/proc/$pid/task/$pid/children"
		for c in $kids; do
			tp=
			while read -r k v; do
				[ "$k" = TracerPid: ] && { tp=$v; break; }
			done 2>/dev/null <"/proc/$c/status"
			[ -n "$tp" ] || continue
			[ -n "${known[$c]}" ] || seen=$((seen + 1))
			known[$c]=1
			if [ "$tp" != 0 ]; then
				traced=$((traced + 1))
				detail="$detail $c:$tp"
			fi
		done
	done
	echo "$seen $traced$detail"
}

if start_target forker; then
	pid=$TARGET_PID
	out=$TMP/fork.folded
	prof_bg "$TMP/fork" "$pid" --duration 5 -o "$out"
	if wait_attached "$pid"; then
		kill -USR1 "$pid"
		check "fork: SIGUSR1 reaches the profiled parent, it forks a long-lived child" \
			wait_until 5 file_ready "$TARGET_READY.child"
		read -r seen traced detail <<<"$(children_scan "$pid" 3 50)"
		still=$(alive "$PROF_PID" && echo yes || echo no)
		diag "children seen while the parent was profiled: $seen, traced: $traced"
		DETAIL="profiler still running: $still" \
			check "fork: the profiler was still attached during the scan" \
			"[ $still = yes ] && all_traced $pid"
		DETAIL="$seen children seen" check "fork: short-lived children seen (>= 10)" \
			"[ '${seen:-0}' -ge 10 ]"
		DETAIL="traced (pid:tracer):$detail" \
			check "fork: no child traced while the parent is profiled (TracerPid 0)" \
			"[ '${traced:-x}' = 0 ]"
		child=$(cat "$TARGET_READY.child" 2>/dev/null)
		if [ -n "$child" ]; then
			PIDS+=("$child")
			check "fork: long-lived child untraced while the parent is profiled" \
				"untraced $child && alive $PROF_PID"
			check "fork: long-lived child not stopped" not_stopped "$child"
		fi
		prof_wait 15
		check_ran "fork" "$TMP/fork" "$out"
		DETAIL="$(cat "$TARGET_READY.anomaly" 2>/dev/null)" \
			check "fork: every child exited normally" "[ ! -e '$TARGET_READY.anomaly' ]"
		check "fork: parent untraced afterwards" untraced "$pid"
	fi
	stop_target "$pid"
fi

# --- exec ----------------------------------------------------------------------
_comm_is() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }

# exec_run MODE RUN: one profiled exec; checks carry "exec MODE #RUN".
exec_run() {
	local mode=$1 label="exec $1 #$2" pid out base reason bad
	start_target execer "$mode" || return
	pid=$TARGET_PID
	base=$TMP/exec-$mode-$2
	out=$base.folded
	prof_bg "$base" "$pid" --hz 999 --threads -o "$out"
	if wait_attached "$pid"; then
		sleep 0.2 # collect samples of the old image
		kill -USR1 "$pid"
		prof_wait 10
		check_ran "$label" "$base" "$out"
		reason=$(summary "$base.err")
		diag "$label: $reason"
		DETAIL="summary: ${reason:-none}; stderr: $(head -c 300 "$base.err")" \
			check "$label: the summary says it stopped at exec" \
			"grep -qi 'exec' <<<\"\$reason\""
		DETAIL="$(grep -c . "$base.err") lines: $(head -c 300 "$base.err" | tr '\n' '|')" \
			check "$label: one line on stderr" "[ \$(grep -c . '$base.err') = 1 ]"
		c=$(folded_count "$out" 'before_exec_work')
		DETAIL="$c samples" check "$label: the old image was sampled (before_exec_work)" "[ '$c' -gt 0 ]"
		# Nothing of the new image: its functions, its threads, its program.
		bad=$(folded_count "$out" 'after_exec_work|after_idle|after-idle|after_main|(^|;)sleep\+0x|/sleep|(^|;)sleep(;|$)')
		DETAIL="$bad samples: $(grep -E 'after_|sleep' "$out" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
			check "$label: no frame of the new image in the profile" "[ '$bad' = 0 ]"
		# Every stack is one the old image makes.
		bad=$(folded_count "$out" '.' )
		bad=$((bad - $(folded_count "$out" 'before_exec_work|idle_here|pthread_join|clockjoin|do_exec|execv')))
		DETAIL="$bad samples elsewhere: $(grep -vE 'before_exec_work|idle_here|pthread_join|clockjoin|do_exec|execv' "$out" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
			check "$label: every sample is in the old image's own functions" "[ '$bad' = 0 ]"
		if [ "$mode" = sleep ]; then
			check "$label: the new image (/bin/sleep) runs" wait_until 5 _comm_is "$pid" sleep
			check "$label: new image untraced" untraced "$pid"
			check "$label: new image not stopped" not_stopped "$pid"
		else
			check "$label: the new image runs (wrote its ready file)" \
				wait_until 5 file_ready "$TARGET_READY.after"
			check "$label: new image untraced" untraced "$pid"
			check "$label: new image not stopped" not_stopped "$pid"
			check "$label: new image makes progress" progresses "$pid"
		fi
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
	stop_target "$pid"
}

for run in 1 2 3; do
	for mode in self thread sleep; do
		exec_run "$mode" "$run"
	done
done

done_testing
