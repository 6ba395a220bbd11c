#!/usr/bin/env bash
# Goroutines from outside.  For a Go program the sampling unit is
# the goroutine: every user goroutine is counted at every tick, running or
# not (fgprof's view), the waiting ones unwound from their saved context
# without stopping any thread.  tests/targets/goroutines (Go 1.19):
#   split: main in select{}, main.compute computing, main.sleeper in
#     time.Sleep, two main.locker contending on a sync.Mutex: each goroutine
#     is 20% of the samples (+-5 points), every stack rooted at
#     runtime.goexit, the waits labelled with Go's reason (pprof label
#     "state"), the goroutine id as label "goroutine", the function with
#     the go statement as "created_by", no thread left stopped or traced;
#   parked 10000: every goroutine counted at every tick (samples / ticks
#     = 10,002 within 1%: main and main.sleeper too), most of them counted
#     again unchanged (no copy);
#   churn 10000: 10,000 goroutines a second come and go: no crash, the
#     stacks counted are rooted;
#   timers 10: the target's 10 ms time.Ticker, beside split's goroutines,
#     keeps >= 80% of its ticks and no gap over 100 ms while profiled
#     (compared with the target alone when it misses that: a loaded CI);
#   without DWARF (-w; -s -w; linked by the system linker, with and
#     without -s -w; a PIE, -s -w): the layout the DWARF gives, and the same goroutines,
#     functions and states; a Go version with no known layout: a one-line
#     note, and the threads are sampled instead;
#   --os-threads: the threads, as before.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$BIN/goroutines" ] || [ ! -x "$BIN/goroutines-w" ]; then
	[ -x "$GO" ] && make -C "$ROOT" --no-print-directory -s GO_BIN="$GO" \
		tests/bin/goroutines tests/bin/goroutines-w >/dev/null 2>&1
fi
if [ ! -x "$BIN/goroutines" ] || [ ! -x "$BIN/goroutines-w" ]; then
	skip "goroutines" "no Go toolchain at $GO to build tests/targets/goroutines (golang-1.19-go)"
	done_testing
fi

# samples FILE ERE: samples whose line matches ERE (grep -E).
samples() { grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }
ticks_of() {
	awk -v a="$(summary_field "$1" achieved)" -v s="$(summary_field "$1" seconds)" \
		'BEGIN { printf "%d", a * s + 0.5 }'
}
# stat ERR WORDS: the number before WORDS in the --stats line.
stat() { grep 'stats:' "$1" | grep -oE "[0-9]+ $2" | head -1 | cut -d' ' -f1; }

# --- split ------------------------------------------------------------------------
if start_target goroutines; then
	pid=$TARGET_PID
	out=$TMP/split.folded
	prof "$TMP/split" "$pid" --duration 3 --threads --stats -o "$out"
	check_ran "split" "$TMP/split" "$out"
	g=$(summary_field "$TMP/split.err" goroutines)
	th=$(summary_field "$TMP/split.err" threads)
	DETAIL="$(summary "$TMP/split.err" | head -n 1)" \
		check "split: the summary counts goroutines, on the threads they ran on (5 goroutines on N threads)" \
		"[ '$g' = 5 ] && [ -n '$th' ] && [ '$th' -ge 1 ]"
	total=$(folded_total "$out")
	for g in 'runtime\.main' 'main\.compute' 'main\.sleeper'; do
		n=$(samples "$out" "^$g \\(goroutine [0-9]+\\);")
		DETAIL="$n of $total; $(cut -c1-160 "$out" | tr '\n' '|')" \
			check "split: goroutine ${g//\\/} holds 20% of the samples (+-5 points)" \
			"[ '$total' -gt 0 ] && within \$((n * 100 / total)) 20 5"
	done
	lockers=$(grep -oE '^main\.locker \(goroutine [0-9]+\)' "$out" | sort -u)
	DETAIL="$lockers" check "split: two main.locker goroutines" "[ \$(wc -l <<<'$lockers') = 2 ]"
	while read -r l; do
		[ -n "$l" ] || continue
		n=$(grep -F "$l;" "$out" | awk '{ n += $NF } END { print n + 0 }')
		DETAIL="$n of $total" check "split: $l holds 20% of the samples (+-5 points)" \
			"[ '$total' -gt 0 ] && within \$((n * 100 / total)) 20 5"
	done <<<"$lockers"
	rooted=$(samples "$out" '^[^;]+;runtime\.goexit;')
	DETAIL="$rooted of $total; $(grep -vE '^[^;]+;runtime\.goexit;' "$out" | cut -c1-160 | tr '\n' '|')" \
		check "split: >= 95% of the samples rooted at runtime.goexit" \
		"[ \$((rooted * 100)) -ge \$((total * 95)) ]"
	waiting=$(samples "$out" ';main\.locker;sync\.\(\*Mutex\)\.lockSlow;')
	DETAIL="$waiting" check "split: the lockers are seen waiting for the mutex" "[ '$waiting' -gt 0 ]"
	diag "$(grep 'stats:' "$TMP/split.err" | grep -oE 'goroutines: .*')"
	# Goroutine label slots start at 1 << 20, above every thread slot: the
	# tables indexed by slot must grow with the slots used (96 MiB when they
	# were dense arrays; 8 MiB now).  ASan's shadow memory has its own size.
	if [ -z "${CPROF_SANITIZED:-}" ]; then
		rss=$(sed -nE 's/.*peak RSS ([0-9]+) KiB.*/\1/p' "$TMP/split.err")
		DETAIL="${rss:-?} KiB" check "split: the profiler's peak RSS under 24 MiB" \
			"[ -n '$rss' ] && [ '$rss' -lt 24576 ]"
	fi
	check "split: target alive" alive "$pid"
	check "split: no thread left traced" untraced "$pid"
	check "split: no thread left stopped" not_stopped "$pid"

	# pprof: labels goroutine and state (Go's wait reasons)
	pp=$TMP/split.pprof
	prof "$TMP/splitp" "$pid" --duration 1 -o "$pp"
	check_ran "split pprof" "$TMP/splitp" "$pp"
	raw=$("$GO" tool pprof -raw "$pp" 2>/dev/null)
	for want in 'state:\[select \(no cases\)\]' 'state:\[sleep\]' 'state:\[(semacquire|sync\.Mutex\.Lock)\]' \
		'state:\[running\]' 'goroutine:\[1\]' 'goroutine_function:\[main\.compute\]' \
		'created_by:\[main\.main\]' 'role:\[sleeper\]' 'tier:\[2\]'; do
		DETAIL="$(grep -E 'state:|goroutine:|created_by:' <<<"$raw" | sort | uniq -c | head -12 | tr '\n' '|')" \
			check "split pprof: a label $want" "grep -qE '$want' <<<\"\$raw\""
	done
	# pprof -raw: a sample's string labels, then its numeric ones, a line each
	main_labels=$(grep -B1 -E '^ +goroutine:\[1\] ' <<<"$raw" | grep -v 'goroutine:\[1\]' | sort -u)
	DETAIL="$main_labels" check "split pprof: the main goroutine has no created_by (as in Go's tracebacks)" \
		"[ -n \"\$main_labels\" ] && ! grep -q created_by <<<\"\$main_labels\""
	# --os-threads: the thread view, as for any program
	prof "$TMP/threads" "$pid" --duration 1 --threads --os-threads -o "$TMP/threads.folded"
	check_ran "--os-threads" "$TMP/threads" "$TMP/threads.folded"
	check "--os-threads: thread roots NAME (TID), no goroutine roots" \
		"grep -qE '^goroutines \\([0-9]+\\);' '$TMP/threads.folded' && ! grep -q '(goroutine ' '$TMP/threads.folded'"
	stop_target "$pid"
fi

# --- every Go process (issue 25): launch mode, several PIDs, a Go child -------------
# b1f3e94 gave goroutines to the first attached process only: launch mode,
# the second PID and a Go program started under --subprocesses got the
# thread view.
out=$TMP/launch.folded
# (the command runs 2.5 s: the profiler waits for the command it launched)
prof "$TMP/launch" --duration 1.5 -o "$out" -- timeout 2.5 "$BIN/goroutines" "$TMP/launch.ready" split
g=$(summary_field "$TMP/launch.err" goroutines)
DETAIL="$(summary "$TMP/launch.err" | head -n 1)" \
	check "launch mode: the goroutine view (5 goroutines)" "[ '$g' = 5 ] && grep -q '^runtime.goexit;main.compute;' '$out'"
if start_target goroutines split; then
	a=$TARGET_PID
	if start_target goroutines split; then
		b=$TARGET_PID
		out=$TMP/two.folded
		prof "$TMP/two" -p "$a,$b" --duration 1 --processes -o "$out"
		g=$(summary_field "$TMP/two.err" goroutines)
		na=$(folded_count "$out" "^goroutines \\($a\\);runtime.goexit;")
		nb=$(folded_count "$out" "^goroutines \\($b\\);runtime.goexit;")
		DETAIL="$g goroutines; $na and $nb goroutine samples" \
			check "two Go processes (-p A,B): both by goroutines (10 in all, each half the samples)" \
			"[ '$g' = 10 ] && within \$((na * 100 / (na + nb + 1))) 50 5"
		stop_target "$b"
	fi
	stop_target "$a"
fi
out=$TMP/exec.folded
# bash execs the program itself (the same process, a new program): it runs
# on after the profiler's 1.5 s, which then waits for its command; the
# test ends it once the summary is out.
prof_bg "$TMP/exec" --duration 1.5 -o "$out" -- bash -c "exec '$BIN/goroutines' '$TMP/exec.ready' split"
_summary_out() { [ -n "$(summary_field "$TMP/exec.err" samples)" ]; }
wait_until 20 _summary_out
kill -KILL "$(cat "$TMP/exec.ready" 2>/dev/null)" 2>/dev/null
prof_wait 20
g=$(summary_field "$TMP/exec.err" goroutines)
DETAIL="$(summary "$TMP/exec.err" | head -n 1)" \
	check "a Go program a shell execs: its goroutines (5)" "[ '$g' = 5 ]"
out=$TMP/child.folded
prof "$TMP/child" --duration 1.5 -o "$out" -- bash -c "timeout 2.5 '$BIN/goroutines' '$TMP/child.ready' split; true"
g=$(summary_field "$TMP/child.err" goroutines)
DETAIL="$(summary "$TMP/child.err" | head -n 1)" \
	check "a Go program a shell starts (--subprocesses): its goroutines (5)" "[ '$g' = 5 ]"

# --- 10,000 parked goroutines ----------------------------------------------------
if start_target goroutines parked 10000; then
	pid=$TARGET_PID
	out=$TMP/parked.folded
	prof "$TMP/parked" "$pid" --duration 2 --stats -o "$out"
	check_ran "parked" "$TMP/parked" "$out"
	total=$(folded_total "$out")
	ticks=$(ticks_of "$TMP/parked.err")
	DETAIL="$total samples, $ticks ticks" \
		check "parked: every goroutine counted at every tick (samples / ticks = 10002 +- 1%)" \
		"[ '$ticks' -gt 0 ] && within \$((total / ticks)) 10002 100"
	parked=$(samples "$out" '^runtime\.goexit;main\.parked;runtime\.chanrecv1;')
	DETAIL="$parked of $total" check "parked: the parked goroutines' stacks rooted and named" \
		"[ \$((parked * 100)) -ge \$((total * 99)) ]"
	reused=$(stat "$TMP/parked.err" 'counted again unchanged')
	DETAIL="$(grep -oE 'goroutines: .*' "$TMP/parked.err")" \
		check "parked: most goroutine samples counted again, unchanged (>= 90%)" \
		"[ -n '$reused' ] && [ \$((reused * 100)) -ge \$((total * 90)) ]"
	diag "parked: $(summary "$TMP/parked.err" | tr '\n' ' ')"
	diag "parked: $(grep -oE 'profiler CPU [^;]*' "$TMP/parked.err")"
	check "parked: target alive" alive "$pid"
	check "parked: no thread left traced" untraced "$pid"
	stop_target "$pid"
fi

# --- 100,000 parked goroutines: the per-tick budget (issue 27, item 9) ------------
# Past 4,096 a tick, goroutines last seen waiting are read in turn and count
# as unchanged until theirs comes: every one is still counted at every tick.
if start_target goroutines parked 100000; then
	pid=$TARGET_PID
	out=$TMP/parked100k.folded
	prof "$TMP/parked100k" "$pid" --duration 2 --stats -o "$out"
	check_ran "parked 100,000" "$TMP/parked100k" "$out"
	total=$(folded_total "$out")
	ticks=$(ticks_of "$TMP/parked100k.err")
	DETAIL="$total samples, $ticks ticks" \
		check "parked 100,000: every goroutine counted at every tick (samples / ticks = 100002 +- 1%)" \
		"[ '$ticks' -gt 0 ] && within \$((total / ticks)) 100002 1000"
	carried=$(stat "$TMP/parked100k.err" 'of them not read at that tick')
	DETAIL="$(grep -oE 'goroutines: .*' "$TMP/parked100k.err")" \
		check "parked 100,000: most of them counted from a record not read at that tick (the budget)" \
		"[ -n '$carried' ] && [ \$((carried * 100)) -ge \$((total * 80)) ]"
	diag "parked 100,000: $(summary "$TMP/parked100k.err" | tr '\n' ' ') $(grep -oE 'profiler CPU [^;]*' "$TMP/parked100k.err")"
	check "parked 100,000: no thread left traced" untraced "$pid"
	stop_target "$pid"
fi

# --- churn: 10,000 goroutines a second --------------------------------------------
if start_target goroutines churn 10000; then
	pid=$TARGET_PID
	out=$TMP/churn.folded
	prof "$TMP/churn" "$pid" --duration 2 --stats -o "$out"
	check_ran "churn" "$TMP/churn" "$out"
	total=$(folded_total "$out")
	rooted=$(samples "$out" '^runtime\.goexit;')
	DETAIL="$rooted of $total; $(grep -vE '^runtime\.goexit;' "$out" | cut -c1-160 | head -4 | tr '\n' '|')" \
		check "churn: >= 95% of the samples rooted at runtime.goexit" \
		"[ '$total' -gt 0 ] && [ \$((rooted * 100)) -ge \$((total * 95)) ]"
	diag "churn: $(grep -oE 'goroutines: .*' "$TMP/churn.err")"
	check "churn: target alive" alive "$pid"
	check "churn: no thread left traced" untraced "$pid"
	stop_target "$pid"
fi

# --- timers: the target's own timers keep time while it is profiled ----------------
# main.ticker receives from a 10 ms time.Ticker (split's goroutines run
# beside it, and main.epoller in epoll_wait on a thread of its own); each
# SIGUSR1 ends a window, whose ticks, length, longest gap between two ticks
# and the epoll_waits that ended with EINTR the target writes to READY.ticks.
if start_target goroutines timers 10; then
	pid=$TARGET_PID
	ticks=$TARGET_READY.ticks
	# window SEQ: ends the target's window number SEQ; prints "TICKS US GAP_US".
	window() {
		kill -USR1 "$pid" && wait_until 10 grep -q "^$1 " "$ticks" && cut -d' ' -f2- "$ticks"
	}
	window 1 >/dev/null
	prof "$TMP/timers" "$pid" --duration 2 -o "$TMP/timers.folded"
	read -r n us gap eintr <<<"$(window 2)"
	check_ran "timers" "$TMP/timers" "$TMP/timers.folded"
	expected=$(( ${us:-0} / 10000 ))
	# Lenient, for a loaded machine: 80% of the ticks, no gap over 100 ms;
	# or, if the target misses as much alone, 80% of its ticks alone and a
	# longest gap at most twice its own.  Only then is it measured alone,
	# for as long (the sleep is that measurement, not a wait for anything).
	base="not measured"
	if [ "$expected" -le 0 ] || [ $((${n:-0} * 100)) -lt $((expected * 80)) ] || [ "${gap:-0}" -gt 100000 ]; then
		window 3 >/dev/null
		sleep "$(awk -v us="${us:-2000000}" 'BEGIN { print us / 1e6 }')"
		read -r bn bus bgap _ <<<"$(window 4)"
		base="alone: $bn ticks in $bus us, longest gap $bgap us"
		expected=$(awk -v n="$bn" -v bus="$bus" -v us="$us" 'BEGIN { printf "%d", n * us / bus }')
		[ "${gap:-0}" -le $((2 * ${bgap:-0})) ] && gap=0
	fi
	DETAIL="$n ticks in $us us; $base" \
		check "timers: the target's 10 ms ticker kept >= 80% of its ticks while profiled" \
		"[ '$expected' -gt 0 ] && [ \$(( ${n:-0} * 100 )) -ge \$(( expected * 80 )) ]"
	DETAIL="longest gap between two ticks ${gap:-?} us; $base" \
		check "timers: no tick later than 100 ms while profiled" "[ '${gap:-999999999}' -le 100000 ]"
	DETAIL="${eintr:-?} waits ended with EINTR" \
		check "timers: a thread of the target in epoll_wait saw no EINTR while profiled" "[ '${eintr:-x}' = 0 ]"
	diag "timers: profiled: $n ticks in $us us (10 ms ticker), longest gap $gap us, $eintr EINTR; $base"
	check "timers: target alive" alive "$pid"
	check "timers: no thread left traced" untraced "$pid"
	stop_target "$pid"
fi

# --- without DWARF (issue 37): the same goroutines, as shipped Go programs are built --
# The layout comes from the Go version's table and the runtime's own code
# (goroutine/golayout.h).  First the layout itself: where the DWARF of the
# normal build puts each field, and where the layout without DWARF puts it
# in the -w build (.symtab kept) and the -s -w build (the addresses read
# from runtime.allgadd's and runtime.waitReason.String's code): the same
# program links at the same addresses, so every line must agree.
[ -x "$BIN/golayout" ] || make -C "$ROOT" --no-print-directory -s tests/bin/golayout >/dev/null 2>&1
nodwarf_bins="goroutines-w goroutines-sw goroutines-ext goroutines-ext-sw goroutines-pie-sw"
for b in $nodwarf_bins; do
	[ -x "$BIN/$b" ] || make -C "$ROOT" --no-print-directory -s GO_BIN="$GO" "tests/bin/$b" >/dev/null 2>&1
done
if [ -x "$BIN/golayout" ]; then
	for b in goroutines-w goroutines-sw; do
		"$BIN/golayout" "$BIN/goroutines" "$BIN/$b" >"$TMP/layout-$b" 2>&1
		n=$(awk 'NF == 3' "$TMP/layout-$b" | wc -l)
		diff=$(awk 'NF == 3 && $2 != $3' "$TMP/layout-$b")
		DETAIL="$(head -1 "$TMP/layout-$b"); $n lines; differ: $(tr '\n' '|' <<<"$diff")" \
			check "layout: $b's layout without DWARF is what the DWARF of the normal build says (17 of 17)" \
			"[ '$n' = 17 ] && [ -z \"\$diff\" ]"
	done
fi

# Then the profile: the goroutines target built normally, -w, -s -w,
# linked by the system linker with and without -s -w, and as a PIE with
# -s -w (loaded at a bias: every address read from the code moves with
# it) gives the same
# goroutines (the function each started in), the same states, and the
# same functions on their stacks; goroutine ids differ from run to run (a
# P takes them 16 at a time), so each run's ids are checked against the
# program's own list: its SIGQUIT dump (GOTRACEBACK=all) after the
# profile, every runtime goroutine included (--go-system).
# profile_of LABEL TARGET: "goroutines" (the functions they started in,
# sorted, one per goroutine), "funcs" (main.* on their stacks), "states",
# and "ids" of the profile and "dumpids" of the dump, under $TMP/LABEL.*.
profile_of() {
	local label=$1 target=$2 pid
	GOTRACEBACK=all start_target "$target" split 2>"$TMP/$label.dump" || return 1
	pid=$TARGET_PID
	prof "$TMP/$label" "$pid" --duration 1.5 --threads --go-system -o "$TMP/$label.folded"
	prof "$TMP/$label-p" "$pid" --duration 1 -o "$TMP/$label.pprof"
	kill -QUIT "$pid"
	wait_until 10 gone "$pid"
	stop_target "$pid"
	grep -oE '^[^;]+' "$TMP/$label.folded" | sort -u >"$TMP/$label.roots"
	sed -E 's/ \(goroutine [0-9]+\)$//' "$TMP/$label.roots" | sort >"$TMP/$label.goroutines"
	grep -oE '\(goroutine [0-9]+\)' "$TMP/$label.roots" | grep -oE '[0-9]+' | sort -u >"$TMP/$label.ids"
	# goroutine 0: the thread that took the signal, on its system stack
	grep -oE '^goroutine [0-9]+ \[' "$TMP/$label.dump" | grep -oE '[0-9]+' | grep -vx 0 |
		sort -u >"$TMP/$label.dumpids"
	cut -d';' -f2- "$TMP/$label.folded" | tr ';' '\n' | sed -E 's/ [0-9]+$//' | grep -E '^main\.' |
		sort -u >"$TMP/$label.funcs"
	# runnable and running come and go: the wait states are compared
	"$GO" tool pprof -raw "$TMP/$label.pprof" 2>/dev/null | grep -oE 'state:\[[^]]*\]' |
		grep -vE 'running|runnable' | sort -u >"$TMP/$label.states"
	# main.sleeper's pprof labels (SetGoroutineLabels), with its function
	"$GO" tool pprof -raw "$TMP/$label.pprof" 2>/dev/null | grep -F 'goroutine_function:[main.sleeper]' |
		grep -oE '(role|tier):\[[^]]*\]' | sort -u | tr '\n' ' ' >"$TMP/$label.labels"
	return 0
}
if profile_of dwarf goroutines; then
	for b in dwarf $nodwarf_bins; do
		[ -x "$BIN/$b" ] || [ $b = dwarf ] || { skip "$b" "could not build tests/bin/$b"; continue; }
		[ $b = dwarf ] || profile_of "$b" "$b" || continue
		check_ran "$b" "$TMP/$b" "$TMP/$b.folded"
		# (A note of a sample that lost its goroutine's frames on the
		# system stack, a race a busy machine shows, is not this one.)
		DETAIL="$(grep -i note "$TMP/$b.err")" check "$b: no note that it samples threads, not goroutines (its goroutines are found)" \
			"! grep -q 'note:.*not its goroutines' '$TMP/$b.err'"
		g=$(summary_field "$TMP/$b.err" goroutines)
		DETAIL="$(summary "$TMP/$b.err" | head -n 1)" \
			check "$b: the summary counts its 9 goroutines (5 of its own, 4 of the runtime's)" "[ '$g' = 9 ]"
		DETAIL="profile: $(tr '\n' ' ' <"$TMP/$b.ids"); dump: $(tr '\n' ' ' <"$TMP/$b.dumpids")" \
			check "$b: the goroutine ids are those of its own SIGQUIT dump" \
			"[ -s '$TMP/$b.ids' ] && cmp -s '$TMP/$b.ids' '$TMP/$b.dumpids'"
		[ $b = dwarf ] && continue
		DETAIL="$(diff "$TMP/dwarf.goroutines" "$TMP/$b.goroutines" | tr '\n' '|')" \
			check "$b: the same goroutines (the function each started in) as the build with DWARF" \
			"cmp -s '$TMP/dwarf.goroutines' '$TMP/$b.goroutines'"
		DETAIL="$(diff "$TMP/dwarf.funcs" "$TMP/$b.funcs" | tr '\n' '|')" \
			check "$b: the same main.* functions on their stacks" "cmp -s '$TMP/dwarf.funcs' '$TMP/$b.funcs'"
		DETAIL="$(cat "$TMP/$b.labels")" \
			check "$b: main.sleeper's pprof labels (role=sleeper, tier=2)" \
			"[ \"\$(cat '$TMP/$b.labels')\" = 'role:[sleeper] tier:[2] ' ]"
		DETAIL="$(tr '\n' ' ' <"$TMP/dwarf.states") vs $(tr '\n' ' ' <"$TMP/$b.states")" \
			check "$b: the same wait states (Go's words: sleep, semacquire, select (no cases))" \
			"[ -s '$TMP/$b.states' ] && cmp -s '$TMP/dwarf.states' '$TMP/$b.states'"
	done
fi

# A Go version with no known layout: the -s -w build with its build info
# saying go1.99 (the same length as go1.19) is refused with one note, and
# its threads are sampled.
if [ -x "$BIN/goroutines-sw" ]; then
	sed 's/go1\.19\./go1.99./g' "$BIN/goroutines-sw" >"$TMP/goroutines-sw99" 2>/dev/null &&
		chmod +x "$TMP/goroutines-sw99"
	if BIN=$TMP start_target goroutines-sw99; then
		pid=$TARGET_PID
		out=$TMP/nolayout.folded
		prof "$TMP/nolayout" "$pid" --duration 1 --threads -o "$out"
		check_ran "no layout" "$TMP/nolayout" "$out"
		DETAIL="$(cat "$TMP/nolayout.err")" \
			check "go1.99 without DWARF: one note that it has no DWARF and its version no known layout" \
			"[ \$(grep -c 'Go program, but it has no DWARF (built with -ldflags=-w?) and its Go version, go1.99.[0-9]*, has no known layout' '$TMP/nolayout.err') = 1 ]"
		check "go1.99 without DWARF: the threads sampled instead" "grep -qE '^goroutines-sw99 \\([0-9]+\\);' '$out'"
		stop_target "$pid"
	fi
fi

# A table that is not the runtime's: the -s -w build saying go1.22, whose
# table puts g.gopc at 280 where 1.19's newproc1 stores it at 296, is
# refused with a note naming the field.
if [ -x "$BIN/goroutines-sw" ]; then
	sed 's/go1\.19\./go1.22./g' "$BIN/goroutines-sw" >"$TMP/goroutines-sw22" 2>/dev/null &&
		chmod +x "$TMP/goroutines-sw22"
	if BIN=$TMP start_target goroutines-sw22; then
		pid=$TARGET_PID
		prof "$TMP/wronglayout" "$pid" --duration 0.5 --threads -o "$TMP/wronglayout.folded"
		check_ran "wrong layout" "$TMP/wronglayout" "$TMP/wronglayout.folded"
		DETAIL="$(cat "$TMP/wronglayout.err")" \
			check "a 1.19 runtime saying go1.22: refused, the note naming the field its code does not use" \
			"[ \$(grep -c 'Go program, but it has no DWARF, and runtime.newproc1.s code does not use g.gopc at 280' '$TMP/wronglayout.err') = 1 ]"
		stop_target "$pid"
	fi
fi

# --- a runtime that lies (issue 27, item 7) ----------------------------------------------
# goliar replaces runtime.allgs with pointers to zeroed memory: no goroutine
# can be read.  b1f3e94 wrote an empty profile, 0 samples, exit 0, no word.
[ -x "$BIN/goliar" ] || make -C "$ROOT" --no-print-directory -s GO_BIN="$GO" tests/bin/goliar >/dev/null 2>&1
if [ ! -x "$BIN/goliar" ]; then
	skip "goliar" "cannot build tests/targets/goliar"
elif start_target goliar; then
	pid=$TARGET_PID
	out=$TMP/liar.folded
	prof "$TMP/liar" "$pid" --duration 1 -o "$out"
	check_ran "liar" "$TMP/liar" "$out"
	DETAIL="$(cat "$TMP/liar.err")" \
		check "liar: one note that its goroutine list cannot be read, and that its threads are sampled" \
		"[ \$(grep -c 'Go program, but its goroutine list cannot be read (no goroutine found in it): sampling its threads' '$TMP/liar.err') = 1 ]"
	work=$(folded_count "$out" '(^|;)main\.work(;|$)')
	DETAIL="$(head -c 300 "$out")" check "liar: the computing thread is in the profile (main.work)" "[ '$work' -gt 0 ]"
	check "liar: target alive" alive "$pid"
	check "liar: target untraced" untraced "$pid"
	stop_target "$pid"
fi

# --- a runtime that lists its goroutines again and again (issue 27, item 2) ----------
# goliar dup N: allgs holds N entries repeating the real goroutines'
# pointers.  b1f3e94, with 4,000,000: -d 5 ran 10.0 s, 950 MB, 3,999,992
# samples counted as goroutines of their own, no word.
if [ -x "$BIN/goliar" ] && start_target goliar dup 500000; then
	pid=$TARGET_PID
	out=$TMP/dup.folded
	t0=$(date +%s%N)
	prof "$TMP/dup" "$pid" --duration 2 --stats -o "$out"
	ms=$((($(date +%s%N) - t0) / 1000000))
	check_ran "dup" "$TMP/dup" "$out"
	DETAIL="$(grep note "$TMP/dup.err")" \
		check "dup: a note that allgs repeats goroutines, each counted once" \
		"grep -qE 'runtime.allgs lists [0-9]+ of its 500000 entries for a goroutine it lists already' '$TMP/dup.err'"
	n=$(summary_field "$TMP/dup.err" samples)
	# 2 s at 99 Hz of the few real goroutines (main, 5 sleepers, the worker):
	# about 1,400; counted per entry it would be 99,000,000.
	DETAIL="$n samples" check "dup: the real goroutines' samples only (< 3,000)" "[ '${n:-0}' -gt 0 ] && [ '${n:-0}' -lt 3000 ]"
	work=$(folded_count "$out" '(^|;)main\.work(;|$)')
	DETAIL="work $work of $(folded_total "$out")" check "dup: the worker is one goroutine of 7 (main.work 10-20%)" \
		"within '$(pct "$work" "$(folded_total "$out")")' 14.3 6"
	rss=$(sed -nE 's/.*peak RSS ([0-9]+) KiB.*/\1/p' "$TMP/dup.err")
	DETAIL="peak RSS $rss KiB, $ms ms" check "dup: bounded: peak RSS < 300 MiB, the run ends in < 10 s" \
		"[ '${rss:-999999}' -lt 307200 ] && [ '$ms' -lt 10000 ]"
	check "dup: target untraced" untraced "$pid"
	stop_target "$pid"
fi
if [ -x "$BIN/goliar" ] && start_target goliar dup 2000000; then
	pid=$TARGET_PID
	out=$TMP/dup2.folded
	prof "$TMP/dup2" "$pid" --duration 1 -o "$out"
	check_ran "dup2" "$TMP/dup2" "$out"
	DETAIL="$(grep note "$TMP/dup2.err")" \
		check "dup 2,000,000: refused with a note naming the bound, its threads sampled" \
		"grep -q 'runtime.allglen is 2000000, above the 1048576 read): sampling its threads' '$TMP/dup2.err'"
	stop_target "$pid"
fi
done_testing
