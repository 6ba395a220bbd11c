#!/usr/bin/env bash
# Served and pushed (issue 23), measured, never asserted:
#     bash bench/serve.sh [SECONDS]      (make bench: 150; QUICK=1: 45)
#   1. a scrape against files: bench/build/work (1 thread, a fixed amount of
#      work lasting about SECONDS alone) run three times, one after the
#      other: alone; under `--period 15s` to files; under `--listen` with
#      a scraper asking /debug/fgprof?seconds=10 every 15 s (as Parca and
#      Alloy do).  For each: the work's wall and CPU time, and the
#      profiler's CPU share of a core (its user + system time, from
#      /usr/bin/time, over the work's wall time).  The target's throughput is
#      alone / profiled wall time.
#   2. a store that is down: --push to a port where nothing listens,
#      --period 0.25s for 100 s (400 periods: past the queue's 360) on a
#      pool of 100 idle + 1 computing threads: the queue's bytes and count
#      (/metrics), the profiler's RSS at the start and the end.
# Prints one line per figure, "serve: KEY VALUE".
set -u
cd "$(dirname "$0")/.."
SECS=${1:-150}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-serve.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
. tests/lib-core.sh

say() { echo "serve: $*"; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

make -s cprof-attach >/dev/null 2>&1
mkdir -p bench/build
[ -x bench/build/work ] || ${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o bench/build/work bench/work.c
[ -x bench/build/pool ] || ${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o bench/build/pool bench/pool.c
command -v curl >/dev/null || { echo "serve: curl is needed" >&2; exit 1; }

rate=$(bench/build/work --calibrate 1) || { echo "serve: calibration failed" >&2; exit 1; }
units=$(awk -v r="$rate" -v s="$SECS" 'BEGIN { printf "%d", r * s }')

# run MODE: one timed run of the work; prints "wall cpu profiler_cpu_s".
run() {
	local mode=$1 ready=$TMP/$1.ready prof= scraper=
	rm -f "$ready"
	bench/build/work 1 "$units" "$ready" >"$TMP/$mode.work" 2>&1 &
	local w=$!
	PIDS+=("$w")
	wait_until 30 file_ready "$ready" || { echo "serve: work did not start" >&2; exit 1; }
	# The profiler's CPU time: /usr/bin/time's, from attach to its end
	# (the work's exit ends it), start and end included.
	case $mode in
	files)
		mkdir -p "$TMP/f"
		/usr/bin/time -o "$TMP/$mode.time" -f '%U %S' \
			"$CPROF" "$w" --period 15s -q -o "$TMP/f/f-%n.pprof" 2>"$TMP/$mode.err" &
		prof=$!
		;;
	served)
		/usr/bin/time -o "$TMP/$mode.time" -f '%U %S' \
			"$CPROF" "$w" --listen 127.0.0.1:0 -q 2>"$TMP/$mode.err" &
		prof=$!
		wait_until 10 grep -q '^cprof-attach: serving' "$TMP/$mode.err"
		local url
		url=$(sed -nE 's,^cprof-attach: serving (http://[^ ]+)/debug/pprof/$,\1,p' "$TMP/$mode.err")
		( while :; do
			curl -s -o /dev/null "$url/debug/fgprof?seconds=10" &
			sleep 15
		  done ) &
		scraper=$!
		;;
	esac
	if [ -n "$prof" ]; then
		PIDS+=("$prof")
		wait_until 10 all_traced "$w"
	fi
	kill -USR1 "$w"
	wait "$w"
	local cpu=0
	if [ -n "$prof" ]; then
		[ -n "$scraper" ] && kill "$scraper" 2>/dev/null
		wait "$prof" 2>/dev/null       # it ends with its target
		cpu=$(awk '{ print $1 + $2 }' "$TMP/$mode.time" 2>/dev/null)
	fi
	awk -v c="${cpu:-0}" '/^wall_s/ { printf "%s %s %.3f\n", $2, $NF, c }' "$TMP/$mode.work"
}

read -r aw ac _ < <(run alone)
read -r fw fc fp < <(run files)
read -r sw sc sp < <(run served)
say "work_seconds_alone $aw (cpu $ac)"
say "files.wall_ratio $(awk -v a="$aw" -v b="$fw" 'BEGIN { printf "%.4f", b / a }') (cpu $fc s)"
say "served.wall_ratio $(awk -v a="$aw" -v b="$sw" 'BEGIN { printf "%.4f", b / a }') (cpu $sc s)"
say "files.throughput_pct $(awk -v a="$aw" -v b="$fw" 'BEGIN { printf "%.2f", 100 * a / b }')"
say "served.throughput_pct $(awk -v a="$aw" -v b="$sw" 'BEGIN { printf "%.2f", 100 * a / b }')"
say "files.profiler_cpu_pct $(awk -v c="$fp" -v w="$fw" 'BEGIN { printf "%.2f", 100 * c / w }')"
say "served.profiler_cpu_pct $(awk -v c="$sp" -v w="$sw" 'BEGIN { printf "%.2f", 100 * c / w }')"
say "served.scrapes $(grep -oE 'served [0-9]+' "$TMP/served.err" | awk '{ print $2 }')"

# --- 2. a store that is down -------------------------------------------------------------
PUSH_SECS=${PUSH_SECS:-100}
[ "$PUSH_SECS" -gt 10 ] || exit 0
bench/build/pool 100 1 "$TMP/pool" >/dev/null 2>&1 &
PIDS+=("$!")
wait_until 30 file_ready "$TMP/pool" || { echo "serve: pool did not start" >&2; exit 1; }
target=$(cat "$TMP/pool")
"$CPROF" "$target" --push http://127.0.0.1:1 --period 0.25s --listen 127.0.0.1:0 -q \
	--duration "$PUSH_SECS" 2>"$TMP/down.err" &
prof=$!
PIDS+=("$prof")
wait_until 10 grep -q '^cprof-attach: serving' "$TMP/down.err"
url=$(sed -nE 's,^cprof-attach: serving (http://[^ ]+)/debug/pprof/$,\1,p' "$TMP/down.err")
sleep 5
say "down.rss_kib@5s $(rss_kib "$prof")"
sleep $((PUSH_SECS - 10))
curl -s "$url/metrics" >"$TMP/down.metrics"
say "down.rss_kib@$((PUSH_SECS - 5))s $(rss_kib "$prof")"
for m in 'cprof_push_queue_profiles' 'cprof_push_queue_bytes' 'cprof_pushes_total{result="dropped"}' \
	'cprof_pushes_total{result="failed"}' 'cprof_periods_total'; do
	say "down.$m $(awk -v m="$m" '$1 == m { print $2 }' "$TMP/down.metrics")"
done
wait "$prof"
grep -E '^cprof-attach: pushed' "$TMP/down.err" | sed 's/^/serve: down.summary /'
