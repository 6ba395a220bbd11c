#!/usr/bin/env bash
# Exec and fork in the target, as the target sees them.
#  - fork: tests/bin/forker forks a child every ~5 ms.  While the parent is
#    profiled, no child is ever traced (TracerPid 0 in every child's
#    status, polled until 50 were seen, at most 3 s), and neither is a
#    long-lived one.
#  - exec (followed: the run goes on): tests/bin/execer calls exec on cue
#    (SIGUSR1), from main or from a second thread, into itself or into
#    /bin/sleep.  The run goes on after the exec (the profiler is still
#    running once the new image is, and stops at SIGINT, not at the exec);
#    both images are in the profile, each named from its own files: the
#    old one's before_exec_work under the old main or execer thread, the
#    new one's after_exec_work and its new thread's after_idle (or
#    /bin/sleep's stripped frames, sleep+0xSTART, down to clock_nanosleep);
#    no frame is [unknown].  Afterwards the new image runs on, untraced.
#    The thread that calls exec spins until then, so at 999 Hz a stop is
#    often asked for right as it calls exec.
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

# --- exec ---------------------------------------------------------------------
_comm_is() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }

# stacks_matching FILE ERE: samples whose stack, without its "NAME (ID)"
# root frames (thread, process), matches ^(ERE)$ as a whole.
stacks_matching() {
	sed -E 's/^([^;]* \([0-9]+\);)+//' "$1" | grep -E "^($2) [0-9]+\$" |
		awk '{ n += $NF } END { print n + 0 }'
}

# shaped LABEL FILE FRAME ERE: FRAME was sampled, and every stack holding it
# is one ERE spells out (the frames the image it belongs to makes).
# With perf capture, a sample taken as exec() tears the old image down can
# end at its innermost frame (a lone "THREAD;FRAME" stack): seen twice in
# about 3,000 exec-run samples, cause not found yet (docs/limits.md).  At
# most one such lone frame is let pass, said in the output; any other
# shape still fails.
shaped() {
	local label=$1 out=$2 frame=$3 re=$4 all good lone
	all=$(folded_frame_count "$out" "$frame")
	good=$(stacks_matching "$out" "$re")
	lone=$(stacks_matching "$out" "$frame")
	[ "${lone:-0}" = 0 ] || diag "$label: $lone sample(s) with $frame alone (perf capture at the exec)"
	DETAIL="$all samples in $frame, $good shaped as expected, $lone alone; $(grep -F ";$frame" "$out" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
		check "$label" "[ '$all' -gt 0 ] && { [ '$good' = '$all' ] || { [ '${lone:-0}' -le 1 ] && [ \$(($good + ${lone:-0})) = '$all' ]; }; }"
}

# exec_run MODE RUN: one profiled exec; checks carry "exec MODE #RUN".
exec_run() {
	local mode=$1 label="exec $1 #$2" pid out base reason bad still n
	local libc_main='_start;__libc_start_main;(__libc_start_call_main;)?main'
	local thread_main='[^;]*clone[^;]*;start_thread'
	# The SIGUSR1 that asks for the exec can be caught running its handler:
	# the signal trampoline (__restore_rt), then on_usr1 and what it calls.
	local in_handler='(;[^;]+;on_usr1(;[^;]+)*)?'
	start_target execer "$mode" || return
	pid=$TARGET_PID
	base=$TMP/exec-$mode-$2
	out=$base.folded
	prof_bg "$base" "$pid" --hz 999 --threads -o "$out"
	if wait_attached "$pid"; then
		sleep 0.2 # collect samples of the old image
		kill -USR1 "$pid"
		if [ "$mode" = sleep ]; then
			check "$label: the new image (/bin/sleep) runs" wait_until 5 _comm_is "$pid" sleep
		else
			check "$label: the new image runs (wrote its ready file)" \
				wait_until 5 file_ready "$TARGET_READY.after"
		fi
		sleep 0.2 # collect samples of the new image
		DETAIL="profiler $(alive "$PROF_PID" && echo running || echo exited), new image's TracerPid $(tracer_of "$pid" "$pid"): $(head -c 200 "$base.err")" \
			check "$label: still profiling the new image (it holds its threads)" \
			"alive $PROF_PID && all_traced $pid"
		kill -INT "$PROF_PID" 2>/dev/null
		prof_wait 10
		check_ran "$label" "$base" "$out"
		reason=$(summary "$base.err")
		diag "$label: $reason"
		DETAIL="summary: ${reason:-none}" \
			check "$label: the run went on after the exec (stopped by SIGINT)" \
			"grep -q ', interrupted, wrote ' <<<\"\$reason\""
		DETAIL="$(head -c 300 "$base.err" | tr '\n' '|')" \
			check "$label: no error on stderr" "! grep -qi 'error' '$base.err'"
		n=$(folded_total "$out")
		DETAIL="folded $n, summary $(summary_field "$base.err" samples)" \
			check "$label: counts add up to the summary" "[ '$n' = '$(summary_field "$base.err" samples)' ]"
		if [ "$mode" = thread ]; then
			shaped "$label: old image sampled, named from it (execer thread in before_exec_work)" \
				"$out" before_exec_work "$thread_main;execer_main;before_exec_work$in_handler"
		else
			shaped "$label: old image sampled, named from it (main in before_exec_work)" \
				"$out" before_exec_work "$libc_main;before_exec_work$in_handler"
		fi
		if [ "$mode" = sleep ]; then
			shaped "$label: new image sampled, named from /bin/sleep (sleep+0xSTART frames)" \
				"$out" clock_nanosleep "_start;__libc_start_main;(__libc_start_call_main;)?(sleep\+0x[0-9a-f]+;)+([^;]*;)*clock_nanosleep"
		else
			shaped "$label: new image sampled, named from it (main in after_exec_work)" \
				"$out" after_exec_work "$libc_main;(after_main;)?after_exec_work"
			shaped "$label: the new image's thread sampled (after_idle)" \
				"$out" after_idle "$thread_main;after_idle_main;after_idle(;[^;]+)*"
		fi
		# A perf sample taken inside execve() once the old memory is gone
		# has the old registers and no stack: unwound, a lone execve
		# (about 1 exec run in 10 before such samples were left out).
		bad=$(stacks_matching "$out" '(__)?execve?')
		DETAIL="$(grep -E '\) ?;(__)?execve? [0-9]+$' "$out" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
			check "$label: no sample is a lone execve frame" "[ '$bad' = 0 ]"
		bad=$(grep -c '\[unknown\]' "$out")
		DETAIL="$(grep -F '[unknown]' "$out" | head -n 3 | cut -c1-200 | tr '\n' '|')" \
			check "$label: no [unknown] frame" "[ '$bad' = 0 ]"
		check "$label: new image untraced" untraced "$pid"
		check "$label: new image not stopped" not_stopped "$pid"
		[ "$mode" = sleep ] || check "$label: new image makes progress" progresses "$pid"
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
