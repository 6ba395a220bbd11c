#!/usr/bin/env bash
# The test harness behind `make check`:
#     CPROF=./cprof-attach bash tests/run.sh [t_NAME ...]
# Runs the unit tests (UNIT, default build/tests/unit, TAP on stdout) if
# built, then each tests/t_*.sh (or only those named), one after the other:
# the timing-share tests must not compete with each other for the 2 cores.
# With SAN_CPROF (and SAN_UNIT) set, all of it runs a second time with that
# profiler, the sanitizer build (`make check` does this).  Counts "ok" and
# "not ok" lines, prints every failure with its file, keeps full logs in
# build/tests/logs/, and ends with exactly "N passed, N failed" for every
# pass together.  Exits non-zero if anything failed or nothing ran.
#
# The awk pass: gawk and mawk read regexes and `awk -v` escapes
# differently, and the suite must pass under either (tests give patterns
# to awk through ENVIRON).  When both are installed, the files in
# AWK_FILES run once more, after the plain pass, with the awk that `awk` is
# not first on PATH: those whose own awk code matches escaped regexes
# (t_eintr, t_programs) and those whose lib.sh folded_count patterns gawk
# misread when they went through -v (t_folded, t_symbols, t_signals,
# t_launch; t_views and others use it the same way).  Their names
# get its name as a prefix ("gawk/t_folded").  AWK_PASS=0 skips it;
# AWK_PASS=require (CI) counts a missing second awk as a failure.
#
# The sanitizer pass runs the files in SAN_FILES: those that drive every
# part of the profiler's own code (attach, many processes, unwinding of each
# kind, every writer, hostile names, output files, --dump, the error paths),
# not those whose worth is timing (shares, rates, churn) or another
# program's output, which the plain pass runs: all of them twice would take
# make check past its 12 minutes.  Each file left out is listed in the
# report as skipped; SAN_FILES=all runs them all.
#
# Sanitizer reports (ASan, UBSan, LeakSanitizer) of any program run by a
# test file are written to build/tests/logs/sanitizer/FILE.PID, not to
# stderr where a test might not look: each such report is a failure of
# that file, whatever its checks said.  Errors stop the program
# (halt_on_error) with a stack trace.
#
# TEST_TIMEOUT (seconds, default 90; a normal file takes under 20) bounds
# each file and SUITE_BUDGET (default 840, for every pass) the whole run,
# so even a hanging profiler cannot keep `make check` busy for long;
# VERBOSE=1 prints every check as it comes.

cd "$(dirname "$0")/.." || exit 2
export CPROF=${CPROF:-./cprof-attach}
UNIT=${UNIT:-build/tests/unit}
TEST_TIMEOUT=${TEST_TIMEOUT:-90}
SUITE_BUDGET=${SUITE_BUDGET:-840}
AWK_PASS=${AWK_PASS:-1}
AWK_FILES=${AWK_FILES:-"t_folded t_symbols t_signals t_launch t_eintr"}
SAN_FILES=${SAN_FILES:-"t_attach t_always t_errors t_folded t_pprof t_flamegraph t_dump t_subprocesses
	t_forkexec t_hostile t_outfile t_unwind t_gounwind t_signals t_fuzz t_serve t_push t_container"}
LOGS=build/tests/logs
SANLOGS=$PWD/$LOGS/sanitizer
mkdir -p "$LOGS" "$SANLOGS"
rm -f "$SANLOGS"/*
SAN_COMMON=halt_on_error=1:print_stacktrace=1:print_summary=1
ASAN_BASE="$SAN_COMMON:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
UBSAN_BASE="$SAN_COMMON:print_module_map=0"

passed=0
failed=0
ran=0
failures=()

# record NAME LOGFILE RC SECONDS: count the TAP lines of one test program.
record() {
	local name=$1 log=$2 rc=$3 secs=$4 ok nok
	ok=$(grep -cE '^ok( |$)' "$log")
	nok=$(grep -cE '^not ok( |$)' "$log")
	ran=$((ran + 1))
	passed=$((passed + ok))
	failed=$((failed + nok))
	while IFS= read -r line; do
		failures+=("$name: $line")
	done < <(grep -E '^not ok( |$)' "$log")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		failed=$((failed + 1))
		failures+=("$name: not ok - timed out after ${limit} s (log: $log)")
		nok=$((nok + 1))
	elif [ "$rc" != 0 ] && [ "$nok" = 0 ]; then
		failed=$((failed + 1))
		failures+=("$name: not ok - exited $rc without a failing check (log: $log)")
		nok=$((nok + 1))
	elif [ $((ok + nok)) = 0 ]; then
		failed=$((failed + 1))
		failures+=("$name: not ok - ran no checks (log: $log)")
		nok=1
	fi
	sanitizer_reports "$name"
	printf '%-18s %4d ok %4d not ok  %5.1f s\n' "$name" "$ok" "$nok" "$secs"
}

# sanitizer_reports NAME: every report left in $SANLOGS by NAME's programs
# is one failure (nok, in record's scope, counts it too).
sanitizer_reports() {
	local f first
	for f in "$SANLOGS/${1//\//_}".*; do
		[ -e "$f" ] || continue
		first=$(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$f" | cut -c1-200)
		failed=$((failed + 1))
		nok=$((nok + 1))
		failures+=("$1: not ok - sanitizer report: ${first:-?} (full report: $f)")
	done
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# run_one NAME LOGFILE COMMAND...: run with the per-file timeout; the log gets
# stdout, stderr is kept apart (LOGFILE.stderr) so it cannot fake TAP lines.
run_one() {
	local name=$1 log=$2 start rc left
	shift 2
	start=$(now)
	left=$((SUITE_BUDGET - $(printf '%.0f' "$(elapsed "$suite_start")")))
	limit=$TEST_TIMEOUT
	[ "$left" -lt "$limit" ] && limit=$left
	if [ "$limit" -lt 5 ]; then
		failed=$((failed + 1))
		failures+=("$name: not ok - not run, the suite's ${SUITE_BUDGET} s budget is spent")
		return
	fi
	export ASAN_OPTIONS="$ASAN_BASE:log_path=$SANLOGS/${name//\//_}"
	export UBSAN_OPTIONS="$UBSAN_BASE:log_path=$SANLOGS/${name//\//_}"
	export LSAN_OPTIONS="log_path=$SANLOGS/${name//\//_}"
	if [ "${VERBOSE:-0}" = 1 ]; then
		timeout -k 10 "$limit" "$@" 2>"$log.stderr" | tee "$log"
		rc=${PIPESTATUS[0]}
	else
		timeout -k 10 "$limit" "$@" >"$log" 2>"$log.stderr"
		rc=$?
	fi
	record "$name" "$log" "$rc" "$(elapsed "$start")"
}

suite_start=$(now)

if [ $# -gt 0 ]; then
	files=()
	for t in "$@"; do
		t=${t%.sh}
		files+=("tests/${t#tests/}.sh")
	done
else
	files=(tests/t_*.sh)
fi

if [ ${#files[@]} -gt 0 ] && ! make --no-print-directory -s test-bins >"$LOGS/make.log" 2>&1; then
	failed=$((failed + 1))
	failures+=("setup: not ok - building the test targets failed (log: $LOGS/make.log)")
	files=()
fi

# run_pass PREFIX PROFILER UNIT FILE...: the unit tests (if UNIT is not
# "") and the FILEs, with PROFILER as $CPROF; names in the report get PREFIX.
run_pass() {
	local prefix=$1 unit=$3 f name
	export CPROF=$2
	shift 3
	if [ -x "$unit" ]; then
		run_one "${prefix}unit" "$LOGS/${prefix//\//_}unit.log" "$unit"
	fi
	if [ ! -x "$CPROF" ]; then
		failed=$((failed + 1))
		failures+=("${prefix}setup: not ok - $CPROF is missing or not executable (run make)")
		return
	fi
	for f in "$@"; do
		name=$(basename "$f" .sh)
		if [ ! -f "$f" ]; then
			failed=$((failed + 1))
			failures+=("$name: not ok - no such test file $f")
			continue
		fi
		run_one "$prefix$name" "$LOGS/${prefix//\//_}$name.log" bash "$f"
	done
}

# other_awk: the path of gawk if `awk` is not gawk, else of mawk; fails if
# that one is not installed.
other_awk() {
	case $(readlink -f "$(command -v awk)") in
	*/gawk) command -v mawk ;;
	*) command -v gawk ;;
	esac
}

# awk_pass PROFILER: the awk pass (see the top), on PROFILER.
awk_pass() {
	local alt name dir f awk_files=()
	for f in "${files[@]}"; do
		case " $AWK_FILES " in *" $(basename "$f" .sh) "*) awk_files+=("$f") ;; esac
	done
	[ ${#awk_files[@]} -gt 0 ] || return 0
	if ! alt=$(other_awk); then
		if [ "$AWK_PASS" = require ]; then
			failed=$((failed + 1))
			failures+=("awk pass: not ok - needs both gawk and mawk installed (contrib/install-deps.sh)")
		fi
		return 0
	fi
	name=$(basename "$alt")
	dir=$PWD/build/tests/awk-$name
	mkdir -p "$dir"
	ln -sfn "$alt" "$dir/awk"
	echo "--- again with $name as awk: ${awk_files[*]}"
	PATH=$dir:$PATH run_pass "$name/" "$1" "" "${awk_files[@]}"
}

export PASS_INDEX=1
run_pass "" "$CPROF" "$UNIT" "${files[@]}"
if [ "$AWK_PASS" != 0 ]; then
	awk_pass "$CPROF"
fi
if [ -n "${SAN_CPROF:-}" ]; then
	echo "--- again with the sanitizer build, $SAN_CPROF"
	export PASS_INDEX=2 CPROF_SANITIZED=1
	san_files=()
	for f in "${files[@]}"; do
		case " $(echo $SAN_FILES) " in
		" all "|*" $(basename "$f" .sh) "*) san_files+=("$f") ;;
		*) printf '%-18s skipped (not in SAN_FILES: run by the plain pass)\n' "san/$(basename "$f" .sh)" ;;
		esac
	done
	run_pass "san/" "$SAN_CPROF" "${SAN_UNIT:-}" "${san_files[@]}"
fi

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
