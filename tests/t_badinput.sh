#!/usr/bin/env bash
# Bad input, continued from t_errors.sh: processes that must not or cannot
# be profiled.  Each is refused with exactly one line on stderr, starting
# "cprof-attach: " and saying why, a non-zero exit, no output file, and the
# process left as it was: a kernel thread (no user memory), the system's
# init (PID 1 of the initial PID namespace), the profiler itself, its
# parent, a zombie, a live process whose main thread has exited (its
# leader looks like a zombie), a process already traced by gdb.  A
# container's PID 1 (PID 1 of another PID namespace, seen from inside) is
# an ordinary target and is profiled.
. "$(dirname "$0")/lib.sh"

# Each refusal is checked by lib.sh's expect_error, run in $CWD (the output
# file $OUT is there, so "nothing written" covers it).
OUT=$CWD/out.folded

pid_flags() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $7 }'; }
is_kthread() { local f; f=$(pid_flags "$1"); [ -n "$f" ] && [ $((f & 0x00200000)) != 0 ]; }

# --- a kernel thread: kthreadd (PID 2), or any other one we can see ---------
kt=
if is_kthread 2; then
	kt=2
else
	for p in /proc/[0-9]*; do
		is_kthread "${p#/proc/}" && kt=${p#/proc/} && break
	done
fi
if [ -n "$kt" ]; then
	expect_error "kernel thread $kt ($(cat "/proc/$kt/comm" 2>/dev/null))" 'kernel thread' "" "" -- \
		"$CPROF" "$kt" --duration 0.5 -o "$OUT"
	check "kernel thread: still untraced" untraced "$kt"
else
	skip "kernel thread" "no kernel thread visible (another PID namespace)"
fi

# --- PID 1 ------------------------------------------------------------------
# The system's init is refused.  As the unprivileged user nobody, so that
# if the check ever goes, ptrace fails anyway and the real init is never
# touched; the message must then still be ours, not "permission denied".
if [ "$(readlink /proc/self/ns/pid)" = "pid:[4026531836]" ]; then
	expect_error "PID 1, the system's init" 'init' "" "" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CPROF" 1 --duration 0.5 -o "$OUT"
	check "PID 1: still untraced" untraced 1
else
	skip "PID 1, the system's init" "we run in a container: PID 1 here is its init, an ordinary target"
fi

# A container's PID 1: wallclock as init of a new PID namespace, profiled
# from inside that namespace (nsenter), as with `docker exec`.
if unshare --pid --fork --mount-proc --kill-child "$BIN/wallclock" "$TMP/init.ready" \
	2>"$TMP/unshare.err" &
then
	ns_parent=$!
	PIDS+=("$ns_parent")
	if wait_until 10 file_ready "$TMP/init.ready"; then
		init=$(cat "/proc/$ns_parent/task/$ns_parent/children" 2>/dev/null | awk '{ print $1 }')
		DETAIL="its PID inside: $(cat "$TMP/init.ready")" \
			check "container init: wallclock is PID 1 of its namespace" "[ \"\$(cat '$TMP/init.ready')\" = 1 ]"
		out=$TMP/init.folded
		timeout --foreground -k 5 30 nsenter -t "$init" -p -m "$CPROF" 1 --duration 0.7 -o "$out" \
			>"$TMP/init.out" 2>"$TMP/init.err"
		PROF_RC=$?
		check_ran "container init (PID 1 inside)" "$TMP/init" "$out"
		c=$(folded_count "$out" 'burn_cpu')
		DETAIL="burn_cpu in $c samples" check "container init: profile has burn_cpu" "[ '$c' -gt 0 ]"
		check_unharmed "container init" "$init" 3
	else
		skip "container init" "unshare --pid failed: $(head -c 200 "$TMP/unshare.err")"
	fi
	kill -KILL "$ns_parent" 2>/dev/null
	wait "$ns_parent" 2>/dev/null
fi

# --- ourselves and our parent ------------------------------------------------
# A shell that execs the profiler with its own PID: the profiler's PID.
expect_error "our own PID" 'ourselves|own' "" "" -- \
	bash -c 'exec "$0" "$$" --duration 0.5 -o "$1"' "$CPROF" "$OUT"
# A shell that runs the profiler (not exec: "; exit") with the shell's PID.
expect_error "our parent's PID" 'parent' "" "" -- \
	bash -c '"$0" "$$" --duration 0.5 -o "$1"; exit $?' "$CPROF" "$OUT"

# --- a zombie ------------------------------------------------------------------
# sh starts a child, then execs sleep, which never reaps it: once the child
# is killed it stays a zombie.
sh -c 'sleep 1000 & echo $! >"$0"; exec sleep 1000' "$TMP/zchild" &
zparent=$!
PIDS+=("$zparent")
execed() { [ "$(readlink "/proc/$zparent/exe")" = "$(readlink -f "$(command -v sleep)")" ] && [ -s "$TMP/zchild" ]; }
if wait_until 10 execed; then
	zombie=$(cat "$TMP/zchild")
	kill -KILL "$zombie"
	if wait_until 10 eval '[ "$(proc_state "$zombie")" = Z ]'; then
		expect_error "zombie $zombie" 'zombie' "" "" -- "$CPROF" "$zombie" --duration 0.5 -o "$OUT"
		check "zombie: still a zombie, untraced" \
			"[ \"\$(proc_state $zombie)\" = Z ] && [ \"\$(tracer_of $zombie $zombie)\" = 0 ]"
	else
		DETAIL="state $(proc_state "$zombie")" check "zombie: child became a zombie" false
	fi
else
	check "zombie: set-up (sh exec sleep)" false
fi
kill -KILL "$zparent" 2>/dev/null
wait "$zparent" 2>/dev/null

# --- a live process whose main thread has exited (pthread_exit in main) -------
# Its leader shows as a zombie, but it is not one: the message must say so.
if start_target mainexit; then
	pid=$TARGET_PID
	if wait_until 5 eval '[ "$(proc_state "$pid")" = Z ]'; then
		expect_error "main thread exited, one thread running" 'main thread has exited' "" "" -- \
			"$CPROF" "$pid" --duration 0.5 -o "$OUT"
		check "main thread exited: the process runs on (CPU time grows)" progresses "$pid"
		check "main thread exited: untraced" untraced "$pid"
	else
		DETAIL="state $(proc_state "$pid")" check "main thread exited: leader shows as a zombie" false
	fi
	stop_target "$pid"
fi

# --- already traced by gdb -----------------------------------------------------
# gdb attaches (stopping the target, as gdb does), says so through a file,
# and holds on until told to detach.
if ! command -v gdb >/dev/null; then
	skip "already traced by gdb" "gdb is not installed"
elif start_target wallclock; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	gdb -q -nx -batch -p "$pid" -ex "shell echo attached >$TMP/gdb.attached" \
		-ex "shell while [ ! -e $TMP/gdb.go ]; do sleep 0.02; done" -ex detach \
		>"$TMP/gdb.out" 2>&1 &
	gdb_pid=$!
	PIDS+=("$gdb_pid")
	traced_by_gdb() {
		local t
		for t in $(tids "$pid"); do [ "$(tracer_of "$pid" "$t")" = "$gdb_pid" ] || return 1; done
	}
	if wait_until 30 file_ready "$TMP/gdb.attached" && traced_by_gdb; then
		expect_error "already traced by gdb" "traced by PID $gdb_pid \\(gdb\\)" "" "" -- \
			"$CPROF" "$pid" --duration 0.5 -o "$OUT"
		check "already traced by gdb: gdb still traces every thread" traced_by_gdb
		touch "$TMP/gdb.go"
		check "already traced by gdb: gdb detaches and exits" wait_until 20 gone "$gdb_pid"
		wait_until 5 untraced "$pid"
		check_unharmed "after gdb" "$pid" "$n"
	else
		DETAIL="$(head -c 300 "$TMP/gdb.out")" check "already traced by gdb: gdb attaches" false
	fi
	touch "$TMP/gdb.go"
	stop_target "$pid"
fi

done_testing
