#!/usr/bin/env bash
# A container's own debug files.  A process in a mount
# namespace of its own, its root a file system the host does not see (a
# tmpfs made its root with pivot_root: /proc/PID/maps shows its paths as
# the container does), runs a program whose DWARF is in a separate file that
# exists only inside that root: by build ID
# (usr/lib/debug/.build-id/xx/rest.debug), or by .gnu_debuglink (under
# usr/lib/debug/). The host has neither: c8e0704 looked on the host only
# (no file:line).  Now the target's root is searched first, the
# found file checked as the host's are (build ID, or the link's CRC), and a
# wrong one refused.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v objcopy >/dev/null || ! command -v unshare >/dev/null; then
	skip "container debug files" "needs root (unshare, mount, chroot) and objcopy"
	done_testing
	exit 0
fi

# make_root DIR HOW: a root with tests/bin/static as /usr/bin/prog, its
# DWARF moved out: HOW=buildid (under usr/lib/debug/.build-id) or
# HOW=debuglink (usr/lib/debug/usr/bin/prog.debug, named by
# .gnu_debuglink, the build ID taken out so that only the link finds it;
# one next to the program or in its .debug/ was found before, the module
# being opened through /proc/PID/root).
make_root() {
	local root=$1 how=$2 id
	mkdir -p "$root/usr/bin" "$root/usr/lib/debug/usr/bin" "$root/tmp" "$root/out" "$root.out"
	cp "$BIN/static" "$root/usr/bin/prog.full"
	objcopy --only-keep-debug "$root/usr/bin/prog.full" "$root/prog.debug"
	if [ "$how" = debuglink ]; then
		objcopy --strip-debug --remove-section=.note.gnu.build-id "$root/usr/bin/prog.full" "$root/usr/bin/prog"
		objcopy --remove-section=.note.gnu.build-id "$root/prog.debug" "$root/usr/lib/debug/usr/bin/prog.debug"
		objcopy --add-gnu-debuglink="$root/usr/lib/debug/usr/bin/prog.debug" "$root/usr/bin/prog"
		rm -f "$root/prog.debug"
	else
		objcopy --strip-debug "$root/usr/bin/prog.full" "$root/usr/bin/prog"
		id=$(build_id "$root/usr/bin/prog")
		mkdir -p "$root/usr/lib/debug/.build-id/${id:0:2}"
		mv "$root/prog.debug" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
	fi
	rm -f "$root/usr/bin/prog.full"
}

# contain ROOT: runs ROOT's /usr/bin/prog in a mount namespace of its own
# whose root (pivot_root) is a tmpfs holding a copy of ROOT (the host cannot
# reach its files by path), ROOT.out bound at /out for its ready file.
# Sets pid (the program's).
contain() {
	local root=$1 c=$1.c
	mkdir -p "$c"
	unshare --mount --propagation private sh -c '
		mount -t tmpfs none "$1" && cp -a "$2/." "$1/" && mount --bind "$2.out" "$1/out" &&
		mkdir "$1/old" && cd "$1" && pivot_root . old && exec /usr/bin/prog /out/ready' sh "$c" "$root" &
	PIDS+=("$!")
	pid=$!
}

for how in buildid debuglink; do
	root=$TMP/root-$how
	make_root "$root" "$how"
	contain "$root"
	if ! wait_until 10 file_ready "$root.out/ready"; then
		DETAIL="no ready file" check "$how: the chrooted program starts" false
		continue
	fi
	check "$how: the program has no DWARF of its own" \
		"! readelf -S '$root/usr/bin/prog' | grep -q debug_info"
	DETAIL="$(grep -m1 prog "/proc/$pid/maps")" \
		check "$how: its maps name /usr/bin/prog, a path the host does not have" \
		"grep -q ' /usr/bin/prog\$' /proc/$pid/maps && [ ! -e /usr/bin/prog ]"
	prof "$TMP/$how" "$pid" --dump
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/$how.err")" check "$how: --dump exits 0" "[ '$PROF_RC' = 0 ]"
	DETAIL="$(grep -m 3 'st_inner\|st_main_loop' "$TMP/$how.out")" \
		check "$how: file:line from the debug file inside the target's root" \
		"grep -qE 'st_inner at .*static\\.c:[0-9]+' '$TMP/$how.out' && grep -qE 'st_main_loop at .*static\\.c:[0-9]+' '$TMP/$how.out'"
	check "$how: target untraced" untraced "$pid"
	stop_target "$pid"
done

# A debug file inside the root whose build ID is another's: refused.
root=$TMP/root-wrong
make_root "$root" buildid
id=$(build_id "$root/usr/bin/prog")
cp "$BIN/wallclock" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
contain "$root"
if wait_until 10 file_ready "$root.out/ready"; then
	prof "$TMP/wrong" "$pid" --dump
	DETAIL="$(grep note "$TMP/wrong.err")" \
		check "wrong build ID inside the root: refused with a note, no file:line" \
		"grep -q 'has another build ID than the module: not used' '$TMP/wrong.err' && ! grep -qE 'st_inner at ' '$TMP/wrong.out' && grep -q st_inner '$TMP/wrong.out'"
	stop_target "$pid"
fi

done_testing
