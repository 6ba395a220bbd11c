#!/usr/bin/env bash
# What the Python view holds and spends is bounded.
#   A. names follow what is live: python3 running generated code (a chain
#      of 16 new functions with long names of their own, from a "file" of
#      their own, per call: tests/targets/pygen.py) under --period 1s with
#      stacks aged after 2 s (CPROF_STACK_AGE): the profiler's RSS (the
#      least of three looks, at its 6th-8th period files and at its
#      14th-16th) grows by less than 2 MiB (before the
#      symbolic frames and code objects aged with the stacks: +5 MB in
#      10 s here, for ever), and the last periods still name the frames.
#      Beside section B (it waits on time).
#   B. a hostile interpreter (tests/bin/python3.11-hostile: a fake CPython
#      3.11 whose 4 threads each run 1,024 frames, each frame a code object
#      of its own with the largest line table the reader takes): the
#      profiler's peak RSS stays under 128 MiB (293 MB before: every table
#      cached) and it keeps at least 80 of 99 Hz (59.8 before; 0.3 with 16
#      such threads), saying once that the view went over its time budget
#      and counting it in --stats.
. "$(dirname "$0")/lib.sh"

rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# --- A. generated code under --period -------------------------------------------
generated() {
	local py pid rss0 rss1 last named
	py=$(command -v python3)
	if [ -z "$py" ]; then
		skip "generated: names bounded" "no python3"
		return
	fi
	"$py" "$ROOT/tests/targets/pygen.py" "$TMP/gen.ready" 16 300 &
	pid=$!
	PIDS+=("$pid")
	if ! wait_until 10 file_ready "$TMP/gen.ready"; then
		check "generated: pygen.py starts" false
		return
	fi
	mkdir -p "$TMP/g"
	CPROF_STACK_AGE=2 prof_bg "$TMP/gen" "$pid" --period 1s --duration 19 --hz 99 -o "$TMP/g/g-%n.folded"
	if wait_attached "$pid"; then
		# the least of three looks (periods 6-8, 14-16): a look during a
		# period's naming sees its passing peak, not what is held
		local k v
		for k in 6 7 8; do
			wait_until 20 file_ready "$TMP/g/g-$k.folded"
			v=$(rss_kib "$PROF_PID")
			[ -z "${rss0:-}" ] || [ "${v:-0}" -lt "$rss0" ] && rss0=$v
		done
		for k in 14 15 16; do
			wait_until 20 file_ready "$TMP/g/g-$k.folded"
			v=$(rss_kib "$PROF_PID")
			[ -z "${rss1:-}" ] || [ "${v:-0}" -lt "$rss1" ] && rss1=$v
		done
		prof_wait 30
		DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/gen.err")" check "generated: profiler exits 0" "[ '$PROF_RC' = 0 ]"
		diag "generated: RSS $rss0 -> $rss1 KiB from periods 6-8 to 14-16 (the least of each)"
		DETAIL="$rss0 -> $rss1 KiB" check "generated: RSS grows by less than 2 MiB in 9 periods (names age with the stacks)" \
			"[ -n '$rss1' ] && [ -n '$rss0' ] && [ '$rss1' -lt $((rss0 + 2048)) ]"
		last=$TMP/g/g-16.folded
		named=$(folded_count "$last" 'render_block_x+_[0-9]+_15 ')
		DETAIL="$named samples in the innermost generated function" \
			check "generated: the last periods still name the generated functions" "[ '${named:-0}' -gt 0 ]"
	fi
	check "generated: target alive" alive "$pid"
	stop_target "$pid"
}
beside generated generated

# --- B. a hostile interpreter ---------------------------------------------------------
if start_target python3.11-hostile 4 1024; then
	pid=$TARGET_PID
	prof "$TMP/hostile" "$pid" -d 4 --hz 99 --stats -o "$TMP/hostile.folded"
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/hostile.err")" check "hostile: profiler exits 0" "[ '$PROF_RC' = 0 ]"
	peak=$(sed -nE 's/.*peak RSS ([0-9]+) KiB.*/\1/p' "$TMP/hostile.err" | tail -n 1)
	hz=$(summary_field "$TMP/hostile.err" achieved)
	diag "hostile: peak RSS ${peak:-?} KiB, ${hz:-?} of 99 Hz"
	DETAIL="peak RSS ${peak:-none} KiB" check "hostile: the profiler's peak RSS stays under 128 MiB" \
		"[ -n '$peak' ] && [ '$peak' -lt 131072 ]"
	DETAIL="${hz:-none} of 99 Hz" check "hostile: the sample rate holds (at least 80 of 99 Hz)" "ge '${hz:-0}' 80"
	check "hostile: says once that the view went over its time budget" \
		"[ \"\$(grep -c 'over budget' '$TMP/hostile.err')\" -ge 1 ] && grep -qE 'note: PID [0-9]+.s Python took more than' '$TMP/hostile.err'"
	over=$(sed -nE 's/.* ([0-9]+) ticks over the view.s time budget.*/\1/p' "$TMP/hostile.err" | tail -n 1)
	DETAIL="${over:-none}" check "hostile: --stats counts the ticks over budget" "[ '${over:-0}' -gt 0 ]"
	check_unharmed hostile "$pid" 5
	stop_target "$pid"
fi

done_testing
