#!/usr/bin/env bash
# Issue 13: Go programs, unwound to the root.  Go binaries have no
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
#   3. -s -w (frame pointers only): what holds there.  Its code is laid
#      out as the normal build's (same addresses), so its unnamed frames
#      are named here from the normal build's symbols: with every thread
#      still, each stack goes from the system call to runtime.mstart or
#      runtime.mcall.  That is all: busy, the computing goroutine's stacks
#      end in crypto/sha256.block, assembly that uses RBP for data, and
#      without symbols Go's roots are not known, so a stack that reaches
#      one is not counted as rooted (the % is printed, not checked).
. "$(dirname "$0")/lib.sh"

GOPROG=$BIN/gounwind
GOSW=$BIN/gounwind-sw
if [ ! -x "$GOPROG" ] || [ ! -x "$GOSW" ]; then
	if [ ! -x "$GO" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		diag "Go missing: apt-get install golang-1.19-go (one time)"
		DEBIAN_FRONTEND=noninteractive timeout 120 apt-get install -y -qq --no-install-recommends \
			golang-1.19-go >/dev/null 2>&1
	fi
	[ -x "$GO" ] && make -C "$ROOT" --no-print-directory -s GO_BIN="$GO" \
		tests/bin/gounwind tests/bin/gounwind-sw >/dev/null 2>&1
fi
if [ ! -x "$GOPROG" ] || [ ! -x "$GOSW" ]; then
	skip "Go targets" "no Go toolchain at $GO to build tests/targets/gounwind (golang-1.19-go)"
	done_testing
fi

GO_ROOT='runtime\.(goexit|mstart|rt0_go|sigtramp|mcall|systemstack|morestack|asmcgocall)(\.abi0)?'

# samples FILE ERE: samples whose "label;frames" line matches ERE (grep -E).
samples() { grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }

# --- 1. the normal build, busy --------------------------------------------------
if start_target gounwind; then
	pid=$TARGET_PID
	out=$TMP/go.folded
	prof "$TMP/go" "$pid" --duration 2 --threads --stats -o "$out"
	check_ran "go" "$TMP/go" "$out"
	total=$(folded_total "$out")
	rooted=$(summary_field "$TMP/go.err" rooted)
	DETAIL="$(summary "$TMP/go.err")" check "go: >= 95% of samples reached their root" \
		"ge '${rooted:-0}' 95"
	at_root=$(samples "$out" "^[^;]+;$GO_ROOT[; ]")
	DETAIL="$at_root of $total; $(grep -vE "^[^;]+;$GO_ROOT[; ]" "$out" | head -3 | cut -c1-200 | tr '\n' '|')" \
		check "go: >= 95% of samples start at one of Go's roots" \
		"[ \$((at_root * 100)) -ge \$((total * 95)) ]"
	work=$(samples "$out" ';main\.work[; ]')
	chain=$(samples "$out" '^[^;]+;runtime\.goexit(\.abi0)?;main\.work;main\.hashLoop;crypto/sha256\.')
	DETAIL="$chain of $work; $(grep -F ';main.work' "$out" | head -3 | cut -c1-250 | tr '\n' '|')" \
		check "go: the computing goroutine: runtime.goexit;main.work;main.hashLoop;crypto/sha256... (>= 95%)" \
		"[ '$work' -gt 0 ] && [ \$((chain * 100)) -ge \$((work * 95)) ]"
	unstopped=$(stats_blocked "$TMP/go.err")
	blocked=$(samples "$out" ';runtime\.(futex|epollwait|usleep)(\.abi0)? ')
	DETAIL="$unstopped taken without a stop; $blocked samples in futex/epollwait/usleep" \
		check "go: blocked threads sampled without a stop, their stacks rooted" \
		"[ '${unstopped:-0}' -gt 0 ] && [ '$blocked' -gt 0 ] &&
		 [ \$(samples '$out' \"^[^;]+;$GO_ROOT;.*;runtime\\.(futex|epollwait|usleep)(\\.abi0)? \") = '$blocked' ]"
	check "go: target alive" alive "$pid"
	check "go: every thread untraced" untraced "$pid"
	check "go: no thread stopped" not_stopped "$pid"
	check "go: target keeps running" progresses "$pid"
	stop_target "$pid"
fi

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
	prof "$TMP/still" "$pid" --duration 1 --threads --stats -o "$out"
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

# --- 3. -s -w: frame pointers only --------------------------------------------
# The normal build's function symbols, "ADDRESS NAME" (decimal), sorted.
nm "$GOPROG" 2>/dev/null | awk '$2 ~ /^[Tt]$/ { v = 0
	for (i = 1; i <= length($1); i++) v = v * 16 + index("0123456789abcdef", substr($1, i, 1)) - 1
	printf "%.0f %s\n", v, $3 }' | sort -n >"$TMP/syms"
# named FOLDED: each "gounwind-sw+0xADDR" frame named from the normal build.
named() {
	awk 'NR == FNR { a[NR] = $1; s[NR] = $2; k = NR; next }
		{ c = $NF; line = $0; sub(/ [0-9]+$/, "", line); m = split(line, f, ";"); out = f[1]
		  for (i = 2; i <= m; i++) { x = f[i]
			if (x ~ /^gounwind-sw\+0x[0-9a-f]+$/) { h = substr(x, 15); v = 0
				for (j = 1; j <= length(h); j++) v = v * 16 + index("0123456789abcdef", substr(h, j, 1)) - 1
				lo = 1; hi = k; while (lo < hi) { md = int((lo + hi + 1) / 2); if (a[md] <= v) lo = md; else hi = md - 1 }
				x = s[lo] }
			out = out ";" x }
		  print out, c }' "$TMP/syms" "$1"
}

check "-s -w: the program has neither .debug_frame nor .symtab" \
	"! readelf -SW '$GOSW' | grep -qE '\\.debug_frame|\\.symtab'"
if start_target gounwind-sw still; then
	pid=$TARGET_PID
	wait_until 5 all_asleep "$pid"
	out=$TMP/swstill.folded
	prof "$TMP/swstill" "$pid" --duration 1 --threads -o "$out"
	check_ran "-s -w still" "$TMP/swstill" "$out"
	named "$out" >"$TMP/swstill.named"
	threads=$(wc -l <"$TMP/swstill.named")
	good=$(grep -cE "^[^;]+;runtime\.(mstart|mcall)(\.abi0)?;(runtime\.[^;]+;)*runtime\.(futex|epollwait|usleep)(\.abi0)? [0-9]+$" "$TMP/swstill.named")
	DETAIL="$good of $threads; $(cut -c1-300 "$TMP/swstill.named" | tr '\n' '|')" \
		check "-s -w still: every thread's stack goes from its system call to runtime.mstart or runtime.mcall" \
		"[ '$threads' -ge 3 ] && [ '$good' = '$threads' ]"
	check "-s -w still: no thread stopped after" not_stopped "$pid"
	stop_target "$pid"
fi
if start_target gounwind-sw; then
	pid=$TARGET_PID
	out=$TMP/sw.folded
	prof "$TMP/sw" "$pid" --duration 2 --threads -o "$out"
	check_ran "-s -w" "$TMP/sw" "$out"
	rooted=$(summary_field "$TMP/sw.err" rooted)
	named "$out" >"$TMP/sw.named"
	total=$(folded_total "$out")
	sha=$(samples "$TMP/sw.named" ';crypto/sha256\.[^;]+ [0-9]+$')
	diag "-s -w, busy: $rooted% of samples reached their root (frame pointers from crypto/sha256.block, which uses RBP for data, end at once; stacks of idle threads reach Go's roots, not known as such without symbols)"
	DETAIL="$(cut -c1-200 "$TMP/sw.named" | head -5 | tr '\n' '|')" \
		check "-s -w: the computing goroutine sampled in crypto/sha256 (named from the normal build)" \
		"[ '$sha' -gt 0 ]"
	check "-s -w: target alive" alive "$pid"
	check "-s -w: every thread untraced" untraced "$pid"
	check "-s -w: no thread stopped" not_stopped "$pid"
	stop_target "$pid"
fi
done_testing
