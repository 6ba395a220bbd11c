#!/usr/bin/env bash
# Always on: --period writes a profile per period while sampling
# goes on; --history keeps the last minutes and SIGUSR1 writes them.
#   1. period files of a known split (wallclock: a third each): each file's
#      shares, and the files' samples add up to the run's exactly (counts
#      are taken and zeroed between two ticks: none lost, none twice);
#      pprof periods carry their own time and duration;
#   2. %n{3} keeps a ring of 3 files;
#   3. the flight recorder: a stall that ended before the signal is in the
#      file SIGUSR1 writes; sampling went on (the run's own file at the end);
#   4. a storm of SIGUSR1: the run goes on and ends well, the target unharmed;
#   5. a full disk in the middle of a run: one line, sampling goes on, the
#      next period is written once there is room again;
#   6. bad patterns and combinations are refused before anything attaches;
#   7. --pid-file across a restart of a real service (redis-server, restarted
#      by the test): the files go on from the new process, numbered on; a
#      PID the file names but whose process started after the file was
#      written (a reused PID) is refused;
#   8. memory flat: a target whose threads come and go (200 a second) and
#      whose two libraries take each other's place at one address 10 times
#      a second, under --period 1s with stacks aged after 2 s
#      (CPROF_STACK_AGE): the profiler's RSS and open descriptors from its
#      8th period file to its 23rd stay within a bound (before the stacks
#      and address-space generations were freed: +1.2 MB and +9 descriptors
#      a second), and the libraries' code is still named.  It runs beside
#      sections 1-7 (tests/lib.sh beside): it waits on time, not the CPU;
#   9. SIGUSR1 beside a ring (--period, %n{2}): the dump is written to
#      dump-NAME, which the ring never reaches, and a line names it.
. "$(dirname "$0")/lib.sh"

# share FILE FUNC: percent of FILE's samples whose stack holds FUNC.
share() {
	local all part
	all=$(folded_total "$1")
	part=$(folded_count "$1" "(^|;)$2(;|\$)")
	pct "$part" "$all"
}

# add_up LABEL ERRFILE FILE...: the files' samples are the run's (its
# summary's), exactly: counts taken and zeroed between two ticks.
add_up() {
	local label=$1 err=$2 sum=0 f total
	shift 2
	for f in "$@"; do
		sum=$((sum + $(folded_total "$f")))
	done
	total=$(summary_field "$err" samples)
	DETAIL="files $sum, summary $total" check "$label: the files' samples add up to the run's, exactly" \
		"[ -n '$total' ] && [ '$sum' = '$total' ]"
}

# --- 8. memory flat under churn -------------------------------------------------------
# Beside the other sections (it waits on time: 20 s of periods), from the
# start.
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
loads_reach() { kill -USR1 "$1"; [ "$(cat "$2" 2>/dev/null || echo 0)" -ge "$3" ]; }
flat_memory() {
	local pid ready secs from to rss0 rss1 fds0 fds1 want loads named lost
	if start_target churn 200 1 200 10 "$BIN/libswapA.so" "$BIN/libswapB.so"; then
		pid=$TARGET_PID
		ready=$TARGET_READY
		mkdir -p "$TMP/m"
		# The sanitizer pass checks the aging's memory safety, not RSS (its
		# quarantine holds what is freed): a shorter run there.
		secs=20 from=6 to=17
		[ "${CPROF_SANITIZED:-0}" = 1 ] && secs=10 from=3 to=8
		export CPROF_STACK_AGE=2
		prof_bg "$TMP/flat" "$pid" --period 1s --duration "$secs" --hz 99 -o "$TMP/m/m-%n.folded"
		unset CPROF_STACK_AGE
		if wait_attached "$pid"; then
			# From the 7th period on (the first naming done, most of the
			# first 4,096 threads seen: each has a label), to the 18th.
			wait_until 20 file_ready "$TMP/m/m-$from.folded"
			rss0=$(rss_kib "$PROF_PID")
			fds0=$(nfds "$PROF_PID")
			wait_until 30 file_ready "$TMP/m/m-$to.folded"
			rss1=$(rss_kib "$PROF_PID")
			fds1=$(nfds "$PROF_PID")
			prof_wait 30
			DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/flat.err")" check "flat: profiler exits 0" "[ '$PROF_RC' = 0 ]"
			# churn rewrites READY.loads at each SIGUSR1: 10 a second
			want=$((secs * 10 * 3 / 4))
			wait_until 5 loads_reach "$pid" "$ready.loads" "$want"
			loads=$(cat "$ready.loads" 2>/dev/null)
			DETAIL="$loads loads" check "flat: the libraries were loaded and unloaded (about 10 a second)" \
				"[ '${loads:-0}' -ge $want ]"
			diag "flat: RSS $rss0 -> $rss1 KiB, descriptors $fds0 -> $fds1, $loads loads"
			DETAIL="$fds0 -> $fds1" check "flat: open descriptors do not grow (at most +16: the threads' /proc files come and go)" \
				"[ -n '$fds1' ] && [ '$fds1' -le $((${fds0:-0} + 16)) ]"
			# ASan's quarantine keeps what is freed: RSS only in the plain pass.
			if [ "${CPROF_SANITIZED:-0}" = 1 ]; then
				skip "flat: RSS" "the sanitizers' quarantine holds freed memory"
			else
				DETAIL="$rss0 -> $rss1 KiB" check "flat: RSS grows by less than 4 MiB in 11 s" \
					"[ -n '$rss1' ] && [ '$rss1' -lt $((${rss0:-0} + 4096)) ]"
			fi
			add_up flat "$TMP/flat.err" "$TMP"/m/m-*.folded
			# The libraries' code is named from a library's table (not a freed
			# one, not [unknown]).  Which of the two is not checked: a library
			# swapped since the last scan of the maps (every 250 ms) is still
			# named from the other's table until the next (README, Limits).
			cat "$TMP"/m/m-*.folded >"$TMP/flat.all"
			named=$(folded_count "$TMP/flat.all" '(^|;)via_(first|second);inner_[AB](;|$)')
			lost=$(folded_count "$TMP/flat.all" '(^|;)via_(first|second);[^;]*unknown')
			DETAIL="named $named, unknown $lost" \
				check "flat: the libraries' code is named (inner_A, inner_B), never [unknown]" \
				"[ '$named' -gt 0 ] && [ '$lost' = 0 ]"
		fi
		check "flat: target alive" alive "$pid"
		check "flat: every thread untraced" untraced "$pid"
		stop_target "$pid"
	fi
}
beside flat flat_memory

# --- 9. a dump beside a ring ----------------------------------------------------------
# SIGUSR1 with --period and a ring: the dump goes to dump-NAME, numbered on
# its own, where the ring never writes (before: the ring's next name, which
# the ring overwrote MAX periods later), and a line says where, as it is
# written (before: nothing; the unit's comment said journalctl names it).
# _dump ERR: SIGUSR1 to the profiler, and the line it writes to ERR once
# the dump is written (empty after 10 s without).
_dump() {
	kill -USR1 "$PROF_PID"
	wait_until 10 grep -q '^cprof-attach: SIGUSR1: wrote' "$1"
	grep '^cprof-attach: SIGUSR1: wrote' "$1" | head -n 1
}
# _newer A B: file A was modified after file B.
_newer() { [ -n "$(find "$1" -newer "$2" 2>/dev/null)" ]; }
dump_beside_ring() {
	if start_target wallclock; then
		local pid=$TARGET_PID line path sum
		mkdir -p "$TMP/dr"
		prof_bg "$TMP/dring" "$pid" --period 0.5s --history 5s --hz 49 -o "$TMP/dr/r-%n{2}.folded"
		if wait_until 10 file_ready "$TMP/dr/r-1.folded"; then
			line=$(_dump "$TMP/dring.err")
			path=$(echo "$line" | sed -nE 's/.* to (.*) in [0-9]+ ms \(its naming paused sampling [0-9.]+ ms\)$/\1/p')
			DETAIL="line '$line'" check "dump: a line says the dump's path as it is written" \
				"[ '$path' = '$TMP/dr/dump-r-0.folded' ] && [ -s '$path' ]"
			sum=$(cksum <"$TMP/dr/dump-r-0.folded" 2>/dev/null)
			# the ring writes both its names again after the dump
			wait_until 10 _newer "$TMP/dr/r-0.folded" "$TMP/dr/dump-r-0.folded"
			wait_until 10 _newer "$TMP/dr/r-1.folded" "$TMP/dr/dump-r-0.folded"
			DETAIL="$(ls "$TMP/dr" | tr '\n' ' ')" \
				check "dump: the ring goes round and never reaches it (dump-r-0.folded unchanged, only r-0 and r-1 besides)" \
				"_newer '$TMP/dr/r-0.folded' '$TMP/dr/dump-r-0.folded' && _newer '$TMP/dr/r-1.folded' '$TMP/dr/dump-r-0.folded' && [ \"\$(cksum <'$TMP/dr/dump-r-0.folded')\" = '$sum' ] && [ \"\$(ls '$TMP/dr' | tr '\n' ' ')\" = 'dump-r-0.folded r-0.folded r-1.folded ' ]"
		fi
		kill -INT "$PROF_PID"
		prof_wait 20
		stop_target "$pid"
	fi
}
beside dumpring dump_beside_ring

# --- 10. naming with sampling on -----------------------------------------------------
# A window (a period, a dump, an ask) is named after the sampler resumes,
# on a thread of its own, from copies of its stacks and of the spaces'
# tables made in the pause (run/periods.c).  CPROF_NAMING_DELAY_MS makes each naming 800 ms slower:
# on the build before, all of it paused sampling (the dump's line said 800
# ms and more, the rate fell by a quarter: 36 of 49 Hz).  The same pause
# came from naming a 10-minute history for real: 7.1 s once.
naming_not_paused() {
	if start_target wallclock; then
		local pid=$TARGET_PID line paused rate named files
		mkdir -p "$TMP/np"
		CPROF_NAMING_DELAY_MS=800 prof_bg "$TMP/naming" "$pid" --period 3s --history 10s --hz 49 \
			-o "$TMP/np/n-%n.folded"
		if wait_until 20 file_ready "$TMP/np/n-0.folded"; then
			line=$(_dump "$TMP/naming.err")
			paused=$(echo "$line" | sed -nE 's/.*its naming paused sampling ([0-9.]+) ms.*/\1/p')
			DETAIL="line '$line'" check "naming: a dump named 800 ms slower paused sampling less than 400 ms" \
				"[ -n '$paused' ] && awk -v p='$paused' 'BEGIN { exit !(p < 400) }'"
			wait_until 20 file_ready "$TMP/np/n-2.folded"
		fi
		kill -INT "$PROF_PID"
		prof_wait 20
		rate=$(sed -nE 's/^cprof-attach: ([0-9.]+) of 49 Hz.*/\1/p' "$TMP/naming.err" | head -n 1)
		named=$(sed -nE 's/.*\(naming took ([0-9.]+) ms at most, sampling on\)$/\1/p' "$TMP/naming.err")
		DETAIL="$(grep -E ' Hz|naming' "$TMP/naming.err" | tr '\n' ' ')" \
			check "naming: sampling went on through namings of 800 ms and more, one a period: >= 44 of 49 Hz" \
			"[ -n '$rate' ] && [ -n '$named' ] && awk -v r='$rate' -v n='$named' 'BEGIN { exit !(r >= 44 && n >= 800) }'"
		# Namings slower than the periods (600 ms each, a period every
		# 0.5 s): they queue for the namer's thread, and the loop keeps
		# cutting periods on time.  When the loop named, it cut one
		# every 1.1 s or so (5 files in 4 s); the last are named before
		# the profiler exits.
		CPROF_NAMING_DELAY_MS=600 prof "$TMP/naming2" "$pid" --period 0.5s --duration 4 --hz 49 \
			-o "$TMP/np/q-%n.folded"
		files=$(ls "$TMP/np" | grep -c '^q-[0-9]*\.folded$')
		DETAIL="exit $PROF_RC; $(ls "$TMP/np" | tr '\n' ' ')" \
			check "naming: namings slower than the periods do not slow the periods: 8 or 9 files in 4 s at --period 0.5s" \
			"[ '$PROF_RC' = 0 ] && [ '$files' -ge 8 ] && [ '$files' -le 9 ]"
		add_up "naming: slow namings" "$TMP/naming2.err" "$TMP"/np/q-*.folded
		stop_target "$pid"
	fi
}
beside naming naming_not_paused

# --- 1. period files ------------------------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	mkdir -p "$TMP/p"
	prof "$TMP/periods" "$pid" --period 1s --duration 4.5 -o "$TMP/p/w-%n.folded"
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/periods.err")" check "periods: profiler exits 0" "[ '$PROF_RC' = 0 ]"
	DETAIL="$(grep -E ' Hz' "$TMP/periods.err" | head -1)" \
		check "periods: always on, the default rate is 19 Hz (cli/options.h OPTIONS_HZ_ALWAYS)" \
		"grep -qE '^cprof-attach: [0-9.]+ of 19 Hz' '$TMP/periods.err'"
	files=$(ls "$TMP/p" | grep -c '^w-[0-9]*\.folded$')
	DETAIL="$(ls "$TMP/p" | tr '\n' ' ')" check "periods: 4.5 s at --period 1s: 5 files (4 periods and the last part)" "[ '$files' = 5 ]"
	add_up periods "$TMP/periods.err" "$TMP"/p/w-*.folded
	bad=
	for i in 0 1 2 3; do
		f=$TMP/p/w-$i.folded
		for fn in burn_cpu sleep_here; do
			s=$(share "$f" "$fn")
			within "$s" 33.3 12 || bad="$bad w-$i:$fn=$s%"
		done
	done
	DETAIL="$bad" check "periods: each whole period has the known split (a third each, +-12 points)" "[ -z '$bad' ]"
	check "periods: summary counts the periods" "grep -qE '^cprof-attach: 5 periods and 0 dumps of the history: 5 files written, 0 not written, 0 dropped' '$TMP/periods.err'"
	if have_pprof; then
		prof "$TMP/pp" "$pid" --period 1s --duration 2.5 -o "$TMP/p/w-%n.pprof"
		# pprof prints the duration as Go's %.4v: "1.00" (1.00s), "999." (999.xms)
		secs_of() { "$GO" tool pprof -raw "$1" 2>/dev/null | sed -n 's/^Duration: //p' |
			awk '{ v = $1; sub(/s$/, "", v); if (v ~ /ms$/ || v + 0 > 10) { sub(/ms$/, "", v); v = v / 1000 } print v + 0 }'; }
		d0=$(secs_of "$TMP/p/w-0.pprof")
		d1=$(secs_of "$TMP/p/w-1.pprof")
		t0=$("$GO" tool pprof -raw "$TMP/p/w-0.pprof" 2>/dev/null | sed -n 's/^Time: //p')
		t1=$("$GO" tool pprof -raw "$TMP/p/w-1.pprof" 2>/dev/null | sed -n 's/^Time: //p')
		DETAIL="durations $d0 $d1; times $t0 / $t1" \
			check "periods: each pprof file has its period's duration (~1 s) and start" \
			"within '${d0:-0}' 1 0.15 && within '${d1:-0}' 1 0.15 && [ -n '$t0' ] && [ '$t0' != '$t1' ]"
	fi
	check "periods: target alive" alive "$pid"
	check "periods: every thread untraced" untraced "$pid"
	stop_target "$pid"
fi

# --- 2. a ring of files -------------------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	mkdir -p "$TMP/r"
	prof "$TMP/ring" "$pid" --period 0.5s --duration 3.2 -o "$TMP/r/r-%n{3}.folded"
	DETAIL="$(ls "$TMP/r" | tr '\n' ' ')" check "ring: %n{3} keeps 3 files: r-0, r-1, r-2" \
		"[ \"\$(ls '$TMP/r' | tr '\n' ' ')\" = 'r-0.folded r-1.folded r-2.folded ' ]"
	n=$(sed -nE 's/^cprof-attach: ([0-9]+) periods and.*/\1/p' "$TMP/ring.err")
	DETAIL="$(head -c 300 "$TMP/ring.err")" check "ring: 7 periods written over them" "[ '${n:-0}' -ge 6 ]"
	stop_target "$pid"
fi

# --- 3. the flight recorder ------------------------------------------------------
if start_target stall; then
	pid=$TARGET_PID
	ready=$TARGET_READY
	mkdir -p "$TMP/h"
	prof_bg "$TMP/history" "$pid" --history 30s --hz 99 -o "$TMP/h/h-%n.folded"
	if wait_attached "$pid"; then
		sleep 1.5       # the stall: samples of stall_compute
		: >"$ready.over"
		wait_until 5 file_ready "$ready.quiet"
		sleep 1         # after it: the service is quiet again
		kill -USR1 "$PROF_PID"
		wait_until 10 file_ready "$TMP/h/h-0.folded"
		check "history: SIGUSR1 writes the recent past at once (h-0.folded)" "[ -s '$TMP/h/h-0.folded' ]"
		s=$(folded_count "$TMP/h/h-0.folded" '(^|;)stall_compute(;|$)')
		q=$(folded_count "$TMP/h/h-0.folded" '(^|;)after_stall(;|$)')
		DETAIL="stall_compute $s, after_stall $q" \
			check "history: the stall that had ended is in it, and the quiet after" "[ '$s' -gt 20 ] && [ '$q' -gt 20 ]"
		check "history: sampling goes on after the dump (profiler running)" alive "$PROF_PID"
		kill -INT "$PROF_PID"
		prof_wait 20
		DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/history.err")" check "history: profiler exits 0" "[ '$PROF_RC' = 0 ]"
		check "history: the whole run's profile at the end, the pattern's next name (h-1.folded)" "[ -s '$TMP/h/h-1.folded' ]"
		check "history: summary counts the dump" "grep -qE '^cprof-attach: 0 periods and 1 dump of the history: 1 file written' '$TMP/history.err'"
	fi
	check "history: target alive" alive "$pid"
	check "history: every thread untraced" untraced "$pid"
	stop_target "$pid"
fi

# --- 4. a storm of SIGUSR1 -----------------------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	mkdir -p "$TMP/s"
	prof_bg "$TMP/storm" "$pid" --history 5s --period 1s --hz 99 -o "$TMP/s/s-%n{8}.pprof"
	# (the storm once the first period is written: a history with
	# samples in it; right after the attach a quick machine had none to
	# dump and the run none to write)
	_first_period() { [ -n "$(ls "$TMP/s")" ]; }
	if wait_attached "$pid" && wait_until 10 _first_period; then
		for i in $(seq 1 40); do
			kill -USR1 "$PROF_PID" 2>/dev/null
		done
		check "storm: the profiler takes 40 SIGUSR1 and goes on" alive "$PROF_PID"
		kill -INT "$PROF_PID"
		prof_wait 30
		DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/storm.err")" check "storm: profiler exits 0" "[ '$PROF_RC' = 0 ]"
		DETAIL="$(grep -E 'periods? and' "$TMP/storm.err"; ls "$TMP/s" | tr '\n' ' ')" \
			check "storm: dumps written or dropped, and counted" \
			"grep -qE '^cprof-attach: [0-9]+ periods? and [1-9][0-9]* dumps? of the history: [1-9][0-9]* files? written' '$TMP/storm.err'"
	fi
	check "storm: target alive" alive "$pid"
	check "storm: every thread untraced" untraced "$pid"
	check "storm: target keeps running" progresses "$pid"
	stop_target "$pid"
fi

# --- 5. a full disk --------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	skip "full disk" "needs root to mount a small tmpfs"
elif mkdir -p "$TMP/small" && mount -t tmpfs -o size=256k tmpfs "$TMP/small" 2>/dev/null; then
	MOUNTS+=("$TMP/small")
	if start_target wallclock; then
		pid=$TARGET_PID
		dd if=/dev/zero of="$TMP/small/filler" bs=4k 2>/dev/null
		prof_bg "$TMP/full" "$pid" --period 0.5s --duration 6 -o "$TMP/small/f-%n.pprof"
		wait_until 10 grep -q 'cannot write' "$TMP/full.err"
		nerr=$(grep -c 'cannot write' "$TMP/full.err")
		rm -f "$TMP/small/filler"
		prof_wait 30
		DETAIL="exit $PROF_RC: $(head -c 400 "$TMP/full.err")" check "full disk: profiler exits 0, sampling went on" "[ '$PROF_RC' = 0 ]"
		DETAIL="$(grep 'cannot write' "$TMP/full.err" | head -2)" \
			check "full disk: one error line per profile that did not fit" "[ '$nerr' -ge 1 ] && ! grep -v -e '^cprof-attach' -e '^\$' '$TMP/full.err' | grep -q ."
		written=$(ls "$TMP/small" | grep -c '^f-[0-9]*\.pprof$')
		DETAIL="$(ls "$TMP/small" | tr '\n' ' ')" check "full disk: the periods after the room came back are written" "[ '$written' -ge 2 ]"
		check "full disk: summary says what was not written" "grep -qE '^cprof-attach: [0-9]+ periods and 0 dumps of the history: [0-9]+ files? written, [1-9][0-9]* not written' '$TMP/full.err'"
		check "full disk: target alive" alive "$pid"
		check "full disk: every thread untraced" untraced "$pid"
		stop_target "$pid"
	fi
else
	skip "full disk" "cannot mount a tmpfs here"
fi

# --- 6. refused before anything attaches -----------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	expect_error "pattern: unknown %q" "unknown pattern .%q." "" "$pid" -- "$CPROF" "$pid" --period 1s -o "$TMP/x-%q.folded"
	expect_error "pattern: %n{0}" "%n\\{MAX\\} needs a whole number above 0" "" "$pid" -- "$CPROF" "$pid" --period 1s -o "$TMP/x-%n{0}.folded"
	expect_error "--period 0" "period must be a time of at least 0.1 s" "" "$pid" -- "$CPROF" "$pid" --period 0
	expect_error "--period to a stream" "o needs a file name" "" "$pid" -- "$CPROF" "$pid" --period 1s -o -
	expect_error "--history with --dump" "history is for sampling without end" "" "$pid" -- "$CPROF" "$pid" --history 1m --dump
	check "refused: target untraced" untraced "$pid"
	echo "$pid" >"$TMP/stale.pid"
	touch -d '-2 min' "$TMP/stale.pid"
	expect_error "--pid-file naming a process younger than the file" "started after the file was written" "" "$pid" -- \
		"$CPROF" --pid-file "$TMP/stale.pid" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--pid-file without --period" "needs --period" "" "$pid" -- \
		"$CPROF" --pid-file "$TMP/stale.pid" -o "$TMP/x.folded"
	# Files and processes --pid-file never takes (before: a FIFO blocked
	# open() with SIGTERM ignored; the others were traced).
	mkfifo "$TMP/fifo.pid"
	expect_error "--pid-file a FIFO" "not a regular file" "" "$pid" -- \
		"$CPROF" --pid-file "$TMP/fifo.pid" --period 1s -o "$TMP/x-%n.folded"
	echo 1 >"$TMP/init.pid"
	expect_error "--pid-file naming PID 1" "PID 1" "" "$pid" -- \
		"$CPROF" --pid-file "$TMP/init.pid" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--pid-file naming the profiler itself" "names the profiler itself" "" "$pid" -- \
		sh -c 'echo $$ >"$1"; exec "$2" --pid-file "$1" --period 1s -o "$3"' sh "$TMP/self.pid" "$CPROF" "$TMP/x-%n.folded"
	if id nobody >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		echo "$pid" >"$TMP/other.pid"
		chown nobody "$TMP/other.pid"
		expect_error "--pid-file of another user naming root's process" "not trusted" "" "$pid" -- \
			"$CPROF" --pid-file "$TMP/other.pid" --period 1s -o "$TMP/x-%n.folded"
	fi
	stop_target "$pid"
fi

# A followed service SIGKILLed whose parent does not reap it at once: the
# zombie is not attached to (before: "PID N is a zombie", exit 1), the next
# process the file names is followed.
PY=$(command -v python3 || true)
if [ -n "$PY" ] && start_target wallclock; then
	next=$TARGET_PID
	"$PY" -c 'import os, signal, sys, time
pid = os.fork()
if pid == 0:
    signal.pause()
    os._exit(0)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)         # never reaps' "$TMP/svc.pid" &
	PIDS+=("$!")
	if wait_until 10 test -s "$TMP/svc.pid"; then
		svc=$(cat "$TMP/svc.pid")
		prof_bg "$TMP/zomb" --pid-file "$TMP/svc.pid" --period 0.5s --duration 10 -o "$TMP/z-%n.folded"
		_attached() { grep -q "TracerPid:[[:space:]]*[1-9]" "/proc/$svc/status" 2>/dev/null; }
		wait_until 10 _attached
		kill -KILL "$svc"
		wait_until 5 test "$(awk '{ print $3 }' "/proc/$svc/stat" 2>/dev/null)" = Z
		echo "$next" >"$TMP/svc.pid.tmp" && mv "$TMP/svc.pid.tmp" "$TMP/svc.pid"
		prof_wait 20
		DETAIL="exit $PROF_RC: $(tail -n 3 "$TMP/zomb.err" | tr '\n' '|')" \
			check "--pid-file: a zombie not taken, the next process followed" \
			"[ '$PROF_RC' = 0 ] && grep -q 'processes followed through' '$TMP/zomb.err'"
		zf=$(ls "$TMP" | grep -c '^z-[0-9]*\.folded$')
		zs=$(sed -nE 's/^cprof-attach: [0-9]+ periods? and [0-9]+ dumps? of the history: ([0-9]+) files? written.*/\1/p' "$TMP/zomb.err")
		DETAIL="$zf files, the summary says ${zs:-nothing}" \
			check "--pid-file: the summary counts the files of every process followed, not the last one's" \
			"[ '$zf' -ge 3 ] && [ '$zs' = '$zf' ]"
	fi
	stop_target "$next"
fi

# --- 7. a service that restarts -------------------------------------------------
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	skip "--pid-file across a restart" "redis-server is not installed (Debian package redis-server: make deps installs it)"
else
	port=$((20000 + RANDOM % 20000))
	pidf=$TMP/redis.pid
	mkdir -p "$TMP/rd"
	start_redis() {
		redis-server --port "$port" --bind 127.0.0.1 --pidfile "$pidf" --daemonize no \
			--save '' --appendonly no --dir "$TMP/rd" >>"$TMP/redis.log" 2>&1 &
		PIDS+=("$!")
		wait_until 10 redis_up
	}
	redis_up() { redis-cli -p "$port" ping >/dev/null 2>&1; }
	if start_redis && wait_until 5 file_ready "$pidf"; then
		first=$(cat "$pidf")
		prof_bg "$TMP/restart" --pid-file "$pidf" --period 0.5s --processes -o "$TMP/rd/r-%n.folded"
		if wait_attached "$first"; then
			wait_until 5 file_ready "$TMP/rd/r-1.folded"
			redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
			wait_until 10 gone "$first"
			wait_until 10 grep -q 'waiting for' "$TMP/restart.err"
			start_redis && wait_until 5 file_ready "$pidf"
			second=$(cat "$pidf")
			wait_until 10 grep -q 'attached to PID' "$TMP/restart.err"
			check "pid-file: attached to the new process" "grep -q 'attached to PID $second, from' '$TMP/restart.err'"
			n0=$(ls "$TMP/rd" | grep -c '^r-[0-9]*\.folded$')
			wait_until 10 file_ready "$TMP/rd/r-$((n0 + 1)).folded"
			check "pid-file: the new process is traced" all_traced "$second"
			redis-cli -p "$port" set k v >/dev/null 2>&1
			check "pid-file: the new redis answers while profiled" "[ \"\$(redis-cli -p '$port' get k)\" = v ]"
			kill -INT "$PROF_PID"
			prof_wait 20
			DETAIL="exit $PROF_RC: $(head -c 400 "$TMP/restart.err")" check "pid-file: profiler exits 0" "[ '$PROF_RC' = 0 ]"
			last=$(ls "$TMP/rd" | sed -n 's/^r-\([0-9]*\)\.folded$/\1/p' | sort -n | tail -1)
			n=$(ls "$TMP/rd" | grep -c '^r-[0-9]*\.folded$')
			DETAIL="$(ls "$TMP/rd" | tr '\n' ' ')" check "pid-file: the files go on, numbered on, from the new process" \
				"[ '$n' -ge 3 ] && [ \$((last + 1)) = '$n' ]"
			# (redis-server sets its title: "redis-server 127.0.0.1:PORT (PID)")
			check "pid-file: the first file is the first process's, the last the new one's" \
				"grep -q '^redis-server [^;]*($first);' '$TMP/rd/r-0.folded' && grep -q '^redis-server [^;]*($second);' '$TMP/rd/r-$last.folded'"
			check "pid-file: summary says two processes were followed" "grep -q '2 processes followed through' '$TMP/restart.err'"
			ws=$(sed -nE 's/^cprof-attach: [0-9]+ periods? and [0-9]+ dumps? of the history: ([0-9]+) files? written.*/\1/p' "$TMP/restart.err")
			DETAIL="$n files, the summary says ${ws:-nothing}" \
				check "pid-file: the summary counts both processes' files" "[ '$ws' = '$n' ]"
			check "pid-file: the new process is untraced after" untraced "$second"
		fi
	fi
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
fi

done_testing
