#!/usr/bin/env bash
# --kernel-stacks for a running thread: tests/bin/syscaller never blocks
# (it reads /proc/self/status over and over) and spends most of its time
# in the kernel.  As root with perf capture its samples taken in the
# kernel carry their call chain: "NAME [k]" frames under read_status.
# With --capture ptrace a running thread's kernel frames are not read:
# none, which shows the check can fail.
. "$(dirname "$0")/lib.sh"

# kframes FOLDED: samples with a kernel frame under read_status.
kframes() { folded_count "$1" ';read_status;.* \[k\]'; }

if [ "$(id -u)" != 0 ]; then
	skip "--kernel-stacks of a running thread" "needs root"
elif start_target syscaller; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	prof "$TMP/perf" "$pid" --hz 99 --duration 2 --kernel-stacks -o "$TMP/perf.folded"
	check_ran "perf capture" "$TMP/perf" "$TMP/perf.folded"
	if grep -qE '^cprof-attach: [0-9.]+ of 99 Hz, .*, perf, ' "$TMP/perf.err"; then
		k=$(kframes "$TMP/perf.folded")
		total=$(summary_field "$TMP/perf.err" samples)
		DETAIL="$k of $total samples; $(sort -t' ' -k2 -nr "$TMP/perf.folded" | head -2 | cut -c1-200 | tr '\n' '|')" \
			check "perf capture: kernel frames under the running thread's read_status (>= 25% of samples)" \
			"[ $((k * 4)) -ge '${total:-1}' ]"
	else
		skip "perf capture: kernel frames of a running thread" "perf events not permitted here"
	fi
	prof "$TMP/ptrace" "$pid" --hz 99 --duration 2 --kernel-stacks --capture ptrace -o "$TMP/ptrace.folded"
	check_ran "ptrace capture" "$TMP/ptrace" "$TMP/ptrace.folded"
	k=$(kframes "$TMP/ptrace.folded")
	DETAIL="$k samples" check "the test can fail: ptrace capture reads no kernel frames of a running thread" "[ '$k' = 0 ]"
	check_unharmed "kernel stacks" "$pid" "$n"
	stop_target "$pid"
fi

done_testing
