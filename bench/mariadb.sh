#!/usr/bin/env bash
# bench/mariadb.sh [SECONDS] [MODES...]: mariadbd under sysbench
# oltp_read_only (4 clients), runs of SECONDS, one after the other on one
# server, in the order given (issue 22: docs/always-on.md):
#   alone        sysbench alone
#   pHZ          profiled at HZ (--period 10s): the profiler's CPU per 1,000
#                thread-samples as well; CPROF_SYMCACHE=0 in the
#                environment asks libdwfl for every symbol (the comparison)
#   oHZ          profiled at HZ, one profile at the end (no period)
#   tidHZ        profiled at HZ, mariadbd's main thread only (--tid)
#   perfHZ       pHZ with `perf stat` of mariadbd (context switches,
#                migrations, CPU time) into the output
#   statalone    alone with the same `perf stat`
#   recHZ        `perf record -e task-clock -F HZ -g` of mariadbd (the
#                peer): its CPU per 1,000 of its samples (on a CPU only)
#   MODE-CAPTURE any profiled mode with --capture CAPTURE (perf, ptrace):
#                p19-perf, p99-ptrace ...
# Prints "MODE tps N [samples N cpu USER SYS WALL ms/1000 N]" lines, then
# each profiled run's TPS against the mean of the alone runs nearest
# before and after it (the machine drifts: only such ratios compare).
# PROFARGS adds options to each profiled run (e.g. --stats, whose lines
# are printed under it); PROFWRAP runs the profiler under a command
# (e.g. "perf record -g -o /tmp/perf.data --", "chrt -f 1").
# Default: 15 s, alone p19-perf p19-ptrace rec19 alone rec99 p99-ptrace
# p99-perf alone (rec* left out where perf record does not run).  Skips,
# saying so, without
# mariadbd and sysbench (Debian: mariadb-server, sysbench).
set -u
cd "$(dirname "$0")/.."
T=${1:-15}
shift $(( $# ? 1 : 0 ))
MODES=${*:-alone p19-perf p19-ptrace rec19 alone rec99 p99-ptrace p99-perf alone}
CPROF=${CPROF:-./cprof-attach}
if ! command -v mariadbd >/dev/null || ! command -v sysbench >/dev/null; then
	echo "mariadb: skipped: mariadbd or sysbench not installed"
	exit 0
fi
if ! perf record -q -e task-clock -o /dev/null -- true >/dev/null 2>&1; then
	echo "mariadb: perf record does not run here: rec modes left out"
	MODES=$(echo " $MODES " | sed -E 's/ rec[0-9]+//g')
fi
d=$(mktemp -d /tmp/cprof-mariadb.XXXXXX)
db=
trap '[ -n "$db" ] && kill -KILL "$db" 2>/dev/null; rm -rf "$d"' EXIT
mariadb-install-db --no-defaults --datadir="$d/data" --user=root \
	--auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 ||
	{ echo "mariadb: skipped: mariadb-install-db failed"; exit 0; }
mariadbd --no-defaults --datadir="$d/data" --socket="$d/sock" --skip-networking --user=root \
	--skip-log-bin --innodb-buffer-pool-size=64M ${DBARGS:-} --log-error="$d/err" >/dev/null 2>&1 &
db=$!
for _ in $(seq 3000); do
	mariadb-admin --no-defaults -S "$d/sock" -uroot ping >/dev/null 2>&1 && break
	sleep 0.01
done
mariadb --no-defaults -S "$d/sock" -uroot -e "create database sbtest"
sb=(sysbench oltp_read_only --db-driver=mysql --mysql-socket="$d/sock" --mysql-user=root
    --tables=2 --table-size=10000)
"${sb[@]}" prepare >"$d/prepare.log" 2>&1
tps() { sed -nE 's/.*transactions: +[0-9]+ +\(([0-9.]+) per sec.*/\1/p' "$1"; }
# The sum over mariadbd's threads of /proc/.../schedstat (CPU time, time
# waiting on a run queue (ns), times run) and of nr_migrations.
sched() {
	{ cat /proc/"$db"/task/*/schedstat; grep -h nr_migrations /proc/"$db"/task/*/sched; } 2>/dev/null |
	awk '/nr_migrations/ { m += $3; next } { c += $1; w += $2; n += $3 } END { printf "%d %d %d %d\n", c, w, n, m }'
}
# What one run changed in it, per transaction: CPU time, time waiting to
# run, times run, times moved to another CPU (/proc/.../sched).
sched_delta() {
	awk -v a="$1" -v b="$(sched)" -v t="$(sed -nE 's/.*transactions: +([0-9]+) .*/\1/p' "$2")" 'BEGIN {
		split(a, x, " "); split(b, y, " "); if (t <= 0) t = 1
		printf "sched per transaction: cpu %.1f us, waiting to run %.1f us, runs %.2f, " \
		       "moved to another CPU %.4f\n", (y[1] - x[1]) / t / 1000, (y[2] - x[2]) / t / 1000,
		       (y[3] - x[3]) / t, (y[4] - x[4]) / t }'
}
echo "mariadb: $(ls /proc/$db/task | wc -l) threads, ${T} s runs"
for mode in $MODES; do
	stat=
	case $mode in
	alone|statalone)
		s0=$(sched)
		[ "$mode" = statalone ] && { perf stat -e context-switches,cpu-migrations,task-clock \
			-p "$db" -o "$d/stat" -- sleep $((T - 2)) & stat=$!; }
		"${sb[@]}" --threads=4 --time="$T" run >"$d/run.log" 2>&1
		[ -n "$stat" ] && wait "$stat"
		echo "mariadb: $mode tps $(tps "$d/run.log")" | tee -a "$d/tps"
		echo "mariadb:   $(sched_delta "$s0" "$d/run.log")"
		[ -n "$stat" ] && grep -E "switches|migrations|task-clock" "$d/stat" | sed 's/^/mariadb:   /'
		continue ;;
	rec*)
		hz=${mode#rec}
		s0=$(sched)
		/usr/bin/time -f '%U %S %e' -o "$d/time" perf record -e task-clock -F "$hz" -g -p "$db" \
			-o "$d/perf.data" -- sleep "$T" >/dev/null 2>"$d/prof.err" &
		prof=$!
		"${sb[@]}" --threads=4 --time="$T" run >"$d/run.log" 2>&1
		wait "$prof"
		s=$(sed -nE 's/.*\(([0-9]+) samples\).*/\1/p' "$d/prof.err" | tail -1)
		echo "mariadb: $mode tps $(tps "$d/run.log") samples ${s:-?} cpu $(cat "$d/time")" \
		     "ms/1000 $(awk -v n="${s:-0}" '{ if (n > 0) printf "%.1f", 1000 * ($1 + $2) * 1000 / n; else print "?" }' "$d/time")" |
			tee -a "$d/tps"
		echo "mariadb:   $(sched_delta "$s0" "$d/run.log")"
		continue ;;
	p[0-9]*|o*|tid*|perf*) ;;
	*) echo "mariadb: unknown mode $mode"; continue ;;
	esac
	cap=
	case $mode in *-*) cap=${mode#*-} ;; esac
	hz=${mode%%-*}
	hz=${hz//[a-z]/}
	args=(--period 10s -o "$d/f-%n.pprof")
	[ -n "$cap" ] && args+=(--capture "$cap")
	case $mode in
	o*) args=(-o "$d/one.folded") ;;
	tid*) args+=(--tid "$db") ;;
	perf*) perf stat -e context-switches,cpu-migrations,task-clock -p "$db" -o "$d/stat" \
		-- sleep $((T - 2)) & stat=$! ;;
	esac
	s0=$(sched)
	/usr/bin/time -f '%U %S %e' -o "$d/time" ${PROFWRAP:-} "$CPROF" "$db" -F "$hz" --duration "$T" -q \
		"${args[@]}" ${PROFARGS:-} 2>"$d/prof.err" &
	prof=$!
	"${sb[@]}" --threads=4 --time="$T" run >"$d/run.log" 2>&1
	wait "$prof"
	[ -n "$stat" ] && wait "$stat"
	s=$(sed -nE 's/^cprof-attach: ([0-9]+) samples?,.*/\1/p' "$d/prof.err" | tail -1)
	echo "mariadb: $mode tps $(tps "$d/run.log") samples ${s:-?} cpu $(cat "$d/time")" \
	     "ms/1000 $(awk -v n="${s:-0}" '{ if (n > 0) printf "%.1f", 1000 * ($1 + $2) * 1000 / n; else print "?" }' "$d/time")" |
		tee -a "$d/tps"
	echo "mariadb:   $(sched_delta "$s0" "$d/run.log")"
	[ -n "$stat" ] && grep -E "switches|migrations|task-clock" "$d/stat" | sed 's/^/mariadb:   /'
	[ -n "${PROFARGS:-}" ] && grep -vE '^cprof-attach: [0-9]+ samples?,' "$d/prof.err" | sed 's/^/mariadb:   /'
done
# Each profiled run against the alone runs around it.
awk '{ m[NR] = $2; t[NR] = $4; line[NR] = $0 }
	END { for (i = 1; i <= NR; i++) {
		if (m[i] ~ /alone$/) continue
		s = 0; k = 0
		for (j = i - 1; j >= 1; j--) if (m[j] ~ /alone$/) { s += t[j]; k++; break }
		for (j = i + 1; j <= NR; j++) if (m[j] ~ /alone$/) { s += t[j]; k++; break }
		if (k && s > 0) printf "mariadb: %s tps %.4fx of the alone runs around it (%.1f / %.1f)\n", m[i], t[i] / (s / k), t[i], s / k
	} }' "$d/tps" 2>/dev/null
mariadb-admin --no-defaults -S "$d/sock" -uroot shutdown >/dev/null 2>&1
wait "$db" 2>/dev/null
db=
