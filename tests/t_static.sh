#!/usr/bin/env bash
# Static binaries.  `gcc -static` links .eh_frame without
# .eh_frame_hdr, the table libunwind looks FDEs up in: their CFI is read
# through libdw.  tests/targets/static.c: thread "st-spin" under st_outer
# -> st_middle -> st_inner, the main thread under main -> st_main_loop.
#   glibc (tests/bin/static): every sample rooted (_start, __clone3), both
#     chains named;
#   musl (tests/bin/static-musl, when musl-gcc is installed): musl's own
#     code (libc_start_main_stage2, the threads' start) has neither unwind
#     info nor frame pointers, so the stacks end at the first frame of
#     musl's, which called ours: that frame is the root (above it only
#     _start_c/_start or __clone), as Go's TOPFRAME functions are.  Both
#     chains named, that frame last, rooted (>= 95%), nothing guessed above.
#     A thread blocked in musl's epoll_wait is sampled without a stop (no
#     EINTR): its stack ends in musl's code, not rooted (no way past it).
. "$(dirname "$0")/lib.sh"

# samples FILE ERE: samples whose "label;frames" line matches ERE (grep -E).
samples() { grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }

# --- glibc ------------------------------------------------------------------------
check "glibc: the program has .eh_frame but no .eh_frame_hdr" \
	"readelf -SW '$BIN/static' | grep -q ' \\.eh_frame ' && ! readelf -lW '$BIN/static' | grep -q GNU_EH_FRAME"
if start_target static; then
	pid=$TARGET_PID
	out=$TMP/static.folded
	prof "$TMP/static" "$pid" --duration 1.5 --threads -o "$out"
	check_ran "glibc" "$TMP/static" "$out"
	total=$(folded_total "$out")
	rooted=$(summary_field "$TMP/static.err" rooted)
	DETAIL="$(summary "$TMP/static.err")" check "glibc: every sample reached its root" "[ '$rooted' = 100.0 ]"
	main=$(samples "$out" '^[^;]+;_start;__libc_start_main[^;]*;(__libc_start_call_main;)?main;st_main_loop ')
	thread=$(samples "$out" '^[^;]+;(__clone3?;)?start_thread;st_thread;st_outer;st_middle;st_inner ')
	DETAIL="main $main, thread $thread of $total; $(cut -c1-200 "$out" | tr '\n' '|')" \
		check "glibc: every sample is _start;...;main;st_main_loop or start_thread;st_thread;st_outer;st_middle;st_inner" \
		"[ '$main' -gt 0 ] && [ '$thread' -gt 0 ] && [ \$((main + thread)) = '$total' ]"
	check_unharmed "glibc" "$pid" 2
	stop_target "$pid"
fi

# --- musl ---------------------------------------------------------------------------
if [ ! -x "$BIN/static-musl" ]; then
	command -v musl-gcc >/dev/null &&
		make -C "$ROOT" --no-print-directory -s tests/bin/static-musl >/dev/null 2>&1
fi
if [ ! -x "$BIN/static-musl" ]; then
	if ! command -v musl-gcc >/dev/null; then
		skip "musl" "no musl-gcc to build tests/bin/static-musl: musl-tools is not installed (Debian package musl-tools: make deps installs it)"
	else
		skip "musl" "tests/bin/static-musl did not build with musl-gcc (make tests/bin/static-musl)"
	fi
elif start_target static-musl; then
	pid=$TARGET_PID
	out=$TMP/musl.folded
	prof "$TMP/musl" "$pid" --duration 1.5 --threads -o "$out"
	check_ran "musl" "$TMP/musl" "$out"
	total=$(folded_total "$out")
	main=$(samples "$out" '^[^;]+;libc_start_main_stage2;main;st_main_loop ')
	thread=$(samples "$out" '^[^;]+;start;st_thread;st_outer;st_middle;st_inner ')
	DETAIL="main $main, thread $thread of $total; $(cut -c1-200 "$out" | tr '\n' '|')" \
		check "musl: every sample is libc_start_main_stage2;main;st_main_loop or start;st_thread;st_outer;st_middle;st_inner" \
		"[ '$main' -gt 0 ] && [ '$thread' -gt 0 ] && [ \$((main + thread)) = '$total' ]"
	rooted=$(summary_field "$TMP/musl.err" rooted)
	DETAIL="$(summary "$TMP/musl.err")" check "musl: >= 95% of samples reached their root (musl's frame that called ours)" \
		"ge '${rooted:-0}' 95"
	check_unharmed "musl" "$pid" 2
	stop_target "$pid"
fi
# A thread blocked in musl's code (no unwind info, no frame pointers) is
# sampled without a stop: a stop for RBP would give nothing to unwind with
# and cost the thread an EINTR at every tick (178 in 2 s before).
if [ -x "$BIN/static-musl" ] && start_target static-musl wait; then
	pid=$TARGET_PID
	out=$TMP/muslwait.folded
	prof "$TMP/muslwait" "$pid" --duration 2 --threads -o "$out"
	check_ran "musl, a blocked thread" "$TMP/muslwait" "$out"
	_eintr_read() { [ -s "$TARGET_READY.eintr" ]; }
	kill -USR1 "$pid"
	wait_until 5 _eintr_read
	n=$(sed -n 's/^EINTR=//p' "$TARGET_READY.eintr" 2>/dev/null)
	DETAIL="EINTR=${n:-?}" check "musl, a blocked thread: its epoll_wait saw no EINTR" "[ '${n:-x}' = 0 ]"
	w=$(samples "$out" ';epoll_pwait;__syscall_cp_c [0-9]+$')
	DETAIL="$(cut -c1-200 "$out" | tr '\n' '|')" \
		check "musl, a blocked thread: sampled, in musl's epoll_pwait" "[ '$w' -gt 0 ]"
	stop_target "$pid"
fi
done_testing
