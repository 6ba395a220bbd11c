#!/usr/bin/env bash
# Threads that come and go, as the target sees it.  tests/bin/churn
# creates and joins 100 threads a second (each spins 0.5 ms); profiled for
# 6 s the profiler exits 0 with nothing but its summary on stderr, counts
# about 600 threads, samples the long-lived threads at every tick, and
# leaves no thread traced.  Its thread table must stay bounded: its RSS
# and its open files (two /proc files per live thread) early and late in a
# run.  Then storms of pthread_create
# called back to back: attaching must succeed while threads come and go,
# and each creator is still sampled at every tick (a thread the profiler
# interrupts right in clone() must not drop out of the profile).
. "$(dirname "$0")/lib.sh"

# thread_samples FOLDED NAME: samples of threads named NAME (--threads roots).
thread_samples() {
	name=$2 awk 'BEGIN { name = ENVIRON["name"] }
		{ split($0, f, ";"); r = f[1]; sub(/ \([0-9]+\)$/, "", r)
		if (r == name) n += $NF } END { print n + 0 }' "$1"
}
peak_rss() { sed -nE 's/.*peak RSS ([0-9]+) KiB.*/\1/p' "$1"; }
vm_rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
ticks_of() {
	awk -v a="$(summary_field "$1" achieved)" -v s="$(summary_field "$1" seconds)" \
		'BEGIN { printf "%d", a * s }'
}
other_stderr() { grep -vE -e "$SUMMARY_RE" -e '^cprof-attach: stats: ' "$1"; }
count_file() { cat "$TARGET_READY.count" 2>/dev/null; }
_count_changed() { [ "$(count_file)" != "$1" ]; }
created_now() {
	local old
	old=$(count_file)
	kill -USR1 "$pid"
	wait_until 5 _count_changed "$old"
	count_file
}

if start_target churn 100 1 500; then
	pid=$TARGET_PID
	declare -A rss
	for secs in 6; do
		out=$TMP/churn$secs.folded
		c0=$(created_now)
		prof_bg "$TMP/churn$secs" "$pid" --hz 99 --duration "$secs" --threads --stats -o "$out"
		# The profiler's open files early and late in the run: what it
		# keeps per thread must go with the thread.
		fds_early= fds_late= rss_early= rss_late=
		if wait_attached "$pid"; then
			sleep 1 # measure 1 s in, and 1 s before the end
			fds_early=$(ls "/proc/$PROF_PID/fd" 2>/dev/null | wc -l)
			rss_early=$(vm_rss "$PROF_PID")
			sleep $((secs - 2))
			fds_late=$(ls "/proc/$PROF_PID/fd" 2>/dev/null | wc -l)
			rss_late=$(vm_rss "$PROF_PID")
		fi
		prof_wait 30
		diag "profiler's open files: ${fds_early:-?} after 1 s, ${fds_late:-?} after $((secs - 1)) s"
		c1=$(created_now)
		DETAIL="open files: ${fds_early:-?} after 1 s, ${fds_late:-?} after $((secs - 1)) s" \
			check "churn ${secs}s: the profiler's open files do not grow with threads seen" \
			"[ -n '$fds_early' ] && [ -n '$fds_late' ] && [ $fds_late -le $((fds_early + 8)) ]"
		check_ran "churn ${secs}s" "$TMP/churn$secs" "$out"
		diag "$(summary "$TMP/churn$secs.err")"
		diag "$(grep 'stats:' "$TMP/churn$secs.err")"
		DETAIL="$(other_stderr "$TMP/churn$secs.err" | head -c 300)" \
			check "churn ${secs}s: nothing on stderr but the summary and stats" \
			"[ -z \"\$(other_stderr '$TMP/churn$secs.err')\" ]"
		threads=$(summary_field "$TMP/churn$secs.err" threads)
		want=$((secs * 100))
		DETAIL="summary: ${threads:-?} threads; the target created $((c1 - c0)) in the run (+ 3 long-lived)" \
			check "churn ${secs}s: about $want threads seen (+-10%)" \
			"[ -n '$threads' ] && within '$threads' $want $((want / 10))"
		ticks=$(ticks_of "$TMP/churn$secs.err")
		for name in creator churn counter; do
			c=$(thread_samples "$out" "$name")
			DETAIL="$c samples, $ticks ticks" \
				check "churn ${secs}s: long-lived thread $name sampled at >= 95% of the ticks" \
				"[ $((c * 100)) -ge $((ticks * 95)) ]"
		done
		c=$(folded_count "$out" ';brief_work(;|$)')
		diag "brief threads: $(thread_samples "$out" brief) samples, $c in brief_work"
		DETAIL="$c samples" check "churn ${secs}s: short-lived threads sampled in brief_work" "[ '$c' -gt 0 ]"
		check "churn ${secs}s: target alive" alive "$pid"
		check "churn ${secs}s: no thread left traced" untraced "$pid"
		check "churn ${secs}s: target keeps running" progresses "$pid"
		rss[$secs]=$(peak_rss "$TMP/churn$secs.err")
	done
	diag "peak RSS of the profiler: ${rss[6]:-?} KiB for 6 s of churn"
	# Measured inside the run, while it samples: the peak at the end
	# also holds the naming of every stack, which grows with the stacks
	# the brief threads happened to be caught in (more on a busy machine,
	# where they live longer), not with the thread table.
	DETAIL="${rss_early:-?} KiB 1 s in, ${rss_late:-?} KiB 5 s in (~400 threads seen between)" \
		check "thread table bounded: RSS 5 s into the churn within 1 MiB of 1 s in" \
		"[ -n '$rss_early' ] && [ -n '$rss_late' ] && [ $rss_late -le $((rss_early + 1024)) ]"
	stop_target "$pid"
fi

# A storm: creators calling pthread_create back to back.
#
# Attaching while threads start and end all the time: a thread that is
# exiting cannot be seized (PTRACE_SEIZE fails with EPERM), and that must
# not make the whole attach fail.  Ten short runs against four creators.
if start_target churn 0 4 0; then
	pid=$TARGET_PID
	bad= nbad=0
	for i in $(seq 1 10); do
		prof "$TMP/att$i" "$pid" --hz 99 --duration 0.3 -o "$TMP/att$i.folded"
		if [ "$PROF_RC" != 0 ]; then
			nbad=$((nbad + 1))
			bad="$bad #$i: exit $PROF_RC, $(head -c 150 "$TMP/att$i.err");"
		fi
	done
	DETAIL="$nbad failed:$bad" \
		check "storm: 10 attaches to a target starting ~10,000 threads a second all succeed" \
		"[ $nbad = 0 ]"
	check "storm attaches: no thread left traced" untraced "$pid"
	check "storm attaches: target keeps running" progresses "$pid"
	stop_target "$pid"
fi

# Each creator is on CPU in clone() much of the time.  A stop asked for
# there can be answered by the clone event stop instead (ptrace_stop():
# "any trap clears pending STOP trap"); a profiler still waiting for its
# own stop never samples that thread again.  At 999 Hz, five runs of 1 s:
# each creator must be sampled at >= 90% of the ticks in every run.
if start_target churn 0 2 0; then
	pid=$TARGET_PID
	bad= runs=
	for i in 1 2 3 4 5; do
		out=$TMP/storm$i.folded
		prof "$TMP/storm$i" "$pid" --hz 999 --duration 1 --threads --stats -o "$out"
		if [ "$PROF_RC" != 0 ]; then
			bad="$bad run $i: exit $PROF_RC, $(head -c 150 "$TMP/storm$i.err");"
			continue
		fi
		ticks=$(ticks_of "$TMP/storm$i.err")
		got=
		for tid in $(cat "$TARGET_READY.creators"); do
			c=$(root="creator ($tid)" awk 'BEGIN { root = ENVIRON["root"] }
				{ split($0, f, ";"); if (f[1] == root) n += $NF } END { print n + 0 }' "$out")
			got="$got $c"
			[ $((c * 100)) -ge $((ticks * 90)) ] ||
				bad="$bad run $i: creator $tid has $c samples of $ticks ticks;"
		done
		runs="$runs run $i: ticks $ticks, creators$got ($(grep -oE '[0-9]+ carried by a later stop, [0-9]+ lost' "$TMP/storm$i.err"));"
		[ -n "$(other_stderr "$TMP/storm$i.err")" ] &&
			bad="$bad run $i: stderr $(other_stderr "$TMP/storm$i.err" | head -c 150);"
	done
	diag "$runs"
	DETAIL="$bad" check "storm at 999 Hz: every creator sampled at >= 90% of the ticks, in each of 5 runs" \
		'[ -z "$bad" ]'
	check "storm: target alive" alive "$pid"
	check "storm: no thread left traced" untraced "$pid"
	check "storm: target keeps running" progresses "$pid"
	stop_target "$pid"
fi

done_testing
