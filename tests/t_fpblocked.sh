#!/usr/bin/env bash
# Frame-pointer and -O0 builds, blocked.  Unwinding their frames
# needs RBP, which /proc does not give for a blocked thread: each sample
# stopped it, and a stop makes epoll_wait, semop and recvmsg (SO_RCVTIMEO)
# return EINTR (at c8b91ce: about 390 in 4 s at 99 Hz each, 5,800 a
# minute).  A thread blocked where its last stop was, with the same stack
# up to the saved frame, has the same RBP: one stop per blocking site, not
# per tick.  Now RBP is found on the stack without a stop where the call
# that made the frame vouches for it (unwind/unwinder.c), in either
# capture.  tests/bin/eintr-fp (tests/targets/eintr.c built -O0
# -fno-omit-frame-pointer) is profiled 4 s at 99 Hz: each of those calls
# may see an EINTR or two (the first sample stops it; a frame's locals may
# change once after), every thread is still sampled at about every tick,
# in its own function, and the stacks reach their root.
. "$(dirname "$0")/lib.sh"

CALLS="w-epoll w-semop w-recvmsg"
declare -A FN=([w-epoll]=block_epoll [w-semop]=block_semop [w-recvmsg]=block_recvmsg
	[w-sigtimed]=block_sigtimed [w-recv]=block_recv)
MAX_EINTR=3

counts() { sed -nE "s/^$2 eintr=([0-9]+) other=([0-9]+)$/\1/p" "$1"; }

all_blocked() {
	local t
	for t in $(tids "$1"); do
		[ "$(cat "/proc/$1/task/$t/comm" 2>/dev/null)" = w-burn ] && continue
		[[ $(cat "/proc/$1/task/$t/syscall" 2>/dev/null) =~ ^[0-9]+\  ]] || return 1
	done
}

if start_target eintr-fp; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	report=$TARGET_READY.report
	check "every waiting thread is blocked in its call" wait_until 5 all_blocked "$pid"
	request_report "$pid" "$report"
	cp "$report" "$TMP/before"
	out=$TMP/fp.folded
	prof "$TMP/fp" "$pid" --hz 99 --duration 4 --threads --stats -o "$out"
	check_ran "eintr-fp" "$TMP/fp" "$out"
	diag "$(summary "$TMP/fp.err" | cut -c1-220)"
	request_report "$pid" "$report"
	for name in $CALLS w-sigtimed w-recv; do
		e=$(($(counts "$report" "$name") - $(counts "$TMP/before" "$name")))
		DETAIL="$e EINTR" \
			check "-O0 frame pointers, 4 s at 99 Hz: ${FN[$name]} ($name) saw at most $MAX_EINTR EINTR ($e)" \
			"[ $e -le $MAX_EINTR ]"
	done
	secs=$(summary_field "$TMP/fp.err" seconds)
	achieved=$(summary_field "$TMP/fp.err" achieved)
	ticks=$(awk -v a="$achieved" -v s="$secs" 'BEGIN { printf "%d", a * s }')
	for name in $CALLS; do
		c=$(awk -v root="^$name \\\\([0-9]+\\\\);" -v fn=";${FN[$name]}(;|$)" \
			'{ s = $0; sub(/ [0-9]+$/, "", s); if (s ~ root && s ~ fn) n += $NF } END { print n + 0 }' "$out")
		DETAIL="$c samples in ${FN[$name]}, $ticks ticks" \
			check "wall clock: $name sampled in ${FN[$name]} at >= 90% of the ticks" \
			"[ $((c * 100)) -ge $((ticks * 90)) ]"
	done
	rooted=$(summary_field "$TMP/fp.err" rooted)
	DETAIL="$rooted%" check "stacks reach their root (>= 99%)" "ge '${rooted:-0}' 99"
	reused=$(sed -nE 's/.* ([0-9]+) frame pointers reused.*/\1/p' "$TMP/fp.err")
	found=$(sed -nE 's/.* ([0-9]+) found on the stack.*/\1/p' "$TMP/fp.err")
	DETAIL="$(grep stats: "$TMP/fp.err" | cut -c1-300)" \
		check "--stats: blocked captures had their RBP from the stack (${found:-?}) or a stop's (${reused:-?})" \
		"[ \$((${reused:-0} + ${found:-0})) -gt 0 ]"
	check_unharmed "eintr-fp" "$pid" "$n"
	stop_target "$pid"
fi

done_testing
