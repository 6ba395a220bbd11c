#!/usr/bin/env bash
# pprof: `go tool pprof` (-raw, -top) reads what we write, with
# the right sample types, period, thread/tid labels, mappings with build IDs
# (the main binary first, as profile.proto asks), wall-clock shares as in
# the folded output; the output format follows --format, else the ending.
. "$(dirname "$0")/lib.sh"

if ! have_pprof; then
	skip "pprof tests" "no go at $GO"
	done_testing
fi

top_col() { # top_col TOPTEXT FUNCTION COLUMN(2=flat%, 5=cum%)
	fn=$2 awk -v col="$3" 'BEGIN { fn = ENVIRON["fn"] }
		{ name = $6; for (i = 7; i <= NF; i++) name = name " " $i }
		name == fn { v = $col; sub(/%$/, "", v); print v; exit }' <<<"$1"
}

is_folded() { [ -s "$1" ] && ! is_gzip "$1" && grep -qE '^[^ ].* [0-9]+$' "$1"; }

if start_target wallclock; then
	pid=$TARGET_PID
	out=$TMP/wall.pprof
	prof "$TMP/wall" "$pid" --hz 99 --duration 3 -o "$out"
	check_ran "wallclock pprof" "$TMP/wall" "$out"
	check "pprof file is gzipped" is_gzip "$out"
	raw=$(pprof_raw "$out")
	rawrc=$?
	DETAIL="exit $rawrc: $(head -c 300 <<<"$raw")" \
		check "pprof -raw reads it" "[ $rawrc = 0 ] && grep -q '^Samples:' <<<\"\$raw\""
	check "pprof -raw: sample types samples/count, wall/nanoseconds (default), cpu/nanoseconds" \
		"grep -qE '^samples/count wall/nanoseconds\\[dflt\\] cpu/nanoseconds\$' <<<\"\$raw\""
	check "pprof -raw: period type wall/nanoseconds" \
		"grep -qx 'PeriodType: wall nanoseconds' <<<\"\$raw\""
	period=$(sed -n 's/^Period: //p' <<<"$raw")
	DETAIL="Period: $period" check "pprof -raw: period = 1e9/99 ns" \
		"[ -n '$period' ] && within '$period' 10101010 1"

	# Every sample: wall = count x period, and labels thread + tid that match
	# the target's real threads.
	samples=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		on && /^ +[0-9]+ +[0-9]+ +[0-9]+:/ { if (c != "") print c, w, th, tid, cpu
			c = $1; w = $2; cpu = $3; sub(/:$/, "", cpu); th = ""; tid = "" }
		on && /thread:\[/ { th = $0; sub(/.*thread:\[/, "", th); sub(/\].*/, "", th) }
		on && /tid:\[/ { tid = $0; sub(/.*tid:\[/, "", tid); sub(/\].*/, "", tid) }
		END { if (c != "") print c, w, th, tid, cpu }' <<<"$raw")
	badwall=$(awk -v p="$period" '{ d = $2 - $1 * p; if (d < 0) d = -d; if (d > $1) print }' <<<"$samples" | head -3)
	DETAIL="$badwall" check "pprof: every sample's wall value = count x period" \
		"[ -n '$period' ] && [ -n \"\$samples\" ] && [ -z \"\$badwall\" ]"
	expected=$(for t in $(tids "$pid"); do echo "$(cat "/proc/$pid/task/$t/comm") $t"; done | sort)
	seen=$(awk '{ print $3, $4 }' <<<"$samples" | sort -u)
	DETAIL="seen: $(tr '\n' ',' <<<"$seen") expected: $(tr '\n' ',' <<<"$expected")" \
		check "pprof: labels thread=NAME and tid=TID match the target's threads" \
		"[ \"\$seen\" = \"\$expected\" ]"
	total=$(awk '{ n += $1 } END { print n + 0 }' <<<"$samples")
	summ=$(summary_field "$TMP/wall.err" samples)
	DETAIL="pprof $total, summary $summ" \
		check "pprof: sample counts add up to the summary's samples" "[ '$total' = '$summ' ]"

	maps=$(sed -n '/^Mappings/,$p' <<<"$raw")
	bid=$(build_id "$BIN/wallclock")
	DETAIL="$(tr '\n' '|' <<<"$maps")" \
		check "pprof: mapping of tests/bin/wallclock with its build ID $bid" \
		"grep -qE '/tests/bin/wallclock $bid( |\$)' <<<\"\$maps\""
	libc=$(awk '$1 ~ /^[0-9]+:$/ && $3 ~ /libc\.so/ { print $3; exit }' <<<"$maps")
	lbid=$(build_id "$libc")
	DETAIL="libc ${libc:-not found}, build ID $lbid" \
		check "pprof: mapping of libc with its build ID" \
		"[ -n '$lbid' ] && grep -q \"libc.so.6 $lbid\" <<<\"\$maps\""
	first=$(awk '$1 == "1:" { print $3; exit }' <<<"$maps")
	DETAIL="mapping 1 is $first" \
		check "pprof: the main binary is the first mapping (profile.proto: mapping[0])" \
		"[ '$first' = '$BIN/wallclock' ]"
	files=$(sed -n '/^Locations/,/^Mappings/p' <<<"$raw" | grep -c 'wallclock\.c:[0-9]')
	DETAIL="$files location lines with wallclock.c:N" \
		check "pprof: functions carry file names and lines" "[ '$files' -gt 0 ]"

	# Callers are looked up at pc - 1: their line is the line of the call,
	# not the next one (burn_cpu never returns: at pc, the return address
	# may even lie past the end of burner_main).
	for pair in burner_main:CALL_BURN sleeper_main:CALL_SLEEP main:CALL_JOIN; do
		fn=${pair%%:*} mark=${pair#*:}
		want=$(grep -n "$mark" "$ROOT/tests/targets/wallclock.c" | cut -d: -f1)
		got=$(sed -nE "s/^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ $fn [^ ]*wallclock\.c:([0-9]+) .*/\1/p" <<<"$raw" | sort -u | tr '\n' ' ')
		DETAIL="$fn at line(s) ${got:-none}, call at $want" \
			check "pprof: caller $fn at the line of its call ($want), i.e. pc - 1" "[ '$got' = '$want ' ]"
	done

	for idx in default wall samples; do
		if [ $idx = default ]; then top=$(pprof_top "$out"); else top=$(pprof_top "$out" -sample_index=$idx); fi
		b=$(top_col "$top" burn_cpu 2)
		s=$(top_col "$top" sleep_here 5)
		j=$(top_col "$top" __pthread_clockjoin_ex 5)
		[ -n "$j" ] || j=$(top_col "$top" pthread_join 5)
		DETAIL="flat% $b; $(head -c 600 <<<"$top")" \
			check "pprof -top ($idx): burn_cpu flat 33.3% +- 5" "[ -n '$b' ] && within '$b' 33.3 5"
		DETAIL="cum% $s" check "pprof -top ($idx): sleep_here cum 33.3% +- 5" "[ -n '$s' ] && within '$s' 33.3 5"
		DETAIL="cum% $j" check "pprof -top ($idx): pthread join cum 33.3% +- 5" "[ -n '$j' ] && within '$j' 33.3 5"
	done
	top=$(pprof_top "$out")
	check "pprof -top: default sample type is wall" "grep -q '^Type: wall' <<<\"\$top\""
	dur=$(sed -nE 's/^Duration: ([0-9.]+)s,.*/\1/p' <<<"$top")
	DETAIL="$(grep ^Duration <<<"$top")" check "pprof: duration about 3 s" \
		"[ -n '$dur' ] && within '$dur' 3 0.5"

	# --- format selection ---------------------------------------------------
	prof "$TMP/fmt1" "$pid" --duration 0.3 --format pprof -o "$TMP/x.out"
	DETAIL="exit $PROF_RC: $(cat "$TMP/fmt1.err")" \
		check "--format pprof -o x.out writes pprof" \
		"is_gzip '$TMP/x.out' && pprof_raw '$TMP/x.out' | grep -q '^samples/count wall/nanoseconds'"
	prof "$TMP/fmt2" "$pid" --duration 0.3 -o "$TMP/x.pb.gz"
	DETAIL="exit $PROF_RC: $(cat "$TMP/fmt2.err")" \
		check "-o x.pb.gz writes pprof" \
		"is_gzip '$TMP/x.pb.gz' && pprof_raw '$TMP/x.pb.gz' | grep -q '^samples/count wall/nanoseconds'"
	prof "$TMP/fmt3" "$pid" --duration 0.3 --format folded -o "$TMP/y.pprof"
	DETAIL="exit $PROF_RC: $(head -c 200 "$TMP/y.pprof")" \
		check "--format folded -o y.pprof writes folded" is_folded "$TMP/y.pprof"
	prof "$TMP/fmt4" "$pid" --duration 0.3 -o "$TMP/z.txt"
	check "-o z.txt (no pprof ending) writes folded" is_folded "$TMP/z.txt"
	mkdir -p "$TMP/cwd"
	(cd "$TMP/cwd" && prof "$TMP/fmt5" "$pid" --duration 0.3)
	DETAIL="files: $(ls "$TMP/cwd")" check "no -o: writes cprof-$pid.pprof, as pprof" \
		"is_gzip '$TMP/cwd/cprof-$pid.pprof' && pprof_raw '$TMP/cwd/cprof-$pid.pprof' | grep -q '^Samples:'"
	# shellcheck disable=SC2010 # our own scratch dir, plain names
	stray=$(ls -A "$TMP/cwd" | grep -v "^cprof-$pid.pprof\$")
	DETAIL="$stray" check "no temp file left next to the output" "[ -z \"\$stray\" ]"
	stop_target "$pid"
fi

done_testing
