#!/usr/bin/env bash
# Go programs, unwound to the root.  Go binaries have no
# .eh_frame_hdr (libunwind finds nothing): their CFI is .debug_frame, often
# compressed, read through libdw; a binary built -ldflags='-s -w' has no
# DWARF at all, and only frame pointers are left.
# tests/targets/gounwind: goroutines computing (main.work -> main.hashLoop
# -> crypto/sha256), asleep, on a mutex, on a channel; main in select{}.
#   1. normal build: >= 95% of samples reach their root, every such stack
#      starts at one of Go's roots (runtime.goexit for goroutines,
#      runtime.mstart / rt0_go for system stacks, or the switch to the
#      system stack, runtime.mcall...), the computing chain is named under
#      runtime.goexit, and blocked threads are sampled without a stop (their
#      CFI needs only SP and PC);
#   2. the same program with every thread still ("still"): frame for frame
#      what eu-stack -p shows, up to Go's root (eu-stack goes on past it:
#      runtime.clone above runtime.mstart, stale words of the system stack
#      above runtime.mcall);
#   3. -s -w (no .symtab, no DWARF): .gopclntab gives the names, Go's roots
#      and the frame sizes (pcsp, the table Go's own tracebacks use), so the
#      busy checks of 1 hold as they are, and with every thread still each
#      stack goes, named, from its system call to Go's root.
. "$(dirname "$0")/lib.sh"

GOPROG=$BIN/gounwind
GOSW=$BIN/gounwind-sw
if [ ! -x "$GOPROG" ] || [ ! -x "$GOSW" ]; then
	[ -x "$GO" ] && make -C "$ROOT" --no-print-directory -s GO_BIN="$GO" \
		tests/bin/gounwind tests/bin/gounwind-sw >/dev/null 2>&1
fi
if [ ! -x "$GOPROG" ] || [ ! -x "$GOSW" ]; then
	if [ ! -x "$GO" ]; then
		skip "Go targets" "no Go toolchain at $GO to build tests/targets/gounwind (Debian package golang-1.19-go: make deps installs it)"
	else
		skip "Go targets" "tests/targets/gounwind did not build with $GO (make tests/bin/gounwind tests/bin/gounwind-sw)"
	fi
	done_testing
fi

GO_ROOT='runtime\.(goexit|mstart|rt0_go|sigtramp|mcall|systemstack|morestack|asmcgocall)(\.abi0)?'

# samples FILE ERE: samples whose "label;frames" line matches ERE (grep -E).
samples() { grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }

# --- 1. busy: the normal build, and -s -w (frame sizes from .gopclntab) --------
# busy LABEL TARGET: the checks of a busy run of TARGET.
busy() {
	local label=$1 target=$2 pid out total rooted at_root work chain unstopped blocked
	start_target "$target" || return
	pid=$TARGET_PID
	out=$TMP/$label.folded
	prof "$TMP/$label" "$pid" --duration 2 --threads --os-threads --stats -o "$out"
	check_ran "$label" "$TMP/$label" "$out"
	total=$(folded_total "$out")
	rooted=$(summary_field "$TMP/$label.err" rooted)
	DETAIL="$(summary "$TMP/$label.err")" check "$label: >= 95% of samples reached their root" \
		"ge '${rooted:-0}' 95"
	at_root=$(samples "$out" "^[^;]+;$GO_ROOT[; ]")
	DETAIL="$at_root of $total; $(grep -vE "^[^;]+;$GO_ROOT[; ]" "$out" | head -3 | cut -c1-200 | tr '\n' '|')" \
		check "$label: >= 95% of samples start at one of Go's roots" \
		"[ \$((at_root * 100)) -ge \$((total * 95)) ]"
	work=$(samples "$out" ';main\.work[; ]')
	chain=$(samples "$out" '^[^;]+;runtime\.goexit(\.abi0)?;main\.work;main\.hashLoop;crypto/sha256\.')
	DETAIL="$chain of $work; $(grep -F ';main.work' "$out" | head -3 | cut -c1-250 | tr '\n' '|')" \
		check "$label: the computing goroutine: runtime.goexit;main.work;main.hashLoop;crypto/sha256... (>= 95%)" \
		"[ '$work' -gt 0 ] && [ \$((chain * 100)) -ge \$((work * 95)) ]"
	unstopped=$(stats_blocked "$TMP/$label.err")
	blocked=$(samples "$out" ';runtime\.(futex|epollwait|usleep)(\.abi0)? ')
	DETAIL="$unstopped taken without a stop; $blocked samples in futex/epollwait/usleep" \
		check "$label: blocked threads sampled without a stop, their stacks rooted" \
		"[ '${unstopped:-0}' -gt 0 ] && [ '$blocked' -gt 0 ] &&
		 [ \$(samples '$out' \"^[^;]+;$GO_ROOT;.*;runtime\\.(futex|epollwait|usleep)(\\.abi0)? \") = '$blocked' ]"
	check "$label: target alive" alive "$pid"
	check "$label: every thread untraced" untraced "$pid"
	check "$label: no thread stopped" not_stopped "$pid"
	check "$label: target keeps running" progresses "$pid"
	stop_target "$pid"
}
busy go gounwind
check "-s -w: the program has neither .debug_frame nor .symtab" \
	"! readelf -SW '$GOSW' | grep -qE '\\.debug_frame|\\.symtab'"
busy sw gounwind-sw

# --- 2. every thread still: frame for frame against eu-stack -------------------
# all_asleep PID: every thread asleep (S) in a system call.
all_asleep() {
	local t
	for t in $(tids "$1"); do
		[ "$(proc_state "$1" "$t")" = S ] || return 1
		[ "$(cut -d' ' -f1 "/proc/$1/task/$t/syscall" 2>/dev/null)" != running ] || return 1
	done
}

# eu_names TID: eu-stack's function names for TID, innermost first, up to
# and including the first of Go's roots.
# eu-stack shows the symbol table's names, ABI suffix and all
# (runtime.mstart.abi0); ours are Go's own (.gopclntab): compared without it.
eu_names() {
	TID=$1 ROOT_RE="^$GO_ROOT\$" awk '/^TID / { on = ($2 == ENVIRON["TID"] ":"); next }
		on && /^#[0-9]+ / { n = $3; sub(/\.abi(0|internal)$/, "", n); print n
			if (n ~ ENVIRON["ROOT_RE"]) exit }' "$TMP/eu.txt"
}

if ! command -v eu-stack >/dev/null; then
	skip "go still: frame for frame against eu-stack" "no eu-stack (package elfutils)"
elif start_target gounwind still; then
	pid=$TARGET_PID
	wait_until 5 all_asleep "$pid"
	eu-stack -p "$pid" >"$TMP/eu.txt" 2>"$TMP/eu.err"
	wait_until 5 all_asleep "$pid"
	out=$TMP/still.folded
	prof "$TMP/still" "$pid" --duration 1 --threads --os-threads --stats -o "$out"
	check_ran "go still" "$TMP/still" "$out"
	same=0 n=0 bad=
	for tid in $(tids "$pid"); do
		eu=$(eu_names "$tid" | tac | paste -sd';')
		[ -n "$eu" ] || continue
		n=$((n + 1))
		# our stacks of that thread, "frames COUNT", most sampled first
		ours=$(grep -E "^[^;]+ \($tid\);" "$out" | sed -E 's/^[^;]+;//' | sort -t' ' -k2,2nr | head -1)
		if [ "${ours% *}" = "$eu" ]; then
			same=$((same + 1))
		else
			bad="${bad:+$bad | }$tid: ours ${ours% *}; eu-stack $eu"
		fi
	done
	DETAIL="$(cut -c1-600 <<<"$bad")" \
		check "go still: each thread's stack is eu-stack's, frame for frame, up to Go's root" \
		"[ '$n' -ge 3 ] && [ '$same' = '$n' ]"
	diag "go still: compared $n threads with eu-stack"
	unstopped=$(stats_blocked "$TMP/still.err")
	samples_n=$(summary_field "$TMP/still.err" samples)
	DETAIL="$(summary "$TMP/still.err")" \
		check "go still: every sample taken without stopping the thread" \
		"[ -n '$samples_n' ] && [ '${unstopped:-0}' = '$samples_n' ]"
	check "go still: no thread stopped after" not_stopped "$pid"
	stop_target "$pid"
fi

# --- 3. -s -w, every thread still -------------------------------------------
# Which threads park where is the scheduler's choice, so the stacks are not
# compared with the normal build's run: each must go, named, from its
# system call to runtime.mstart or runtime.mcall.
if start_target gounwind-sw still; then
	pid=$TARGET_PID
	wait_until 5 all_asleep "$pid"
	out=$TMP/swstill.folded
	prof "$TMP/swstill" "$pid" --duration 1 --threads --os-threads -o "$out"
	check_ran "-s -w still" "$TMP/swstill" "$out"
	threads=$(wc -l <"$out")
	good=$(grep -cE "^[^;]+;runtime\.(mstart|mcall)(\.abi0)?;(runtime\.[^;]+;)*runtime\.(futex|epollwait|usleep)(\.abi0)? [0-9]+$" "$out")
	DETAIL="$good of $threads; $(cut -c1-300 "$out" | tr '\n' '|')" \
		check "-s -w still: every thread's stack goes, named, from its system call to runtime.mstart or runtime.mcall" \
		"[ '$threads' -ge 3 ] && [ '$good' = '$threads' ]"
	check "-s -w still: no thread stopped after" not_stopped "$pid"
	stop_target "$pid"
fi
done_testing
