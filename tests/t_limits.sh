#!/usr/bin/env bash
# Out of descriptors.  The profiler keeps a few /proc files
# open per thread; with a low `ulimit -n` they used to take every
# descriptor: the blocked threads, their /proc files unreadable, were
# stopped instead (at 833e79e, 200 threads in epoll_wait saw 44,785 EINTR
# in a run with `ulimit -n 256`, 9 without), and the module files could not
# be opened (no function names).  tests/bin/eintr with 200 threads in
# epoll_wait, counting every return, is profiled 3 s at 99 Hz with no limit,
# then with `ulimit -n 256` and `ulimit -n 20` (for the profiler only):
# epoll_wait must see no more EINTR than without a limit (none), the
# profile must name block_epoll, and the profiler must say in one line that
# the limit made it slower.
. "$(dirname "$0")/lib.sh"

EPOLLS=200

# epolls_blocked PID: EPOLLS threads named w-epoll are in a system call.
epolls_blocked() {
	local t n=0
	for t in $(tids "$1"); do
		[ "$(cat "/proc/$1/task/$t/comm" 2>/dev/null)" = w-epoll ] || continue
		[[ $(cat "/proc/$1/task/$t/syscall" 2>/dev/null) =~ ^[0-9]+\  ]] && n=$((n + 1))
	done
	[ "$n" -ge "$EPOLLS" ]
}

# eintrs REPORT: the w-epoll threads' EINTR count.
eintrs() { sed -nE 's/^w-epoll eintr=([0-9]+) other=[0-9]+$/\1/p' "$1"; }

if start_target eintr "$EPOLLS"; then
	pid=$TARGET_PID
	report=$TARGET_READY.report
	n=$(thread_count "$pid")
	check "$EPOLLS threads blocked in epoll_wait" wait_until 10 epolls_blocked "$pid"
	base=
	for lim in none 256 20; do
		out=$TMP/lim-$lim.folded
		request_report "$pid" "$report"
		e0=$(eintrs "$report")
		if [ "$lim" = none ]; then
			prof "$TMP/lim-$lim" "$pid" --hz 99 --duration 3 -o "$out"
		else
			# The limit is the profiler's alone: set in a subshell that execs it.
			(ulimit -n "$lim" && exec timeout --foreground -k 5 60 "$CPROF" "$pid" \
				--hz 99 --duration 3 -o "$out") >"$TMP/lim-$lim.out" 2>"$TMP/lim-$lim.err"
			PROF_RC=$?
		fi
		check_ran "ulimit -n $lim" "$TMP/lim-$lim" "$out"
		diag "ulimit -n $lim: $(summary "$TMP/lim-$lim.err" | cut -c1-200)"
		request_report "$pid" "$report"
		e1=$(eintrs "$report")
		d=$((${e1:-0} - ${e0:-0}))
		[ "$lim" = none ] && base=$d
		DETAIL="$d EINTR (no limit: ${base:-?})" \
			check "ulimit -n $lim: epoll_wait in $EPOLLS threads saw no EINTR (as many as with no limit: ${base:-?})" \
			"[ -n '$e1' ] && [ $d -le ${base:-0} ] && [ $d = 0 ]"
		c=$(folded_count "$out" ';block_epoll(;|$)')
		DETAIL="$(head -c 300 "$out")" \
			check "ulimit -n $lim: function names in the profile (block_epoll: $c samples)" "[ '$c' -gt 0 ]"
		if [ "$lim" != none ]; then
			notes=$(grep -c 'note: the descriptor limit' "$TMP/lim-$lim.err")
			DETAIL="$(head -c 300 "$TMP/lim-$lim.err")" \
				check "ulimit -n $lim: one line says the limit made it slower" "[ '$notes' = 1 ]"
		fi
	done
	check_unharmed "eintr ($EPOLLS epoll threads)" "$pid" "$n"
	stop_target "$pid"
fi

done_testing
