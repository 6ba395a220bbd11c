#!/usr/bin/env bash
# A library unloaded and another loaded at the same
# address.  tests/bin/swapper runs libswapA.so's inner_A, then on SIGUSR1
# dlclose()s it and runs libswapB.so's inner_B from the same address.  Its
# samples after the swap must be named from libswapB (the maps are compared
# with the module table every 250 ms of sampling, and a file mapped over
# another's range starts a new table: the samples taken before keep the
# old one), every stack whole.
. "$(dirname "$0")/lib.sh"

# Both ways of reading the maps are run: the PROCMAP_QUERY ioctl (Linux
# 6.11+; where the kernel lacks it the profiler falls back to the text by
# itself) and the text (CPROF_MAPS_TEXT=1).
swap_run() {
	local how=$1 pid base
	if [ "$how" = text ]; then export CPROF_MAPS_TEXT=1; else unset CPROF_MAPS_TEXT; fi
	start_target swapper "$BIN/libswapA.so" "$BIN/libswapB.so" || return
	pid=$TARGET_PID
	base=$TMP/swap.$how
	prof_bg "$base" "$pid" -o "$base.folded"
	if wait_attached "$pid"; then
		sleep 1 # samples of libswapA
		kill -USR1 "$pid"
		check "the target swapped the libraries ($how)" wait_until 5 file_ready "$TARGET_READY.B"
		sleep 1.5 # samples of libswapB
		kill -INT "$PROF_PID"
		prof_wait 15
		check_ran "swap ($how)" "$base" "$base.folded"
		read -r _ a _ b <"$TARGET_READY.B"
		diag "libswapA at $a, libswapB at $b; $(summary "$base.err")"
		if [ "$a" = "$b" ]; then
			na=$(folded_count "$base.folded" 'inner_A;leaf_A')
			nb=$(folded_count "$base.folded" 'inner_B;leaf_B')
			total=$(folded_total "$base.folded")
			DETAIL="inner_A $na, inner_B $nb of $total" \
				check "samples before the swap are named from libswapA ($how)" "[ '$na' -gt 0 ]"
			DETAIL="inner_A $na, inner_B $nb of $total" \
				check "samples after the swap are named from libswapB (>= 1/4 of the run) ($how)" \
				"[ \$((nb * 4)) -ge '$total' ]"
			mixed=$(folded_count "$base.folded" 'inner_A;leaf_B|inner_B;leaf_A')
			DETAIL="$mixed samples" check "no stack mixes the two libraries ($how)" "[ '$mixed' = 0 ]"
			# A sample taken in the moment between the unmap and the next look
			# at the maps can still end early; the bug was 59% of them.
			n=$(summary_field "$base.err" partial)
			DETAIL="$n of $total not fully unwound" check "stacks unwound whole (>= 95%) ($how)" \
				"[ \$((n * 20)) -le '$total' ]"
		else
			skip "same-address swap ($how)" "the loader put libswapB at $b, not at libswapA's $a"
		fi
		check "target untraced afterwards ($how)" untraced "$pid"
	fi
	stop_target "$pid"
}

swap_run query
swap_run text
unset CPROF_MAPS_TEXT
done_testing
