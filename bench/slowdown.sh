#!/usr/bin/env bash
# The target's slowdown under each capture, measured, never asserted:
#     bash bench/slowdown.sh [REPS] [SECONDS] [CAPTURES]
#                                           (make bench: 5 3; QUICK=1: 2 2)
# bench/build/work (CPU-bound, THREADS threads, default "1 8 64", a fixed
# amount of work lasting about SECONDS alone), in each repetition alone,
# then profiled at each rate of RATES (default: the always-on default rate
# and 99 Hz) by each tool of CAPTURES (default "perf ptrace record-g"),
# one right after the other (the order rotates with the repetition):
#   perf          cprof-attach --capture perf --period 10s
#   ptrace        cprof-attach --capture ptrace --period 10s
#   record-g      perf record -e task-clock -F RATE -g -p PID (the peer:
#                 frame-pointer call chains, nothing copied)
#   record-dwarf  perf record -e task-clock -F RATE --call-graph dwarf
#                 (8 KiB of stack copied per sample, unwound later;
#                 "record" says the same)
# (record-* where perf is installed and runs.)  A slowdown is the median
# over repetitions of (wall time profiled / wall time alone, in the same
# repetition); beside it the same ratio of the work's CPU time.  The
# profiler's own CPU time (user + system, naming and writing included):
# per 1,000 of its samples (cprof-attach: thread-samples, every thread at
# every tick, running or not, from --stats; perf record: its samples,
# taken only on a CPU, so 64 threads on 2 cores give it about 2 x RATE a
# second against cprof-attach's 64 x RATE), and per second of the run.
# Prints "slowdown: THREADS RATE CAPTURE wall RATIO cpu RATIO profiler N
# ms per 1000 samples, N ms/s" lines, then a table.
set -u
cd "$(dirname "$0")/.."
REPS=${1:-7}
SECS=${2:-4}
CAPTURES=${3:-"perf ptrace record-g"}
THREADS=${THREADS:-"1 8 64"}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-slow.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
. tests/lib-core.sh
make -s cprof-attach >/dev/null 2>&1
mkdir -p bench/build
[ -x bench/build/work ] || ${CC:-cc} -O2 -g -fomit-frame-pointer -pthread -o bench/build/work bench/work.c
rate=$(bench/build/work --calibrate 1) || { echo "slowdown: calibration failed" >&2; exit 1; }
default_hz=$("$CPROF" --help | sed -nE 's/.*always on.*default ([0-9]+) Hz.*/\1/p' | head -1)
default_hz=${default_hz:-19}
RATES=${RATES:-"$default_hz 99"}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

traced() { awk '/^TracerPid/ { exit !($2 != 0) }' "/proc/$1/status" 2>/dev/null; }

# one T HZ CAPTURE: "WALL CPU" of the work (HZ 0: alone), then the
# profiler's ms of CPU per 1000 samples and per second (else "- -").
one() {
	local t=$1 hz=$2 cap=${3:-} units prof= per=- cpu=- n
	units=$(awk -v r="$rate" -v s="$SECS" -v t="$t" -v n="$(nproc)" 'BEGIN { printf "%d", r * s * (t < n ? t : n) }')
	rm -f "$TMP/ready" "$TMP/prof.err" "$TMP/time"
	bench/build/work "$t" "$units" "$TMP/ready" >"$TMP/out" &
	local w=$!
	wait_until 10 file_ready "$TMP/ready" || { kill "$w"; return 1; }
	if [ "$hz" != 0 ] && [[ $cap == record-* ]]; then
		local cg=(-g)
		[ "$cap" = record-dwarf ] && cg=(--call-graph dwarf)
		/usr/bin/time -f '%U %S' -o "$TMP/time" perf record -e task-clock -F "$hz" "${cg[@]}" \
			-p "$w" -o "$TMP/perf.data" >/dev/null 2>"$TMP/prof.err" &
		prof=$!
		sleep 0.5       # perf has no ready signal; it reads the maps first
	elif [ "$hz" != 0 ]; then
		/usr/bin/time -f '%U %S' -o "$TMP/time" "$CPROF" "$w" --period 10s --hz "$hz" \
			--capture "$cap" --stats -q -o "$TMP/p-%n.pprof" 2>"$TMP/prof.err" &
		prof=$!
		wait_until 10 traced "$w"
	fi
	kill -USR1 "$w"
	wait "$w"
	if [ -n "$prof" ]; then
		wait "$prof"
		# Samples: perf record's closing line, or cprof-attach's --stats.
		n=$(sed -nE 's/.*\(([0-9]+) samples\).*/\1/p; s/.*; ([0-9]+) thread-samples: .*/\1/p' \
			"$TMP/prof.err" | awk '{ n += $1 } END { print n + 0 }')
		# perf record leaves its count out with many threads' buffers
		[ "$n" = 0 ] && [[ $cap == record-* ]] &&
			n=$(perf report -i "$TMP/perf.data" --stats 2>/dev/null |
				sed -nE 's/^ *SAMPLE events: *([0-9]+).*/\1/p' | head -n 1)
		read -r per cpu <<<"$(awk -v n="$n" -v w="$(awk '{ print $2 }' "$TMP/out")" '
			NR == 1 && NF == 2 { c = ($1 + $2) * 1000; p = "-"
				if (n > 0) p = sprintf("%.1f", c * 1000 / n)
				printf "%s %.1f\n", p, c / w; ok = 1 }
			END { if (!ok) print "- -" }' "$TMP/time")"
	fi
	echo "$(awk '{ print $2, $8 }' "$TMP/out") ${per:--} ${cpu:--}"
}

# "record", as this script first named perf record --call-graph dwarf
CAPTURES=$(echo " $CAPTURES " | sed 's/ record / record-dwarf /; s/^ //; s/ $//')
for c in $CAPTURES; do
	case $c in
	record-*)
		if ! perf record -q -e task-clock -o /dev/null -- true >/dev/null 2>&1; then
			echo "slowdown: perf record does not run here: $c left out" >&2
			CAPTURES=$(echo " $CAPTURES " | sed "s/ $c / /")
		fi ;;
	perf | ptrace) ;;
	*) echo "slowdown: unknown capture '$c' (perf, ptrace, record-g, record-dwarf)" >&2; exit 2 ;;
	esac
done

echo "slowdown: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $REPS repetitions of about $SECS s" \
     "($(git rev-parse --short HEAD 2>/dev/null))"
for t in $THREADS; do
	: >"$TMP/r.$t"
	for rep in $(seq "$REPS"); do
		alone=$(one "$t" 0) || continue
		runs=
		for hz in $RATES; do for cap in $CAPTURES; do runs="$runs $hz:$cap"; done; done
		set -- $runs
		k=$(( (rep - 1) % $# ))
		order="${*:k+1} ${*:1:k}"
		for run in $order; do
			hz=${run%%:*} cap=${run#*:}
			r=$(one "$t" "$hz" "$cap") || continue
			echo "$hz $cap $(awk -v a="$alone" -v b="$r" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.4f %.4f %s %s", y[1] / x[1], y[2] / x[2], y[3], y[4] }')" >>"$TMP/r.$t"
		done
	done
	for hz in $RATES; do
		for cap in $CAPTURES; do
			col() { awk -v h="$hz" -v c="$cap" -v k="$1" '$1 == h && $2 == c && $k != "-" { print $k }' "$TMP/r.$t" | median; }
			w=$(col 3) c=$(col 4) p=$(col 5) s=$(col 6)
			echo "slowdown: $t thread(s) ${hz} Hz $cap wall ${w}x cpu ${c}x profiler ${p:--} ms per 1000 samples, ${s:--} ms/s (median of $REPS)" |
				tee -a "$TMP/table"
		done
	done
done
echo "slowdown: load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
# The table: one row a thread count and rate, the tools side by side.
awk -v caps="$CAPTURES" 'BEGIN { n = split(caps, cap, " ")
	printf "| threads | Hz |"; for (i = 1; i <= n; i++) printf " %s |", cap[i]; print ""
	printf "|---|---|"; for (i = 1; i <= n; i++) printf "---|"; print "" }
	{ key = $2 " " $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key }
	  v[key, $6] = $8 " (" $10 " cpu), " $12 " ms/1k, " $17 " ms/s" }
	END { for (j = 1; j <= k; j++) { split(order[j], a, " "); printf "| %s | %s |", a[1], a[2]
		for (i = 1; i <= n; i++) printf " %s |", v[order[j], cap[i]]; print "" } }' "$TMP/table" |
	sed 's/^/slowdown: /'
