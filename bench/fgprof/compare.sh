#!/usr/bin/env bash
# bench/fgprof/compare.sh: cprof-attach's goroutine view against fgprof's,
# on one Go program (bench/fgprof/main.go: main in select{}, main.compute
# computing, main.sleeper in time.Sleep, two main.locker on one sync.Mutex,
# main.window sleeping while it runs the in-process profiler).
#
# 1. Shares.  Two runs of SECS seconds (default 10), each profiled from
#    inside and, over the same window, from outside by
#    `cprof-attach PID --hz 99 --duration SECS -o ours.pprof`:
#      fgprof: fgprof 0.9.2 itself (Debian's golang-github-felixge-fgprof-dev);
#      GoroutineProfile: fgprof's definition (runtime.GoroutineProfile 99
#        times a second, every goroutine counted once) without fgprof
#        0.9.2's loss of counts (see gp.go).
#    Every profile is read with `go tool pprof -traces`, each stack put in a
#    row by the frames it has; a share is the row's part of the samples,
#    the profilers' own goroutines left out (fgprof leaves itself out).
# 2. Cost.  REPS (default 3) rounds of COST_SECS (default 5) seconds each
#    of the program alone, under fgprof, under GoroutineProfile, under
#    cprof-attach (order rotating), each once without main.compute
#    (FGBENCH_IDLE=1: an in-process profiler's cost is then the program's
#    CPU time over its time alone; cprof-attach's is its own, --stats) and
#    once with it (main.compute's loops a second: the program's work);
#    medians.
# Not part of make check.  Needs Go (GO, default /usr/lib/go-1.19/bin/go)
# and fgprof: Debian's package (installed here as root when missing) or,
# with the module proxy reachable, the module go.mod names.
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GO=${GO:-/usr/lib/go-1.19/bin/go}
CPROF=$(readlink -f "${CPROF:-$ROOT/cprof-attach}")
SECS=${SECS:-10}
COST_SECS=${COST_SECS:-5}
REPS=${REPS:-3}
. "$ROOT/tests/lib-core.sh"
TMP=$(mktemp -d /tmp/cprof-fgprof.XXXXXX)
PROG_PID=
trap '[ -z "$PROG_PID" ] || kill "$PROG_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
die() { echo "compare.sh: $*" >&2; exit 1; }

[ -x "$GO" ] || die "no Go toolchain at $GO (golang-1.19-go)"
[ -x "$CPROF" ] || die "no $CPROF: build it first (make)"

# --- build --------------------------------------------------------------------------
DEB_SRC=/usr/share/gocode/src/github.com/felixge/fgprof
if [ ! -d "$DEB_SRC" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get install -y -q golang-github-felixge-fgprof-dev >/dev/null 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 && apt-get install -y -q golang-github-felixge-fgprof-dev >/dev/null 2>&1; } || true
fi
BIN=$TMP/fgbench
if [ -d "$DEB_SRC" ]; then
	# Debian's Go packages are a GOPATH tree: no module download.
	(cd "$ROOT/bench/fgprof" && GOENV=off GOFLAGS= GO111MODULE=off GOPATH=/usr/share/gocode \
		GOCACHE="$TMP/gocache" CGO_ENABLED=0 "$GO" build -o "$BIN" .) ||
		die "could not build bench/fgprof against $DEB_SRC"
	FGPROF_VERSION="$(dpkg-query -W -f '${Version}' golang-github-felixge-fgprof-dev 2>/dev/null || echo '?') (Debian)"
else
	cp -r "$ROOT/bench/fgprof" "$TMP/src"
	(cd "$TMP/src" && GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" build -o "$BIN" .) ||
		die "no fgprof: install golang-github-felixge-fgprof-dev, or reach the Go module proxy"
	FGPROF_VERSION="$(sed -n 's/^require github.com\/felixge\/fgprof //p' "$ROOT/bench/fgprof/go.mod")"
fi

# --- runs ---------------------------------------------------------------------------
# run NAME SECONDS PROFILER OURS: the program for SECONDS with PROFILER
# (fgbench's argument) and, if OURS is 1, cprof-attach over the same window;
# leaves NAME.stats (wall cpu loops) and NAME.ours.pprof, NAME.err.
run() {
	local name=$1 secs=$2 prof=$3 ours=$4 ready=$TMP/$1.ready cpid=
	"$BIN" "$ready" "$secs" "$prof" >"$TMP/$name.out" 2>&1 &
	PROG_PID=$!
	wait_until 30 file_ready "$ready" || die "$name: the program did not start: $(cat "$TMP/$name.out")"
	if [ "$ours" = 1 ]; then
		"$CPROF" "$PROG_PID" --hz 99 --duration "$secs" --stats -q \
			-o "$TMP/$name.ours.pprof" 2>"$TMP/$name.err" &
		cpid=$!
	fi
	wait_until $((secs + 30)) file_ready "$ready.stats" || die "$name: no window statistics"
	[ -z "$cpid" ] || wait "$cpid" || die "$name: cprof-attach failed: $(cat "$TMP/$name.err")"
	kill "$PROG_PID"
	wait "$PROG_PID" 2>/dev/null || true
	PROG_PID=
	cp "$ready.stats" "$TMP/$name.stats"
}

# rows PPROF: "ROW COUNT" for each row of the table, from pprof's -traces
# (a stack's labels, then its frames, leaf first, its count on the first
# frame's line).  The profiler's goroutine is known by its function (ours
# labels it goroutine_function): on the system stack, stopping the world,
# its thread's stack does not reach the goroutine's frames.
rows() {
	"$GO" tool pprof -sample_index=samples -traces "$1" 2>/dev/null | awk '
	function flush() {
		if (n == "") return
		if (gf ~ /fgprof\.Start\.func1|main\.gpStart\.func1/ ||
		    s ~ /fgprof\.Start\.func1;|main\.gpStart\.func1;/) r = "profiler"
		else if (s ~ /;main\.window;/) r = "window"
		else if (s ~ /;main\.compute;/) r = "compute"
		else if (s ~ /;main\.sleeper;/) r = "sleeper"
		else if (s ~ /;main\.locker;/ && s ~ /lockSlow|Mutex\)\.Lock;/) r = "locker_wait"
		else if (s ~ /;time\.Sleep;main\.locker;/) r = "locker_sleep"
		else if (s ~ /;main\.locker;/) r = "locker_other"
		else if (s ~ /;main\.main;/) r = "main"
		else r = "other"
		c[r] += n
		n = ""; gf = ""
	}
	/^-----------\+/ { flush(); blk = 1; next }
	!blk { next }
	/^ *goroutine_function: / { gf = $2; next }
	n == "" && /^ *[0-9]+ +[^ ]/ { n = $1; s = ";" $2 ";"; next }
	n != "" && /^             [^ ]/ { s = s $1 ";"; next }
	END { flush(); for (r in c) print r, c[r] }'
}

# share ROWS ROW: ROW's percentage of the samples, the profiler row left out.
share() {
	awk -v want="$2" '$1 != "profiler" { t += $2 } $1 == want { n = $2 }
		END { if (t) printf "%.1f", 100 * n / t; else printf "-" }' "$1"
}

echo "cprof-attach $("$CPROF" --version 2>&1 | head -1 | awk '{ print $NF }'), fgprof $FGPROF_VERSION," \
	"$("$GO" version | awk '{ print $3 }'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "shares: $SECS s at 99 Hz, profiled from inside and from outside over the same window"
run fg "$SECS" "fgprof:$TMP/fg.pprof" 1
run gp "$SECS" "gp:$TMP/gp.pprof" 1
for f in fg gp; do
	rows "$TMP/$f.pprof" >"$TMP/$f.rows"
	rows "$TMP/$f.ours.pprof" >"$TMP/$f.ours.rows"
done
total() { awk '$1 != "profiler" { t += $2 } END { print t + 0 }' "$1"; }
profiler() { awk '$1 == "profiler" { n = $2 } END { print n + 0 }' "$1"; }

printf '\n%-38s %9s %10s %9s %16s %9s\n' "goroutine: where" expected "fgprof" "ours" "GoroutineProfile" "ours"
for row in main:"main: select{}" compute:"main.compute: computing" sleeper:"main.sleeper: time.Sleep" \
	locker_sleep:"main.locker x2: holds the lock, Sleep" locker_wait:"main.locker x2: waits in Mutex.Lock" \
	locker_other:"main.locker x2: elsewhere" window:"main.window: time.Sleep" other:"other"; do
	key=${row%%:*}
	case $key in locker_other | other) exp=0 ;; *) exp=16.7 ;; esac
	printf '%-38s %8s%% %9s%% %8s%% %15s%% %8s%%\n' "${row#*:}" "$exp" \
		"$(share "$TMP/fg.rows" "$key")" "$(share "$TMP/fg.ours.rows" "$key")" \
		"$(share "$TMP/gp.rows" "$key")" "$(share "$TMP/gp.ours.rows" "$key")"
done
ticks() { awk -v s="$1" 'BEGIN { printf "%d", 99 * s }'; }
printf '%-38s %9s %10s %9s %16s %9s\n' "samples (profiler's goroutine apart)" "6 x $(ticks "$SECS")" \
	"$(total "$TMP/fg.rows")" "$(total "$TMP/fg.ours.rows")" "$(total "$TMP/gp.rows")" "$(total "$TMP/gp.ours.rows")"
printf '%-38s %9s %10s %9s %16s %9s\n' "the profiler's own goroutine" "" "left out" \
	"$(profiler "$TMP/fg.ours.rows")" "left out" "$(profiler "$TMP/gp.ours.rows")"
for f in fg gp; do
	echo "cprof-attach ($f run): $(grep -oE '[0-9.]+ of [0-9]+ Hz' "$TMP/$f.err"), profiler CPU" \
		"$(grep -oE 'profiler CPU [0-9.]+ ms' "$TMP/$f.err" | awk -v s="$SECS" '{ printf "%s ms (%.1f%% of a core over %s s, start and symbolization included)", $3, $3 / s / 10, s }')"
done

# --- cost ---------------------------------------------------------------------------
echo
echo "cost: $REPS rounds of $COST_SECS s each, the program alone, under fgprof, under GoroutineProfile" \
	"(fgprof's definition), under cprof-attach --hz 99 (order rotating); medians"
modes="alone fgprof gp ours"
for i in $(seq 1 "$REPS"); do
	set -- $modes
	for _ in $(seq 2 "$i"); do set -- "$@" "$1"; shift; done
	for m in "$@"; do
		for idle in 1 0; do
			export FGBENCH_IDLE=$idle
			name=c$i.$m.$idle
			case $m in
			alone) run "$name" "$COST_SECS" - 0 ;;
			fgprof) run "$name" "$COST_SECS" "fgprof:$TMP/$name.pprof" 0 ;;
			gp) run "$name" "$COST_SECS" "gp:$TMP/$name.pprof" 0 ;;
			ours) run "$name" "$COST_SECS" - 1 ;;
			esac
			pcpu=$( { grep -oE 'profiler CPU [0-9.]+ ms' "$TMP/$name.err" 2>/dev/null || true; } |
				awk '{ printf "%.4f", $3 / 1000 }')
			# wall cpu loops gp_s gp_calls profiler_cpu
			echo "$(cat "$TMP/$name.stats") ${pcpu:-0}" >>"$TMP/cost.$m.$idle"
		done
	done
done
unset FGBENCH_IDLE
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# col MODE IDLE EXPR: the median over the rounds of EXPR ($1 wall, $2 program
# CPU, $3 loops, $4 time in GoroutineProfile, $5 its calls, $6 cprof-attach's CPU)
col() { awk "{ print $3 }" "$TMP/cost.$1.$2" | median; }
f3() { awk '{ printf "%.3f", $1 }'; }
base_cpu=$(col alone 1 '$2 / $1')
base_loops=$(col alone 0 '$3 / $1')
echo "without main.compute (FGBENCH_IDLE=1): what each profiler costs, in CPU (a share of one core);"
echo "with it: main.compute's loops a second (the program's own work) and the change from alone"
printf '%-8s %12s %12s %22s   %s\n' "" "program CPU" "cprof-attach" "main.compute loops/s" "the profiler's own CPU"
for m in $modes; do
	cpu=$(col "$m" 1 '$2 / $1' | f3)
	loops=$(col "$m" 0 '$3 / $1')
	attach=-
	case $m in
	alone) own=- ;;
	fgprof | gp) own="$(awk -v a="$cpu" -v b="$base_cpu" 'BEGIN { printf "%.3f", a - b }') (program CPU over alone)" ;;
	ours) attach=$(col ours 1 '$6 / $1' | f3); own="$attach (cprof-attach's, --stats)" ;;
	esac
	if [ "$m" = gp ]; then
		busy=$(col gp 1 '$4 / $1' | f3)
		call=$(col gp 1 '$4 / ($5 ? $5 : 1) * 1e6' | awk '{ printf "%.0f", $1 }')
		own="$own; in GoroutineProfile $busy of the wall time, $call us a call"
	fi
	printf '%-8s %12s %12s %13.0f (%+5.1f%%)   %s\n' "$m" "$cpu" "$attach" "$loops" \
		"$(awk -v a="$loops" -v b="$base_loops" 'BEGIN { print 100 * (a - b) / b }')" "$own"
done
