#!/usr/bin/env bash
# What the Ruby, PHP and Java views cost, measured, never asserted:
#     bash bench/runtimes.sh [SECONDS] [ROUNDS]   (make bench: 5 3; QUICK=1: 2 2)
# For each runtime installed, on its test target with a known split
# (tests/targets/rbthreads.rb: six Ruby threads; tests/targets/phpsplit.php:
# one PHP thread computing, sleeping, in stream_select;
# tests/bin/java/JvmSplit.class: five Java threads): ROUNDS pairs of runs of
# SECONDS each, side by side on the same process, with the runtime's frames
# (the default) and without (--no-ruby, --no-php, --no-java), alternating,
# by perf (no stop) and by ptrace stops.  For each: the profiler's CPU per
# 1,000 thread-samples and the target's pause per stopped thread (median),
# as --stats gives them; the medians over the rounds and their ratio.
# Prints "runtimes: NAME CAPTURE KEY VALUE" lines.
set -u
cd "$(dirname "$0")/.."
SECS=${1:-5}
ROUNDS=${2:-3}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-rtbench.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
make -s cprof-attach tests/bin/java/JvmSplit.class >/dev/null 2>&1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# bench NAME OFF COMMAND...: the target started by COMMAND (READY in it:
# the ready file's path), measured
bench() {
	local name=$1 off=$2 cap mode opt cpu med a
	shift 2
	local cmd=()
	for a in "$@"; do
		[ "$a" = READY ] && a=$TMP/ready
		cmd+=("$a")
	done
	rm -f "$TMP/ready"
	"${cmd[@]}" >/dev/null 2>&1 & PID=$!
	for _ in $(seq 300); do [ -s "$TMP/ready" ] && break; sleep 0.1; done
	[ -s "$TMP/ready" ] || { echo "runtimes: $name did not start" >&2; kill "$PID"; PID=; return; }
	local target
	target=$(head -n 1 "$TMP/ready")
	case $target in *[!0-9]*) target=$PID ;; esac
	for cap in perf ptrace; do
		: >"$TMP/with"; : >"$TMP/without"
		for _ in $(seq "$ROUNDS"); do
			for mode in with without; do
				opt=; [ $mode = without ] && opt=$off
				"$CPROF" "$target" -d "$SECS" -q --stats --capture "$cap" $opt -o "$TMP/out.pprof" \
					2>"$TMP/err" || true
				cpu=$(grep -oE '[0-9.]+ ms per 1000 thread-samples' "$TMP/err" | cut -d' ' -f1)
				med=$(grep -oE 'pause per thread median [0-9.]+ us' "$TMP/err" | awk '{ print $5 }')
				echo "${cpu:-0} ${med:-0}" >>"$TMP/$mode"
			done
		done
		local wc wm oc om
		wc=$(cut -d' ' -f1 "$TMP/with" | median); wm=$(cut -d' ' -f2 "$TMP/with" | median)
		oc=$(cut -d' ' -f1 "$TMP/without" | median); om=$(cut -d' ' -f2 "$TMP/without" | median)
		echo "runtimes: $name $cap cpu_ms_per_1000 $wc (without $oc, ratio $(awk -v a="$wc" -v b="$oc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'))"
		echo "runtimes: $name $cap pause_median_us $wm (without $om)"
	done
	kill "$PID"; wait "$PID" 2>/dev/null; PID=
}

if command -v ruby >/dev/null; then
	bench ruby --no-ruby ruby tests/targets/rbthreads.rb READY
fi
if command -v php8.2 >/dev/null; then
	bench php --no-php php8.2 tests/targets/phpsplit.php READY "$TMP/truth"
fi
if command -v java >/dev/null && [ -f tests/bin/java/JvmSplit.class ]; then
	bench java --no-java java -cp tests/bin/java JvmSplit READY
fi
