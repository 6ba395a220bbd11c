#!/usr/bin/env bash
# The test harness behind `make check`:
#     CPROF=./cprof-attach bash tests/run.sh [t_NAME ... | unit[:FILTER]]
#     make check T='t_python t_eintr'      (the same, through make)
#     make check T=unit:python             (the unit tests whose name has "python")
# Runs the unit tests (UNIT, default build/tests/unit, TAP on stdout) if
# built, then each tests/t_*.sh (or only those named).  Counts "ok" and
# "not ok" lines, prints every failure with its file, keeps full logs in
# build/tests/logs/, and ends with exactly "N passed, N failed" for every
# pass together.  Exits non-zero if anything failed or nothing ran.
#
# Side by side: JOBS files run at once (default: the number of CPUs, or
# make's -jN).  A file that needs the machine to itself (its worth is a
# rate or a share of time that another test's load would bend) says so in
# its first lines with a line "# exclusive: WHY"; such files run alone,
# first, each with nothing else of the suite beside it.  Longest first
# among the rest (the times of the last run, build/tests/times), so that
# the slow ones do not end the run alone.
#
# The awk pass: gawk and mawk read regexes and `awk -v` escapes
# differently, and the suite must pass under either (tests give patterns
# to awk through ENVIRON).  When both are installed, the files in
# AWK_FILES run once more with the awk that `awk` is not first on PATH:
# those whose own awk code matches escaped regexes (t_eintr) and those
# whose lib.sh folded_count patterns gawk misread when they went through
# -v (t_folded, t_symbols, t_signals, t_launch).  Their names get its name
# as a prefix ("gawk/t_folded").  AWK_PASS=0 skips it; AWK_PASS=require
# (CI) counts a missing second awk as a failure.
#
# The sanitizer pass runs the files in SAN_FILES: those that drive every
# part of the profiler's own code (attach, many processes, unwinding of each
# kind, every writer, hostile names, output files, --dump, the error paths,
# JIT maps read as they grow and the names given again),
# not those whose worth is timing (shares, rates, churn) or another
# program's output, which the plain pass runs.  Each file left out is
# listed in the report as skipped; SAN_FILES=all runs them all.  Those
# of SAN_ONLY (what the profiler writes and refuses: parsers, writers,
# error paths; following forks and execs, no share measured) run in the
# sanitizer pass alone; SAN_ONLY= runs them in
# both.
#
# Sanitizer reports (ASan, UBSan, LeakSanitizer) of any program run by a
# test file are written to build/tests/logs/sanitizer/FILE.PID, not to
# stderr where a test might not look: each such report is a failure of
# that file, whatever its checks said.  Errors stop the program
# (halt_on_error) with a stack trace.
#
# Limits: each file TEST_TIMEOUT seconds (default 300: the slowest file
# takes about 60 on a 2-core machine; a file may ask for more with a line
# "# timeout: SECONDS"), the whole run SUITE_BUDGET (default 3600: far
# above the whole, which takes under 10 minutes; 0 for none).  A file that
# hits its limit is reported with what it was waiting for (tests/lib-core.sh
# wait_until writes it down) and its last lines.  VERBOSE=1 prints every
# check of a file as it ends.

cd "$(dirname "$0")/.." || exit 2
export CPROF=${CPROF:-./cprof-attach}
UNIT=${UNIT:-build/tests/unit}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
SUITE_BUDGET=${SUITE_BUDGET:-3600}
AWK_PASS=${AWK_PASS:-1}
AWK_FILES=${AWK_FILES:-"t_folded t_symbols t_signals t_launch t_eintr"}
SAN_FILES=${SAN_FILES:-"t_attach t_always t_errors t_folded t_pprof t_flamegraph t_dump t_subprocesses
	t_forkexec t_hostile t_outfile t_unwind t_gounwind t_signals t_fuzz t_serve t_push t_container t_bigframe
	t_jitgrow t_follow"}
SAN_ONLY=${SAN_ONLY-"t_errors t_folded t_pprof t_dump t_outfile t_flamegraph t_unwind t_gounwind t_bigframe
	t_container t_fuzz t_hostile t_jitgrow t_forkexec t_subprocesses"}
if [ -z "${JOBS:-}" ]; then
	JOBS=$(printf '%s\n' "${MAKEFLAGS:-}" | grep -oE '(^| )-j *[0-9]+' | grep -oE '[0-9]+' | tail -n 1)
	[ -n "$JOBS" ] || JOBS=$(nproc 2>/dev/null || echo 2)
fi
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1
LOGS=build/tests/logs
SANLOGS=$PWD/$LOGS/sanitizer
TIMES=build/tests/times
mkdir -p "$LOGS" "$SANLOGS"
rm -f "$SANLOGS"/* "$LOGS"/*.done "$LOGS"/*.waiting
SAN_COMMON=halt_on_error=1:print_stacktrace=1:print_summary=1
ASAN_BASE="$SAN_COMMON:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
UBSAN_BASE="$SAN_COMMON:print_module_map=0"

passed=0
failed=0
ran=0
failures=()

# fail_line NAME TEXT: one failure that no TAP line of NAME says.
fail_line() {
	failed=$((failed + 1))
	failures+=("$1: not ok - $2")
}

# record NAME LOGFILE RC SECONDS LIMIT: count the TAP lines of one test program.
record() {
	local name=$1 log=$2 rc=$3 secs=$4 limit=$5 cpu=${6:-0} ok nok line
	ok=$(grep -cE '^ok( |$)' "$log")
	nok=$(grep -cE '^not ok( |$)' "$log")
	ran=$((ran + 1))
	passed=$((passed + ok))
	failed=$((failed + nok))
	while IFS= read -r line; do
		failures+=("$name: $line")
	done < <(grep -E '^not ok( |$)' "$log")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail_line "$name" "timed out after ${limit} s, $(timeout_context "$log") (log: $log)"
		nok=$((nok + 1))
	elif [ "$rc" != 0 ] && [ "$nok" = 0 ]; then
		fail_line "$name" "exited $rc without a failing check (log: $log)"
		nok=$((nok + 1))
	elif [ $((ok + nok)) = 0 ]; then
		fail_line "$name" "ran no checks (log: $log)"
		nok=1
	fi
	sanitizer_reports "$name"
	printf '%-18s %4d ok %4d not ok  %5.1f s  %5.1f s cpu\n' "$name" "$ok" "$nok" "$secs" "$cpu"
	[ "${VERBOSE:-0}" = 1 ] && sed 's/^/    /' "$log"
	# The time of a file that ran whole, for the order of the next run.
	[ "$rc" = 124 ] || [ "$rc" = 137 ] || echo "$name $secs" >>"$TIMES.new"
}

# timeout_context LOG: what a file that ran out of time was doing: the
# wait it was in (LOG.waiting, written by wait_until; LOG.waiting.NAME by a
# section run beside the rest) and its last line.
timeout_context() {
	local w last f
	w=$(tail -n 1 "$1.waiting" 2>/dev/null)
	for f in "$1".waiting.*; do     # sections run beside (lib.sh beside)
		[ -s "$f" ] && w="${w:+$w; }${f##*.waiting.}: $(tail -n 1 "$f")"
	done
	last=$(grep -vE '^\s*$' "$1" 2>/dev/null | tail -n 1 | cut -c1-160)
	printf '%s; its last line: %s' "${w:-not in a wait_until}" "${last:-(none)}"
}

# sanitizer_reports NAME: every report left in $SANLOGS by NAME's programs
# is one failure (nok, in record's scope, counts it too).
sanitizer_reports() {
	local f first
	for f in "$SANLOGS/${1//\//_}".*; do
		[ -e "$f" ] || continue
		first=$(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$f" | cut -c1-200)
		fail_line "$1" "sanitizer report: ${first:-?} (full report: $f)"
		nok=$((nok + 1))
	done
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

suite_start=$(now)

# --- what to run ------------------------------------------------------------
unit_filter=
run_unit=1
if [ $# -gt 0 ]; then
	files=()
	run_unit=0
	for t in "$@"; do
		case $t in
		unit) run_unit=1 ;;
		unit:*) run_unit=1; unit_filter=${t#unit:} ;;
		*) t=${t%.sh}; files+=("tests/${t#tests/}.sh") ;;
		esac
	done
else
	files=(tests/t_*.sh)
fi

if [ ${#files[@]} -gt 0 ] && ! make --no-print-directory -s test-bins >"$LOGS/make.log" 2>&1; then
	fail_line setup "building the test targets failed (log: $LOGS/make.log)"
	files=()
fi

# other_awk: the path of gawk if `awk` is not gawk, else of mawk; fails if
# that one is not installed.
other_awk() {
	case $(readlink -f "$(command -v awk)") in
	*/gawk) command -v mawk ;;
	*) command -v gawk ;;
	esac
}

# A job is one line, fields separated by US (an empty field must stay one:
# tabs would be folded by read): NAME PROFILER PATHDIR
# SANITIZED PASS FILE (FILE "unit" for the unit tests).
US=$'\x1f'
jobs_all=()
add_job() { jobs_all+=("$1$US$2$US$3$US$4$US$5$US$6"); }

# add_pass PREFIX PROFILER UNIT PATHDIR SANITIZED PASS FILE...
add_pass() {
	local prefix=$1 prof=$2 unit=$3 pathdir=$4 san=$5 pass=$6 f
	shift 6
	if [ "$run_unit" = 1 ] && [ -n "$unit" ]; then
		if [ -x "$unit" ]; then
			add_job "${prefix}unit" "$unit" "$pathdir" "$san" "$pass" unit
		else
			fail_line "${prefix}unit" "$unit is missing (run make $unit)"
		fi
	fi
	[ $# -gt 0 ] || return 0
	if [ ! -x "$prof" ]; then
		fail_line "${prefix}setup" "$prof is missing or not executable (run make)"
		return
	fi
	for f in "$@"; do
		if [ ! -f "$f" ]; then
			fail_line "$(basename "$f" .sh)" "no such test file $f"
			continue
		fi
		add_job "$prefix$(basename "$f" .sh)" "$prof" "$pathdir" "$san" "$pass" "$f"
	done
}

# With the sanitizer pass, the files of SAN_ONLY run in it alone: theirs
# are checks of what the profiler writes and refuses, not of its timing,
# and the sanitized build is the same code, every memory error and
# undefined behaviour a failure besides (one pass of them, not two: the
# suite is CPU-bound on 2 cores).
plain_files=()
for f in "${files[@]}"; do
	if [ -n "${SAN_CPROF:-}" ]; then
		case " $(echo $SAN_ONLY) " in *" $(basename "$f" .sh) "*)
			case " $(echo $SAN_FILES) " in " all "|*" $(basename "$f" .sh) "*)
				printf '%-18s run by the sanitizer pass only (SAN_ONLY)\n' "$(basename "$f" .sh)"
				continue ;;
			esac ;;
		esac
	fi
	plain_files+=("$f")
done
add_pass "" "$CPROF" "$UNIT" "" 0 1 "${plain_files[@]}"

if [ "$AWK_PASS" != 0 ]; then
	awk_files=()
	for f in "${files[@]}"; do
		case " $AWK_FILES " in *" $(basename "$f" .sh) "*) awk_files+=("$f") ;; esac
	done
	if [ ${#awk_files[@]} -gt 0 ]; then
		if alt=$(other_awk); then
			dir=$PWD/build/tests/awk-$(basename "$alt")
			mkdir -p "$dir"
			ln -sfn "$alt" "$dir/awk"
			add_pass "$(basename "$alt")/" "$CPROF" "" "$dir" 0 1 "${awk_files[@]}"
		elif [ "$AWK_PASS" = require ]; then
			fail_line "awk pass" "needs both gawk and mawk installed (contrib/install-deps.sh)"
		fi
	fi
fi

if [ -n "${SAN_CPROF:-}" ]; then
	san_files=()
	for f in "${files[@]}"; do
		case " $(echo $SAN_FILES) " in
		" all "|*" $(basename "$f" .sh) "*) san_files+=("$f") ;;
		*) printf '%-18s skipped (not in SAN_FILES: run by the plain pass)\n' "san/$(basename "$f" .sh)" ;;
		esac
	done
	add_pass "san/" "$SAN_CPROF" "${SAN_UNIT:-}" "" 1 2 "${san_files[@]}"
fi

# --- the order --------------------------------------------------------------
# exclusive FILE: the file asks for the machine to itself.
exclusive() { [ "$1" != unit ] && head -n 40 "$1" | grep -qE '^# exclusive:'; }
# file_timeout FILE: its "# timeout: N" line, else TEST_TIMEOUT.
file_timeout() {
	local n=
	[ "$1" = unit ] || n=$(head -n 40 "$1" | sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
	echo "${n:-$TEST_TIMEOUT}"
}
# last_time NAME: its time in the last run, else 30 (an unknown file is
# taken as a long one: started early, it cannot end the run alone).
last_time() {
	local t
	t=$(awk -v n="$1" '$1 == n { t = $2 } END { if (t != "") print int(t) }' "$TIMES" 2>/dev/null)
	echo "${t:-30}"
}

excl=()
rest=()
for j in "${jobs_all[@]}"; do
	IFS=$US read -r name _ _ _ _ f <<<"$j"
	if exclusive "$f"; then excl+=("$j"); else rest+=("$(last_time "$name")"$'\t'"$j"); fi
done
ordered=("${excl[@]}")
if [ ${#rest[@]} -gt 0 ]; then
	while IFS= read -r j; do
		ordered+=("${j#*$'\t'}")
	done < <(printf '%s\n' "${rest[@]}" | sort -t $'\t' -k1,1nr -s)
fi
rm -f "$TIMES.new"

# --- running ----------------------------------------------------------------
# start_job JOB: runs it in the background, with its limit; its exit status
# and time go to LOG.done.  Sets started_pid.
start_job() {
	local name prof pathdir san pass f log limit left cmd
	IFS=$US read -r name prof pathdir san pass f <<<"$1"
	log=$LOGS/${name//\//_}.log
	limit=$(file_timeout "$f")
	if [ "$SUITE_BUDGET" -gt 0 ]; then
		left=$((SUITE_BUDGET - $(printf '%.0f' "$(elapsed "$suite_start")")))
		[ "$left" -lt "$limit" ] && limit=$left
		if [ "$limit" -lt 5 ]; then
			fail_line "$name" "not run, the suite's ${SUITE_BUDGET} s budget is spent"
			started_pid=
			return
		fi
	fi
	if [ "$f" = unit ]; then cmd=("$prof" ${unit_filter:+"$unit_filter"}); else cmd=(bash "$f"); fi
	rm -f "$log.waiting"
	(
		[ -z "$pathdir" ] || export PATH=$pathdir:$PATH
		export CPROF=$prof PASS_INDEX=$pass CPROF_TEST_WAITING=$PWD/$log.waiting
		[ "$san" = 1 ] && export CPROF_SANITIZED=1
		export ASAN_OPTIONS="$ASAN_BASE:log_path=$SANLOGS/${name//\//_}"
		export UBSAN_OPTIONS="$UBSAN_BASE:log_path=$SANLOGS/${name//\//_}"
		export LSAN_OPTIONS="log_path=$SANLOGS/${name//\//_}"
		start=$(now)
		timeout -k 10 "$limit" "${cmd[@]}" >"$log" 2>"$log.stderr" </dev/null
		rc=$?
		# CPU of the file and every process of it that was waited for
		# (bash's `times`, second line: children's user and system).
		times >"$log.cpu"       # a redirection: `times` in this shell, not a pipe's
		cpu=$(sed -n 2p "$log.cpu" | awk '{ for (i = 1; i <= 2; i++) { v = $i; m = v; sub(/m.*/, "", m)
			sub(/^[0-9]+m/, "", v); sub(/s$/, "", v); t += m * 60 + v } } END { printf "%.1f", t }')
		echo "$rc $(elapsed "$start") $limit ${cpu:-0}" >"$log.done"
	) &
	started_pid=$!
	job_of[$started_pid]="$name$US$log"
}

# finish PID: record the job that PID ran.
finish() {
	local name log rc secs limit cpu
	IFS=$US read -r name log <<<"${job_of[$1]}"
	unset "job_of[$1]"
	read -r rc secs limit cpu <"$log.done" 2>/dev/null || { rc=137; secs=0; limit=?; cpu=0; }
	record "$name" "$log" "$rc" "$secs" "$limit" "${cpu:-0}"
}

# reap_one: waits for one job to end and records it.
reap_one() {
	local done_pid= pid
	wait -n -p done_pid
	if [ -n "$done_pid" ] && [ -n "${job_of[$done_pid]:-}" ]; then
		finish "$done_pid"
		return
	fi
	# Not one of ours (or nothing left to wait for): those that have ended.
	for pid in "${!job_of[@]}"; do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; finish "$pid"; }
	done
}

declare -A job_of=()
nexcl=${#excl[@]}
echo "running ${#ordered[@]} test programs, $JOBS at a time ($nexcl of them alone, first)"
i=0
for j in "${ordered[@]}"; do
	i=$((i + 1))
	if [ "$i" -le "$nexcl" ]; then
		# Alone: nothing else of the suite runs beside it.
		while [ ${#job_of[@]} -gt 0 ]; do reap_one; done
		start_job "$j"
		while [ ${#job_of[@]} -gt 0 ]; do reap_one; done
		continue
	fi
	while [ ${#job_of[@]} -ge "$JOBS" ]; do reap_one; done
	start_job "$j"
done
while [ ${#job_of[@]} -gt 0 ]; do reap_one; done
[ -s "$TIMES.new" ] && mv -f "$TIMES.new" "$TIMES"

if [ ${#failures[@]} -gt 0 ]; then
	echo
	echo "FAILURES:"
	for l in "${failures[@]}"; do
		echo "  $l"
	done
	echo "(full logs in $LOGS/)"
fi
echo "suite took $(elapsed "$suite_start") s"
if [ "$ran" = 0 ]; then
	echo "nothing ran"
	[ "$failed" -gt 0 ] || failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$ran" -gt 0 ]
