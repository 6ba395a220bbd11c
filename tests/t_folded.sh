#!/usr/bin/env bash
# Folded output: "root;...;leaf COUNT" lines, one per unique
# stack, counts adding up to the summary's samples; --threads puts
# "NAME (TID)" as the root frame, with the target's real names and TIDs.
. "$(dirname "$0")/lib.sh"

check_folded() {
	local label=$1 base=$2 f=$3 total summ dups bad
	bad=$(grep -nEv '^[^; ][^;]*(;[^;]+)* [0-9]+$' "$f" | head -3)
	DETAIL="$bad" check "$label: every line is 'frame;...;frame COUNT', no empty frame" \
		"[ -s '$f' ] && [ -z \"\$bad\" ]"
	bad=$(awk '$NF <= 0' "$f" | head -3)
	DETAIL="$bad" check "$label: counts positive" "[ -z \"\$bad\" ]"
	total=$(folded_total "$f")
	summ=$(summary_field "$base.err" samples)
	DETAIL="folded total $total, summary $summ" \
		check "$label: counts add up to the summary's samples" "[ '$total' = '$summ' ]"
	dups=$(sed -E 's/ [0-9]+$//' "$f" | sort | uniq -d | head -3)
	DETAIL="$dups" check "$label: one line per unique stack" "[ -z \"\$dups\" ]"
	wrote=$(summary_field "$base.err" wrote)
	DETAIL="summary: $(summary "$base.err")" \
		check "$label: summary ends with 'wrote FILE'" "[ -n '$wrote' ] && [ \"\$(basename '$wrote')\" = \"\$(basename '$f')\" ]"
}

if start_target wallclock; then
	pid=$TARGET_PID
	out=$TMP/w.folded
	prof "$TMP/w" "$pid" --duration 1.5 -o "$out"
	check_ran "folded" "$TMP/w" "$out"
	check_folded "folded" "$TMP/w" "$out"
	DETAIL="$(grep -c . "$TMP/w.err") lines: $(head -c 300 "$TMP/w.err")" \
		check "folded: nothing on stderr but the summary (2 lines)" only_summary "$TMP/w.err"
	check "folded: nothing on stdout" "[ ! -s '$TMP/w.out' ]"
	# shellcheck disable=SC2034 # used in the eval'd condition
	re1='^cprof-attach: [0-9]+ samples, [0-9]+ threads, 1 process, [0-9]+\.[0-9]{2} s, duration reached, wrote .+$'
	re2='^cprof-attach: [0-9]+\.[0-9] of 99 Hz, [0-9]+ missed ticks?, (perf|ptrace), [0-9]+\.[0-9]% reached their root, [0-9]+ not fully unwound$'
	DETAIL="$(head -c 300 "$TMP/w.err")" \
		check "folded: the summary's two lines have the documented phrases, in order" \
		"grep -qE \"\$re1\" '$TMP/w.err' && grep -qE \"\$re2\" '$TMP/w.err'"
	# Short: the first line, but for the path it names, leaves room for a
	# default name (cprof-PID.svg) in 100 characters; the second is <= 100.
	one=$(summary "$TMP/w.err" | head -n 1) two=$(summary "$TMP/w.err" | tail -n 1)
	wrote=$(summary_field "$TMP/w.err" wrote)
	DETAIL="line 1 is ${#one} characters with a path of ${#wrote}, line 2 is ${#two}" \
		check "folded: the summary's lines are short" \
		"[ $((${#one} - ${#wrote})) -le 85 ] && [ ${#two} -le 100 ] && [ -n '$wrote' ]"
	c=$(grep -cE '^\S+ \([0-9]+\);' "$out")
	DETAIL="$c lines" check "folded without --threads: no thread root frames" "[ '$c' = 0 ]"

	out=$TMP/t.folded
	prof "$TMP/t" "$pid" --duration 1.5 --threads -o "$out"
	check_ran "--threads" "$TMP/t" "$out"
	check_folded "--threads" "$TMP/t" "$out"
	expected=$(for t in $(tids "$pid"); do echo "$(cat "/proc/$pid/task/$t/comm") ($t)"; done | sort)
	seen=$(sed -E 's/;.*//' "$out" | sort -u)
	DETAIL="seen: $(tr '\n' ',' <<<"$seen") expected: $(tr '\n' ',' <<<"$expected")" \
		check "--threads: root frames are exactly 'NAME (TID)' of the target's threads" \
		"[ \"\$seen\" = \"\$expected\" ]"
	for th in burner:burn_cpu sleeper:sleep_here; do
		name=${th%%:*} fn=${th#*:}
		tid=$(for t in $(tids "$pid"); do [ "$(cat "/proc/$pid/task/$t/comm")" = "$name" ] && echo "$t"; done)
		c=$(folded_count "$out" "^$name \\($tid\\);.*;$fn(;|\$)")
		o=$(folded_count "$out" "^$name \\($tid\\);")
		DETAIL="$c of $o" check "--threads: '$name ($tid)' samples are all in $fn" \
			"[ '$o' -gt 0 ] && [ '$c' = '$o' ]"
	done
	main=$(folded_count "$out" "^wallclock \\($pid\\);_start;")
	DETAIL="$main samples" check "--threads: main thread 'wallclock ($pid)' rooted at _start" \
		"[ '$main' -gt 0 ]"
	stop_target "$pid"
fi

done_testing
