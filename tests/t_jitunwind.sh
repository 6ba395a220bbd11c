#!/usr/bin/env bash
# Issue 13: JIT code, named from /tmp/perf-PID.map, has no unwind info: one
# frame-pointer step through each JIT frame, checked, and back to CFI.
#   node --perf-basic-prof (tests/targets/jsfib.js: fib recursion under
#     jsOuter): V8 keeps a frame chain through JIT code and its builtins;
#     the main thread's samples are rooted at _start (>= 90%; unnamed in a
#     stripped node: its entry point), and where fib is sampled jsOuter
#     is under it (>= 90%).
#   python3.12 -X perf (tests/targets/pyfib.py: fib under py_middle under
#     py_outer): each Python call goes through a trampoline of JIT code.
#     CPython's trampoline pushes RBP only in newer versions; 3.12.1 and
#     3.13.0 (pyenv here) do `sub $8,%rsp; call *%rcx`: no unwind info and
#     no frame chain, so nothing can take a step through it.  The test
#     reads the trampoline's first instruction: if it pushes RBP, the same
#     as node is required; if not, what holds is checked (the innermost
#     Python frame named, the stack ending at it, nothing invented above)
#     and the rest is skipped with that reason.
. "$(dirname "$0")/lib.sh"

JIT_MAPS=()
trap 'rm -f "${JIT_MAPS[@]}"; cleanup' EXIT

# start_script NAME CMD...: run CMD... READY in $TMP (V8 writes its logs in
# the working directory), wait (20 s) for READY; sets SCRIPT_PID.
start_script() {
	local name=$1 ready=$TMP/$1.ready
	shift
	(cd "$TMP" && exec "$@" "$ready") >"$TMP/$name.out" 2>&1 &
	SCRIPT_PID=$!
	PIDS+=("$SCRIPT_PID")
	JIT_MAPS+=("/tmp/perf-$SCRIPT_PID.map")
	wait_until 20 file_ready "$ready" && return 0
	DETAIL="no $ready after 20 s: $(head -c 300 "$TMP/$name.out")" check "$name starts" false
	return 1
}

# samples FILE ERE: samples whose "label;frames" line matches ERE (grep -E).
samples() { grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }

# --- node --perf-basic-prof --------------------------------------------------------
if ! command -v node >/dev/null; then
	skip "node" "no node on this machine"
elif start_script node node --perf-basic-prof "$ROOT/tests/targets/jsfib.js"; then
	pid=$SCRIPT_PID
	out=$TMP/node.folded
	prof "$TMP/node" "$pid" --duration 2 --threads -o "$out"
	check_ran "node" "$TMP/node" "$out"
	grep -E "^[^;]+ \($pid\);" "$out" >"$TMP/node.main"
	total=$(folded_total "$TMP/node.main")
	# _start, or unnamed: node's entry point (a stripped node has no .symtab)
	entry=$(readelf -h "$(readlink -f "$(command -v node)")" | sed -nE 's/.*Entry point address: *0x0*([0-9a-f]+).*/\1/p')
	START="(_start|node\+0x$entry)"
	rooted=$(samples "$TMP/node.main" "^[^;]+;$START;")
	DETAIL="$rooted of $total; $(sort -t' ' -k2 -nr "$TMP/node.main" | grep -vE ";$START;" | head -3 | cut -c1-300 | tr '\n' '|')" \
		check "node: the JS thread's samples rooted at _start (>= 90%)" \
		"[ '$total' -gt 0 ] && [ \$((rooted * 100)) -ge \$((total * 90)) ]"
	fib=$(samples "$TMP/node.main" ';JS:[^;]*fib ')
	under=$(samples "$TMP/node.main" "^[^;]+;$START;.*;JS:[^;]*jsOuter [^;]*;(.*;)?JS:[^;]*fib ")
	DETAIL="$under of $fib; $(grep -F 'fib' "$TMP/node.main" | head -2 | cut -c1-600 | tr '\n' '|')" \
		check "node: JS callers under the JIT frames: jsOuter under fib, rooted (>= 90% of fib's samples)" \
		"[ '$fib' -gt 0 ] && [ \$((under * 100)) -ge \$((fib * 90)) ]"
	check "node: target alive" alive "$pid"
	check "node: every thread untraced" untraced "$pid"
	check "node: no thread stopped" not_stopped "$pid"
	stop_target "$pid"
fi

# --- python3.12 -X perf --------------------------------------------------------------
PY=$(command -v python3.12 2>/dev/null)
for p in /root/.pyenv/versions/3.12*/bin/python3.12; do
	[ -x "$p" ] && PY=$p
done
# pushes_rbp PYTHON: its -X perf trampoline starts with push %rbp (after an
# optional endbr64), in libpython or in the program itself.
pushes_rbp() {
	local lib f a
	lib=$(ldd "$1" 2>/dev/null | awk '/libpython/ { print $3 }')
	for f in $lib "$1"; do
		a=$(nm "$f" 2>/dev/null | awk '$3 == "_Py_trampoline_func_start" { print $1 }')
		[ -n "$a" ] || continue
		objdump -d --start-address=0x"$a" --stop-address=$((0x$a + 8)) "$f" 2>/dev/null |
			grep -qE '^ +[0-9a-f]+:.*push +%rbp' && return 0
		return 1
	done
	return 1
}
if [ -z "$PY" ] || [ ! -x "$PY" ]; then
	skip "python3.12 -X perf" "no python3.12 (none on PATH, none under /root/.pyenv/versions/)"
elif start_script python "$PY" -X perf "$ROOT/tests/targets/pyfib.py"; then
	pid=$SCRIPT_PID
	out=$TMP/py.folded
	prof "$TMP/py" "$pid" --duration 2 --threads -o "$out"
	check_ran "python" "$TMP/py" "$out"
	total=$(folded_total "$out")
	inner=$(samples "$out" ';py::fib:[^;]*pyfib\.py;')
	DETAIL="$inner of $total; $(head -3 "$out" | cut -c1-300 | tr '\n' '|')" \
		check "python: the innermost Python frame named from the perf map (py::fib)" "[ '$inner' -gt 0 ]"
	rooted=$(samples "$out" '^[^;]+;_start;')
	under=$(samples "$out" '^[^;]+;_start;.*;py::py_outer:[^;]*;(.*;)?py::fib:')
	if pushes_rbp "$PY"; then
		DETAIL="$rooted of $total" check "python: rooted at _start (>= 90%)" \
			"[ \$((rooted * 100)) -ge \$((total * 90)) ]"
		DETAIL="$under of $inner" check "python: Python callers under fib: py_outer (>= 90% of fib's samples)" \
			"[ \$((under * 100)) -ge \$((inner * 90)) ]"
	else
		why="$($PY -V 2>&1)'s -X perf trampoline keeps no frame pointer (sub \$8,%rsp; call *%rcx) and has no unwind info"
		skip "python: rooted at _start (>= 90%)" "$why; $rooted of $total samples rooted"
		skip "python: Python callers under fib" "$why"
		at_jit=$(samples "$out" '^[^;]+;py::[^;]+(;| [0-9]+$)')
		DETAIL="$at_jit of $total; $(grep -vE '^[^;]+;py::[^;]+(;| [0-9]+$)' "$out" | head -3 | cut -c1-300 | tr '\n' '|')" \
			check "python: every stack ends at its innermost trampoline, nothing invented above it" \
			"[ '$at_jit' = '$total' ]"
	fi
	check "python: target alive" alive "$pid"
	check "python: target untraced" untraced "$pid"
	stop_target "$pid"
fi
done_testing
