#!/usr/bin/env bash
# CPython's frames (issue 26), what they cost, measured, never asserted:
#     bash bench/python.sh [SECONDS] [ROUNDS]   (make bench: 5 3; QUICK=1: 2 2)
# On tests/targets/pysplit.py (six threads: computing, sleeping, holding and
# waiting for a lock, in zlib, joining), for each CPython installed (pyenv's
# 3.8-3.13 under ~/.pyenv/versions, Debian's python3.11): ROUNDS pairs of
# runs of SECONDS each, side by side on the same process, one with Python
# frames (the default) and one --no-python, alternating.  For each: the
# profiler's CPU per 1,000 thread-samples and the target's pause per stopped
# thread (median, p99), as --stats gives them; the medians over the rounds
# and their ratio.  Prints "python: VERSION KEY VALUE" lines.
set -u
cd "$(dirname "$0")/.."
SECS=${1:-5}
ROUNDS=${2:-3}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-pybench.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
make -s cprof-attach >/dev/null 2>&1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

pythons=()
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
	for p in "$HOME"/.pyenv/versions/$v.*/bin/python3; do
		[ -x "$p" ] && pythons+=("$p")
	done
done
[ -x /usr/bin/python3.11 ] && pythons+=(/usr/bin/python3.11)
[ ${#pythons[@]} -gt 0 ] || { echo "python: no CPython found" >&2; exit 1; }

for py in "${pythons[@]}"; do
	name=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	case $py in /usr/bin/*) name="$name-debian" ;; esac
	rm -f "$TMP/ready"
	"$py" tests/targets/pysplit.py "$TMP/ready" & PID=$!
	for _ in $(seq 300); do [ -s "$TMP/ready" ] && break; sleep 0.1; done
	[ -s "$TMP/ready" ] || { echo "python: $name did not start" >&2; kill "$PID"; continue; }
	: >"$TMP/with"; : >"$TMP/without"
	for _ in $(seq "$ROUNDS"); do
		for mode in with without; do
			opt=; [ $mode = without ] && opt=--no-python
			"$CPROF" "$PID" -d "$SECS" -q --stats $opt -o "$TMP/out.pprof" 2>"$TMP/err" || true
			cpu=$(grep -oE '[0-9.]+ ms per 1000 thread-samples' "$TMP/err" | cut -d' ' -f1)
			med=$(grep -oE 'pause per thread median [0-9.]+ us' "$TMP/err" | awk '{ print $5 }')
			p99=$(grep -oE 'us, p99 [0-9.]+ us' "$TMP/err" | awk '{ print $3 }')
			echo "${cpu:-0} ${med:-0} ${p99:-0}" >>"$TMP/$mode"
		done
	done
	kill "$PID"; wait "$PID" 2>/dev/null; PID=
	for mode in with without; do
		eval "${mode}_cpu=\$(cut -d' ' -f1 \"\$TMP/\$mode\" | median)"
		eval "${mode}_med=\$(cut -d' ' -f2 \"\$TMP/\$mode\" | median)"
		eval "${mode}_p99=\$(cut -d' ' -f3 \"\$TMP/\$mode\" | median)"
	done
	echo "python: $name cpu_ms_per_1000 $with_cpu (--no-python $without_cpu, ratio $(awk -v a="$with_cpu" -v b="$without_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'))"
	echo "python: $name pause_median_us $with_med (--no-python $without_med)"
	echo "python: $name pause_p99_us $with_p99 (--no-python $without_p99)"
done
