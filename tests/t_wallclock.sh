#!/usr/bin/env bash
# Criterion 2, wall-clock shares: wallclock has three threads, one always on
# CPU (burn_cpu), one always asleep (sleep_here), one always in pthread_join
# (main).  At --hz 99 for 3 s each must get a third of the samples (+-5
# points), and the sample count must match rate x threads x time.
. "$(dirname "$0")/lib.sh"

if start_target wallclock; then
	pid=$TARGET_PID
	out=$TMP/wall.folded
	prof "$TMP/wall" "$pid" --hz 99 --duration 3 -o "$out"
	check_ran "wallclock" "$TMP/wall" "$out"
	total=$(folded_total "$out")
	burn=$(folded_count "$out" 'burn_cpu')
	sleep=$(folded_count "$out" 'sleep_here')
	join=$(folded_count "$out" 'pthread_(clock)?join|clockjoin')
	diag "samples: total $total, burn_cpu $burn, sleep_here $sleep, pthread_join $join"
	for what in burn sleep join; do
		p=$(pct "${!what}" "$total")
		DETAIL="$p% of $total samples" \
			check "wall-clock share of $what is 33.3% +- 5" within "$p" 33.3 5
	done
	other=$((total - burn - sleep - join))
	DETAIL="$other samples in none of them" \
		check "no samples outside the three states (< 1%)" \
		"[ $((other * 100)) -le $total ]"

	samples=$(summary_field "$TMP/wall.err" samples)
	threads=$(summary_field "$TMP/wall.err" threads)
	achieved=$(summary_field "$TMP/wall.err" achieved)
	requested=$(summary_field "$TMP/wall.err" requested)
	DETAIL="summary: $(summary "$TMP/wall.err")" \
		check "summary: 3 threads" "[ '$threads' = 3 ]"
	DETAIL="summary: $(summary "$TMP/wall.err")" \
		check "summary: 99 requested" "[ '$requested' = 99 ]"
	DETAIL="achieved $achieved" \
		check "summary: achieved rate within 5% of 99 Hz" within "${achieved:-0}" 99 5
	DETAIL="$samples samples, expected about 891" \
		check "summary: samples about 99 Hz x 3 threads x 3 s (+-10%)" \
		within "${samples:-0}" 891 89
	stop_target "$pid"
fi

done_testing
