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
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=$(command -v python3)
if [ -z "$PY" ]; then
	say "pychurn skipped: no python3"
	exit 0
fi
PSECS=$((SECS / 5 > 120 ? SECS / 5 : 120))
"$PY" tests/targets/pychurn.py "$TMP/pychurn" &
pypid=$!
PIDS+=("$pypid")
wait_until 10 file_ready "$TMP/pychurn" || { say "pychurn did not start"; exit 0; }
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
