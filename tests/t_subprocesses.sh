#!/usr/bin/env bash
# Many processes in one profile.
#   prefork      tests/bin/prefork, a pre-forking server: 2 workers forked
#                before the attach, 2 late children and a short-lived one
#                (0.8 s, exits mid-run) forked during it.  With
#                --subprocesses --processes every one of them is a root
#                "prefork (PID)" with its own function under it, nothing
#                else is a root, the summary counts 6 processes; in pprof
#                every sample has labels pid (= tid, all are one-threaded)
#                and process=prefork, for each process alive in that run,
#                including one forked during it.  Afterwards all untraced.
#   exec chain   launch mode, sh -c 'exec env exiter': two execs, one PID;
#                exiter_work is sampled, rooted at exiter's _start.  With a
#                fork in the chain (sh -c 'env exiter; exit $?') the child
#                is followed by default; --no-subprocesses samples the shell
#                only, but still follows exec.
#   -p a,b       exiter and still, two separate processes: both in one
#                profile (--processes roots, --threads "NAME (PID);NAME
#                (TID)" for each of their threads, pprof labels); -p PID
#                and the positional PID count 1 process.
#   strace       a worker already traced by strace is skipped with a
#                one-line note naming it and its tracer; the rest is
#                profiled; strace still traces it afterwards.
#   SIGKILL      the profiler holding a tree of 21 (prefork 20 serve) is
#                SIGKILLed: every process is left alive, untraced, not
#                stopped, and the server still forks on request.
. "$(dirname "$0")/lib.sh"

# --- helpers ---------------------------------------------------------------------
# Strings go to awk through ENVIRON and are compared exactly (no regex).

# root_count FILE ROOT [FRAME]: samples of folded FILE whose first frame is
# exactly ROOT (and, with FRAME, that have a frame exactly FRAME).
root_count() {
	R=$2 F=${3:-} awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		if (f[1] != ENVIRON["R"]) next
		if (ENVIRON["F"] == "") { n += $NF; next }
		for (i = 2; i <= k; i++) if (f[i] == ENVIRON["F"]) { n += $NF; break } }
		END { print n + 0 }' "$1"
}

# roots FILE: the distinct first frames, one a line, sorted.
roots() { sed -E 's/ [0-9]+$//; s/;.*//' "$1" | sort -u; }

# frame_roots FILE FRAME: the distinct roots of the stacks holding FRAME.
frame_roots() {
	F=$2 awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		for (i = 2; i <= k; i++) if (f[i] == ENVIRON["F"]) { print f[1]; break } }' "$1" | sort -u
}

# summary_processes ERRFILE: the summary line's process count ("3 processes",
# "1 process").
summary_processes() { summary "$1" | sed -nE 's/.* ([0-9]+) process(es)?(,.*|$)/\1/p'; }

# pprof_samples FILE: one line per sample of the pprof FILE,
# "COUNT PID TID PROCESS" (a dash for a missing label).
pprof_samples() {
	pprof_raw "$1" | awk '
		function lab(line, key,   s, i) {
			s = " " line; i = index(s, " " key ":[")
			if (i == 0) return ""
			s = substr(s, i + length(key) + 3)
			return substr(s, 1, index(s, "]") - 1)
		}
		function flush() { if (c != "") print c, (p == "" ? "-" : p), (t == "" ? "-" : t), (n == "" ? "-" : n) }
		/^Samples:/ { on = 1; next }
		/^(Locations|Mappings)/ { on = 0 }
		on && /^ +[0-9]+ +[0-9]+ +[0-9]+:/ { flush(); c = $1; p = ""; t = ""; n = ""; next }
		on { v = lab($0, "pid"); if (v != "") p = v
			v = lab($0, "tid"); if (v != "") t = v
			v = lab($0, "process"); if (v != "") n = v }
		END { flush() }'
}

# ids FILE KIND...: the PIDs in READY files FILE.KIND (e.g. worker.1).
pids_of() {
	local base=$1 k
	shift
	for k in "$@"; do cat "$base.$k" 2>/dev/null; done
}


# The profiler holds every PID (all threads traced), or has exited (then
# there is no use waiting).
_held_or_prof_gone() {
	gone "$PROF_PID" && return 0
	local p
	for p in "$@"; do all_traced "$p" || return 1; done
}
# wait_held SECONDS PID...: wait (at most SECONDS in all) until the running
# profiler holds every PID; DETAIL names those it does not.
wait_held() {
	local secs=$1
	shift
	wait_until "$secs" _held_or_prof_gone "$@"
	each_ok all_traced "$@"
}

# --- 1. a pre-forking server ------------------------------------------------------
if start_target prefork 2 burn; then
	parent=$TARGET_PID
	pr=$TARGET_READY
	read -r w1 w2 <<<"$(pids_of "$pr" worker.1 worker.2 | tr '\n' ' ')"
	PIDS+=("$w1" "$w2")
	base=$TMP/prefork
	out=$base.folded
	prof_bg "$base" "$parent" --subprocesses --processes -o "$out"
	if wait_attached "$parent"; then
		check "prefork: the profiler holds the workers forked before the attach" \
			wait_held 5 "$w1" "$w2"
		kill -USR1 "$parent"
		check "prefork: late child 1 forked during the run" wait_until 5 file_ready "$pr.child.1"
		kill -USR1 "$parent"
		check "prefork: late child 2 forked during the run" wait_until 5 file_ready "$pr.child.2"
		kill -USR2 "$parent"
		check "prefork: short child forked during the run" wait_until 5 file_ready "$pr.short.1"
		read -r c1 c2 s1 <<<"$(pids_of "$pr" child.1 child.2 short.1 | tr '\n' ' ')"
		PIDS+=("$c1" "$c2" "$s1")
		check "prefork: the profiler holds the children forked during the run" \
			wait_held 3 "$c1" "$c2"
		# The short child spins 0.8 s and exits; the run goes on after it.
		check "prefork: the short child exits mid-run" wait_until 5 gone "$s1"
		sleep 0.3 # more samples of the late children
		still=$(alive "$PROF_PID" && echo yes || echo no)
		kill -INT "$PROF_PID"
		prof_wait 15
		DETAIL="profiler running when the short child had exited: $still" \
			check "prefork: the profiler outlived the short child" "[ $still = yes ]"
		check_ran "prefork" "$base" "$out"
		diag "prefork: $(summary "$base.err")"
		diag "prefork roots: $(roots "$out" | tr '\n' ',')"
		n=$(root_count "$out" "prefork ($parent)" parent_wait)
		DETAIL="$n samples" check "prefork: parent's root 'prefork ($parent)', in parent_wait" "[ '$n' -gt 0 ]"
		k=0
		for w in "$w1" "$w2"; do
			k=$((k + 1))
			n=$(root_count "$out" "prefork ($w)" worker_burn)
			DETAIL="$n samples" check "prefork: old worker $k's root 'prefork ($w)', in worker_burn" "[ '$n' -gt 0 ]"
		done
		k=0
		for c in "$c1" "$c2"; do
			k=$((k + 1))
			n=$(root_count "$out" "prefork ($c)" late_burn)
			DETAIL="$n samples" check "prefork: late child $k's root 'prefork ($c)', in late_burn" "[ '$n' -gt 0 ]"
		done
		n=$(root_count "$out" "prefork ($s1)" short_burn)
		DETAIL="$n samples" check "prefork: the short child's samples stay after its exit ('prefork ($s1)', short_burn)" "[ '$n' -gt 0 ]"
		want=$(for p in "$parent" "$w1" "$w2" "$c1" "$c2" "$s1"; do echo "prefork ($p)"; done | sort)
		got=$(roots "$out")
		DETAIL="roots: $(tr '\n' ',' <<<"$got") want: $(tr '\n' ',' <<<"$want")" \
			check "prefork: the roots are exactly the 6 processes" "[ \"\$got\" = \"\$want\" ]"
		# Each process's samples under its own root: a function of one kind
		# of process under any other root is a sample given the wrong PID.
		bad=
		for f in worker_burn late_burn short_burn parent_wait; do
			case $f in
			worker_burn) ok="prefork ($w1)|prefork ($w2)" ;;
			late_burn) ok="prefork ($c1)|prefork ($c2)" ;;
			short_burn) ok="prefork ($s1)" ;;
			parent_wait) ok="prefork ($parent)" ;;
			esac
			while IFS= read -r r; do
				[ -n "$r" ] || continue
				case "|$ok|" in *"|$r|"*) ;; *) bad="$bad $f under $r;" ;; esac
			done <<<"$(frame_roots "$out" "$f")"
		done
		DETAIL=$bad check "prefork: every function under its own process's root" "[ -z '$bad' ]"
		n=$(summary_processes "$base.err")
		DETAIL="summary: $(summary "$base.err" | cut -c1-160)" \
			check "prefork: the summary counts 6 processes" "[ '$n' = 6 ]"
		total=$(folded_total "$out")
		n=$(summary_field "$base.err" samples)
		DETAIL="folded $total, summary $n" check "prefork: counts add up to the summary" "[ '$total' = '$n' ]"
		check "prefork: afterwards every process untraced" each_ok untraced "$parent" "$w1" "$w2" "$c1" "$c2"
		check "prefork: afterwards every process running (not stopped)" \
			each_ok not_stopped "$parent" "$w1" "$w2" "$c1" "$c2"

		# pprof: labels pid and process, one more child forked during the run.
		if have_pprof; then
			base=$TMP/prefork-pprof
			out=$base.pprof
			prof_bg "$base" "$parent" --subprocesses -o "$out"
			if wait_attached "$parent"; then
				kill -USR1 "$parent"
				check "prefork pprof: late child 3 forked during the run" \
					wait_until 5 file_ready "$pr.child.3"
				c3=$(cat "$pr.child.3" 2>/dev/null)
				PIDS+=("$c3")
				wait_held 3 "$parent" "$w1" "$w2" "$c1" "$c2" "$c3" >/dev/null
				sleep 0.3 # samples of every process
				kill -INT "$PROF_PID"
				prof_wait 15
				check_ran "prefork pprof" "$base" "$out"
				samples=$(pprof_samples "$out")
				got=$(awk '{ print $2 }' <<<"$samples" | sort -u)
				want=$(printf '%s\n' "$parent" "$w1" "$w2" "$c1" "$c2" "$c3" | sort)
				diag "prefork pprof: samples per pid: $(awk '{ n[$2] += $1 } END { for (p in n) printf "%s:%d ", p, n[p] }' <<<"$samples")"
				DETAIL="pid labels: $(tr '\n' ',' <<<"$got") want: $(tr '\n' ',' <<<"$want")" \
					check "prefork pprof: a pid label for each process (parent, 2 old workers, 3 children)" \
					"[ \"\$got\" = \"\$want\" ]"
				got=$(awk '{ print $4 }' <<<"$samples" | sort -u | tr '\n' ',')
				DETAIL="process labels: $got" \
					check "prefork pprof: every sample has process=prefork" "[ '$got' = 'prefork,' ]"
				bad=$(awk '$2 != $3' <<<"$samples" | head -n 3 | tr '\n' '|')
				DETAIL="count pid tid: $bad" \
					check "prefork pprof: pid = tid in every sample (one-threaded processes)" \
					"[ -n \"\$samples\" ] && [ -z '$bad' ]"
			fi
			kill -KILL "$PROF_PID" 2>/dev/null
		else
			skip "prefork pprof: pid and process labels" "no go tool pprof at $GO"
		fi
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
	stop_target "$parent"
fi

# --- 2. exec and fork chains in launch mode -------------------------------------------
# chain LABEL STATUS SCRIPT OPTIONS...: launch sh -c SCRIPT with "$@" =
# exiter READY 0.7 STATUS; checks the exit status and that exiter ran.
# Sets CH_BASE, CH_OUT, CH_PID (exiter's PID, from its ready file).
chain() {
	local label=$1 status=$2 script=$3 ready
	shift 3
	CH_BASE=$TMP/$label
	CH_OUT=$CH_BASE.folded
	ready=$CH_BASE.ready
	prof "$CH_BASE" --processes "$@" -o "$CH_OUT" -- sh -c "$script" sh "$BIN/exiter" "$ready" 0.7 "$status"
	CH_PID=$(cat "$ready" 2>/dev/null)
	DETAIL="exit $PROF_RC: $(head -c 300 "$CH_BASE.err")" \
		check "$label: exit status is the command's ($status)" "[ '$PROF_RC' = '$status' ]"
	check "$label: exiter ran at the end of the chain (wrote its ready file)" "[ -n '$CH_PID' ]"
	n=$(summary_field "$CH_BASE.err" samples)
	DETAIL="stderr: $(head -c 300 "$CH_BASE.err")" \
		check "$label: summary line with samples" "[ -n '$n' ] && [ '$n' -gt 0 ]"
	diag "$label: $(summary "$CH_BASE.err")"
}

# sh -> env -> exiter, one PID: two execs, followed in launch mode.
chain "exec chain" 0 'exec env "$@"'
n=$(root_count "$CH_OUT" "exiter ($CH_PID)" exiter_work)
DETAIL="$n samples; roots: $(roots "$CH_OUT" | tr '\n' ',')" \
	check "exec chain: exiter_work sampled under 'exiter ($CH_PID)'" "[ '$n' -gt 0 ]"
r=$(grep -cE '^exiter \([0-9]+\);_start;__libc_start_main;(.*;)?main;exiter_work [0-9]+$' "$CH_OUT")
DETAIL="$(grep exiter_work "$CH_OUT" | head -n 2 | cut -c1-200 | tr '\n' '|')" \
	check "exec chain: exiter_work's stacks rooted at exiter's _start" "[ '$r' -gt 0 ]"
n=$(summary_processes "$CH_BASE.err")
DETAIL="summary: $(summary "$CH_BASE.err" | cut -c1-160)" \
	check "exec chain: the summary counts 1 process" "[ '$n' = 1 ]"

# sh forks, the child execs env, which execs exiter: followed by default.
chain "fork chain" 3 'env "$@"; exit $?'
n=$(root_count "$CH_OUT" "exiter ($CH_PID)" exiter_work)
DETAIL="$n samples; roots: $(roots "$CH_OUT" | tr '\n' ',')" \
	check "fork chain: the forked child's exiter_work sampled under 'exiter ($CH_PID)'" "[ '$n' -gt 0 ]"
n=$(summary_processes "$CH_BASE.err")
DETAIL="summary: $(summary "$CH_BASE.err" | cut -c1-160)" \
	check "fork chain: the summary counts 2 processes" "[ '$n' = 2 ]"

chain "--no-subprocesses" 3 'env "$@"; exit $?' --no-subprocesses
n=$(folded_frame_count "$CH_OUT" exiter_work)
DETAIL="$n samples" check "--no-subprocesses: nothing of the forked child (exiter_work)" "[ '$n' = 0 ]"
n=$(roots "$CH_OUT" | grep -c .)
DETAIL="roots: $(roots "$CH_OUT" | tr '\n' ',')" \
	check "--no-subprocesses: one root, the shell's" "[ '$n' = 1 ] && ! roots '$CH_OUT' | grep -qF 'exiter ($CH_PID)'"
n=$(summary_processes "$CH_BASE.err")
DETAIL="summary: $(summary "$CH_BASE.err" | cut -c1-160)" \
	check "--no-subprocesses: the summary counts 1 process" "[ '$n' = 1 ]"

chain "--no-subprocesses exec" 0 'exec env "$@"' --no-subprocesses
n=$(root_count "$CH_OUT" "exiter ($CH_PID)" exiter_work)
DETAIL="$n samples" check "--no-subprocesses exec: exec is still followed (exiter_work)" "[ '$n' -gt 0 ]"

# --- 3. -p a,b: two separate processes ------------------------------------------------
if start_target exiter 30 0; then
	a=$TARGET_PID
	if start_target still; then
		b=$TARGET_PID
		base=$TMP/pab
		out=$base.folded
		prof "$base" -p "$a,$b" --processes --duration 1 -o "$out"
		check_ran "-p a,b" "$base" "$out"
		diag "-p a,b: $(summary "$base.err")"
		n=$(root_count "$out" "exiter ($a)" exiter_work)
		DETAIL="$n samples; roots: $(roots "$out" | tr '\n' ',')" \
			check "-p a,b: exiter's root 'exiter ($a)', in exiter_work" "[ '$n' -gt 0 ]"
		n=$(root_count "$out" "still ($b)" m_wait)
		DETAIL="$n samples" check "-p a,b: still's root 'still ($b)', in m_wait" "[ '$n' -gt 0 ]"
		got=$(roots "$out" | tr '\n' ',')
		DETAIL="roots: $got" check "-p a,b: no other root" "[ '$got' = 'exiter ($a),still ($b),' ]"
		n=$(summary_processes "$base.err")
		DETAIL="summary: $(summary "$base.err" | cut -c1-160)" \
			check "-p a,b: the summary counts 2 processes" "[ '$n' = 2 ]"

		# --threads: "NAME (PID);NAME (TID);..." for every thread of each.
		base=$TMP/pabt
		out=$base.folded
		prof "$base" -p "$a,$b" --threads --duration 1 -o "$out"
		check_ran "-p a,b --threads" "$base" "$out"
		want=$(for p in "$a" "$b"; do
			for t in $(tids "$p"); do
				echo "$(cat "/proc/$p/comm") ($p);$(cat "/proc/$p/task/$t/comm") ($t)"
			done
		done | sort)
		got=$(sed -E 's/ [0-9]+$//' "$out" | cut -d';' -f1-2 | sort -u)
		DETAIL="got: $(tr '\n' ',' <<<"$got" | cut -c1-300) want: $(tr '\n' ',' <<<"$want" | cut -c1-300)" \
			check "-p a,b --threads: 'NAME (PID);NAME (TID)' for each thread of both" \
			"[ \"\$got\" = \"\$want\" ]"

		if have_pprof; then
			base=$TMP/pabp
			out=$base.pprof
			prof "$base" -p "$a,$b" --duration 1 -o "$out"
			check_ran "-p a,b pprof" "$base" "$out"
			samples=$(pprof_samples "$out")
			got=$(awk '{ print $2, $4 }' <<<"$samples" | sort -u | tr '\n' ',')
			DETAIL="pid process: $got" check "-p a,b pprof: labels pid and process of both" \
				"[ '$got' = '$a exiter,$b still,' ]"
		else
			skip "-p a,b pprof" "no go tool pprof at $GO"
		fi

		# One PID: -p PID and the positional PID alike.
		for form in "-p $a" "$a"; do
			base=$TMP/p1
			# shellcheck disable=SC2086
			prof "$base" $form --duration 0.3 -o "$base.folded"
			n=$(summary_processes "$base.err")
			DETAIL="exit $PROF_RC: $(head -c 300 "$base.err")" \
				check "'$form': profiles it, the summary says 1 process" "[ '$PROF_RC' = 0 ] && [ '$n' = 1 ]"
		done
		check "-p: afterwards both untraced" each_ok untraced "$a" "$b"
		check "-p: afterwards both running" each_ok not_stopped "$a" "$b"
		stop_target "$b"
	fi
	stop_target "$a"
fi

# --- 4. a child already traced by strace -----------------------------------------------
if ! command -v strace >/dev/null; then
	skip "a child traced by strace" "strace is not installed (Debian package strace: make deps installs it)"
elif start_target prefork 2 burn; then
	parent=$TARGET_PID
	read -r w1 w2 <<<"$(pids_of "$TARGET_READY" worker.1 worker.2 | tr '\n' ' ')"
	PIDS+=("$w1" "$w2")
	strace -o /dev/null -p "$w1" 2>/dev/null &
	sp=$!
	PIDS+=("$sp")
	_by_strace() { [ "$(tracer_of "$w1" "$w1")" = "$sp" ]; }
	if wait_until 10 _by_strace; then
		base=$TMP/strace
		out=$base.folded
		prof "$base" "$parent" --subprocesses --processes --duration 1 -o "$out"
		check_ran "strace" "$base" "$out"
		diag "strace: $(summary "$base.err")"
		# shellcheck disable=SC2034 # used in the check's condition
		notes=$(grep -E 'note:' "$base.err" | grep -E "(^|[^0-9])$w1([^0-9]|\$)")
		DETAIL="stderr: $(head -c 400 "$base.err" | tr '\n' '|')" \
			check "strace: one note naming worker $w1, traced by $sp (strace)" \
			"[ \$(grep -c . <<<\"\$notes\") = 1 ] && grep -qi 'traced' <<<\"\$notes\" &&
			 grep -qE '(^|[^0-9])$sp([^0-9]|\$)' <<<\"\$notes\" && grep -q strace <<<\"\$notes\""
		DETAIL="$(grep -vE "$SUMMARY_RE" "$base.err" | head -c 300 | tr '\n' '|')" \
			check "strace: nothing else on stderr (a note, not an error)" \
			"[ \$(grep -vE -e \"\$SUMMARY_RE\" -e 'note:' '$base.err' | grep -c .) = 0 ]"
		n=$(root_count "$out" "prefork ($w1)")
		DETAIL="$n samples" check "strace: no sample of the traced worker" "[ '$n' = 0 ]"
		n=$(root_count "$out" "prefork ($w2)" worker_burn)
		DETAIL="$n samples; roots: $(roots "$out" | tr '\n' ',')" \
			check "strace: the other worker profiled ('prefork ($w2)', worker_burn)" "[ '$n' -gt 0 ]"
		n=$(root_count "$out" "prefork ($parent)" parent_wait)
		DETAIL="$n samples" check "strace: the parent profiled" "[ '$n' -gt 0 ]"
		n=$(summary_processes "$base.err")
		DETAIL="summary: $(summary "$base.err" | cut -c1-160)" \
			check "strace: the summary counts 2 processes" "[ '$n' = 2 ]"
		DETAIL="TracerPid $(tracer_of "$w1" "$w1")" \
			check "strace: strace still traces the worker" "_by_strace && alive $sp"
		check "strace: the worker runs on" not_stopped "$w1"
		check "strace: the rest untraced afterwards" each_ok untraced "$parent" "$w2"
	else
		skip "a child traced by strace" "strace did not attach to $w1"
	fi
	kill -KILL "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	stop_target "$parent"
fi

# --- 5. SIGKILL of the profiler holding 21 processes --------------------------------------
if start_target prefork 20 serve; then
	parent=$TARGET_PID
	pr=$TARGET_READY
	kids=()
	for k in $(seq 1 20); do kids+=("$(cat "$pr.worker.$k" 2>/dev/null)"); done
	PIDS+=("${kids[@]}")
	tree=("$parent" "${kids[@]}")
	base=$TMP/kill
	prof_bg "$base" "$parent" --subprocesses -o "$base.folded"
	if wait_attached "$parent"; then
		check "SIGKILL: the profiler holds all 21 processes before the kill" wait_held 8 "${kids[@]}"
		sleep 0.3 # sampling in full swing
		kill -KILL "$PROF_PID"
		prof_wait 5
		DETAIL="exit $PROF_RC" check "SIGKILL: the profiler died of it" "[ '$PROF_RC' = 137 ]"
		check "SIGKILL: all 21 processes alive" each_ok alive "${tree[@]}"
		check "SIGKILL: all 21 untraced (TracerPid 0)" each_ok untraced "${tree[@]}"
		check "SIGKILL: none stopped" each_ok not_stopped "${tree[@]}"
		kill -USR1 "$parent"
		check "SIGKILL: the server still forks on request" wait_until 5 file_ready "$pr.child.1"
		c=$(cat "$pr.child.1" 2>/dev/null)
		PIDS+=("$c")
		[ -n "$c" ] && check "SIGKILL: its new child untraced" untraced "$c"
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
	stop_target "$parent"
fi

done_testing
