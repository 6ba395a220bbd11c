#!/usr/bin/env bash
# JIT maps: /tmp/perf-PID.map names code in no file,
# so whoever writes it names the target's frames.  It is read only when
# it is a regular file (not a symbolic link, not a FIFO), owned by root,
# the profiler's user or the target's user (perf's rule), and only its
# first 64 MiB.  A refused map gives one note on stderr and no JIT names.
. "$(dirname "$0")/lib.sh"

stacks() { cut -c1-200 "$1" | tr '\n' '|'; }

# The tests swap the map of a running tests/bin/jit (which wrote it as
# its user): MAP is /tmp/perf-PID.map, GOOD a copy of what it wrote.
MAPS=()
cleanup_maps() { rm -f "${MAPS[@]}"; cleanup; }
trap cleanup_maps EXIT

# jit_profile NAME: profile the jit target (PID $pid) for 0.5 s into
# $TMP/NAME.folded, in the background, bounded (a FIFO once hung it).
jit_profile() {
	prof_bg "$TMP/$1" "$pid" --duration 0.5 -o "$TMP/$1.folded"
	prof_wait 20
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/$1.err")" \
		check "$1: profiler ends, exit 0" "[ '$PROF_RC' = 0 ]"
	DETAIL="no file" check "$1: profile written" "[ -s '$TMP/$1.folded' ]"
}
jit_names() { folded_count "$TMP/$1.folded" "$2"; }

if [ "$(id -u)" != 0 ]; then
	skip "perf map ownership" "needs root (chown to another user, a target of another user)"
	done_testing
fi
NOBODY=$(id -u nobody)

if start_target jit; then
	pid=$TARGET_PID
	MAP=/tmp/perf-$pid.map
	MAPS+=("$MAP")
	GOOD=$TMP/good.map
	cp "$MAP" "$GOOD"

	jit_profile own
	c=$(jit_names own 'jit_spin_loop')
	DETAIL="$(stacks "$TMP/own.folded")" check "own: root's map names the JIT code" "[ '$c' -gt 0 ]"

	# Another user's file (the target runs as root): ignored, with a note.
	sed 's/jit_spin_loop/renamed_by_nobody/' "$GOOD" >"$TMP/other.map"
	chown nobody "$TMP/other.map"
	mv -f "$TMP/other.map" "$MAP"
	jit_profile other
	c=$(jit_names other 'renamed_by_nobody|jit_spin_loop')
	DETAIL="$(stacks "$TMP/other.folded")" \
		check "other user's map: not read (no name from it)" "[ '$c' = 0 ]"
	DETAIL="$(head -c 300 "$TMP/other.err")" \
		check "other user's map: one note says why" \
		"[ \$(grep -c 'note: ignoring .*perf-$pid.map: owned by uid $NOBODY' '$TMP/other.err') = 1 ]"

	# A symbolic link to a file only root may read: not followed.
	sed 's/jit_spin_loop/SECRET_of_root/' "$GOOD" >"$TMP/secret"
	chmod 600 "$TMP/secret"
	ln -sfn "$TMP/secret" "$MAP"
	jit_profile link
	c=$(jit_names link 'SECRET_of_root|jit_spin_loop')
	DETAIL="$(stacks "$TMP/link.folded")" \
		check "symbolic link: not followed (nothing of the file it points to)" "[ '$c' = 0 ]"
	DETAIL="$(head -c 300 "$TMP/link.err")" \
		check "symbolic link: one note says why" "grep -q 'note: ignoring .*: a symbolic link' '$TMP/link.err'"

	# A hard link to that file: it keeps root as its owner, so only its
	# second name tells.
	rm -f "$MAP"
	ln "$TMP/secret" "$MAP"
	jit_profile hardlink
	c=$(jit_names hardlink 'SECRET_of_root|jit_spin_loop')
	DETAIL="$(stacks "$TMP/hardlink.folded")" \
		check "hard link: not read (nothing of the file it names)" "[ '$c' = 0 ]"
	DETAIL="$(head -c 300 "$TMP/hardlink.err")" \
		check "hard link: one note says why" "grep -q 'note: ignoring .*: a hard link' '$TMP/hardlink.err'"

	# A FIFO: opening it for reading would wait for a writer forever.
	rm -f "$MAP"
	mkfifo "$MAP"
	jit_profile fifo
	DETAIL="$(head -c 300 "$TMP/fifo.err")" \
		check "FIFO: one note says why" "grep -q 'note: ignoring .*: not a regular file' '$TMP/fifo.err'"

	# Past 64 MiB: the first 64 MiB are read, the rest ignored, a note.
	rm -f "$MAP"
	cp "$GOOD" "$MAP"
	truncate -s 65M "$MAP"
	jit_profile big
	c=$(jit_names big 'jit_spin_loop')
	DETAIL="$(stacks "$TMP/big.folded")" check "65 MiB map: names from its start" "[ '$c' -gt 0 ]"
	DETAIL="$(head -c 300 "$TMP/big.err")" \
		check "65 MiB map: one note, names from the first 64 MiB only" \
		"grep -q 'note: .*perf map has 65 MiB.*first 64 MiB only' '$TMP/big.err'"
	stop_target "$pid"
fi

# The target's own user: a map owned by it is read.
mkdir -p "$TMP/nobody"
chmod 777 "$TMP/nobody"
TARGET_READY=$TMP/nobody/jit.ready
setpriv --reuid="$NOBODY" --regid="$(id -g nobody)" --clear-groups "$BIN/jit" "$TARGET_READY" &
pid=$!
PIDS+=("$pid")
MAPS+=("/tmp/perf-$pid.map")
if wait_until 10 file_ready "$TARGET_READY"; then
	owner=$(stat -c %u "/tmp/perf-$pid.map")
	DETAIL="owner $owner" check "target of nobody: its map is nobody's" "[ '$owner' = '$NOBODY' ]"
	jit_profile nobody
	c=$(jit_names nobody 'jit_spin_loop')
	DETAIL="$(stacks "$TMP/nobody.folded")" \
		check "target of nobody: its own map names the JIT code" "[ '$c' -gt 0 ]"
else
	check "jit target as nobody starts" false
fi
stop_target "$pid"

done_testing
