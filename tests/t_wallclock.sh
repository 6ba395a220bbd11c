#!/usr/bin/env bash
# Wall-clock shares: wallclock has three threads, one always on
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

# More CPU-bound threads than CPUs: most burners wait for a CPU at each
# tick and stop only when next scheduled.  Each must still be counted at
# every tick (its capture stands for the ticks it waited through), so
# every thread gets about rate x time samples and the burners their share.
if start_target crowd; then
	pid=$TARGET_PID
	n=$(($(thread_count "$pid") - 1))
	out=$TMP/crowd.folded
	prof "$TMP/crowd" "$pid" --hz 99 --duration 3 --threads --stats -o "$out"
	check_ran "crowd" "$TMP/crowd" "$out"
	diag "$(grep stats: "$TMP/crowd.err")"
	total=$(folded_total "$out")
	burn=$(folded_count "$out" 'burn_crowd')
	secs=$(summary_field "$TMP/crowd.err" seconds)
	achieved=$(summary_field "$TMP/crowd.err" achieved)
	expect=$(awk -v a="$achieved" -v s="$secs" -v n="$n" 'BEGIN { printf "%d", a * s * (n + 1) }')
	DETAIL="$total samples, ticks x threads = $expect ($n burners + main)" \
		check "crowd: every thread counted at every tick (samples within 3% of ticks x threads)" \
		within "$total" "$expect" "$((expect * 3 / 100))"
	p=$(pct "$burn" "$total")
	want=$(awk -v n="$n" 'BEGIN { printf "%.1f", 100 * n / (n + 1) }')
	DETAIL="$p% of $total samples in burn_crowd" \
		check "crowd: burners' share is $want% +- 3" within "$p" "$want" 3
	per_thread=$(awk '{ split($0, f, ";"); c[f[1]] += $NF } END { for (t in c) print c[t] }' "$out" | sort -n)
	least=$(head -n 1 <<<"$per_thread")
	each=$(awk -v a="$achieved" -v s="$secs" 'BEGIN { printf "%d", a * s }')
	DETAIL="per-thread counts: $(tr '\n' ' ' <<<"$per_thread"); ticks $each" \
		check "crowd: the least-sampled thread has at least 95% of the ticks" \
		"[ $((least * 100)) -ge $((each * 95)) ]"
	stop_target "$pid"
fi

# Runnable but kept off every CPU: the target pinned to CPU 0 and, while
# it is profiled, a real-time loop on that CPU for 1.5 s (the kernel leaves
# others 5% of it).  Its sleeper, woken, waits on the run queue: found
# "running" at tick after tick, with no perf sample to count the ticks
# (it runs microseconds), they are owed, and past 64 were lost (the
# sleeper's share fell to 26%).  They are counted at its last stack now.
if ! command -v chrt >/dev/null || ! command -v taskset >/dev/null; then
	skip "starved: owed ticks counted at the last stack" "chrt and taskset needed (util-linux)"
elif ! chrt -f 10 true 2>/dev/null; then
	skip "starved: owed ticks counted at the last stack" "real-time scheduling not allowed here (CAP_SYS_NICE)"
elif start_target wallclock; then
	pid=$TARGET_PID
	taskset -a -p -c 0 "$pid" >/dev/null
	out=$TMP/starved.folded
	prof_bg "$TMP/starved" "$pid" --hz 99 --duration 3 --stats -o "$out"
	wait_attached "$pid"
	timeout 1.5 chrt -f 10 taskset -c 0 sh -c 'while :; do :; done'
	prof_wait
	check_ran "starved" "$TMP/starved" "$out"
	total=$(folded_total "$out")
	sleep=$(folded_count "$out" 'sleep_here')
	lost=$(grep -oE '[0-9]+ lost' "$TMP/starved.err" | head -n 1 | grep -oE '[0-9]+')
	last=$(grep -oE '[0-9]+ at the last stack' "$TMP/starved.err" | grep -oE '[0-9]+')
	diag "$(grep -oE 'perf: [^,]*,' "$TMP/starved.err")"
	if [ "${lost:-0}" = 0 ] && [ "${last:-0}" = 0 ]; then
		skip "starved: owed ticks counted at the last stack" "no tick went unsampled 64 times in a row (the loop did not starve the target: $(grep -oE 'perf: [^,]*' "$TMP/starved.err"))"
	else
		# (At most 1% lost: a thread starved before its first sample has
		# no last stack.  Lost, the sleeper's 64 were 7%.)
		DETAIL="$lost lost of $total, $last at the last stack" \
			check "starved: no tick lost (owed ticks past 64 counted at the thread's last stack)" \
			"[ \$((${lost:-0} * 100)) -le '$total' ] && [ '${last:-0}' -gt 0 ]"
		p=$(pct "$sleep" "$total")
		DETAIL="$p% of $total samples" check "starved: wall-clock share of sleep is 33.3% +- 5" within "$p" 33.3 5
	fi
	stop_target "$pid"
fi

done_testing
