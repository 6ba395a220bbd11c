#!/usr/bin/env bash
# JIT code, named from /tmp/perf-PID.map, has no unwind info: one
# frame-pointer step through each JIT frame, checked, and back to CFI.
#   node --perf-basic-prof (tests/targets/jsfib.js: fib recursion under
#     jsOuter): V8 keeps a frame chain through JIT code and its builtins;
#     the main thread's samples are rooted at _start (>= 90%; unnamed in a
#     stripped node: its entry point), and where fib is sampled jsOuter
#     is under it (>= 90%).
#   python3.12 and 3.13 -X perf (tests/targets/pyfib.py: fib under
#     py_middle under py_outer under main): each Python call goes through
#     a trampoline of JIT code, `sub $8,%rsp; call *%rcx; add $8,%rsp; ret`
#     in 3.12.1 and 3.13.0 (pyenv here): no unwind info, no frame chain, but
#     a frame known from the code, which the unwinder reads.  Rooted at
#     _start (>= 90%), and the Python callers under fib (>= 90%).
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

# --- python3.12 / 3.13 -X perf ------------------------------------------------------
# find_python VERSION: python3.VERSION on PATH, else under pyenv's versions.
find_python() {
	local p found
	found=$(command -v "python$1" 2>/dev/null)
	for p in /root/.pyenv/versions/"$1"*/bin/"python$1"; do
		[ -x "$p" ] && found=$p
	done
	echo "$found"
}
for ver in 3.12 3.13; do
	PY=$(find_python "$ver")
	if [ -z "$PY" ] || [ ! -x "$PY" ]; then
		skip "python$ver -X perf" "no python$ver (none on PATH, none under /root/.pyenv/versions/)"
		continue
	fi
	start_script "py$ver" "$PY" -X perf "$ROOT/tests/targets/pyfib.py" || continue
	pid=$SCRIPT_PID
	out=$TMP/py$ver.folded
	# The perf map's trampolines, unwound through: --no-python (by
	# default the Python frames read from memory stand for them, below).
	prof "$TMP/py$ver" "$pid" --duration 2 --threads --no-python -o "$out"
	check_ran "python$ver" "$TMP/py$ver" "$out"
	total=$(folded_total "$out")
	inner=$(samples "$out" ';py::fib:[^;]*pyfib\.py;')
	DETAIL="$inner of $total; $(head -3 "$out" | cut -c1-300 | tr '\n' '|')" \
		check "python$ver: the innermost Python frame named from the perf map (py::fib)" "[ '$inner' -gt 0 ]"
	rooted=$(samples "$out" '^[^;]+;_start;')
	under=$(samples "$out" '^[^;]+;_start;.*;py::main:[^;]*;(.*;)?py::py_outer:[^;]*;(.*;)?py::py_middle:[^;]*;(.*;)?py::fib:')
	DETAIL="$rooted of $total; $(grep -vE '^[^;]+;_start;' "$out" | head -3 | cut -c1-300 | tr '\n' '|')" \
		check "python$ver: rooted at _start (>= 90%)" "[ \$((rooted * 100)) -ge \$((total * 90)) ]"
	DETAIL="$under of $inner" \
		check "python$ver: Python callers under fib: main, py_outer, py_middle (>= 90% of fib's samples)" \
		"[ '$inner' -gt 0 ] && [ \$((under * 100)) -ge \$((inner * 90)) ]"
	# By default: the Python frames read from memory, the trampolines'
	# py:: frames left out where they stand for them.
	out=$TMP/py$ver-frames.folded
	prof "$TMP/py$ver-frames" "$pid" --duration 2 --threads -o "$out"
	check_ran "python$ver frames" "$TMP/py$ver-frames" "$out"
	total=$(folded_total "$out")
	inner=$(samples "$out" ';fib \(pyfib\.py:[0-9]+\)')
	tramp=$(samples "$out" ';py::')
	under=$(samples "$out" '^[^;]+;_start;.*;main \(pyfib\.py:[0-9]+\);(.*;)?py_outer \(pyfib\.py:[0-9]+\);(.*;)?py_middle \(pyfib\.py:[0-9]+\);(.*;)?fib \(')
	DETAIL="$inner of $total, $tramp with py::; $(head -2 "$out" | cut -c1-300 | tr '\n' '|')" \
		check "python$ver -X perf: Python frames from memory (fib), no py:: trampoline frame" \
		"[ '$inner' -gt 0 ] && [ '$tramp' = 0 ]"
	DETAIL="$under of $inner" \
		check "python$ver -X perf: fib under main, py_outer, py_middle, rooted (>= 90% of fib's samples)" \
		"[ '$inner' -gt 0 ] && [ \$((under * 100)) -ge \$((inner * 90)) ]"
	check "python$ver: target alive" alive "$pid"
	check "python$ver: target untraced" untraced "$pid"
	stop_target "$pid"
done
done_testing
