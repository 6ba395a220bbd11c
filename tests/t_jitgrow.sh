#!/usr/bin/env bash
# JIT maps that grow or appear while the profiler
# runs, JIT code in deleted or memfd mappings, frame-pointer chains
# through JIT code.  Each section fails on a build that reads the map once
# (before 38) and passes on one that reads it as it grows.
#   1. node --perf-basic-prof (tests/targets/jslate.js) under --period 1s:
#      lateWork is first run, so first compiled, after the first period was
#      written; the first whole period after it ran names it (lateWork or
#      lateSlice in >= 50% of the JS thread's samples; 0 before 38).
#   2. A map that appears after the start (tests/bin/jit, its map moved
#      away before the profiler starts and back after its first period):
#      the periods after it name jit_spin_loop (0 before 38).
#   3. PHP 8.2's opcache JIT (opcache.jit_debug=16 writes the map; its code
#      is in a "/dev/zero (deleted)" mapping, which is no module): its
#      frames are named from the map, TRACE-N$computeInner$L (>= 50% of
#      the samples; 0 before 38: "zero (deleted)+0x...").
#      opcache.file_update_protection=0: the script is fresh, and opcache
#      does not cache (so does not compile) a file changed in the last 2 s.
#   4. erl +JPperf true (BEAM's JIT keeps frame pointers, its code in a
#      "memfd:vmem (deleted)" mapping, named by its map): compute_outer is
#      under compute_inner, as perf --call-graph=fp shows it (>= 50% of
#      compute_inner's samples; 0 before 38: the chain stopped at the leaf).
# A runtime not installed is skipped with its name.
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

# samples FILE ERE: samples whose line matches ERE (grep -E).
samples() { grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }
top3() { sort -t' ' -k2 -nr "$1" | head -3 | cut -c1-300 | tr '\n' '|'; }
period_count() { local f=("$1"/p-*.folded); [ -e "${f[0]}" ] && echo ${#f[@]} || echo 0; }
period_written() { [ -s "$1/p-$2.folded" ]; }

# --- 1. node: a function compiled after the first period ---------------------
node_late() {
	local pid dir=$TMP/node n f total late
	start_script nodelate node --perf-basic-prof "$ROOT/tests/targets/jslate.js" || return
	pid=$SCRIPT_PID
	mkdir -p "$dir"
	prof_bg "$TMP/nodelate" "$pid" --period 1s --duration 30 --hz 99 --threads -o "$dir/p-%n.folded"
	if ! wait_until 10 period_written "$dir" 0; then
		DETAIL="$(head -c 300 "$TMP/nodelate.err")" check "node: first period written" false
		return
	fi
	kill -USR2 "$pid"
	if ! wait_until 20 file_ready "$TMP/nodelate.ready.late"; then
		check "node: lateWork runs (jslate.js wrote READY.late)" false
		return
	fi
	# The period in progress began before; the next one is all lateWork.
	n=$(period_count "$dir")
	if ! wait_until 10 period_written "$dir" $((n + 1)); then
		DETAIL="$(ls "$dir" | tr '\n' ' ')" check "node: period $((n + 1)) written" false
		return
	fi
	kill -INT "$PROF_PID"
	prof_wait 20
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/nodelate.err")" check "node: profiler ends, exit 0" "[ '$PROF_RC' = 0 ]"
	f=$dir/p-$((n + 1)).folded
	grep -E "^[^;]+ \($pid\);" "$f" >"$TMP/nodelate.main"
	total=$(folded_total "$TMP/nodelate.main")
	late=$(samples "$TMP/nodelate.main" ';JS:[^;]*late(Work|Slice) ')
	diag "node: period $((n + 1)): lateWork/lateSlice named in $late of $total samples of the JS thread"
	DETAIL="$late of $total; $(top3 "$TMP/nodelate.main")" \
		check "node: the function compiled late is named in the period after (>= 50% of the JS thread)" \
		"[ '$total' -gt 0 ] && [ \$((late * 100)) -ge \$((total * 50)) ]"
	early=$(samples "$dir/p-0.folded" ';JS:[^;]*earlyWork ')
	DETAIL="$(top3 "$dir/p-0.folded")" check "node: the first period names earlyWork" "[ '$early' -gt 0 ]"
	check "node: target alive" alive "$pid"
	check "node: every thread untraced" untraced "$pid"
	stop_target "$pid"
}
if command -v node >/dev/null; then
	node_late
else
	skip "node --perf-basic-prof" "no node on this machine"
fi

# --- 2. a map that appears after the start -------------------------------------
if start_target jit; then
	pid=$TARGET_PID
	map=/tmp/perf-$pid.map
	JIT_MAPS+=("$map" "$TMP/hidden.map")
	mv "$map" "$TMP/hidden.map"
	dir=$TMP/appear
	mkdir -p "$dir"
	prof_bg "$TMP/appear" "$pid" --period 1s --duration 30 --hz 99 -o "$dir/p-%n.folded"
	if wait_until 10 period_written "$dir" 0; then
		mv "$TMP/hidden.map" "$map"
		# the period in progress may have been named before the move
		n=$(period_count "$dir")
		wait_until 10 period_written "$dir" $((n + 1))
		kill -INT "$PROF_PID"
		prof_wait 20
		DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/appear.err")" check "appear: profiler ends, exit 0" "[ '$PROF_RC' = 0 ]"
		before=$(samples "$dir/p-0.folded" 'jit_spin_loop')
		DETAIL="$(top3 "$dir/p-0.folded")" check "appear: no map, no name in the first period" "[ '$before' = 0 ]"
		f=$dir/p-$((n + 1)).folded
		after=$(samples "$f" 'jit_spin_loop')
		diag "appear: period $((n + 1)): jit_spin_loop in $after samples"
		DETAIL="$(top3 "$f" 2>/dev/null)" \
			check "appear: the map written after the start names the JIT code in the periods after" "[ '$after' -gt 0 ]"
	else
		DETAIL="$(head -c 300 "$TMP/appear.err")" check "appear: first period written" false
	fi
	stop_target "$pid"
fi

# --- 3. PHP opcache JIT ---------------------------------------------------------
php_jit() {
	local pid f total named
	cat >"$TMP/spin.php" <<'EOF'
<?php
function computeInner($n) { $a = 0; for ($i = 0; $i < $n; $i++) { $a = ($a * 31 + $i) % 1000003; } return $a; }
function computeOuter($k) { $t = 0; for ($j = 0; $j < $k; $j++) { $t += computeInner(100000); } return $t; }
computeOuter(50);
file_put_contents($argv[1] . ".tmp", getmypid() . "\n");
rename($argv[1] . ".tmp", $argv[1]);
for (;;) { computeOuter(50); }
EOF
	start_script php php8.2 -d opcache.enable_cli=1 -d opcache.jit=tracing \
		-d opcache.jit_buffer_size=16M -d opcache.jit_debug=16 \
		-d opcache.file_update_protection=0 "$TMP/spin.php" || return
	pid=$SCRIPT_PID
	if ! grep -q 'computeInner' "/tmp/perf-$pid.map" 2>/dev/null; then
		DETAIL="$(head -c 300 "/tmp/perf-$pid.map" 2>/dev/null)" check "php: opcache wrote its JIT map" false
		stop_target "$pid"
		return
	fi
	f=$TMP/php.folded
	prof "$TMP/php" "$pid" --duration 1 --hz 99 -o "$f"
	check_ran "php" "$TMP/php" "$f"
	total=$(folded_total "$f")
	named=$(samples "$f" 'TRACE-[0-9]+\$computeInner')
	diag "php: TRACE-N\$computeInner in $named of $total samples"
	DETAIL="$named of $total; $(top3 "$f")" \
		check "php: opcache JIT frames named from the map (>= 50%)" \
		"[ '$total' -gt 0 ] && [ \$((named * 100)) -ge \$((total * 50)) ]"
	check "php: target alive" alive "$pid"
	check "php: untraced" untraced "$pid"
	stop_target "$pid"
}
if ! command -v php8.2 >/dev/null; then
	skip "php opcache JIT" "no php8.2 (Debian's php8.2-cli)"
elif ! php8.2 -d opcache.enable_cli=1 -m 2>/dev/null | grep -q 'Zend OPcache'; then
	skip "php opcache JIT" "no opcache (Debian's php8.2-opcache)"
else
	php_jit
fi

# --- 4. Erlang +JPperf: frame-pointer chains through BEAM's JIT code ----------
erl_jit() {
	local pid f inner under
	cat >"$TMP/erlspin.erl" <<'EOF'
-module(erlspin).
-export([main/1]).

compute_inner(0, Acc) -> Acc;
compute_inner(N, Acc) -> compute_inner(N - 1, (Acc * 31 + N) rem 1000003).

compute_outer(Acc) ->
    A = compute_inner(100000, Acc),
    compute_outer(A + 1).

main([Ready]) ->
    spawn(fun() -> compute_outer(1) end),
    ok = file:write_file(Ready ++ ".tmp", os:getpid() ++ "\n"),
    ok = file:rename(Ready ++ ".tmp", Ready),
    receive stop -> ok end.
EOF
	if ! erlc -o "$TMP" "$TMP/erlspin.erl" >"$TMP/erlc.out" 2>&1; then
		DETAIL="$(head -c 300 "$TMP/erlc.out")" check "erl: erlspin.erl compiles" false
		return
	fi
	# one scheduler: the spinning process is on it
	start_script erl erl -noshell +JPperf true +S 1 -pa "$TMP" -run erlspin main || return
	# erl is a script that execs erlexec, which execs beam.smp: the PID the
	# VM wrote is the one to profile
	pid=$(cat "$TMP/erl.ready")
	JIT_MAPS+=("/tmp/perf-$pid.map")
	if ! wait_until 10 grep -q 'compute_inner' "/tmp/perf-$pid.map"; then
		check "erl: +JPperf wrote its JIT map" false
		stop_target "$pid"
		return
	fi
	f=$TMP/erl.folded
	prof "$TMP/erl" "$pid" --duration 1 --hz 99 -o "$f"
	check_ran "erl" "$TMP/erl" "$f"
	inner=$(samples "$f" '(^|;)\$erlspin:compute_inner/2 ')
	under=$(samples "$f" '(^|;)\$erlspin:compute_outer/1;(.*;)?\$erlspin:compute_inner/2 ')
	diag "erl: compute_outer under compute_inner in $under of $inner samples"
	DETAIL="$under of $inner; $(grep -F compute "$f" | head -3 | cut -c1-300 | tr '\n' '|')" \
		check "erl: the frame-pointer chain goes through JIT code: compute_outer under compute_inner (>= 50%)" \
		"[ '$inner' -gt 0 ] && [ \$((under * 100)) -ge \$((inner * 50)) ]"
	check "erl: target alive" alive "$pid"
	check "erl: untraced" untraced "$pid"
	stop_target "$pid"
}
if command -v erl >/dev/null && command -v erlc >/dev/null; then
	erl_jit
else
	skip "erl +JPperf" "no erl/erlc (Debian's erlang-base)"
fi

done_testing
