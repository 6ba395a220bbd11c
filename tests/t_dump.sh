#!/usr/bin/env bash
# --dump answers a stall in one command.  tests/bin/deadlock
# has two threads deadlocked on two mutexes (lock-a holds A and waits for B,
# lock-b the reverse), one blocked in read() and one in epoll_wait() that
# counts its EINTRs.  One --dump must print every thread leaf first with its
# system call, name the owner of each awaited mutex, report the cycle as a
# deadlock, leave the target untraced and running, and cause no EINTR;
# --dump --format json says the same to a script.
. "$(dirname "$0")/lib.sh"

start_target deadlock || done_testing
pid=$TARGET_PID
read_tid() { sed -n "s/^$1 //p" "$TARGET_READY.report"; }
_report_ready() { [ -s "$TARGET_READY.report" ]; }
kill -USR1 "$pid"
wait_until 5 _report_ready
ta=$(read_tid lock-a) tb=$(read_tid lock-b) tr=$(read_tid reader) tp=$(read_tid poller)
diag "lock-a $ta, lock-b $tb, reader $tr, poller $tp"

# --- text -----------------------------------------------------------------------
out=$TMP/dump.txt
prof "$TMP/dump" --dump -p "$pid"
cp "$TMP/dump.out" "$out"
diag_file "$out" 60
check "text: exit 0, nothing on stderr" "[ '$PROF_RC' = 0 ] && [ ! -s '$TMP/dump.err' ]"
check "text: a header for the process and its 5 threads" \
	"grep -qE '^Process $pid \"deadlock\": 5 threads$' '$out'"
# header_of TID: the thread's header line; frames_of TID: its frame lines.
header_of() { grep -E "^Thread $1 " "$out"; }
frames_of() { awk -v t="Thread $1 " 'index($0, t) == 1 { on = 1; next } /^(Thread|Process|Deadlock)/ { on = 0 } on && /^    #/' "$out"; }
check "text: lock-a is named and in futex()" "header_of $ta | grep -qE '\"lock-a\" \\(sleeping\\) in futex\\(\\)'"
check "text: lock-a waits for the mutex lock-b holds" \
	"grep -A1 -E '^Thread $ta ' '$out' | grep -qE 'waits for mutex 0x[0-9a-f]+, held by thread $tb \"lock-b\"'"
check "text: lock-b waits for the mutex lock-a holds" \
	"grep -A1 -E '^Thread $tb ' '$out' | grep -qE 'waits for mutex 0x[0-9a-f]+, held by thread $ta \"lock-a\"'"
check "text: the cycle is reported as a deadlock" \
	"grep -qE '^Deadlock: thread ($ta \"lock-a\" waits for thread $tb \"lock-b\" waits for thread $ta|$tb \"lock-b\" waits for thread $ta \"lock-a\" waits for thread $tb)' '$out'"
check "text: exactly one deadlock" "[ \$(grep -c '^Deadlock:' '$out') = 1 ]"
check "text: the reader is in read(), the poller in epoll_wait(), neither waits for a mutex" \
	"header_of $tr | grep -q 'in read()' && header_of $tp | grep -q 'in epoll_wait()' && [ \$(grep -c 'waits for mutex' '$out') = 2 ]"
check "text: off-CPU time shown for blocked threads" \
	"header_of $tr | grep -qE 'off the CPU for [0-9]+\\.[0-9]{3} s'"
first=$(frames_of "$ta" | head -n 1) last=$(frames_of "$ta" | tail -n 1)
DETAIL="first: $first; last: $last" check "text: leaf first (futex code first, __clone3 last)" \
	"grep -qE 'futex|lll_lock' <<<\"\$first\" && grep -q '__clone3' <<<\"\$last\""
check "text: frames have file:line (lock_a at deadlock.c)" \
	"frames_of $ta | grep -qE ' lock_a at tests/targets/deadlock\\.c:[0-9]+ \\[deadlock\\]$'"
check "text: inlined frames are marked" "frames_of $ta | grep -q '\\[inlined\\] '"
check "text: the reader's stack reaches reader()" "frames_of $tr | grep -q ' reader at '"

# --- json ------------------------------------------------------------------------
prof "$TMP/json" --dump --format json -p "$pid"
check "json: exit 0" "[ '$PROF_RC' = 0 ]"
PYCHK=$(cat <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
ta, tb, tr = int(os.environ["TA"]), int(os.environ["TB"]), int(os.environ["TR"])
th = {t["tid"]: t for t in d["threads"]}
assert len(th) == 5, len(th)
assert th[ta]["waits_for"]["owner"] == tb and th[tb]["waits_for"]["owner"] == ta
assert th[tr]["syscall"]["name"] == "read" and "waits_for" not in th[tr]
assert sorted(d["deadlocks"][0]) == sorted([ta, tb]) and len(d["deadlocks"]) == 1
fr = th[ta]["frames"]
assert any(f["function"] == "lock_a" and f["file"].endswith("deadlock.c") for f in fr)
assert fr[-1]["function"].startswith("__clone")
print("ok")
PY
)
res=$(TA=$ta TB=$tb TR=$tr python3 -c "$PYCHK" "$TMP/json.out" 2>&1 | tail -n 1)
DETAIL="$res" check "json: threads, syscalls, mutex owners and the deadlock cycle" "[ '$res' = ok ]"

# --- the target ----------------------------------------------------------------
check "target: untraced after both dumps" untraced "$pid"
check "target: not stopped" not_stopped "$pid"
rm -f "$TARGET_READY.report"
kill -USR1 "$pid"
wait_until 5 _report_ready
n=$(read_tid eintr)
DETAIL="eintr $n" check "target: the poller saw no EINTR (blocked threads read without a stop)" "[ '$n' = 0 ]"

# --- bad input -------------------------------------------------------------------
prof "$TMP/bad" --dump --format svg -p "$pid"
check "--dump --format svg refused, one line" "[ '$PROF_RC' = 2 ] && [ \$(grep -c . '$TMP/bad.err') = 1 ]"
prof "$TMP/bad2" --dump -- true
check "--dump -- COMMAND refused" "[ '$PROF_RC' = 2 ]"

# --- why a thread waits, in a profile (issue 15, item 4) ---------------------------
prof "$TMP/sys" "$pid" --duration 0.5 --threads --syscalls -o "$TMP/sys.folded"
check "--syscalls: the reader's samples end in [syscall read]" \
	"grep -qE '^reader \\($tr\\);.*;reader;.*;\\[syscall read\\] [0-9]+\$' '$TMP/sys.folded'"
check "--syscalls: lock-a's in [syscall futex], the poller's in [syscall epoll_wait]" \
	"grep -qE '^lock-a .*\\[syscall futex\\] [0-9]+\$' '$TMP/sys.folded' && grep -qE '^poller .*\\[syscall epoll_wait\\] [0-9]+\$' '$TMP/sys.folded'"
if have_pprof; then
	prof "$TMP/sysp" "$pid" --duration 0.5 -o "$TMP/sys.pprof"
	tags=$("$GO" tool pprof -tags "$TMP/sys.pprof" 2>&1)
	DETAIL="$(grep -A6 'syscall:' <<<"$tags" | tr '\n' '|')" \
		check "pprof: blocked samples carry a syscall label (futex, read, epoll_wait, rt_sigtimedwait)" \
		"grep -A6 'syscall:' <<<\"\$tags\" | grep -q futex && grep -A6 'syscall:' <<<\"\$tags\" | grep -q ': read\$' && grep -A6 'syscall:' <<<\"\$tags\" | grep -q epoll_wait"
else
	skip "pprof: syscall label" "no go tool pprof ($GO)"
fi

if [ "$(id -u)" = 0 ]; then
	prof "$TMP/kern" "$pid" --duration 0.5 --threads --kernel-stacks -o "$TMP/kern.folded"
	line=$(grep -E "^reader \\($tr\\);" "$TMP/kern.folded" | head -n 1)
	DETAIL="$line" check "--kernel-stacks: the reader's kernel frames ([k], one a read) under its user stack" \
		"grep -qE ';reader;(.*;)?read;.* \\[k\\];' <<<\"\$line\" && grep -qE 'read[a-z_]* \\[k\\]' <<<\"\$line\""
	# After the first kernel frame, every frame of a stack is a kernel frame.
	bad=$(python3 -c '
import sys
n = 0
for l in open(sys.argv[1]):
    fr = l.rsplit(" ", 1)[0].split(";")
    k = [f.endswith(" [k]") for f in fr]
    if True in k and not all(k[k.index(True):]):
        n += 1
print(n)' "$TMP/kern.folded")
	DETAIL="$bad stacks" check "--kernel-stacks: kernel frames only below the user frames" "[ '$bad' = 0 ]"
else
	skip "--kernel-stacks" "needs root"
fi

# How long a dump takes next to eu-stack (not asserted: performance is for bench).
if command -v eu-stack >/dev/null; then
	t0=${EPOCHREALTIME/[.,]/}; "$CPROF" --dump -p "$pid" >/dev/null 2>&1; t1=${EPOCHREALTIME/[.,]/}
	eu-stack -i -s -p "$pid" >/dev/null 2>&1; t2=${EPOCHREALTIME/[.,]/}
	diag "one dump: cprof-attach --dump $(((t1 - t0) / 1000)) ms, eu-stack -i -s $(((t2 - t1) / 1000)) ms"
fi
stop_target "$pid"
done_testing
