#!/usr/bin/env bash
# Complete unwinding without frame pointers (-O2
# -fomit-frame-pointer): on deep and wallclock, >= 99% of samples reach the
# root (_start / __libc_start_main for the main thread, start_thread /
# clone3 / clone for the others), and the 200-deep recursion shows >= 200
# recurse frames, both for the thread blocked in read() and for the one
# spinning on CPU.  Also --max-depth cuts stacks with a [truncated] frame.
. "$(dirname "$0")/lib.sh"

ROOT_RE='^(_start|__libc_start_main(_impl|_alias_[0-9]+)?(@@?GLIBC_[0-9.]+)?|start_thread|__clone3|clone3|__clone|clone)$'

# rooted FILE: samples whose first frame is a root
rooted() {
	re=$ROOT_RE awk 'BEGIN { re = ENVIRON["re"] }
		{ s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";")
		if (f[1] ~ re) n += $NF } END { print n + 0 }' "$1"
}

# deep_samples FILE LEAF MIN: samples whose stack contains LEAF and at least
# MIN frames named exactly "recurse"
deep_samples() {
	leaf=$2 awk -v min="$3" 'BEGIN { leaf = ENVIRON["leaf"] }
		{ s = $0; sub(/ [0-9]+$/, "", s)
		if (s !~ leaf) next
		k = split(s, f, ";"); r = 0
		for (i = 1; i <= k; i++) if (f[i] == "recurse") r++
		if (r >= min) n += $NF } END { print n + 0 }' "$1"
}

check_roots() {
	local label=$1 base=$2 out=$3 total ok p partial
	total=$(folded_total "$out")
	ok=$(rooted "$out")
	p=$(pct "$ok" "$total")
	DETAIL="$ok of $total ($p%); roots seen: $(awk '{ split($0, f, ";"); print f[1] }' "$out" | sort | uniq -c | sort -rn | head -5 | tr -s ' \n' ' ')" \
		check "$label: >= 99% of samples reach the root frame" ge "$p" 99
	partial=$(summary_field "$base.err" partial)
	p=$(pct "${partial:-0}" "$(summary_field "$base.err" samples)")
	DETAIL="summary: $(summary "$base.err")" \
		check "$label: summary counts <= 1% not fully unwound" \
		"[ -n '$partial' ] && ge 1 '$p'"
}

# --- deep ---------------------------------------------------------------------
if start_target deep; then
	pid=$TARGET_PID
	out=$TMP/deep.folded
	prof "$TMP/deep" "$pid" --duration 2 -o "$out"
	check_ran "deep" "$TMP/deep" "$out"
	check_roots "deep" "$TMP/deep" "$out"
	for leaf in block_at_bottom spin_at_bottom; do
		all=$(folded_count "$out" "$leaf")
		full=$(deep_samples "$out" "$leaf" 200)
		DETAIL="$leaf in $all samples" check "deep: $leaf sampled" "[ '$all' -gt 0 ]"
		DETAIL="$full of $all samples have >= 200 recurse frames; depths: $(grep -E "$leaf" "$out" | awk '{ print gsub(/;recurse;/, "&") }' | sort -u | tr '\n' ' ')" \
			check "deep: $leaf under >= 200 recurse frames in >= 99% of its samples" \
			"[ '$all' -gt 0 ] && ge \$(pct $full $all) 99"
	done
	c=$(folded_count "$out" 'block_at_bottom;(__GI___libc_)?read')
	DETAIL="block_at_bottom;read in $c samples" \
		check "deep: the blocked thread's leaf is read() in block_at_bottom" "[ '$c' -gt 0 ]"

	# --max-depth: cut, one [truncated] frame at an end, the rest untouched
	out=$TMP/deep50.folded
	prof "$TMP/deep50" "$pid" --duration 0.5 --max-depth 50 -o "$out"
	check_ran "--max-depth 50" "$TMP/deep50" "$out"
	bad=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); t = 0
		for (i = 1; i <= k; i++) if (f[i] == "[truncated]") t++
		deep = (s ~ /recurse/)
		if (deep && !(t == 1 && (f[1] == "[truncated]" || f[k] == "[truncated]") && k >= 50 && k <= 60)) print k ": " substr(s, 1, 80)
		if (!deep && (t != 0 || k > 50)) print k ": " substr(s, 1, 80) }' "$out")
	DETAIL="$bad" check "--max-depth 50: deep stacks cut to ~50 frames + [truncated], short ones intact" \
		"[ -z \"\$bad\" ] && [ -s '$out' ]"
	c=$(folded_count "$out" 'spin_at_bottom')
	DETAIL="spin_at_bottom in $c samples" \
		check "--max-depth 50: the innermost frames are kept" "[ '$c' -gt 0 ]"
	stop_target "$pid"
fi

# --- wallclock ------------------------------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	out=$TMP/wall.folded
	prof "$TMP/wall" "$pid" --duration 1.5 -o "$out"
	check_ran "wallclock" "$TMP/wall" "$out"
	check_roots "wallclock" "$TMP/wall" "$out"
	for stack in '^_start;__libc_start_main[^;]*;(__libc_start_call_main;)?main;' \
		'^(__clone3|clone3|__clone|clone);start_thread;burner_main;burn_cpu$' \
		'^(__clone3|clone3|__clone|clone);start_thread;sleeper_main;sleep_here;'; do
		c=$(folded_count "$out" "$stack")
		DETAIL="$c samples; stacks: $(cut -c1-150 "$out" | tr '\n' '|')" \
			check "wallclock: exact stack $stack" "[ '$c' -gt 0 ]"
	done
	stop_target "$pid"
fi

done_testing
