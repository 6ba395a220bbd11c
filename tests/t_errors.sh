#!/usr/bin/env bash
# Errors: each bad invocation prints exactly one line on stderr,
# starting "cprof-attach: ", exits non-zero, creates no output file, and
# leaves the target running and untraced.  Output paths are checked before
# attaching.  Valid edge values (--hz 1, --hz 10000, --duration 0.25) work.
. "$(dirname "$0")/lib.sh"

# A PID that does not exist: one that just exited.
sleep 0 &
dead=$!
wait "$dead"
expect_error "no such PID $dead" 'no such|not exist|not found' "$TMP/nopid.folded" "" -- \
	"$CPROF" "$dead" --duration 0.5 -o "$TMP/nopid.folded"

start_target wallclock || done_testing
pid=$TARGET_PID
n=$(thread_count "$pid")
o=$TMP/out.folded

for hz in 0 abc 20000 -5 1e9 10001 1.5 ''; do
	expect_error "--hz '$hz'" 'hz' "$o" "$pid" -- "$CPROF" "$pid" --hz "$hz" --duration 0.5 -o "$o"
done
for d in -1 0 abc ''; do
	expect_error "--duration '$d'" 'duration' "$o" "$pid" -- "$CPROF" "$pid" --duration "$d" -o "$o"
done
expect_error "--format xyz" 'format|xyz' "$o" "$pid" -- "$CPROF" "$pid" --format xyz --duration 0.5 -o "$o"
expect_error "unknown option --bogus" 'bogus|option' "$o" "$pid" -- "$CPROF" "$pid" --bogus --duration 0.5 -o "$o"
expect_error "PID not a number (12ab)" '12ab|pid' "$o" "$pid" -- "$CPROF" 12ab --duration 0.5 -o "$o"
expect_error "no PID and no command" '' "" "" -- "$CPROF"

# Output paths, checked before attaching: fails at once, not after --duration.
bad=$TMP/no/such/dir/out.folded
expect_error "output in a missing directory" 'no/such/dir|no such file|directory' "$bad" "$pid" -- \
	"$CPROF" "$pid" --duration 2 -o "$bad"
DETAIL="took $ELAPSED_MS ms" check "output in a missing directory: fails before profiling (< 1.5 s of --duration 2)" \
	"[ $ELAPSED_MS -lt 1500 ]"
mkdir -p "$TMP/ro"
if mount -t tmpfs -o ro,size=64k tmpfs "$TMP/ro" 2>/dev/null; then
	MOUNTS+=("$TMP/ro")
	bad=$TMP/ro/out.folded
	expect_error "output on a read-only file system" 'read-only|permission|/ro' "$bad" "$pid" -- \
		"$CPROF" "$pid" --duration 2 -o "$bad"
	DETAIL="took $ELAPSED_MS ms" check "read-only output: fails before profiling (< 1.5 s of --duration 2)" \
		"[ $ELAPSED_MS -lt 1500 ]"
	check "read-only output: no temp file either" "[ -z \"\$(ls -A '$TMP/ro')\" ]"
	umount "$TMP/ro"
else
	skip "output on a read-only file system" "cannot mount a read-only tmpfs here"
fi

# Launch mode with a command that does not exist.
expect_error "launch: missing command" '/nonexistent/cmd' "$TMP/launch.folded" "" -- \
	"$CPROF" -o "$TMP/launch.folded" -- /nonexistent/cmd arg

# A PID already traced by someone else (strace -f follows every thread).
strace -f -o /dev/null -p "$pid" 2>/dev/null &
strace_pid=$!
PIDS+=("$strace_pid")
traced_by_strace() {
	local t
	for t in $(tids "$pid"); do [ "$(tracer_of "$pid" "$t")" = "$strace_pid" ] || return 1; done
}
if wait_until 10 traced_by_strace; then
	base=$TMP/traced
	(cd "$CWD" && timeout --foreground -k 5 30 "$CPROF" "$pid" --duration 0.5 -o "$o" >"$base.out" 2>"$base.err")
	rc=$?
	DETAIL="exit $rc" check "already traced: non-zero exit" "[ $rc != 0 ] && [ $rc != 124 ]"
	DETAIL="$(head -c 400 "$base.err" | tr '\n' '|')" \
		check "already traced: one line on stderr mentioning it is traced" \
		"[ \$(wc -l <'$base.err') = 1 ] && grep -q '^cprof-attach: ' '$base.err' && grep -qi 'traced' '$base.err'"
	check "already traced: no output file" "[ ! -e '$o' ]"
	check "already traced: strace still traces every thread" traced_by_strace
	kill -TERM "$strace_pid"
	wait "$strace_pid" 2>/dev/null
	wait_until 5 untraced "$pid"
	check "already traced: untraced once strace detaches" untraced "$pid"
	check "already traced: target still running" progresses "$pid"
else
	skip "already traced" "strace did not attach"
	kill -KILL "$strace_pid" 2>/dev/null
fi

# A PID we may not trace: an unprivileged profiler against a root target.
expect_error "unprivileged user vs root target" 'permi|not allowed|EPERM' "$CWD/perm.folded" "$pid" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CPROF" "$pid" --duration 0.5 -o "$CWD/perm.folded"

# The target survived all of it.
check_unharmed "after all the errors" "$pid" "$n"

# Valid edge values are accepted.
for args in "--hz 1 --duration 0.3" "--hz 10000 --duration 0.3" "--duration 0.25" "--max-depth 2 --duration 0.3"; do
	# shellcheck disable=SC2086
	prof "$TMP/edge" "$pid" $args -o "$o"
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/edge.err")" \
		check "valid: $args" "[ $PROF_RC = 0 ] && [ -e '$o' ] && [ -n \"\$(summary '$TMP/edge.err')\" ]"
	rm -f "$o"
done
check "after the valid runs: target untraced" untraced "$pid"

done_testing
