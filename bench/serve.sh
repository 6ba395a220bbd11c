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
#   3. clients that loop (issue 40 item 7): bench/build/pool, 1,000 idle
#      (LOAD_POOL) + 1 computing threads, `-F 99 --history 10m --listen`,
#      the history filled for LOAD_WARM seconds (120), then 8 curl clients (one
#      address's limit) each asking, one request after another, for
#      /debug/pprof/profile?last=600 for LOAD_SECS (60), then for
#      ?seconds=1 as long: the ticks made over that time (/metrics'
#      cprof_ticks_total: the achieved rate), the missed ticks, the
#      answers a second by code, and the profiler's CPU (all of it, and
#      the server's own: cprof_http_cpu_seconds_total where the build has
#      it).  `bash bench/serve.sh SECONDS load` runs this part alone.
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

# --- 3. clients that loop ------------------------------------------------------------
# metric FILE NAME: a value of a /metrics text.
metric() { awk -v m="$2" '$1 == m { print $2; exit }' "$1"; }
# scrape FILE: /metrics into FILE, from another loopback address than the
# clients' (theirs holds its 8 connections), until it answers.
_scraped() { curl -sf -m 5 --interface 127.0.0.2 -o "$1" "$url/metrics" && [ -s "$1" ]; }
scrape() { wait_until 20 _scraped "$1"; }
load() {
	local warm=${LOAD_WARM:-120} secs=${LOAD_SECS:-60} dir=$TMP/load target prof url q i
	mkdir -p "$dir"
	bench/build/pool "${LOAD_POOL:-1000}" 1 "$dir/pool" >/dev/null 2>&1 &
	PIDS+=("$!")
	wait_until 30 file_ready "$dir/pool" || { echo "serve: pool did not start" >&2; return; }
	target=$(cat "$dir/pool")
	"$CPROF" "$target" -F 99 --history 10m --listen 127.0.0.1:0 -q 2>"$dir/err" &
	prof=$!
	PIDS+=("$prof")
	wait_until 10 grep -q '^cprof-attach: serving' "$dir/err" || { echo "serve: not serving" >&2; return; }
	url=$(sed -nE 's,^cprof-attach: serving (http://[^ ]+)/debug/pprof/$,\1,p' "$dir/err")
	sleep "$warm"
	for q in 'last=600' 'seconds=1'; do
		local loops=() t0 t1
		scrape "$dir/m0"
		t0=$(date +%s.%N)
		for i in 1 2 3 4 5 6 7 8; do
			( end=$(($(date +%s) + secs))
			  while [ "$(date +%s)" -lt "$end" ]; do
				curl -s -m 30 -o /dev/null -w '%{http_code}\n' "$url/debug/pprof/profile?$q"
			  done >"$dir/codes.$i" ) &
			loops+=("$!")
		done
		wait "${loops[@]}"
		t1=$(date +%s.%N)
		scrape "$dir/m1"
		local el ticks missed cpu http
		el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		ticks=$(( $(metric "$dir/m1" cprof_ticks_total) - $(metric "$dir/m0" cprof_ticks_total) ))
		missed=$(( $(metric "$dir/m1" cprof_missed_ticks_total) - $(metric "$dir/m0" cprof_missed_ticks_total) ))
		cpu=$(awk -v a="$(metric "$dir/m0" process_cpu_seconds_total)" -v b="$(metric "$dir/m1" process_cpu_seconds_total)" \
			-v e="$el" 'BEGIN { printf "%.1f", 100 * (b - a) / e }')
		http=$(awk -v a="$(metric "$dir/m0" cprof_http_cpu_seconds_total)" -v b="$(metric "$dir/m1" cprof_http_cpu_seconds_total)" \
			-v e="$el" 'BEGIN { if (b == "") print "?"; else printf "%.1f", 100 * (b - a) / e }')
		say "load.$q.hz $(awk -v t="$ticks" -v e="$el" 'BEGIN { printf "%.1f", t / e }') of 99 ($ticks ticks in $el s, $missed missed)"
		say "load.$q.answers_per_s $(cat "$dir"/codes.* | sort | uniq -c | awk -v e="$el" '{ printf "%s%s: %.2f", n++ ? ", " : "", $2, $1 / e }')"
		say "load.$q.profiler_cpu_pct $cpu of a core (the server's threads: $http)"
		grep -E '^cprof_http_(throttled|cpu|sampling)' "$dir/m1" | sed "s/^/serve: load.$q.metrics /"
	done
	kill -INT "$prof"
	wait "$prof"
	grep -E '^cprof-attach: [0-9.]+ of 99 Hz' "$dir/err" | sed 's/^/serve: load.summary /'
	kill -KILL "$target" 2>/dev/null
}
if [ "${2:-}" = load ]; then
	load
	exit 0
fi

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
if [ "$PUSH_SECS" -gt 10 ]; then
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
fi

load
