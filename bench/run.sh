#!/usr/bin/env bash
# bench/run.sh: what cprof-attach costs the program it profiles, and itself.
# Run by `make bench` (after building ./cprof-attach).  Prints two tables:
# every measurement, then issue 14's targets (measured, goal, met or not),
# then the machine, the commit and the load average at the start and end.
#
#   make bench                     # REPS=5: 18 minutes on the shared 2-core
#                                  # machine at load 10-19 (less when quiet)
#   QUICK=1 make bench             # under 3 minutes: fewer, shorter runs
#                                  # (2m22s at load 14-21)
#   REPS=9 make bench              # more repetitions
#   LONG=1 make bench              # also a 10-minute steady run (RSS series)
#   KEEP=1 make bench              # keep the scratch directory (raw logs)
#   BASELINE=/other/cprof-attach make bench   # the same runs with another
#                                  # build too (e.g. an older commit's), side
#                                  # by side in each repetition
#   SERVERS=0 make bench           # without redis-server and mariadbd
#
# Issue 14's runs come after: idle pools of POOL_SIZES threads (bench/pool.c,
# one more thread computing), where the profiler's share of a core is
# measured from its threads' schedstat over two POOL_WINDOW s windows
# inside the run (attaching and writing left out): from 0.5 s, while idle
# threads' checks are still spacing out, and from POOL_STEADY_AT s, once
# they are checked every 32 ticks; pool size 0 is the computing thread
# alone, what the idle ones add to; 2 computing threads per core (achieved
# rate); redis-server under redis-benchmark (throughput profiled / alone,
# for us and for perf record -F HZ --call-graph dwarf); mariadbd idle (share
# of a core) and under sysbench oltp_read_only (profiler CPU per 1000
# thread-samples).  The servers are installed when missing (apt-get, as
# root), run from the scratch directory bound to 127.0.0.1, and stopped.
#
# Method.  bench/work.c does a fixed amount of CPU work over T threads and
# times itself (CLOCK_MONOTONIC); it parks before the work and waits for
# SIGUSR1, so each profiler attaches first and the timed region is profiled
# from start to end (the profiler stops when the target exits).  The machine
# is small and shared, so absolute times drift: every repetition runs the
# workload alone and then under each tool, one right after the other (the
# order rotates from one repetition to the next), and a slowdown is the
# median over repetitions of (wall time under the tool / wall time alone, in
# the same repetition).  Every other figure is a median over repetitions.
# Beside each wall-time slowdown, the same ratio of the workload's own CPU
# time (all threads, over the timed region): on a loaded machine the wall
# time is mostly how the scheduler shares the cores, and a thread that
# ptrace stops and wakes 99 times a second is not treated like one that
# never sleeps; the CPU time leaves out the time stopped, so it is a lower
# bound, but it does not move with the load.
#
# bench/floor.c is the floor for the pause: a ptrace loop that only
# interrupts and resumes (no registers, no stack copy), measured between the
# same two points as cprof-attach --stats.  It runs twice: interrupting
# every thread (the floor as specified), and with --running-only, only the
# threads in state R, which are the ones cprof-attach stops (it samples
# blocked threads from /proc without a stop, and interrupting a blocked
# thread wakes it, which changes how long the running ones wait).
#
# Synchronization is always a bounded polling loop on something observable
# (a ready file, /proc/PID/task/*/status TracerPid, perf's control ack),
# with the tests' helpers (tests/lib-core.sh: wait_until, alive, gone,
# file_ready); the plain sleeps are measurement windows (the CPU-share
# windows, the LONG run's 10 s RSS period), never a synchronization.
set -euo pipefail
export LC_ALL=C

# ---- defaults (all can be overridden from the environment) ---------------
REPS=${REPS:-5}                 # repetitions; every figure is a median over them
QUICK=${QUICK:-0}               # 1: a version under 3 minutes
LONG=${LONG:-0}                 # 1: add the steady run below
WORK_SECS=${WORK_SECS:-3.5}     # target wall time of one workload run, alone
THREADS=${THREADS-"1 8 64"}    # workload thread counts (slowdown, pause, cost)
HZ=${HZ:-99}                    # the sampling rate
HZ_HIGH=${HZ_HIGH:-999}         # the high rate, on the 1-thread workload
FLOOR_THREADS=${FLOOR_THREADS-"1 8 64"}  # floor runs (pause floor, its slowdown)
PEER_THREADS=${PEER_THREADS-"1 8"}       # perf and eu-stack runs
MARG_THREADS=${MARG_THREADS:-8} # workload for the marginal-cost runs
MARG_SHORT=${MARG_SHORT:-2}     # marginal cost: short run (s) ...
MARG_LONG=${MARG_LONG:-8}       # ... and long run (s)
RATE_SECS=${RATE_SECS:-3}       # achieved-rate runs (s)
RATE_RUNS=${RATE_RUNS-"64:99 1:999"}  # THREADS:HZ pairs for the achieved rate
LONG_SECS=${LONG_SECS:-600}     # LONG=1: steady run length (s) ...
LONG_EVERY=${LONG_EVERY:-10}    # ... RSS sampled every LONG_EVERY s
LONG_THREADS=${LONG_THREADS:-8}
BASELINE=${BASELINE:-}          # another cprof-attach, measured beside ours
NEW_REPS=${NEW_REPS:-}          # repetitions of issue 14's runs (default REPS)
EXTRA_REPS=${EXTRA_REPS:-}      # repetitions with the marginal-cost and rate runs (default REPS)
POOL_SIZES=${POOL_SIZES-"0 100 1000"}  # idle pool sizes (0: the busy thread alone, for reference)
POOL_SECS=${POOL_SECS:-12}      # one idle-pool run (s) ...
POOL_WINDOW=${POOL_WINDOW:-3}   # ... the windows its CPU share is taken over: from 0.5 s ...
POOL_STEADY_AT=${POOL_STEADY_AT:-8}  # ... and from this second on (0: not), when idle threads
                                # are checked every 32 ticks (reached after ~5 s at 99 Hz)
SERVERS=${SERVERS:-1}           # 0: no redis-server, no mariadbd
CLASSIC=${CLASSIC:-1}           # 0: issue 14's runs only (no slowdown table runs)
REDIS_REQUESTS=${REDIS_REQUESTS:-100000}  # per redis-benchmark test (SET, GET)
DB_SECS=${DB_SECS:-5}           # one sysbench run (s)
READY_TIMEOUT=${READY_TIMEOUT:-20}  # s, for any "is it ready" poll
RUN_TIMEOUT=${RUN_TIMEOUT:-180}     # s, for any single run to finish
CC=${CC:-cc}
# Targets from issue 3.
GOAL_SLOW_1=1.02 GOAL_SLOW_8=1.03 GOAL_SLOW_64=1.05
GOAL_PAUSE=1.5 GOAL_RATE=0.97 GOAL_CPU=50
# Targets from issue 14.
GOAL_POOL_1000=0.05 GOAL_POOL_100=0.01 GOAL_DB_IDLE=0.01 GOAL_DB_CPU1K=20 GOAL_REDIS=0.98

if [ "$QUICK" = 1 ]; then
	REPS=${QUICK_REPS:-2}
	WORK_SECS=${QUICK_WORK_SECS:-1.2}
	MARG_SHORT=1 MARG_LONG=3
	NEW_REPS=${NEW_REPS:-1}
	EXTRA_REPS=${EXTRA_REPS:-1}
	POOL_SECS=4 POOL_WINDOW=2 POOL_STEADY_AT=0 REDIS_REQUESTS=30000 DB_SECS=3 RATE_SECS=2
	PEER_THREADS=${QUICK_PEER_THREADS-1}
fi
NEW_REPS=${NEW_REPS:-$REPS}
EXTRA_REPS=${EXTRA_REPS:-$REPS}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/tests/lib-core.sh"     # wait_until, alive, gone, file_ready
BENCH=$ROOT/bench
BUILD=$BENCH/build
CPROF=${CPROF:-$ROOT/cprof-attach}
TMP=$(mktemp -d /tmp/cprof-bench.XXXXXX)
DATA=$TMP/data              # "KEY VALUE" lines, one per measurement
PIDS=()                     # everything we started, killed on exit
T_START=$SECONDS
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)   # the machine may be shared: said at the end

cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	if [ "${KEEP:-0}" = 1 ] || [ $rc != 0 ]; then
		echo "bench: raw logs kept in $TMP" >&2
	else
		rm -rf "$TMP"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'echo "bench: interrupted" >&2; exit 130' INT TERM

die() {
	echo "bench: FAILED: $*" >&2
	exit 1
}
log() { echo "bench: $*" >&2; }

# ---- small helpers -------------------------------------------------------
rec() { [ -z "$2" ] || echo "$1 $2" >>"$DATA"; }   # rec KEY VALUE (nothing if VALUE is empty)
vals() { awk -v k="$1" '$1 == k { print $2 }' "$DATA" 2>/dev/null; }
# median KEY: median of the values recorded under KEY ("" if none)
median() {
	vals "$1" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) exit; m = int((NR + 1) / 2)
		printf "%.6g\n", (NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2 }'
}
range() { vals "$1" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.3f-%.3f", lo, hi }'; }
calc() { awk "BEGIN { printf \"%s\", $* }" </dev/null; }   # calc 'sprintf(...)' or an expression
fmt() { awk -v v="$2" "BEGIN { if (v == \"\") print \"n/a\"; else printf \"$1\", v }" </dev/null; }

# wait_gone PID SECS WHAT: bounded wait for PID to end (then reap it with
# `wait` to get its status)
wait_gone() {
	wait_until "$2" gone "$1" || die "$3 (PID $1) still running after $2 s"
}

# reap PID: its exit status (PID must have ended)
reap() {
	local rc=0
	wait "$1" || rc=$?
	echo $rc
}

# start_work T UNITS TAG: starts the workload, waits until it is parked.
# Sets WPID; the workload's stdout goes to $TMP/TAG.work.
# wait_ready FILE PID WHAT LOG: polls until FILE has content; dies if PID
# exits first (showing LOG) or after READY_TIMEOUT s.
_ready_or_gone() { file_ready "$1" || gone "$2"; }
wait_ready() {
	local file=$1 pid=$2 what=$3 logf=$4
	wait_until "$READY_TIMEOUT" _ready_or_gone "$file" "$pid" || :
	file_ready "$file" && return 0
	alive "$pid" || die "$what exited before it was ready: $(cat "$logf")"
	die "$what not ready after $READY_TIMEOUT s"
}

start_work() {
	local t=$1 units=$2 tag=$3 ready=$TMP/$3.ready
	rm -f "$ready"
	"$BUILD/work" "$t" "$units" "$ready" >"$TMP/$tag.work" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	wait_ready "$ready" "$WPID" "workload $tag" "$TMP/$tag.work"
	[ "$(cat "$ready")" = "$WPID" ] || die "workload $tag: ready file says $(cat "$ready"), expected $WPID"
	# Every thread exists before the ready file is written.
	local n
	n=$(ls "/proc/$WPID/task" | wc -l)
	[ "$n" -eq $((t + 1)) ] || die "workload $tag has $n threads, expected $((t + 1))"
}

# go_work: the timed region starts.
go_work() { kill -USR1 "$WPID" || die "cannot start the workload (PID $WPID)"; }

# finish_work TAG: waits for the workload, checks it, prints its wall time.
finish_work() {
	local tag=$1 rc line
	wait_gone "$WPID" "$RUN_TIMEOUT" "workload $tag"
	rc=$(reap "$WPID")
	[ "$rc" = 0 ] || die "workload $tag exited $rc: $(cat "$TMP/$tag.work")"
	line=$(grep '^wall_s ' "$TMP/$tag.work") || die "workload $tag printed no wall time"
	set -- $line
	WALL=$2 WSTART=$4 WEND=$6 WCPU=$8
	[ -n "$WCPU" ] || die "workload $tag printed no CPU time: $line"
}

# wait_traced W P: every thread of W is traced, all by one thread of P
# (false at once if P exits, or after READY_TIMEOUT s).
_traced_by() {
	local tracers
	tracers=$(awk '/^TracerPid:/ { print $2 }' /proc/"$1"/task/*/status 2>/dev/null | sort -u)
	[ -n "$tracers" ] && [ "$(echo "$tracers" | wc -l)" = 1 ] && [ "$tracers" != 0 ] &&
		[ -d "/proc/$2/task/$tracers" ]
}
_traced_or_gone() { _traced_by "$1" "$2" || gone "$2"; }
wait_traced() {
	wait_until "$READY_TIMEOUT" _traced_or_gone "$1" "$2" || :
	alive "$2" && _traced_by "$1" "$2"
}

# ---- the runs --------------------------------------------------------------
# Each run_* takes T, UNITS, HZ, a tag, and records under KEY.* .

run_alone() { # T UNITS TAG: sets ALONE
	start_work "$1" "$2" "$3"
	go_work
	finish_work "$3"
	ALONE=$WALL ALONE_CPU=$WCPU
}

# run_ours T UNITS HZ TAG KEY
run_ours() {
	local t=$1 units=$2 hz=$3 tag=$4 key=$5 p rc err sum st
	start_work "$t" "$units" "$tag"
	"${OURS_BIN:-$CPROF}" "$WPID" --hz "$hz" -o "$TMP/$tag.folded" --stats 2>"$TMP/$tag.err" &
	p=$!
	PIDS+=("$p")
	wait_traced "$WPID" "$p" || die "cprof-attach ($tag) did not attach: $(cat "$TMP/$tag.err")"
	go_work
	finish_work "$tag"
	wait_gone "$p" "$RUN_TIMEOUT" "cprof-attach ($tag)"
	rc=$(reap "$p")
	err=$TMP/$tag.err
	[ "$rc" = 0 ] || die "cprof-attach ($tag) exited $rc: $(cat "$err")"
	parse_ours "$err" "$tag"
	[ "$S_REASON" = "target exited" ] || die "cprof-attach ($tag) stopped for another reason: $(cat "$err")"
	[ "${S_SAMPLES:-0}" -gt 0 ] || die "cprof-attach ($tag): no samples: $(cat "$err")"
	[ -s "$TMP/$tag.folded" ] || die "cprof-attach ($tag) wrote no profile"
	awk -v d="$S_DUR" -v w="$WALL" 'BEGIN { exit !(d + 0.005 >= w) }' ||
		die "cprof-attach ($tag) ran $S_DUR s, less than the timed region ($WALL s)"
	rec "$key.wall" "$WALL"
	rec "$key.tcpu" "$WCPU"
	rec "$key.samples" "$S_SAMPLES"
	rec "$key.threads" "$S_THREADS"
	rec "$key.dur" "$S_DUR"
	rec "$key.hz" "$S_HZ"
	rec "$key.rate" "$(calc "$S_HZ / $hz")"
	rec "$key.per_thread" "$(calc "$S_SAMPLES / ($S_THREADS * $S_DUR) / $hz")"
	rec "$key.missed" "$S_MISSED"
	rec "$key.partial" "$S_PARTIAL"
	rec "$key.pmed" "$S_PMED"
	rec "$key.p99" "$S_P99"
	rec "$key.cpu" "$S_CPU"
	rec "$key.cpu1k" "$S_CPU1K"
	rec "$key.rss" "$S_RSS"
	rec "$key.lost" "${S_LOST:-0}"
	rec "$key.stopped" "$S_STOPPED"
	rec "$key.blocked" "$S_BLOCKED"
	rec "$key.carried" "$S_CARRIED"
	rec "$key.captures_per_thread" "$(calc "($S_STOPPED + $S_BLOCKED) / ($S_THREADS * $S_DUR) / $hz")"
	rec "$key.cpu1k_captures" "$(calc "$S_CPU * 1000 / ($S_STOPPED + $S_BLOCKED)")"
}

# parse_ours FILE TAG: the summary and --stats lines -> S_* variables.
# The summary is two lines (README "Usage"; run/run.c print_summary):
#   "cprof-attach: N samples, N threads, N processes, N.NN s, REASON, wrote FILE"
#   "cprof-attach: N.N of N Hz, N missed ticks, N.N% reached their root, N not fully unwound"
# Builds older than d5c33e5 (e.g. 833e79e, as BASELINE) print one line:
#   "cprof-attach: N samples, N threads, N.NN s, N.N Hz achieved (N requested),
#    N missed ticks, N not fully unwound (N.N%), ..., REASON, wrote FILE"
parse_ours() {
	local f=$1 tag=$2 sum sum2 st re
	st=$(grep -E '^cprof-attach: stats:' "$f" | tail -1) || die "cprof-attach ($tag): no stats line: $(cat "$f")"
	sum=$(grep -E '^cprof-attach: [0-9]+ samples?, ' "$f" | tail -1) || die "cprof-attach ($tag): no summary line: $(cat "$f")"
	re='^cprof-attach: ([0-9]+) samples?, ([0-9]+) threads?, [0-9]+ process(es)?, ([0-9.]+) s, (.*), wrote '
	if [[ $sum =~ $re ]]; then
		S_SAMPLES=${BASH_REMATCH[1]} S_THREADS=${BASH_REMATCH[2]} S_DUR=${BASH_REMATCH[4]}
		S_REASON=${BASH_REMATCH[5]}
		sum2=$(grep -E '^cprof-attach: [0-9.]+ of [0-9]+ Hz, ' "$f" | tail -1) ||
			die "cprof-attach ($tag): no second summary line: $(cat "$f")"
		re='^cprof-attach: ([0-9.]+) of [0-9]+ Hz, ([0-9]+) missed ticks?, [0-9.]+% reached their root, ([0-9]+) not fully unwound$'
		[[ $sum2 =~ $re ]] || die "cprof-attach ($tag): cannot parse the summary's second line: $sum2"
		S_HZ=${BASH_REMATCH[1]} S_MISSED=${BASH_REMATCH[2]} S_PARTIAL=${BASH_REMATCH[3]}
	else
		re='^cprof-attach: ([0-9]+) samples?, ([0-9]+) threads?, ([0-9.]+) s, ([0-9.]+) Hz achieved \([0-9]+ requested\), ([0-9]+) missed ticks?, ([0-9]+) not fully unwound .*, ([^,]+), wrote '
		[[ $sum =~ $re ]] || die "cprof-attach ($tag): cannot parse the summary line: $sum"
		S_SAMPLES=${BASH_REMATCH[1]} S_THREADS=${BASH_REMATCH[2]} S_DUR=${BASH_REMATCH[3]}
		S_HZ=${BASH_REMATCH[4]} S_MISSED=${BASH_REMATCH[5]} S_PARTIAL=${BASH_REMATCH[6]}
		S_REASON=${BASH_REMATCH[7]}
	fi
	re='median ([0-9.]+) us, p99 ([0-9.]+) us'
	[[ $st =~ $re ]] || die "cprof-attach ($tag): cannot parse the pause in: $st"
	S_PMED=${BASH_REMATCH[1]} S_P99=${BASH_REMATCH[2]}
	re='profiler CPU ([0-9.]+) ms \(([0-9.]+) ms per 1000'
	[[ $st =~ $re ]] || die "cprof-attach ($tag): cannot parse the CPU time in: $st"
	S_CPU=${BASH_REMATCH[1]} S_CPU1K=${BASH_REMATCH[2]}
	re='peak RSS ([0-9]+) KiB'
	[[ $st =~ $re ]] || die "cprof-attach ($tag): cannot parse the peak RSS in: $st"
	S_RSS=${BASH_REMATCH[1]}
	re='([0-9]+) thread-samples: ([0-9]+) stopped, ([0-9]+) blocked, ([0-9]+) carried by a later stop, ([0-9]+) lost'
	[[ $st =~ $re ]] || die "cprof-attach ($tag): cannot parse the thread-samples in: $st"
	S_STOPPED=${BASH_REMATCH[2]} S_BLOCKED=${BASH_REMATCH[3]} S_CARRIED=${BASH_REMATCH[4]}
	S_LOST=${BASH_REMATCH[5]}
	re='([0-9]+) counted again from an unchanged stack \(([0-9]+) of them carried by backoff, ([0-9]+) uncertain\)'
	# (absent before issue 14's idle reuse: empty then)
	S_UNCHANGED= S_BACKOFF= S_UNCERTAIN=
	[[ $st =~ $re ]] && S_UNCHANGED=${BASH_REMATCH[1]} S_BACKOFF=${BASH_REMATCH[2]} S_UNCERTAIN=${BASH_REMATCH[3]}
	return 0
}

# run_floor T UNITS HZ TAG KEY [FLOOR OPTIONS]
run_floor() {
	local t=$1 units=$2 hz=$3 tag=$4 key=$5 p rc line re
	shift 5
	start_work "$t" "$units" "$tag"
	rm -f "$TMP/$tag.fready"
	"$BUILD/floor" "$WPID" --hz "$hz" --ready "$TMP/$tag.fready" "$@" >"$TMP/$tag.floor" 2>&1 &
	p=$!
	PIDS+=("$p")
	wait_ready "$TMP/$tag.fready" "$p" "floor ($tag)" "$TMP/$tag.floor"
	go_work
	finish_work "$tag"
	wait_gone "$p" "$RUN_TIMEOUT" "floor ($tag)"
	rc=$(reap "$p")
	[ "$rc" = 0 ] || die "floor ($tag) exited $rc: $(cat "$TMP/$tag.floor")"
	line=$(grep '^floor:' "$TMP/$tag.floor") || die "floor ($tag) printed nothing"
	re='median ([0-9.]+) us, p99 ([0-9.]+) us; ([0-9]+) thread-samples.* ([0-9.]+) Hz achieved'
	[[ $line =~ $re ]] || die "floor ($tag): cannot parse: $line"
	[ "${BASH_REMATCH[3]}" -gt 0 ] || die "floor ($tag): no samples: $line"
	rec "$key.wall" "$WALL"
	rec "$key.tcpu" "$WCPU"
	rec "$key.pmed" "${BASH_REMATCH[1]}"
	rec "$key.p99" "${BASH_REMATCH[2]}"
	rec "$key.hz" "${BASH_REMATCH[4]}"
}

# run_perf T UNITS TAG KEY: perf record, started with its events disabled,
# enabled through its control FIFO (acknowledged) before the work starts.
run_perf() {
	local t=$1 units=$2 tag=$3 key=$4 p rc ack n
	start_work "$t" "$units" "$tag"
	rm -f "$TMP/$tag.ctl" "$TMP/$tag.ack"
	mkfifo "$TMP/$tag.ctl" "$TMP/$tag.ack"
	exec 7<>"$TMP/$tag.ctl" 8<>"$TMP/$tag.ack"
	perf record -e task-clock -F "$HZ" --call-graph dwarf -p "$WPID" -o "$TMP/$tag.perf.data" \
		-D -1 --control "fifo:$TMP/$tag.ctl,$TMP/$tag.ack" >"$TMP/$tag.perf" 2>&1 &
	p=$!
	PIDS+=("$p")
	echo enable >&7
	ack=
	read -r -t "$READY_TIMEOUT" -u 8 ack || true
	[ "$ack" = ack ] || die "perf ($tag) did not acknowledge 'enable': $(cat "$TMP/$tag.perf")"
	go_work
	finish_work "$tag"
	wait_gone "$p" "$RUN_TIMEOUT" "perf ($tag)"
	rc=$(reap "$p")
	exec 7>&- 8>&-
	[ "$rc" = 0 ] || die "perf ($tag) exited $rc: $(cat "$TMP/$tag.perf")"
	n=$(sed -nE 's/.*\(([0-9]+) samples\).*/\1/p' "$TMP/$tag.perf")
	[ "${n:-0}" -gt 0 ] || die "perf ($tag) recorded no samples: $(cat "$TMP/$tag.perf")"
	rm -f "$TMP/$tag.perf.data"
	rec "$key.wall" "$WALL"
	rec "$key.tcpu" "$WCPU"
	rec "$key.samples" "$n"
}

# run_eustack T UNITS TAG KEY: eu-stack -p in a loop, as fast as it goes;
# the work starts once the first snapshot is done.
run_eustack() {
	local t=$1 units=$2 tag=$3 key=$4 p n ts=$TMP/$3.snaps w
	start_work "$t" "$units" "$tag"
	w=$WPID
	: >"$ts"
	(
		while alive "$w"; do
			if eu-stack -p "$w" >/dev/null 2>&1; then
				echo "$EPOCHREALTIME" >>"$ts"
			fi
		done
	) &
	p=$!
	PIDS+=("$p")
	wait_until "$READY_TIMEOUT" file_ready "$ts" || die "eu-stack ($tag): no snapshot within $READY_TIMEOUT s"
	go_work
	finish_work "$tag"
	wait_gone "$p" "$RUN_TIMEOUT" "eu-stack loop ($tag)"
	reap "$p" >/dev/null
	n=$(awk -v a="$WSTART" -v b="$WEND" '$1 >= a && $1 <= b' "$ts" | wc -l)
	[ "$n" -gt 0 ] || die "eu-stack ($tag): no snapshot during the timed region"
	rec "$key.wall" "$WALL"
	rec "$key.tcpu" "$WCPU"
	rec "$key.snaps_per_s" "$(calc "$n / ($WEND - $WSTART)")"
}

# run_marginal REP: one endless workload, profiled MARG_SHORT s then
# MARG_LONG s; checks that the target keeps running after each detach.
run_marginal() {
	local tag=marg$1 p rc k cpu=() smp=() cap=()
	start_work "$MARG_THREADS" 0 "$tag"
	go_work
	for k in "$MARG_SHORT" "$MARG_LONG"; do
		"$CPROF" "$WPID" --hz "$HZ" --duration "$k" -o "$TMP/$tag.$k.folded" --stats 2>"$TMP/$tag.$k.err" &
		p=$!
		PIDS+=("$p")
		wait_gone "$p" $((RUN_TIMEOUT + k)) "cprof-attach ($tag, $k s)"
		rc=$(reap "$p")
		[ "$rc" = 0 ] || die "cprof-attach ($tag, $k s) exited $rc: $(cat "$TMP/$tag.$k.err")"
		parse_ours "$TMP/$tag.$k.err" "$tag"
		[ "$S_REASON" = "duration reached" ] || die "cprof-attach ($tag, $k s): $(cat "$TMP/$tag.$k.err")"
		[ "$S_SAMPLES" -gt 0 ] || die "cprof-attach ($tag, $k s): no samples"
		alive "$WPID" || die "the workload died while profiled ($tag, $k s)"
		[ "$(awk '/^TracerPid:/ { print $2 }' /proc/"$WPID"/task/*/status | sort -u)" = 0 ] ||
			die "the workload is still traced after cprof-attach ended ($tag, $k s)"
		grep -q '^State:[[:space:]]*[RS]' "/proc/$WPID/status" ||
			die "the workload is not running after cprof-attach ended ($tag, $k s): $(grep State /proc/$WPID/status)"
		cpu+=("$S_CPU")
		smp+=("$S_SAMPLES")
		cap+=("$((S_STOPPED + S_BLOCKED))")
		rec "marg.$k.cpu1k" "$S_CPU1K"
		rec "marg.$k.rss" "$S_RSS"
	done
	kill -KILL "$WPID"
	wait "$WPID" 2>/dev/null || true
	rec marg.cpu1k "$(calc "(${cpu[1]} - ${cpu[0]}) / (${smp[1]} - ${smp[0]}) * 1000")"
	rec marg.cpu1k_captures "$(calc "(${cpu[1]} - ${cpu[0]}) / (${cap[1]} - ${cap[0]}) * 1000")"
}

# run_long: LONG_SECS at HZ on an endless workload, RSS every LONG_EVERY s.
run_long() {
	local tag=long p rc t=0 rss series=()
	start_work "$LONG_THREADS" 0 "$tag"
	go_work
	"$CPROF" "$WPID" --hz "$HZ" --duration "$LONG_SECS" -o "$TMP/$tag.folded" --stats 2>"$TMP/$tag.err" &
	p=$!
	PIDS+=("$p")
	wait_traced "$WPID" "$p" || die "cprof-attach ($tag) did not attach: $(cat "$TMP/$tag.err")"
	while alive "$p"; do
		sleep "$LONG_EVERY"
		t=$((t + LONG_EVERY))
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || true
		[ -n "$rss" ] && alive "$p" && series+=("$t:$rss") && log "long run: ${t}s VmRSS ${rss} KiB"
	done
	rc=$(reap "$p")
	[ "$rc" = 0 ] || die "cprof-attach ($tag) exited $rc: $(cat "$TMP/$tag.err")"
	parse_ours "$TMP/$tag.err" "$tag"
	kill -KILL "$WPID"
	wait "$WPID" 2>/dev/null || true
	LONG_SERIES="${series[*]}"
	LONG_SUMMARY="$S_SAMPLES samples, $S_HZ Hz achieved, peak RSS $S_RSS KiB, CPU $S_CPU1K ms/1000"
}

# run_rate T HZ TAG KEY: the achieved rate, on a workload that runs
# throughout (units 0: until killed), so every thread lives for the whole
# profile and samples / (threads x seconds) is the per-thread rate.  (In
# the slowdown runs threads end one by one as their share is done.)
run_rate() {
	local t=$1 hz=$2 tag=$3 key=$4 p rc
	start_work "$t" 0 "$tag"
	go_work
	"$CPROF" "$WPID" --hz "$hz" --duration "$RATE_SECS" -o "$TMP/$tag.folded" --stats 2>"$TMP/$tag.err" &
	p=$!
	PIDS+=("$p")
	wait_gone "$p" $((RUN_TIMEOUT + ${RATE_SECS%.*})) "cprof-attach ($tag)"
	rc=$(reap "$p")
	[ "$rc" = 0 ] || die "cprof-attach ($tag) exited $rc: $(cat "$TMP/$tag.err")"
	parse_ours "$TMP/$tag.err" "$tag"
	[ "$S_REASON" = "duration reached" ] || die "cprof-attach ($tag): $(cat "$TMP/$tag.err")"
	kill -KILL "$WPID"
	wait "$WPID" 2>/dev/null || true
	rec "$key.hz" "$S_HZ"
	rec "$key.rate" "$(calc "$S_HZ / $hz")"
	rec "$key.per_thread" "$(calc "$S_SAMPLES / ($S_THREADS * $S_DUR) / $hz")"
	rec "$key.captures_per_thread" "$(calc "($S_STOPPED + $S_BLOCKED) / ($S_THREADS * $S_DUR) / $hz")"
	rec "$key.carried" "$S_CARRIED"
	rec "$key.missed" "$S_MISSED"
	rec "$key.partial" "$S_PARTIAL"
}

# ---- idle pools, real servers, a saturated machine (issue 14) -------------
# With BASELINE=/path/to/another/cprof-attach (e.g. a build of an older
# commit) every one of these runs, and the slowdown runs, are made with it
# too, in the same repetition: "base" rows beside ours.

# tool_bin TOOL: the binary of "ours" or "base"
tool_bin() { [ "$1" = base ] && echo "$BASELINE" || echo "$CPROF"; }

# cpu_ns PID: CPU time of every thread of PID so far, in ns (schedstat)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

# share_window PID SECS: the share of a core PID used over SECS (sets SHARE)
share_window() {
	local c0 c1 t0 t1
	c0=$(cpu_ns "$1") t0=$EPOCHREALTIME
	sleep "$2"
	c1=$(cpu_ns "$1") t1=$EPOCHREALTIME
	SHARE=$(calc "($c1 - $c0) / 1e9 / ($t1 - $t0)")
}

# start_pool N BUSY TAG: bench/pool.c (N idle threads, BUSY computing); sets WPID
start_pool() {
	local ready=$TMP/$3.ready
	rm -f "$ready"
	"$BUILD/pool" "$1" "$2" "$ready" >"$TMP/$3.work" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	wait_ready "$ready" "$WPID" "pool $3" "$TMP/$3.work"
}

stop_pid() { kill -KILL "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# run_pool N TOOL TAG KEY: N idle threads + 1 computing, profiled POOL_SECS:
# the profiler's share of a core over a window inside the run (attaching
# and writing excluded) and its achieved rate.
run_pool() {
	local n=$1 tool=$2 tag=$3 key=$4 p rc
	start_pool "$n" 1 "$tag"
	"$(tool_bin "$tool")" "$WPID" --hz "$HZ" --duration "$POOL_SECS" -o "$TMP/$tag.folded" --stats \
		2>"$TMP/$tag.err" &
	p=$!
	PIDS+=("$p")
	wait_traced "$WPID" "$p" || die "$tool ($tag) did not attach: $(cat "$TMP/$tag.err")"
	local t0=$EPOCHREALTIME steady=
	sleep 0.5       # past the first tick, which samples every thread in full
	share_window "$p" "$POOL_WINDOW"
	if [ "$POOL_STEADY_AT" != 0 ]; then
		local first=$SHARE
		local d
		d=$(calc "$POOL_STEADY_AT - ($EPOCHREALTIME - $t0)")
		case $d in -*) ;; *) sleep "$d" ;; esac
		share_window "$p" "$POOL_WINDOW"
		steady=$SHARE SHARE=$first
	fi
	wait_gone "$p" $((RUN_TIMEOUT + POOL_SECS)) "$tool ($tag)"
	rc=$(reap "$p")
	[ "$rc" = 0 ] || die "$tool ($tag) exited $rc: $(cat "$TMP/$tag.err")"
	parse_ours "$TMP/$tag.err" "$tag"
	stop_pid "$WPID"
	rec "$key.share" "$SHARE"
	[ -n "$steady" ] && rec "$key.steady" "$steady"
	rec "$key.rate" "$(calc "$S_HZ / $HZ")"
	rec "$key.per_thread" "$(calc "$S_SAMPLES / ($S_THREADS * $S_DUR) / $HZ")"
	rec "$key.missed" "$S_MISSED"
	rec "$key.unchanged" "$S_UNCHANGED"
	rec "$key.backoff" "$S_BACKOFF"
}

# run_pool_floor TAG KEY: bench/floor (interrupt and resume, nothing else)
# on the computing thread alone, its share of a core in the same windows:
# what any ptrace sampler pays for that thread on this machine.
run_pool_floor() {
	local tag=$1 key=$2 p rc t0 d first
	start_pool 0 1 "$tag"
	"$BUILD/floor" "$WPID" --hz "$HZ" --duration "$POOL_SECS" --ready "$TMP/$tag.fready" \
		>"$TMP/$tag.floor" 2>&1 &
	p=$!
	PIDS+=("$p")
	wait_ready "$TMP/$tag.fready" "$p" "floor ($tag)" "$TMP/$tag.floor"
	t0=$EPOCHREALTIME
	sleep 0.5
	share_window "$p" "$POOL_WINDOW"
	first=$SHARE
	if [ "$POOL_STEADY_AT" != 0 ]; then
		d=$(calc "$POOL_STEADY_AT - ($EPOCHREALTIME - $t0)")
		case $d in -*) ;; *) sleep "$d" ;; esac
		share_window "$p" "$POOL_WINDOW"
		rec "$key.steady" "$SHARE"
	fi
	rec "$key.share" "$first"
	wait_gone "$p" $((RUN_TIMEOUT + POOL_SECS)) "floor ($tag)"
	rc=$(reap "$p")
	[ "$rc" = 0 ] || die "floor ($tag) exited $rc: $(cat "$TMP/$tag.floor")"
	stop_pid "$WPID"
}

# run_saturated TOOL TAG KEY: 2 computing threads per core and the
# profiler: the achieved rate (ticks) and samples per thread and second.
run_saturated() {
	local tool=$1 tag=$2 key=$3 p rc
	start_pool 0 $((2 * NCPU)) "$tag"
	"$(tool_bin "$tool")" "$WPID" --hz "$HZ" --duration "$RATE_SECS" -o "$TMP/$tag.folded" --stats \
		2>"$TMP/$tag.err" &
	p=$!
	PIDS+=("$p")
	wait_gone "$p" $((RUN_TIMEOUT + ${RATE_SECS%.*})) "$tool ($tag)"
	rc=$(reap "$p")
	[ "$rc" = 0 ] || die "$tool ($tag) exited $rc: $(cat "$TMP/$tag.err")"
	parse_ours "$TMP/$tag.err" "$tag"
	stop_pid "$WPID"
	rec "$key.rate" "$(calc "$S_HZ / $HZ")"
	rec "$key.per_thread" "$(calc "$S_SAMPLES / ($S_THREADS * $S_DUR) / $HZ")"
	rec "$key.missed" "$S_MISSED"
}

# free_port: a TCP port nobody listens on (from /proc/net/tcp{,6})
free_port() {
	local p used
	used=$(awk 'NR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		grep -qix "$(printf '%04X' "$p")" <<<"$used" || { echo "$p"; return; }
	done
}

# need_packages PKG...: installs the Debian packages missing (as root);
# sets NEED_NOTE when it cannot.
need_packages() {
	local missing=() pkg
	for pkg in "$@"; do
		dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
	done
	[ ${#missing[@]} = 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		NEED_NOTE="needs ${missing[*]} (run as root to install them)"
		return 1
	fi
	log "installing ${missing[*]}"
	if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends "${missing[@]}"; }; } >"$TMP/apt.log" 2>&1; then
		NEED_NOTE="cannot install ${missing[*]}: $(tail -1 "$TMP/apt.log")"
		return 1
	fi
}

# ---- redis-server under redis-benchmark ----
REDIS_PID= REDIS_PORT=
start_redis() {
	mkdir -p "$TMP/redis"
	REDIS_PORT=$(free_port)
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$TMP/redis" --daemonize no >"$TMP/redis/log" 2>&1 &
	REDIS_PID=$!
	PIDS+=("$REDIS_PID")
	local i
	for ((i = 0; i < READY_TIMEOUT * 100; i++)); do
		[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ] && return 0
		alive "$REDIS_PID" || die "redis-server exited: $(cat "$TMP/redis/log")"
		sleep 0.01
	done
	die "redis-server not answering after $READY_TIMEOUT s"
}

# redis_load TAG: redis-benchmark SET and GET; prints requests/s (their mean)
redis_load() {
	redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -n "$REDIS_REQUESTS" -c 20 -t set,get --csv \
		>"$TMP/$1.bench" 2>&1 || die "redis-benchmark ($1) failed: $(tail -2 "$TMP/$1.bench")"
	awk -F'","' '/^"(SET|GET)"/ { s += $2; n++ } END { if (n == 2) printf "%.1f\n", s / n }' "$TMP/$1.bench"
}

# redis_round TAG: one redis_load; sets RPS (requests/s) and CPR, the CPU
# time redis-server used per request meanwhile (ns; its threads' schedstat),
# which a shared machine's load moves much less than the throughput.
redis_round() {
	local c0 c1
	c0=$(cpu_ns "$REDIS_PID")
	RPS=$(redis_load "$1")
	c1=$(cpu_ns "$REDIS_PID")
	[ -n "$RPS" ] || die "redis-benchmark ($1) printed no rate: $(cat "$TMP/$1.bench")"
	CPR=$(calc "($c1 - $c0) / (2 * $REDIS_REQUESTS)")
}

# start_ours TOOL PID TAG: the profiler on PID until stop_ours; sets PPID_.
# stop_ours sets S_* (parse_ours) and SAMPLING_CPU1K: the profiler's CPU
# from attached to asked to stop (sampling only: no attaching, no
# symbolizing) per 1000 thread-samples.
start_ours() {
	"$(tool_bin "$1")" "$2" --hz "$HZ" -o "$TMP/$3.folded" --stats 2>"$TMP/$3.err" &
	PPID_=$!
	PIDS+=("$PPID_")
	wait_traced "$2" "$PPID_" || die "$1 ($3) did not attach: $(cat "$TMP/$3.err")"
	CPU0=$(cpu_ns "$PPID_")
}
stop_ours() { # TAG
	local rc cpu1
	cpu1=$(cpu_ns "$PPID_")
	kill -INT "$PPID_"
	wait_gone "$PPID_" "$RUN_TIMEOUT" "profiler ($1)"
	rc=$(reap "$PPID_")
	[ "$rc" = 0 ] || die "profiler ($1) exited $rc: $(cat "$TMP/$1.err")"
	parse_ours "$TMP/$1.err" "$1"
	SAMPLING_CPU1K=$(calc "($cpu1 - $CPU0) / 1e6 / $S_SAMPLES * 1000")
}

# start_perf PID TAG / stop_perf TAG: perf record -F HZ --call-graph dwarf,
# enabled through its control FIFO (acknowledged) before the load starts.
start_perf() {
	local ack
	rm -f "$TMP/$2.ctl" "$TMP/$2.ack"
	mkfifo "$TMP/$2.ctl" "$TMP/$2.ack"
	exec 7<>"$TMP/$2.ctl" 8<>"$TMP/$2.ack"
	perf record -e task-clock -F "$HZ" --call-graph dwarf -p "$1" -o "$TMP/$2.perf.data" \
		-D -1 --control "fifo:$TMP/$2.ctl,$TMP/$2.ack" >"$TMP/$2.perf" 2>&1 &
	PPID_=$!
	PIDS+=("$PPID_")
	echo enable >&7
	ack=
	read -r -t "$READY_TIMEOUT" -u 8 ack || true
	[ "$ack" = ack ] || die "perf ($2) did not acknowledge 'enable': $(cat "$TMP/$2.perf")"
}
stop_perf() {
	kill -INT "$PPID_"
	wait_gone "$PPID_" "$RUN_TIMEOUT" "perf ($1)"
	reap "$PPID_" >/dev/null
	exec 7>&- 8>&-
	rm -f "$TMP/$1.perf.data"
}

# run_redis REP: each tool (in an order that rotates), with a run alone
# before and after each: its ratio is to the mean of those two, so that a
# machine whose speed drifts does not favour the first or the last.
run_redis() {
	local rep=$1 tools=(ours) order=() i n prev next r tag t c prev_c next_c
	[ -n "$BASELINE" ] && tools+=(base)
	[ $PERF_OK = 1 ] && tools+=(perf)
	n=${#tools[@]}
	for ((i = 0; i < n; i++)); do order+=("${tools[$(((i + rep) % n))]}"); done
	redis_round "redis.alone.$rep.0"
	prev=$RPS prev_c=$CPR
	rec redis.alone.rps "$prev"
	rec redis.alone.cpr "$prev_c"
	for ((i = 0; i < n; i++)); do
		t=${order[$i]} tag=redis.${order[$i]}.$rep
		if [ "$t" = perf ]; then start_perf "$REDIS_PID" "$tag"; else start_ours "$t" "$REDIS_PID" "$tag"; fi
		redis_round "$tag"
		r=$RPS c=$CPR
		if [ "$t" = perf ]; then
			stop_perf "$tag"
		else
			stop_ours "$tag"
			rec "redis.$t.cpu1k" "$S_CPU1K"
			rec "redis.$t.cpu1k_sampling" "$SAMPLING_CPU1K"
		fi
		redis_round "redis.alone.$rep.$((i + 1))"
		next=$RPS next_c=$CPR
		rec redis.alone.rps "$next"
		rec redis.alone.cpr "$next_c"
		rec "redis.$t.ratio" "$(calc "$r * 2 / ($prev + $next)")"
		rec "redis.$t.cpr_ratio" "$(calc "$c * 2 / ($prev_c + $next_c)")"
		prev=$next prev_c=$next_c
	done
}

# ---- mariadbd under sysbench oltp_read_only ----
DB_PID= DB_SOCK=
SYSBENCH=()
start_mariadb() {
	local d=$TMP/db i
	mkdir -p "$d"
	mariadb-install-db --no-defaults --datadir="$d/data" --user=root \
		--auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 ||
		die "mariadb-install-db failed: $(tail -3 "$d/install.log")"
	DB_SOCK=$d/sock
	mariadbd --no-defaults --datadir="$d/data" --socket="$DB_SOCK" --port="$(free_port)" \
		--bind-address=127.0.0.1 --user=root --skip-log-bin --innodb-buffer-pool-size=64M \
		--pid-file="$d/pid" --log-error="$d/err" >/dev/null 2>&1 &
	DB_PID=$!
	PIDS+=("$DB_PID")
	for ((i = 0; i < READY_TIMEOUT * 100; i++)); do
		mariadb-admin --no-defaults -S "$DB_SOCK" -uroot ping >/dev/null 2>&1 && break
		alive "$DB_PID" || die "mariadbd exited: $(tail -5 "$d/err")"
		sleep 0.01
	done
	mariadb --no-defaults -S "$DB_SOCK" -uroot -e "create database sbtest" ||
		die "mariadbd not answering after $READY_TIMEOUT s: $(tail -5 "$d/err")"
	SYSBENCH=(sysbench oltp_read_only --db-driver=mysql --mysql-socket="$DB_SOCK" --mysql-user=root
		--tables=2 --table-size=10000)
	"${SYSBENCH[@]}" prepare >"$d/prepare.log" 2>&1 || die "sysbench prepare failed: $(tail -3 "$d/prepare.log")"
}

# run_mariadb REP: per tool, the share of a core while mariadbd idles, and
# the profiler's CPU per 1000 thread-samples under sysbench (whole run:
# attaching, sampling, symbolizing, writing).
run_mariadb() {
	local rep=$1 tools=(ours) t tag
	[ -n "$BASELINE" ] && tools+=(base)
	[ $((rep % 2)) = 0 ] && [ -n "$BASELINE" ] && tools=(base ours)
	for t in "${tools[@]}"; do
		tag=db.idle.$t.$rep
		start_ours "$t" "$DB_PID" "$tag"
		sleep 0.5
		share_window "$PPID_" "$POOL_WINDOW"
		stop_ours "$tag"
		rec "db.idle.$t.share" "$SHARE"
		tag=db.load.$t.$rep
		start_ours "$t" "$DB_PID" "$tag"
		"${SYSBENCH[@]}" --threads=4 --time="$DB_SECS" run >"$TMP/$tag.sysbench" 2>&1 ||
			die "sysbench run failed: $(tail -3 "$TMP/$tag.sysbench")"
		stop_ours "$tag"
		rec "db.load.$t.cpu1k" "$S_CPU1K"
		rec "db.load.$t.cpu1k_sampling" "$SAMPLING_CPU1K"
		rec "db.load.$t.tps" "$(sed -nE 's/.*transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p' "$TMP/$tag.sysbench")"
	done
}

stop_servers() {
	[ -n "$REDIS_PID" ] && { redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true; stop_pid "$REDIS_PID"; }
	[ -n "$DB_PID" ] && { mariadb-admin --no-defaults -S "$DB_SOCK" -uroot shutdown >/dev/null 2>&1 || true; stop_pid "$DB_PID"; }
	REDIS_PID= DB_PID=
}

# ---- set-up ------------------------------------------------------------
[ -x "$CPROF" ] || die "$CPROF not built (make)"
mkdir -p "$BUILD"
$CC -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra -o "$BUILD/work" "$BENCH/work.c" ||
	die "cannot build bench/work.c"
$CC -O2 -g -Wall -Wextra -o "$BUILD/floor" "$BENCH/floor.c" || die "cannot build bench/floor.c"
$CC -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra -o "$BUILD/pool" "$BENCH/pool.c" ||
	die "cannot build bench/pool.c"
[ -z "$BASELINE" ] || [ -x "$BASELINE" ] || die "BASELINE=$BASELINE is not an executable"

NCPU=$(nproc)
RATE=$("$BUILD/work" --calibrate 1) || die "calibration failed"
units_for() { calc "sprintf(\"%d\", $WORK_SECS * $RATE * ($1 < $NCPU ? $1 : $NCPU))"; }

PERF_OK=0 PERF_NOTE=
if ! command -v perf >/dev/null; then
	PERF_NOTE="perf not installed"
elif ! perf record -o "$TMP/true.perf.data" -e task-clock -- true >"$TMP/true.perf" 2>&1; then
	PERF_NOTE="perf record does not work here: $(tail -1 "$TMP/true.perf")"
else
	PERF_OK=1
fi
EUSTACK_OK=0 EUSTACK_NOTE=
if ! command -v eu-stack >/dev/null; then
	EUSTACK_NOTE="eu-stack not installed"
elif ! eu-stack -p $$ >/dev/null 2>&1; then
	EUSTACK_NOTE="eu-stack -p does not work here"
else
	EUSTACK_OK=1
fi
[ -n "$PERF_NOTE" ] && log "skipping perf: $PERF_NOTE"
[ -n "$EUSTACK_NOTE" ] && log "skipping eu-stack: $EUSTACK_NOTE"

log "$REPS repetitions, ~$WORK_SECS s per workload run, $RATE work units/s/thread; scratch $TMP"

contains() { [[ " $1 " == *" $2 "* ]]; }

# ---- the repetitions ---------------------------------------------------
[ "$CLASSIC" = 1 ] || REPS=0
for ((rep = 1; rep <= REPS; rep++)); do
	for t in $THREADS; do
		units=$(units_for "$t")
		runs=(ours)
		[ -n "$BASELINE" ] && runs+=(base)
		[ "$t" = 1 ] && runs+=(ours_high)
		contains "$FLOOR_THREADS" "$t" && runs+=(floor floor_running)
		contains "$PEER_THREADS" "$t" && [ $PERF_OK = 1 ] && runs+=(perf)
		contains "$PEER_THREADS" "$t" && [ $EUSTACK_OK = 1 ] && runs+=(eustack)
		# Alone first, then the tools; the tools' order rotates by repetition.
		n=${#runs[@]}
		order=()
		for ((i = 0; i < n; i++)); do order+=("${runs[$(((i + rep) % n))]}"); done
		run_alone "$t" "$units" "alone.$t.$rep"
		alone=$ALONE alone_cpu=$ALONE_CPU
		rec "alone.$t.wall" "$alone"
		rec "alone.$t.tcpu" "$alone_cpu"
		for r in "${order[@]}"; do
			tag=$r.$t.$rep
			case $r in
			ours) run_ours "$t" "$units" "$HZ" "$tag" "ours.$t.$HZ" ;;
			ours_high) run_ours "$t" "$units" "$HZ_HIGH" "$tag" "ours.$t.$HZ_HIGH" ;;
			base) OURS_BIN=$BASELINE run_ours "$t" "$units" "$HZ" "$tag" "base.$t.$HZ" ;;
			floor) run_floor "$t" "$units" "$HZ" "$tag" "floor.$t" ;;
			floor_running) run_floor "$t" "$units" "$HZ" "$tag" "floorR.$t" --running-only ;;
			perf) run_perf "$t" "$units" "$tag" "perf.$t" ;;
			eustack) run_eustack "$t" "$units" "$tag" "eustack.$t" ;;
			esac
		done
		# Paired slowdowns: this repetition's runs against its own alone run.
		for key in "ours.$t.$HZ" "ours.$t.$HZ_HIGH" "base.$t.$HZ" "floor.$t" "floorR.$t" "perf.$t" "eustack.$t"; do
			w=$(awk -v k="$key.wall" '$1 == k { v = $2 } END { print v }' "$DATA")
			c=$(awk -v k="$key.wall" '$1 == k { n++ } END { print n + 0 }' "$DATA")
			[ -n "$w" ] && [ "$c" = "$rep" ] && rec "$key.slow" "$(calc "$w / $alone")"
			# The same pair in the target's CPU time (see bench/work.c).
			w=$(awk -v k="$key.tcpu" '$1 == k { v = $2 } END { print v }' "$DATA")
			[ -n "$w" ] && [ "$c" = "$rep" ] && rec "$key.cslow" "$(calc "$w / $alone_cpu")"
		done
		log "rep $rep/$REPS, $t thread(s): done ($((SECONDS - T_START)) s)"
	done
	[ "$rep" -le "$EXTRA_REPS" ] || continue
	run_marginal "$rep"
	log "rep $rep/$REPS, marginal cost: done ($((SECONDS - T_START)) s)"
	for pair in $RATE_RUNS; do
		run_rate "${pair%%:*}" "${pair##*:}" "rate.$pair.$rep" "rate.${pair%%:*}.${pair##*:}"
	done
	log "rep $rep/$REPS, achieved rate: done ($((SECONDS - T_START)) s)"
done
# ---- issue 14's runs ----
SERVER_NOTE=
if [ "$SERVERS" = 1 ]; then
	NEED_NOTE=
	if need_packages redis-server redis-tools mariadb-server sysbench; then
		start_redis
		start_mariadb
		log "redis-server (PID $REDIS_PID, port $REDIS_PORT) and mariadbd (PID $DB_PID) ready ($((SECONDS - T_START)) s)"
	else
		SERVER_NOTE=$NEED_NOTE
		log "skipping the servers: $SERVER_NOTE"
	fi
else
	SERVER_NOTE="SERVERS=0"
fi
NEW_TOOLS=(ours)
[ -n "$BASELINE" ] && NEW_TOOLS+=(base)
for ((rep = 1; rep <= NEW_REPS; rep++)); do
	for n in $POOL_SIZES; do
		for ((i = 0; i < ${#NEW_TOOLS[@]}; i++)); do
			tool=${NEW_TOOLS[$(((i + rep) % ${#NEW_TOOLS[@]}))]}
			run_pool "$n" "$tool" "pool.$n.$tool.$rep" "pool.$n.$tool"
		done
		[ "$n" = 0 ] && run_pool_floor "pool.0.floor.$rep" "pool.0.floor"
	done
	for ((i = 0; i < ${#NEW_TOOLS[@]}; i++)); do
		tool=${NEW_TOOLS[$(((i + rep) % ${#NEW_TOOLS[@]}))]}
		run_saturated "$tool" "sat.$tool.$rep" "sat.$tool"
	done
	log "rep $rep/$NEW_REPS, idle pools and saturated: done ($((SECONDS - T_START)) s)"
	if [ -n "$REDIS_PID" ]; then
		run_redis "$rep"
		run_mariadb "$rep"
		log "rep $rep/$NEW_REPS, redis and mariadb: done ($((SECONDS - T_START)) s)"
	fi
done
DB_THREADS=
[ -n "$DB_PID" ] && DB_THREADS=$(ls "/proc/$DB_PID/task" | wc -l)
stop_servers

LONG_SERIES= LONG_SUMMARY=
if [ "$LONG" = 1 ]; then
	log "long run: $LONG_SECS s at $HZ Hz, $LONG_THREADS threads"
	run_long
fi

# ---- the table ---------------------------------------------------------
ROWS=()
row() { ROWS+=("$1|$2|$3"); }  # row METRIC MEASURED GOAL
# verdict VALUE OP LIMIT -> "ok" or "MISSED"
verdict() { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
	if (v == "") { print "n/a"; exit }
	ok = (op == "<=") ? (v <= l) : (v >= l); print ok ? "ok" : "MISSED" }'; }
plural() { [ "$1" = 1 ] && echo "1 thread" || echo "$1 threads"; }
# A profiler cannot make its target faster.  A wall-time ratio that says it
# did (profiled faster than alone by more than 2%) measured the machine's
# scheduling, not us (see "Method" above): such a ratio decides nothing.
# faster VALUE OP: true when VALUE says "faster than alone" (OP is the
# target's: "<=" for a slowdown, ">=" for a throughput ratio)
faster() { awk -v v="$1" -v op="$2" 'BEGIN { exit !(v != "" && ((op == "<=") ? (v + 0 < 0.98) : (v + 0 > 1.02))) }'; }
UNDECIDED="undetermined: profiled ran faster than alone (the load's scheduling)"

for t in $THREADS; do
	for hz in "$HZ" "$HZ_HIGH"; do
		k=ours.$t.$hz
		s=$(median "$k.slow")
		[ -n "$s" ] || continue
		goal=
		if [ "$hz" = "$HZ" ]; then
			eval "g=\${GOAL_SLOW_$t:-}"
			[ -n "$g" ] && goal="<= ${g}x $(verdict "$s" '<=' "$g")"
			faster "$s" '<=' && goal="<= ${g}x undetermined (faster than alone)"
		fi
		row "slowdown $(plural "$t") @${hz}Hz" \
			"$(fmt %.3fx "$s") [$(range "$k.slow")] ($(fmt %.2f "$(median "alone.$t.wall")") s alone, $(fmt %.2f "$(median "$k.wall")") s profiled); target CPU time $(fmt %.3fx "$(median "$k.cslow")")" "$goal"
	done
done
for t in $FLOOR_THREADS; do
	contains "$THREADS" "$t" || continue
	row "slowdown by the floor, $(plural "$t") @${HZ}Hz" \
		"$(fmt %.3fx "$(median "floor.$t.slow")") [$(range "floor.$t.slow")]; running-only floor $(fmt %.3fx "$(median "floorR.$t.slow")") [$(range "floorR.$t.slow")]; target CPU time $(fmt %.3fx "$(median "floor.$t.cslow")") / $(fmt %.3fx "$(median "floorR.$t.cslow")")" ""
done
# cprof-attach's pause histogram is log-linear up to 2^32 us; its last
# bucket holds everything longer, so a value there is a lower bound.
CAP=4294967296
us() { awk -v v="$1" -v c="$CAP" 'BEGIN { if (v == "") print "n/a"; else if (v >= c) printf ">=%.0f us (cap)", c; else printf "%.1f us", v }'; }
# pause_row WHAT FLOORKEY GOAL?
pause_row() {
	local t=$1 q=$2 fk=$3 label=$4 withgoal=$5 o f r goal= lb=
	o=$(median "ours.$t.$HZ.$q") f=$(median "$fk.$t.$q")
	[ -n "$o" ] && [ -n "$f" ] || return 0
	awk -v f="$f" 'BEGIN { exit !(f > 0) }' || return 0
	r=$(calc "$o / $f")
	awk -v v="$o" -v c="$CAP" 'BEGIN { exit !(v >= c) }' && lb=">="
	if [ "$withgoal" = 1 ]; then
		goal="<= ${GOAL_PAUSE}x $(verdict "$r" '<=' "$GOAL_PAUSE")"
		[ -n "$lb" ] && [ "$(verdict "$r" '<=' "$GOAL_PAUSE")" = ok ] && goal="<= ${GOAL_PAUSE}x unknown (ours capped)"
	fi
	row "pause $([ "$q" = pmed ] && echo median || echo p99) (ours / $label) $(plural "$t") @${HZ}Hz" \
		"$(us "$o") / $(fmt '%.1f us' "$f") = $lb$(fmt %.2fx "$r")" "$goal"
}
for t in $FLOOR_THREADS; do
	contains "$THREADS" "$t" || continue
	pause_row "$t" pmed floor "floor" 1
	pause_row "$t" pmed floorR "running-only floor" 1
	pause_row "$t" p99 floor "floor" 0
	pause_row "$t" p99 floorR "running-only floor" 0
done
for t in $FLOOR_THREADS; do
	contains "$THREADS" "$t" || continue
	row "floors' own achieved tick rate, $(plural "$t") @${HZ}Hz" \
		"$(fmt %.1f "$(median "floor.$t.hz")") Hz = $(fmt %.1f%% "$(calc "$(median "floor.$t.hz") / $HZ * 100")"); running-only $(fmt %.1f "$(median "floorR.$t.hz")") Hz = $(fmt %.1f%% "$(calc "$(median "floorR.$t.hz") / $HZ * 100")")" ""
done
for pair in $RATE_RUNS; do
	t=${pair%%:*} hz=${pair##*:} k=rate.${pair%%:*}.${pair##*:}
	[ -n "$(median "$k.hz")" ] || continue
	pt=$(median "$k.per_thread")
	row "achieved rate $(plural "$t") @${hz}Hz (${RATE_SECS} s, threads alive throughout)" \
		"samples/thread/s $(fmt %.1f%% "$(calc "$pt * 100")") of $hz (ticks $(fmt %.1f "$(median "$k.hz")") Hz; stops+blocked captures $(fmt %.1f%% "$(calc "$(median "$k.captures_per_thread") * 100")"), the rest carried by a thread's later stop: $(fmt %d "$(median "$k.carried")")); missed ticks $(fmt %d "$(median "$k.missed")"); not fully unwound $(fmt %d "$(median "$k.partial")")" \
		">= $(calc "$GOAL_RATE * 100")% $(verdict "$pt" '>=' "$GOAL_RATE")"
done
for t in $THREADS; do
	for hz in "$HZ" "$HZ_HIGH"; do
		k=ours.$t.$hz
		c=$(median "$k.cpu1k")
		[ -n "$c" ] || continue
		row "profiler CPU per 1000 thread-samples, $(plural "$t") @${hz}Hz (whole run)" \
			"$(fmt %.1f "$c") ms ($(fmt %.0f "$(median "$k.cpu")") ms for $(fmt %.0f "$(median "$k.samples")") samples; per 1000 captures $(fmt %.1f "$(median "$k.cpu1k_captures")") ms); peak RSS $(fmt %.0f "$(median "$k.rss")") KiB" ""
	done
done
c=$(median marg.cpu1k_captures)
row "profiler CPU per 1000 thread-samples, marginal" \
	"$(fmt %.1f "$c") ms per 1000 captures, $(fmt %.1f "$(median marg.cpu1k)") ms per 1000 thread-samples ((cpu${MARG_LONG}s - cpu${MARG_SHORT}s) / (n${MARG_LONG}s - n${MARG_SHORT}s), $(plural "$MARG_THREADS") @${HZ}Hz; whole-run ${MARG_SHORT}s $(fmt %.1f "$(median "marg.$MARG_SHORT.cpu1k")"), ${MARG_LONG}s $(fmt %.1f "$(median "marg.$MARG_LONG.cpu1k")"))" \
	"<= $GOAL_CPU ms $(verdict "$c" '<=' "$GOAL_CPU")"
row "profiler peak RSS, ${MARG_LONG} s, $(plural "$MARG_THREADS") @${HZ}Hz" "$(fmt %.0f "$(median "marg.$MARG_LONG.rss")") KiB (${MARG_SHORT} s: $(fmt %.0f "$(median "marg.$MARG_SHORT.rss")") KiB)" ""
for t in $PEER_THREADS; do
	contains "$THREADS" "$t" || continue
	if [ $PERF_OK = 1 ]; then
		row "perf record -F $HZ --call-graph dwarf: slowdown, $(plural "$t")" \
			"$(fmt %.3fx "$(median "perf.$t.slow")") [$(range "perf.$t.slow")] ($(fmt %.0f "$(median "perf.$t.samples")") samples); target CPU time $(fmt %.3fx "$(median "perf.$t.cslow")")" ""
	else
		row "perf record, $(plural "$t")" "skipped: $PERF_NOTE" ""
	fi
	if [ $EUSTACK_OK = 1 ]; then
		row "eu-stack -p loop: slowdown, $(plural "$t")" \
			"$(fmt %.3fx "$(median "eustack.$t.slow")") [$(range "eustack.$t.slow")], $(fmt %.1f "$(median "eustack.$t.snaps_per_s")") snapshots/s" ""
	else
		row "eu-stack, $(plural "$t")" "skipped: $EUSTACK_NOTE" ""
	fi
done
# Issue 14's targets, ours and the baseline's side by side.
pct() { [ -n "$1" ] && calc "sprintf(\"%.2f%%\", $1 * 100)" || echo n/a; }
both() { # both KEY FORMAT-FUNCTION: "ours (base: X)"
	local o b
	o=$($2 "$(median "$1")")
	[ -n "$BASELINE" ] || { echo "$o"; return; }
	b=$($2 "$(median "${1/ours/base}")")
	echo "$o (baseline $b)"
}
ratio() { [ -n "$1" ] && calc "sprintf(\"%.3f\", $1)" || echo n/a; }
ms() { [ -n "$1" ] && calc "sprintf(\"%.1f ms\", $1)" || echo n/a; }
for t in $THREADS; do
	[ -n "$BASELINE" ] || continue
	s=$(median "base.$t.$HZ.slow")
	[ -n "$s" ] && row "slowdown $(plural "$t") @${HZ}Hz, baseline" \
		"$(fmt %.3fx "$s") [$(range "base.$t.$HZ.slow")]" ""
done
for n in $POOL_SIZES; do
	eval "g=\${GOAL_POOL_$n:-}"
	sh=$(median "pool.$n.ours.share")
	row "idle pool, $n threads + 1 computing @${HZ}Hz: profiler share of a core, 0.5-$(calc "0.5 + $POOL_WINDOW") s" \
		"$(both "pool.$n.ours.share" pct)" "$([ -n "$g" ] && echo "<= $(pct "$g") $(verdict "$sh" '<=' "$g")")"
	sh=$(median "pool.$n.ours.steady")
	[ -n "$sh" ] && row "idle pool, $n threads + 1 computing @${HZ}Hz: profiler share of a core, $POOL_STEADY_AT-$((POOL_STEADY_AT + POOL_WINDOW)) s" \
		"$(both "pool.$n.ours.steady" pct)" "$([ -n "$g" ] && echo "<= $(pct "$g") $(verdict "$sh" '<=' "$g")")"
	[ "$n" = 0 ] && row "the same, bench/floor (interrupt + resume only), 0.5-$(calc "0.5 + $POOL_WINDOW") s / $POOL_STEADY_AT-$((POOL_STEADY_AT + POOL_WINDOW)) s" \
		"$(both pool.0.floor.share pct) / $(both pool.0.floor.steady pct)" ""
	r=$(median "pool.$n.ours.rate")
	row "idle pool, $n threads + 1 computing @${HZ}Hz: achieved rate" \
		"$(both "pool.$n.ours.rate" pct), missed ticks $(fmt %d "$(median "pool.$n.ours.missed")")" \
		">= $(pct "$GOAL_RATE") $(verdict "$r" '>=' "$GOAL_RATE")"
done
r=$(median sat.ours.rate)
row "saturated: $((2 * NCPU)) computing threads on $NCPU cores @${HZ}Hz: achieved rate" \
	"$(both sat.ours.rate pct) (samples/thread/s $(both sat.ours.per_thread pct))" \
	">= $(pct "$GOAL_RATE") $(verdict "$r" '>=' "$GOAL_RATE")"
if [ -z "$SERVER_NOTE" ]; then
	r=$(median redis.ours.ratio) pr=$(median redis.perf.ratio)
	g=">= $GOAL_REDIS $(verdict "$r" '>=' "$GOAL_REDIS")"
	[ -n "$pr" ] && g="$g, >= perf's $(verdict "$r" '>=' "$pr")"
	row "redis-server under redis-benchmark: throughput profiled / alone @${HZ}Hz" \
		"$(both redis.ours.ratio ratio) [$(range redis.ours.ratio)]; perf record -F $HZ --call-graph dwarf $(ratio "$pr") [$(range redis.perf.ratio)]; alone $(fmt %.0f "$(median redis.alone.rps)") req/s" "$g"
	row "redis-server under redis-benchmark: its CPU time per request, profiled / alone" \
		"$(both redis.ours.cpr_ratio ratio) [$(range redis.ours.cpr_ratio)]; perf record $(ratio "$(median redis.perf.cpr_ratio)") [$(range redis.perf.cpr_ratio)]; alone $(fmt %.0f "$(median redis.alone.cpr)") ns per request" ""
	row "redis-server under redis-benchmark: profiler CPU per 1000 thread-samples" \
		"sampling $(both redis.ours.cpu1k_sampling ms); whole run $(both redis.ours.cpu1k ms)" ""
	sh=$(median db.idle.ours.share)
	row "mariadbd idle ($DB_THREADS threads) @${HZ}Hz: profiler share of a core" \
		"$(both db.idle.ours.share pct)" "<= $(pct "$GOAL_DB_IDLE") $(verdict "$sh" '<=' "$GOAL_DB_IDLE")"
	c=$(median db.load.ours.cpu1k_sampling)
	row "mariadbd under sysbench oltp_read_only (4 clients) @${HZ}Hz: profiler CPU per 1000 thread-samples" \
		"sampling $(both db.load.ours.cpu1k_sampling ms); whole run (attach, symbolize, write) $(both db.load.ours.cpu1k ms); $(fmt %.0f "$(median db.load.ours.tps)") transactions/s" \
		"<= $GOAL_DB_CPU1K ms $(verdict "$c" '<=' "$GOAL_DB_CPU1K")"
else
	row "redis-server, mariadbd" "skipped: $SERVER_NOTE" ""
fi
if [ -n "$LONG_SUMMARY" ]; then
	row "steady run ${LONG_SECS}s, $(plural "$LONG_THREADS") @${HZ}Hz" "$LONG_SUMMARY" ""
	row "  VmRSS (s:KiB)" "$LONG_SERIES" ""
fi

w1=6 w2=8 w3=4
for r in "${ROWS[@]}"; do
	IFS='|' read -r a b c <<<"$r"
	[ ${#a} -gt $w1 ] && w1=${#a}
	[ ${#b} -gt $w2 ] && w2=${#b}
	[ ${#c} -gt $w3 ] && w3=${#c}
done
echo
echo "cprof-attach benchmark: medians of $REPS repetitions ($NEW_REPS for idle pools, servers, saturated; $EXTRA_REPS for the marginal cost and achieved rate); [min-max] of the paired ratios; workload ~$WORK_SECS s alone${BASELINE:+; baseline $BASELINE}"
printf "%-${w1}s | %-${w2}s | %s\n" metric measured goal
printf "%s-|-%s-|-%s\n" "$(printf '%*s' $w1 '' | tr ' ' -)" "$(printf '%*s' $w2 '' | tr ' ' -)" "$(printf '%*s' $w3 '' | tr ' ' -)"
for r in "${ROWS[@]}"; do
	IFS='|' read -r a b c <<<"$r"
	printf "%-${w1}s | %-${w2}s | %s\n" "$a" "$b" "$c"
done

# ---- issue 14's targets: measured, target, met -----------------------------
# One row per target of issue 14 ("Targets"), from the medians above.  A
# rate is the lower of the tick rate (the summary's "N.N of 99 Hz") and the
# samples per thread and second (threads alive throughout).
TROWS=()
trow() { TROWS+=("$1|$2|$3|$4"); }   # trow TARGET MEASURED GOAL VERDICT
met() { # met VALUE OP LIMIT -> met / not met / not measured
	awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
		if (v == "" || l == "") { print "not measured"; exit }
		ok = (op == "<=") ? (v + 0 <= l + 0) : (v + 0 >= l + 0); print ok ? "met" : "not met" }'
}
lower() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "") print b; else if (b == "" || a + 0 < b + 0) print a; else print b }'; }
why_not() { # why_not NOTE: the verdict column when a part did not run
	echo "not measured: $1"
}
# wall_met VALUE OP LIMIT [ALSO]: met / not met, or undetermined (ALSO: what
# the load-robust figure says, appended)
wall_met() {
	if faster "$1" "$2"; then echo "$UNDECIDED${4:+; $4}"; else met "$1" "$2" "$3"; fi
}
for n in 1000 100; do
	contains "$POOL_SIZES" "$n" || { trow "$n idle threads + 1 busy @${HZ}Hz: profiler share of a core" n/a "" "$(why_not "POOL_SIZES=$POOL_SIZES")"; continue; }
	eval "g=\$GOAL_POOL_$n"
	v=$(median "pool.$n.ours.share")
	trow "$n idle threads + 1 busy @${HZ}Hz: profiler share of a core, seconds 0.5-$(calc "0.5 + $POOL_WINDOW") (idle threads' checks spacing out)" "$(pct "$v")" "<= $(pct "$g")" "$(met "$v" '<=' "$g")"
	v=$(median "pool.$n.ours.steady")
	[ -n "$v" ] && trow "$n idle threads + 1 busy @${HZ}Hz: profiler share of a core, seconds $POOL_STEADY_AT-$((POOL_STEADY_AT + POOL_WINDOW)) (steady)" "$(pct "$v")" "<= $(pct "$g")" "$(met "$v" '<=' "$g")"
	if [ "$n" = 1000 ]; then
		v=$(lower "$(median pool.1000.ours.rate)" "$(median pool.1000.ours.per_thread)")
		trow "1000 idle threads + 1 busy @${HZ}Hz: achieved rate" \
			"$(pct "$v") (ticks $(pct "$(median pool.1000.ours.rate)"), samples/thread/s $(pct "$(median pool.1000.ours.per_thread)"))" \
			">= $(pct "$GOAL_RATE")" "$(met "$v" '>=' "$GOAL_RATE")"
	fi
done
if [ -z "$SERVER_NOTE" ]; then
	v=$(median db.idle.ours.share)
	trow "mariadbd idle ($DB_THREADS threads) @${HZ}Hz: profiler share of a core" "$(pct "$v")" "<= $(pct "$GOAL_DB_IDLE")" "$(met "$v" '<=' "$GOAL_DB_IDLE")"
	v=$(median db.load.ours.cpu1k_sampling)
	trow "mariadbd under sysbench oltp_read_only: profiler CPU per 1000 thread-samples" \
		"$(ms "$v") while sampling ($(ms "$(median db.load.ours.cpu1k)") whole run, with attach and symbolization)" "<= $GOAL_DB_CPU1K ms" "$(met "$v" '<=' "$GOAL_DB_CPU1K")"
	v=$(median redis.ours.ratio)
	trow "redis-server under redis-benchmark: throughput profiled / alone" "$(ratio "$v") [$(range redis.ours.ratio)]; its CPU per request $(ratio "$(median redis.ours.cpr_ratio)")x" ">= $GOAL_REDIS" "$(wall_met "$v" '>=' "$GOAL_REDIS")"
	pr=$(median redis.perf.ratio)
	if [ $PERF_OK = 1 ]; then
		trow "redis-server: our ratio not below perf record -F $HZ --call-graph dwarf's" "$(ratio "$v") vs perf $(ratio "$pr") [$(range redis.perf.ratio)]; its CPU per request under perf $(ratio "$(median redis.perf.cpr_ratio)")x" ">= perf's" \
			"$(if faster "$v" '>=' || faster "$pr" '>='; then echo "$UNDECIDED"; else met "$v" '>=' "$pr"; fi)"
	else
		trow "redis-server: our ratio not below perf record's" n/a ">= perf's" "$(why_not "$PERF_NOTE")"
	fi
else
	for w in "mariadbd idle: profiler share of a core" "mariadbd under sysbench: profiler CPU per 1000 thread-samples" \
		"redis-server under redis-benchmark: throughput profiled / alone" "redis-server: our ratio not below perf's"; do
		trow "$w" n/a "" "$(why_not "$SERVER_NOTE")"
	done
fi
for t in 1 8 64; do
	v=$(median "ours.$t.$HZ.slow")
	if [ -n "$v" ]; then
		trow "slowdown of a CPU-bound target @${HZ}Hz, $(plural "$t")" \
			"$(fmt %.3fx "$v") [$(range "ours.$t.$HZ.slow")]; target CPU time $(fmt %.3fx "$(median "ours.$t.$HZ.cslow")")" "<= 1.02x" \
			"$(wall_met "$v" '<=' 1.02 "in CPU time: $(met "$(median "ours.$t.$HZ.cslow")" '<=' 1.02)")"
	else
		trow "slowdown of a CPU-bound target @${HZ}Hz, $(plural "$t")" n/a "<= 1.02x" "$(why_not "THREADS=$THREADS CLASSIC=$CLASSIC")"
	fi
done
v=$(lower "$(median sat.ours.rate)" "$(median sat.ours.per_thread)")
trow "both cores saturated ($((2 * NCPU)) busy threads on $NCPU cores) @${HZ}Hz: achieved rate" \
	"$(pct "$v") (ticks $(pct "$(median sat.ours.rate)"), samples/thread/s $(pct "$(median sat.ours.per_thread)"))" ">= $(pct "$GOAL_RATE")" "$(met "$v" '>=' "$GOAL_RATE")"

w1=6 w2=8 w3=4
for r in "${TROWS[@]}"; do
	IFS='|' read -r a b c d <<<"$r"
	[ ${#a} -gt $w1 ] && w1=${#a}
	[ ${#b} -gt $w2 ] && w2=${#b}
	[ ${#c} -gt $w3 ] && w3=${#c}
done
nmet=0 nund=0
for r in "${TROWS[@]}"; do
	case ${r##*|} in met) nmet=$((nmet + 1)) ;; undetermined*) nund=$((nund + 1)) ;; esac
done
echo
echo "issue 14's targets: $nmet of ${#TROWS[@]} met, $nund undetermined (medians of $NEW_REPS repetitions for pools, servers, saturated; $REPS for the slowdowns)"
printf "%-${w1}s | %-${w2}s | %-${w3}s | %s\n" target measured goal verdict
printf "%s-|-%s-|-%s-|-%s\n" "$(printf '%*s' $w1 '' | tr ' ' -)" "$(printf '%*s' $w2 '' | tr ' ' -)" "$(printf '%*s' $w3 '' | tr ' ' -)" "-------"
for r in "${TROWS[@]}"; do
	IFS='|' read -r a b c d <<<"$r"
	printf "%-${w1}s | %-${w2}s | %-${w3}s | %s\n" "$a" "$b" "$c" "$d"
done
cp "$DATA" "$BUILD/last-run.data"   # every measurement, "KEY VALUE"
rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD -- . ':!bench' 2>/dev/null || rev="$rev+uncommitted changes"
echo "machine: $NCPU CPUs ($(nproc --all) online), $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), kernel $(uname -r); cprof-attach $rev; bench took $((SECONDS - T_START)) s; load average (1, 5, 15 min) $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
