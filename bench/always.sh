#!/usr/bin/env bash
# Always on (issue 22), measured, never asserted:
#     bash bench/always.sh [SECONDS]      (make bench: 600; make soak: 3600)
#   1. churn: tests/bin/churn, 200 threads created and ended a second and a
#      library dlopen()ed and dlclose()d 10 times a second (two of one size,
#      in turn at one address: a new address-space generation at each scan
#      of the maps), under --period 10s for SECONDS: the profiler's RSS and
#      open descriptors at 1 minute, 5 minutes (or half the run, if shorter)
#      and the end, and its CPU share of a core;
#   2. an idle pool: bench/build/pool, 100 idle threads + 1 computing, and
#      1,000 idle + 1, each 60 s under --period 10s: the profiler's CPU share
#      of a core over the whole run (start and end included);
#   3. the periods add up: the samples of every period file of run 1 against
#      the summary's;
#   4. mariadbd under sysbench oltp_read_only (4 client threads), --period
#      10s for 60 s at 19 Hz (bench/mariadb.sh): the profiler's CPU (user +
#      system, /usr/bin/time) per 1,000 thread-samples over the whole run,
#      naming and writing the six files included, and sysbench's
#      transactions a second, alone (60 s before) and profiled (skipped,
#      saying so, without mariadbd and sysbench).
#   5. Python threads that come and go, each named
#      (tests/targets/pychurn.py, about a thousand a second, Debian's
#      python3.11 or any python3), under --period 10s for SECONDS / 5 (at
#      least 2 minutes): the profiler's RSS and descriptors at 1 minute and
#      the end, the threads seen (the Python view's memory: thread states,
#      names, code objects);
#   6. the flight recorder: bench/build/pool 100 + 1 computing (its
#      samples a new stack almost every tick), --history of SECONDS (at
#      most 10 minutes) at 99 Hz: the profiler's RSS and the history's own
#      bytes (/metrics) at 1 minute, with the window half full and 30 s
#      after it is full (the oldest second dropped at each second), then
#      SIGUSR1: the dump's samples against the ticks x threads of the
#      window.
#   7. as the systemd unit runs it with --listen (issue 43 item 9): a
#      churning service (tests/bin/churn: 100 threads created and ended a
#      second, a library replaced at its address twice a second) followed
#      through its PID file with `--period 1m --history 10m --listen` at
#      the unit's rate (19 Hz, the default), a ring of 1,440 files; a
#      scraper asks /metrics every 15 s (as Prometheus would) and, every
#      5 minutes, fetches the last 10 minutes (`?last=600`) and the next
#      10 s (`profile?seconds=10`), as an SRE would: the profiler's RSS
#      (and /metrics' process_resident_memory_bytes, its watchdog's
#      included) and open descriptors at 1 minute, 5 minutes and the end,
#      a trace every minute, its CPU share of a core, the achieved rate.
#      At the end a SIGUSR1 dumps the history (its line: the pause, the
#      time to write).
#      `bash bench/always.sh SECONDS unit` runs this step alone.
# Prints one line per figure, "always: KEY VALUE".
set -u
cd "$(dirname "$0")/.."
SECS=${1:-600}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-always.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
. tests/lib-core.sh

say() { echo "always: $*"; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
cpu_ticks_of() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

make -s cprof-attach tests/bin/churn tests/bin/libswapA.so tests/bin/libswapB.so >/dev/null 2>&1
mkdir -p bench/build
[ -x bench/build/pool ] || ${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o bench/build/pool bench/pool.c
[ -x tests/bin/churn ] || { echo "always: no tests/bin/churn" >&2; exit 1; }

# --- 7. as the unit runs it, with --listen ---------------------------------------------
unitlike() {
	local dir=$TMP/unit t0 prof url now at ticks hz
	mkdir -p "$dir/out"
	tests/bin/churn "$dir/churn.ready" 100 1 200 2 "$PWD/tests/bin/libswapA.so" "$PWD/tests/bin/libswapB.so" \
		>/dev/null 2>"$dir/target.err" &
	local churn=$!
	PIDS+=("$churn")
	wait_until 10 file_ready "$dir/churn.ready" || { say "unit: churn did not start"; return; }
	echo "$churn" >"$dir/app.pid"
	t0=$(date +%s)
	"$CPROF" --pid-file "$dir/app.pid" --period 1m --history 10m --listen 127.0.0.1:0 \
		-o "$dir/out/app-%n{1440}.pprof" -q 2>"$dir/err" &
	prof=$!
	PIDS+=("$prof")
	wait_until 20 grep -q '^cprof-attach: serving' "$dir/err" || { say "unit: not serving: $(head -c 300 "$dir/err")"; return; }
	url=$(sed -nE 's,^cprof-attach: serving (http://[^ ]+)/debug/pprof/$,\1,p' "$dir/err")
	# The scraper: /metrics every 15 s; every 5 minutes the last 10
	# minutes and the next 10 s (in the background: the scrape goes on).
	( n=0
	  while kill -0 "$prof" 2>/dev/null; do
		curl -s -m 10 -o "$dir/metrics" "$url/metrics" && echo ok >>"$dir/scrapes" || echo fail >>"$dir/scrapes"
		if [ $((n % 20)) -eq 19 ]; then
			curl -s -m 30 -o /dev/null -w '%{http_code} ' "$url/debug/pprof/profile?last=600" >>"$dir/fetches"
			curl -s -m 30 -o /dev/null -w '%{http_code} ' "$url/debug/pprof/profile?seconds=10" >>"$dir/fetches" &
		fi
		n=$((n + 1))
		sleep 15
	  done ) &
	local scraper=$!
	PIDS+=("$scraper")
	( while kill -0 "$prof" 2>/dev/null; do
		sleep 60
		echo "$(($(date +%s) - t0))s:$(rss_kib "$prof"):$(nfds "$prof")"
	done >"$dir/trace" ) &
	local tracer=$!
	PIDS+=("$tracer")
	local mid=$((SECS / 2 < 300 ? SECS / 2 : 300))
	for at in 60 "$mid" $((SECS - 5)); do
		now=$(($(date +%s) - t0))
		[ "$at" -gt "$now" ] && sleep $((at - now))
		curl -s -m 10 "$url/metrics" >"$dir/m"
		say "unit.rss_kib@${at}s $(rss_kib "$prof") (anonymous $(awk '/^RssAnon/ { print $2 }' "/proc/$prof/status"); /metrics, the watchdog's included: $(awk '/^process_resident_memory_bytes/ { printf "%d", $2 / 1024 }' "$dir/m") KiB; the history's counts $(awk '/^cprof_history_bytes/ { printf "%d", $2 / 1024 }' "$dir/m") KiB)"
		say "unit.fds@${at}s $(nfds "$prof")"
		ticks=$(cpu_ticks_of "$prof")
	done
	# A dump of the history (10 minutes once the run is that long): how
	# long it paused sampling, how long its naming took.
	kill -USR1 "$prof"
	wait_until 60 grep -q '^cprof-attach: SIGUSR1: wrote' "$dir/err"
	say "unit.dump $(grep -m1 '^cprof-attach: SIGUSR1: wrote' "$dir/err" | sed 's/^cprof-attach: SIGUSR1: //')"
	hz=$(getconf CLK_TCK)
	say "unit.cpu_share_pct $(awk -v t="$ticks" -v hz="$hz" -v s="$((SECS - 5))" 'BEGIN { printf "%.2f", 100 * t / hz / s }') (the main process; /metrics' process_cpu_seconds_total $(awk '/^process_cpu_seconds_total/ { print $2 }' "$dir/m") s)"
	say "unit.rate_ratio $(awk '/^cprof_rate_ratio/ { printf "%.4f", $2 }' "$dir/m") of 19 Hz; $(awk '/^cprof_threads / { print $2 }' "$dir/m") threads now, $(awk '/^cprof_period_files_total\{result="written"\}/ { print $2 }' "$dir/m") period files written"
	say "unit.trace_s:rss_kib:fds $(grep -E ':[0-9]+:' "$dir/trace" | tr '\n' ' ')"
	say "unit.scrapes $(grep -c ok "$dir/scrapes" 2>/dev/null) answered, $(grep -c fail "$dir/scrapes" 2>/dev/null) failed; fetches (HTTP codes) $(cat "$dir/fetches" 2>/dev/null)"
	kill -TERM "$prof"
	wait "$prof"
	grep -E '^cprof-attach: ([0-9.]+ of 19 Hz|[0-9]+ periods)' "$dir/err" | sed 's/^/always: unit.summary /'
	kill "$scraper" "$tracer" 2>/dev/null
	kill -KILL "$churn" 2>/dev/null
	wait "$scraper" "$tracer" "$churn" 2>/dev/null
}
if [ "${2:-}" = unit ]; then
	unitlike
	exit 0
fi

# --- 1. churn ------------------------------------------------------------------
tests/bin/churn "$TMP/churn" 200 1 200 10 "$PWD/tests/bin/libswapA.so" "$PWD/tests/bin/libswapB.so" \
	>/dev/null 2>"$TMP/churn.target.err" &
churn_pid=$!
PIDS+=("$churn_pid")
wait_until 10 file_ready "$TMP/churn" || { echo "always: churn did not start" >&2; exit 1; }
target=$(cat "$TMP/churn")
mkdir -p "$TMP/c"
t0=$(date +%s)
"$CPROF" "$target" --period 10s --duration "$SECS" -q -o "$TMP/c/c-%n.folded" 2>"$TMP/churn.err" &
prof=$!
PIDS+=("$prof")
# RSS and descriptors every 30 s, for the trend (printed at the end).
( while kill -0 "$prof" 2>/dev/null; do
	sleep 30
	echo "$(($(date +%s) - t0))s:$(rss_kib "$prof"):$(nfds "$prof")"
done >"$TMP/trace" ) &
mid=$((SECS / 2 < 300 ? SECS / 2 : 300))
for at in 60 "$mid" $((SECS - 5)); do
	now=$(($(date +%s) - t0))
	[ "$at" -gt "$now" ] && sleep $((at - now))
	say "churn.rss_kib@${at}s $(rss_kib "$prof")"
	say "churn.fds@${at}s $(nfds "$prof")"
	ticks=$(cpu_ticks_of "$prof")
done
hz=$(getconf CLK_TCK)
say "churn.cpu_share_pct $(awk -v t="$ticks" -v hz="$hz" -v s="$((SECS - 5))" 'BEGIN { printf "%.2f", 100 * t / hz / s }')"
wait "$prof"
if ! kill -USR1 "$target" 2>/dev/null; then     # churn rewrites its .count and .loads
	wait "$churn_pid"
	say "churn.target_exited_early status $? $(head -c 200 "$TMP/churn.target.err" | tr '\n' ' ')"
fi
say "churn.trace_s:rss_kib:fds $(grep -E ':[0-9]+:' "$TMP/trace" | tr '\n' ' ')"
sum=0
for f in "$TMP"/c/c-*.folded; do
	sum=$((sum + $(awk '{ n += $NF } END { print n + 0 }' "$f")))
done
say "churn.libraries_loaded $(cat "$TMP/churn.loads" 2>/dev/null || echo ?)"
total=$(sed -nE 's/^cprof-attach: ([0-9]+) samples?,.*/\1/p' "$TMP/churn.err" | tail -1)
say "churn.period_files $(ls "$TMP/c" | wc -l)"
say "churn.samples_in_files $sum"
say "churn.samples_in_summary ${total:-?}"
grep -E '^cprof-attach: [0-9]+ periods' "$TMP/churn.err" | sed 's/^/always: churn.summary /'
kill -KILL "$target" 2>/dev/null

# --- 2. idle pools under the always-on defaults ---------------------------------------
if [ -x bench/build/pool ]; then
	for n in 100 1000; do
		bench/build/pool "$n" 1 "$TMP/pool$n" >/dev/null 2>&1 &
		PIDS+=("$!")
		wait_until 30 file_ready "$TMP/pool$n" || continue
		target=$(cat "$TMP/pool$n")
		/usr/bin/time -f '%U %S %e' -o "$TMP/pool$n.time" \
			"$CPROF" "$target" --period 10s --duration 60 -q -o "$TMP/pool$n-%n.pprof" 2>/dev/null
		say "pool$n.cpu_share_pct $(awk '{ printf "%.2f", 100 * ($1 + $2) / $3 }' "$TMP/pool$n.time")"
		kill -KILL "$target" 2>/dev/null
	done
fi

# --- 4. mariadbd under sysbench, --period 10s for 60 s ------------------------------
# (bench/mariadb.sh: sysbench 60 s alone, then 60 s profiled at the
# always-on rate, 19 Hz)
CPROF="$CPROF" bash bench/mariadb.sh 60 alone p19 | sed 's/^mariadb: /always: mariadb./'

# --- 5. Python threads that come and go ---------------------------------------------
pychurn() {
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
if [ -z "$PY" ]; then
	say "pychurn skipped: no python3"
	return
fi
PSECS=$((SECS / 5 > 120 ? SECS / 5 : 120))
"$PY" tests/targets/pychurn.py "$TMP/pychurn" &
pypid=$!
PIDS+=("$pypid")
wait_until 10 file_ready "$TMP/pychurn" || { say "pychurn did not start"; return; }
t0=$(date +%s)
"$CPROF" "$pypid" --period 10s --duration "$PSECS" -q -o "$TMP/py-%n{3}.pprof" 2>"$TMP/pychurn.err" &
prof=$!
PIDS+=("$prof")
for at in 60 $((PSECS - 5)); do
	now=$(($(date +%s) - t0))
	[ "$at" -gt "$now" ] && sleep $((at - now))
	say "pychurn.rss_kib@${at}s $(rss_kib "$prof") (anonymous $(awk '/^RssAnon/ { print $2 }' "/proc/$prof/status"))"
	say "pychurn.fds@${at}s $(nfds "$prof")"
done
wait "$prof"
say "pychurn.threads $PY: $(sed -nE 's/^cprof-attach: [0-9]+ samples?, ([0-9]+ Python threads? on [0-9]+ threads?).*/\1/p' \
	"$TMP/pychurn.err")"
kill -KILL "$pypid" 2>/dev/null
}
pychurn

# --- 6. the flight recorder ------------------------------------------------------
HSECS=$((SECS < 600 ? SECS : 600))
if [ -x bench/build/pool ]; then
	bench/build/pool 100 1 "$TMP/hpool" >/dev/null 2>&1 &
	PIDS+=("$!")
	if wait_until 30 file_ready "$TMP/hpool"; then
		target=$(cat "$TMP/hpool")
		t0=$(date +%s)
		"$CPROF" "$target" -F 99 --history "${HSECS}s" -q -o "$TMP/h-%n.folded" \
			--listen "unix:$TMP/h.sock" 2>"$TMP/history.err" &
		prof=$!
		PIDS+=("$prof")
		for at in 60 $((HSECS / 2)) $((HSECS + 30)); do
			now=$(($(date +%s) - t0))
			[ "$at" -gt "$now" ] && sleep $((at - now))
			say "history${HSECS}s.rss_kib@${at}s $(rss_kib "$prof") (anonymous $(awk '/^RssAnon/ { print $2 }' "/proc/$prof/status"); the history's counts $(curl -s --unix-socket "$TMP/h.sock" http://localhost/metrics | awk '/^cprof_history_bytes/ { printf "%d", $2 / 1024 }') KiB)"
		done
		kill -USR1 "$prof"
		wait_until 30 file_ready "$TMP/h-0.folded"
		kill -INT "$prof"
		wait "$prof"
		n=$(awk '{ n += $NF } END { print n + 0 }' "$TMP/h-0.folded" 2>/dev/null)
		say "history${HSECS}s.dump_samples $n of $((HSECS * 99 * 102)) (the window's ticks x 102 threads at 99 Hz)"
		say "history${HSECS}s.dump_stacks $(wc -l <"$TMP/h-0.folded")"
		grep -E '^cprof-attach: [0-9.]+ of 99 Hz' "$TMP/history.err" | sed 's/^/always: history.summary /'
		kill -KILL "$target" 2>/dev/null
	fi
fi

unitlike
