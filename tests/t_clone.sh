#!/usr/bin/env bash
# Children made with clone() without CLONE_THREAD are
# processes, not threads.  tests/bin/cloner clone()s a short-lived child
# every 20 ms with exit signal 0 (ptrace reports those as clone events, as
# it does threads), and one long-lived child that execs /bin/sleep.
#  - without --subprocesses: one process of one thread is profiled, no
#    child's function is in it, the child's exec does not end the run, and
#    every child is left untraced;
#  - with --subprocesses: the children are profiled as processes of their
#    own (NAME (PID) roots other than the parent's).
. "$(dirname "$0")/lib.sh"

start_target cloner || done_testing
pid=$TARGET_PID
long=$(cat "$TARGET_READY.long")
PIDS+=("$long")
_is_sleep() { [ "$(cat "/proc/$long/comm" 2>/dev/null)" = sleep ]; }
check "the long-lived child execs /bin/sleep" wait_until 5 _is_sleep

base=$TMP/plain
prof "$base" "$pid" --duration 1.5 --threads -o "$base.folded"
check_ran "without --subprocesses" "$base" "$base.folded"
diag "$(summary "$base.err")"
n=$(summary_field "$base.err" threads)
DETAIL="$n threads" check "without --subprocesses: 1 thread (clone children are not threads)" "[ '$n' = 1 ]"
n=$(folded_count "$base.folded" 'child_burn|short_child')
DETAIL="$n samples" check "without --subprocesses: no sample of a child's function" "[ '$n' = 0 ]"
n=$(folded_count "$base.folded" 'parent_work')
DETAIL="$n samples" check "without --subprocesses: the parent is sampled (parent_work)" "[ '$n' -gt 0 ]"
roots=$(sed -E 's/;.*//' "$base.folded" | sort -u | tr '\n' '|')
DETAIL="roots: $roots" check "without --subprocesses: one root, the parent's thread" "[ '$roots' = 'cloner ($pid)|' ]"
check "the run ended by its duration (not at a child's exec)" \
	"grep -q 'duration reached' '$base.err'"
check "the exec'd child is untraced" untraced "$long"
check "the parent is untraced" untraced "$pid"

base=$TMP/sub
prof "$base" "$pid" --duration 1.5 --subprocesses --processes -o "$base.folded"
check_ran "with --subprocesses" "$base" "$base.folded"
diag "$(summary "$base.err")"
others=$(grep -E 'child_burn' "$base.folded" | grep -vcE "^cloner \\($pid\\);")
DETAIL="$others stacks" check "with --subprocesses: children sampled under roots of their own" "[ '$others' -gt 0 ]"
inparent=$(grep -cE "^cloner \\($pid\\);.*short_child" "$base.folded")
DETAIL="$inparent stacks" check "with --subprocesses: no child's stack under the parent's root" "[ '$inparent' = 0 ]"
check "afterwards: the parent and the exec'd child untraced" "untraced $pid && untraced $long"
stop_target "$pid"
stop_target "$long"
done_testing
