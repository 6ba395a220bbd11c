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
	local deadline us rc=0 secs=$1 int frac=
	int=${secs%%.*}
	[[ $secs == *.* ]] && frac=${secs#*.}
	frac=${frac}000000
	us=$((10#${int:-0} * 1000000 + 10#${frac:0:6}))
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

alive() { local _S; [ -d "/proc/$1" ] && _state "$1" && [ -n "$_S" ] && [ "$_S" != Z ]; }
gone() { ! alive "$1"; }

# The /proc readers below use bash's builtins only, no sed or awk: they run
# for every thread of a target in polling loops (after each of t_end's 50
# kills, in every check_unharmed), where a program started per thread cost
# seconds of a file's time.  The _-prefixed forms set a variable instead of
# printing, so that the loops start no subshell either.

# _state PID [TID]: _S = the one-letter state from /proc/.../stat, empty if
# the process or thread is gone.
_state() {
	local f=/proc/$1/stat l=
	[ -n "${2:-}" ] && f=/proc/$1/task/$2/stat
	{ read -r l <"$f"; } 2>/dev/null || :
	l=${l##*) }
	_S=${l%% *}
}
proc_state() { local _S; _state "$@"; [ -z "$_S" ] || echo "$_S"; }

# _tids PID: _T = the thread ids of PID, in /proc's order (an array).
_tids() {
	local t
	_T=()
	for t in /proc/"$1"/task/[0-9]*; do
		[ -e "$t" ] && _T+=("${t##*/}")
	done
	return 0
}
tids() { local _T; _tids "$1"; [ ${#_T[@]} = 0 ] || printf '%s\n' "${_T[@]}"; }
thread_count() { local _T; _tids "$1"; echo ${#_T[@]}; }

# _tracer PID TID: _P = the thread's TracerPid, empty if it is gone.  The
# file is read to its end: a loop left at TracerPid left bash's buffer of
# standard input holding the lines after it, and the next `read` of
# another file on it (cpu_ticks' of /proc/PID/stat) got "Uid: 0 0 0 0"
# (t_churn: "CPU time stuck at 0 ticks", 1 run in 3).
_tracer() {
	local k v
	_P=
	while read -r k v; do
		[ "$k" = TracerPid: ] && _P=$v
	done 2>/dev/null <"/proc/$1/task/$2/status" || :
}
tracer_of() { local _P; _tracer "$@"; [ -z "$_P" ] || echo "$_P"; }

# live_thread PID: some thread of PID is neither a zombie nor dead.  Unlike
# alive, true for a process whose main thread has exited while another runs
# on (its leader shows as a zombie).
live_thread() {
	local t _T _S
	_tids "$1"
	for t in "${_T[@]}"; do
		_state "$1" "$t"
		case $_S in Z | X | '') ;; *) return 0 ;; esac
	done
	return 1
}

# untraced PID: the process runs (a live thread) and every thread has
# TracerPid 0.  Sets DETAIL otherwise.
untraced() {
	local pid=$1 t _T _P bad=
	live_thread "$pid" || { DETAIL="process $pid is gone"; return 1; }
	_tids "$pid"
	for t in "${_T[@]}"; do
		_tracer "$pid" "$t"
		[ -z "$_P" ] || [ "$_P" = 0 ] || bad="$bad $t:$_P"
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
	local pid=$1 t _T _S _P
	alive "$pid" || return 1
	_tids "$pid"
	for t in "${_T[@]}"; do
		_tracer "$pid" "$t"
		_state "$pid" "$t"
		case $_S in Z | X | '') continue ;; esac
		[ -n "$_P" ] && [ "$_P" != 0 ] || return 1
	done
	return 0
}

# not_stopped PID: alive, and no thread stopped (T, t), zombie or dead.
not_stopped() {
	local pid=$1 t _T _S bad=
	alive "$pid" || { DETAIL="process $pid is gone"; return 1; }
	_tids "$pid"
	for t in "${_T[@]}"; do
		_state "$pid" "$t"
		case $_S in T | t | Z | X) bad="$bad $t:$_S" ;; esac
	done
	[ -z "$bad" ] && return 0
	DETAIL="threads not running (tid:state):$bad"
	return 1
}

# all_stopped PID: every thread in a stop (T or t).
all_stopped() {
	local pid=$1 t _T _S
	_tids "$pid"
	for t in "${_T[@]}"; do
		_state "$pid" "$t"
		case $_S in T | t) ;; *) return 1 ;; esac
	done
	return 0
}

# cpu_ticks PID: utime + stime of the whole process and of its reaped
# children, in clock ticks.
cpu_ticks() {
	local l= a
	{ read -r l <"/proc/$1/stat"; } 2>/dev/null || :
	[ -n "$l" ] || return 0
	read -r -a a <<<"${l##*) }"
	echo $((a[11] + a[12] + a[13] + a[14]))
}

# progresses PID: the process uses at least 5 more ticks of CPU within 5 s
# (for targets with a CPU-burning thread): it is really running.
progresses() {
	local pid=$1 t0
	t0=$(cpu_ticks "$pid")
	[ -n "$t0" ] || { DETAIL="process $pid is gone"; return 1; }
	wait_until 5 _ticks_above "$pid" $((t0 + 5)) && return 0
	local l=
	{ read -r l <"/proc/$pid/stat"; } 2>/dev/null || :
	DETAIL="CPU time stuck at $t0 ticks; now: $(cut -c1-160 <<<"$l")"
	return 1
}
_ticks_above() { local t; t=$(cpu_ticks "$1"); [ -n "$t" ] && [ "$t" -ge "$2" ]; }

