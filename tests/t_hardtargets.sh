#!/usr/bin/env bash
# Bad input that must still work: targets whose program file is gone
# (deleted, or replaced by another file, after the target started), a
# target in another mount namespace (its program not visible to us at
# all), a target with 1,000 threads, and one 10,000 frames deep.  Each is
# profiled with exit 0, one summary line, its own function names, and is
# left running, untraced.  (A stripped binary: t_symbols.sh.)
. "$(dirname "$0")/lib.sh"

# start_prog PATH ARGS...: like start_target, for a program at PATH.
start_prog() {
	local prog=$1
	shift
	TARGET_SEQ=$((TARGET_SEQ + 1))
	TARGET_READY=$TMP/prog.$TARGET_SEQ.ready
	"$prog" "$TARGET_READY" "$@" &
	TARGET_PID=$!
	PIDS+=("$TARGET_PID")
	wait_until 10 file_ready "$TARGET_READY" && return 0
	DETAIL="no $TARGET_READY after 10 s" check "$prog starts" false
	return 1
}

# one_line BASE: stderr is the summary (its two lines) and nothing else.
one_line() {
	DETAIL="$(head -c 400 "$1.err" | tr '\n' '|')" \
		check "$2: stderr is the summary only" only_summary "$1.err"
}

# wallclock_names LABEL FOLDED: the names that only the program's own
# symbols give, in their stacks.
wallclock_names() {
	local f=$2 c
	for stack in 'start_thread;burner_main;burn_cpu$' 'start_thread;sleeper_main;sleep_here;' \
		';__libc_start_main[^;]*;(__libc_start_call_main;)?main;'; do
		c=$(folded_count "$f" "$stack")
		DETAIL="$c samples; stacks: $(cut -c1-150 "$f" | tr '\n' '|')" \
			check "$1: names from the program's own symbols: $stack" "[ '$c' -gt 0 ]"
	done
}

# --- the program deleted after it started (/proc/PID/map_files) -------------
mkdir -p "$TMP/del"
cp "$BIN/wallclock" "$TMP/del/wallclock"
if start_prog "$TMP/del/wallclock"; then
	pid=$TARGET_PID
	rm "$TMP/del/wallclock"
	check "deleted: maps says '(deleted)'" "grep -q 'del/wallclock (deleted)' /proc/$pid/maps"
	prof "$TMP/deleted" "$pid" --duration 0.7 -o "$TMP/deleted.folded"
	check_ran "deleted" "$TMP/deleted" "$TMP/deleted.folded"
	one_line "$TMP/deleted" "deleted"
	wallclock_names "deleted" "$TMP/deleted.folded"
	check_unharmed "deleted" "$pid" 3
	stop_target "$pid"
fi

# --- replaced by another program at the same path (rename over it) ---------
mkdir -p "$TMP/rep"
cp "$BIN/wallclock" "$TMP/rep/prog"
if start_prog "$TMP/rep/prog"; then
	pid=$TARGET_PID
	cp "$BIN/nodebug" "$TMP/rep/prog.new"
	mv -f "$TMP/rep/prog.new" "$TMP/rep/prog"
	prof "$TMP/replaced" "$pid" --duration 0.7 -o "$TMP/replaced.folded"
	check_ran "replaced" "$TMP/replaced" "$TMP/replaced.folded"
	one_line "$TMP/replaced" "replaced"
	wallclock_names "replaced" "$TMP/replaced.folded"
	c=$(folded_count "$TMP/replaced.folded" 'nodebug_')
	check "replaced: no names from the new file at that path" "[ '$c' = 0 ]"
	check_unharmed "replaced" "$pid" 3
	stop_target "$pid"
fi

# --- another mount namespace (/proc/PID/root, map_files) ---------------------
# The program is copied to a tmpfs mounted only inside the target's mount
# namespace, over an empty directory of ours: at that path we see nothing.
mkdir -p "$TMP/ns"
TARGET_READY=$TMP/ns.ready
unshare --mount --propagation private sh -c \
	'mount -t tmpfs -o size=16m tmpfs "$1" && cp "$2" "$1/prog" && exec "$1/prog" "$3"' \
	sh "$TMP/ns" "$BIN/wallclock" "$TARGET_READY" 2>"$TMP/ns.err" &
pid=$!
PIDS+=("$pid")
if wait_until 10 file_ready "$TARGET_READY"; then
	check "mount namespace: target in another mount namespace" \
		"[ \"\$(readlink /proc/$pid/ns/mnt)\" != \"\$(readlink /proc/self/ns/mnt)\" ]"
	check "mount namespace: its program is not visible to us" "[ ! -e '$TMP/ns/prog' ]"
	prof "$TMP/mntns" "$pid" --duration 0.7 -o "$TMP/mntns.folded"
	check_ran "mount namespace" "$TMP/mntns" "$TMP/mntns.folded"
	one_line "$TMP/mntns" "mount namespace"
	wallclock_names "mount namespace" "$TMP/mntns.folded"
	check_unharmed "mount namespace" "$pid" 3
else
	skip "mount namespace" "cannot unshare a mount namespace here: $(head -c 200 "$TMP/ns.err")"
fi
stop_target "$pid"

# --- 1,000 threads -------------------------------------------------------------
if start_target many 1000; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	DETAIL="$n threads" check "1000 threads: the target has 1001 threads" "[ '$n' = 1001 ]"
	out=$TMP/many.folded
	prof "$TMP/many" "$pid" --duration 2 -o "$out"
	check_ran "1000 threads" "$TMP/many" "$out"
	one_line "$TMP/many" "1000 threads"
	threads=$(summary_field "$TMP/many.err" threads)
	DETAIL="summary: $(summary "$TMP/many.err")" \
		check "1000 threads: summary says 1001 threads" "[ '$threads' = 1001 ]"
	for fn in wait_in_read wait_on_cond; do
		c=$(folded_count "$out" "$fn")
		DETAIL="$fn in $c samples" check "1000 threads: $fn sampled" "[ '$c' -gt 0 ]"
	done
	check "1000 threads: target alive" alive "$pid"
	check "1000 threads: every thread untraced" untraced "$pid"
	now=$(thread_count "$pid")
	DETAIL="now $now" check "1000 threads: still 1001 threads" "[ '$now' = 1001 ]"
	check "1000 threads: no thread stopped" not_stopped "$pid"
	stop_target "$pid"
fi

# --- 10,000 frames deep ----------------------------------------------------------
# deep with DEPTH 10000: two threads under 10,000 recurse() frames.  At the
# default --max-depth (1024) every deep stack is cut to 1024 addresses, its
# innermost ones, with one [truncated] frame in place of the rest (a few
# more frames once inlined functions are added: read() in libc); with a
# --max-depth above the depth, some samples reach the root.
if start_target deep 10000; then
	pid=$TARGET_PID
	out=$TMP/deep10k.folded
	prof "$TMP/deep10k" "$pid" --duration 1 -o "$out"
	check_ran "10000 deep" "$TMP/deep10k" "$out"
	one_line "$TMP/deep10k" "10000 deep"
	bad=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); t = 0
		for (i = 1; i <= k; i++) if (f[i] == "[truncated]") t++
		if (s ~ /recurse/ && !(t == 1 && f[1] == "[truncated]" && k >= 1000 && k <= 1035)) print k " frames, " t " [truncated]: " substr(s, 1, 80) }' "$out")
	DETAIL="$(head -c 400 <<<"$bad")" \
		check "10000 deep: every deep stack is [truncated] + about 1024 frames" \
		"[ -z \"\$bad\" ] && [ \$(folded_count '$out' recurse) -gt 0 ]"
	for leaf in spin_at_bottom block_at_bottom; do
		c=$(leaf=$leaf awk 'BEGIN { leaf = ENVIRON["leaf"] }
			{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
			for (i = k - 2; i <= k; i++) if (index(f[i], leaf) == 1) { n += $NF; break } }
			END { print n + 0 }' "$out")
		DETAIL="$c samples end in $leaf" check "10000 deep: the innermost frames are kept ($leaf)" "[ '$c' -gt 0 ]"
	done
	out=$TMP/deepfull.folded
	prof "$TMP/deepfull" "$pid" --duration 1.5 --hz 19 --max-depth 12000 -o "$out"
	check_ran "10000 deep, --max-depth 12000" "$TMP/deepfull" "$out"
	full=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); r = 0
		for (i = 1; i <= k; i++) if (f[i] == "recurse") r++
		if (r >= 10000 && f[1] != "[truncated]") n += $NF } END { print n + 0 }' "$out")
	DETAIL="$full samples; frames per stack: $(awk '{ print split($0, f, ";") }' "$out" | sort -un | tr '\n' ' ')" \
		check "10000 deep, --max-depth 12000: whole stacks, >= 10000 recurse frames, to the root" \
		"[ '$full' -gt 0 ]"
	check_unharmed "10000 deep" "$pid" 3
	stop_target "$pid"
fi

done_testing
