# The polling and /proc helpers shared by the tests (through tests/lib.sh)
# and by bench/run.sh, which sources this file alone.  Only function
# definitions: no traps, no scratch directory, nothing runs at source time,
# and every function is safe under `set -euo pipefail`.  Predicates that
# fail say why in DETAIL (read by lib.sh's check).
#
# Synchronization is always a bounded polling loop on something observable
# (a ready file, /proc state), never a fixed sleep.

# wait_until SECONDS COMMAND...: poll COMMAND every 20 ms until it succeeds
# or SECONDS of wall time pass.  Returns COMMAND's last status.  Under
# tests/run.sh (CPROF_TEST_WAITING set) the wait is written down while it
# lasts, so that a file stopped by its time limit says what it waited for.
wait_until() {
	local deadline us rc=0 secs=$1
	us=$(awk -v s="$1" 'BEGIN { printf "%d", s * 1000000 }')
	deadline=$((${EPOCHREALTIME/[.,]/} + us))
	shift
	[ -z "${CPROF_TEST_WAITING:-}" ] ||
		echo "waiting up to $secs s for: $*" >"$CPROF_TEST_WAITING" 2>/dev/null || :
	while :; do
		"$@" && break
		[ "${EPOCHREALTIME/[.,]/}" -lt "$deadline" ] || { "$@" || rc=$?; break; }
		sleep 0.02
	done
	[ -z "${CPROF_TEST_WAITING:-}" ] || : >"$CPROF_TEST_WAITING" 2>/dev/null || :
	return $rc
}

file_ready() { [ -s "$1" ]; }

alive() { [ -d "/proc/$1" ] && [ "$(proc_state "$1")" != Z ]; }
gone() { ! alive "$1"; }

# proc_state PID [TID]: the one-letter state from /proc/.../stat
proc_state() {
	local f=/proc/$1/stat
	[ -n "${2:-}" ] && f=/proc/$1/task/$2/stat
	sed -n 's/^.*) \(.\) .*/\1/p' "$f" 2>/dev/null
}

tids() { ls "/proc/$1/task" 2>/dev/null; }
thread_count() { tids "$1" | wc -l; }

tracer_of() {
	awk '/^TracerPid:/ { print $2 }' "/proc/$1/task/$2/status" 2>/dev/null
}

# live_thread PID: some thread of PID is neither a zombie nor dead.  Unlike
# alive, true for a process whose main thread has exited while another runs
# on (its leader shows as a zombie).
live_thread() {
	local t
	for t in $(tids "$1"); do
		case $(proc_state "$1" "$t") in Z | X | '') ;; *) return 0 ;; esac
	done
	return 1
}

# untraced PID: the process runs (a live thread) and every thread has
# TracerPid 0.  Sets DETAIL otherwise.
untraced() {
	local pid=$1 t tp bad=
	live_thread "$pid" || { DETAIL="process $pid is gone"; return 1; }
	for t in $(tids "$pid"); do
		tp=$(tracer_of "$pid" "$t")
		[ -z "$tp" ] || [ "$tp" = 0 ] || bad="$bad $t:$tp"
	done
	[ -z "$bad" ] && return 0
	DETAIL="traced threads (tid:tracer):$bad"
	return 1
}

# all_traced PID: every thread has a tracer (the profiler attached).  A
# thread that is exiting, or gone between the listing and the read of its
# status, is skipped: with threads coming and going, it would fail every
# poll.
all_traced() {
	local pid=$1 t tp
	alive "$pid" || return 1
	for t in $(tids "$pid"); do
		tp=$(tracer_of "$pid" "$t")
		case $(proc_state "$pid" "$t") in Z | X | '') continue ;; esac
		[ -n "$tp" ] && [ "$tp" != 0 ] || return 1
	done
	return 0
}

# not_stopped PID: alive, and no thread stopped (T, t), zombie or dead.
not_stopped() {
	local pid=$1 t s bad=
	alive "$pid" || { DETAIL="process $pid is gone"; return 1; }
	for t in $(tids "$pid"); do
		s=$(proc_state "$pid" "$t")
		case $s in T | t | Z | X) bad="$bad $t:$s" ;; esac
	done
	[ -z "$bad" ] && return 0
	DETAIL="threads not running (tid:state):$bad"
	return 1
}

# all_stopped PID: every thread in a stop (T or t).
all_stopped() {
	local pid=$1 t s
	for t in $(tids "$pid"); do
		s=$(proc_state "$pid" "$t")
		case $s in T | t) ;; *) return 1 ;; esac
	done
	return 0
}

# cpu_ticks PID: utime + stime of the whole process and of its reaped
# children, in clock ticks.
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 + $14 + $15 }'
}

# progresses PID: the process uses at least 5 more ticks of CPU within 5 s
# (for targets with a CPU-burning thread): it is really running.
progresses() {
	local pid=$1 t0
	t0=$(cpu_ticks "$pid")
	[ -n "$t0" ] || { DETAIL="process $pid is gone"; return 1; }
	wait_until 5 _ticks_above "$pid" $((t0 + 5)) && return 0
	DETAIL="CPU time stuck at $t0 ticks"
	return 1
}
_ticks_above() { local t; t=$(cpu_ticks "$1"); [ -n "$t" ] && [ "$t" -ge "$2" ]; }

