#!/usr/bin/env bash
# Return addresses around a signal frame.  Only the frame
# a signal interrupted has an exact PC; the frames above it hold return
# addresses again (looked up at PC - 1), and the trampoline (__restore_rt)
# has the address the kernel planted, its first instruction (exact too).
# tests/targets/sigframe.c stops a thread in a SIGALRM handler (blocked in
# read) that interrupted sf_spin exactly at the first instruction of the
# inlined sf_spin_inline, called from sf_loop whose return address is
# exactly the first instruction of the inlined sf_after.  So, root first:
#   ...;sf_thread;sf_loop;sf_spin;sf_spin_inline;TRAMPOLINE;sf_handler;...
# A return address looked up as it is shows a wrong sf_after frame under
# sf_loop (the bug this test was written for); an exact PC looked up at
# PC - 1 loses sf_spin_inline.
. "$(dirname "$0")/lib.sh"

start_target sigframe || done_testing
PID=$TARGET_PID
TID=
for t in $(tids "$PID"); do
	[ "$(cat "/proc/$PID/task/$t/comm" 2>/dev/null)" = sigframe ] && TID=$t
done
DETAIL="threads: $(tids "$PID" | tr '\n' ' ')" check "the target has its thread 'sigframe'" "[ -n '$TID' ]" ||
	done_testing
# in_read: the thread is asleep in read(2) (system call 0), in the handler
in_read() { [ "$(proc_state "$PID" "$TID")" = S ] && [ "$(cut -d' ' -f1 "/proc/$PID/task/$TID/syscall")" = 0 ]; }
wait_until 5 in_read
check "the thread sleeps in read() inside its signal handler" in_read

out=$TMP/sf.folded
prof "$TMP/sf" "$PID" --duration 1 --threads --stats -o "$out"
check_ran "sigframe" "$TMP/sf" "$out"
mine=$(grep -E "^sigframe \($TID\);" "$out")
n=$(awk '{ n += $NF } END { print n + 0 }' <<<"$mine")
DETAIL="$n samples" check "the thread was sampled (>= 50 samples in 1 s)" "[ '$n' -ge 50 ]"
# samples_matching ERE: samples of the thread whose stack matches ERE (grep -E)
samples_matching() { grep -E "$1" <<<"$mine" | awk '{ n += $NF } END { print n + 0 }'; }
good=$(samples_matching ';sf_thread;sf_loop;sf_spin;sf_spin_inline;[^;]+;sf_handler;')
DETAIL="$good of $n; stacks: $(cut -c1-300 <<<"$mine" | tr '\n' '|')" \
	check "every sample: sf_loop;sf_spin;sf_spin_inline;TRAMPOLINE;sf_handler" "[ '$good' = '$n' ]"
bad=$(samples_matching ';sf_after;')
DETAIL="$bad samples with sf_after" \
	check "no sf_after frame: sf_loop's return address is looked up at PC - 1" "[ '$bad' = 0 ]"
tramp=$(sed -nE 's/.*;sf_spin_inline;([^;]+);sf_handler;.*/\1/p' <<<"$mine" | sort -u)
DETAIL="the trampoline frame is '$tramp'" \
	check "the trampoline frame is __restore_rt, or unnamed in libc" \
	"grep -qxE '__restore_rt|libc\.so\.6\+0x[0-9a-f]+' <<<'$tramp'"
unstopped=$(stats_blocked "$TMP/sf.err")
DETAIL="summary: $(summary "$TMP/sf.err")" \
	check "the blocked thread was sampled without stopping it" "[ '${unstopped:-0}' -ge '$n' ]"
check_unharmed_still() {
	check "after: target alive" alive "$PID"
	check "after: every thread untraced" untraced "$PID"
	check "after: no thread stopped" not_stopped "$PID"
	wait_until 5 in_read
	check "after: the thread sleeps in its handler still" in_read
}
check_unharmed_still
done_testing
