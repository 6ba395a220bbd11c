#!/usr/bin/env bash
# tests/fuzz/run.sh SECS NAME...: runs each libFuzzer harness
# build/fuzz/fuzz_NAME for SECS seconds (`make fuzz FUZZ_SECS=SECS`), one
# after the other, starting from tests/fuzz/corpus/NAME/.  New inputs go to
# build/fuzz/corpus/NAME/ (the checked-in corpus is left alone: merge what
# is worth keeping with `build/fuzz/fuzz_NAME -merge=1 tests/fuzz/corpus/NAME
# build/fuzz/corpus/NAME`), crashes to build/fuzz/crash-NAME-*, logs to
# build/fuzz/NAME.log.  Prints executions and crashes per harness; exits
# non-zero if any crashed.
cd "$(dirname "$0")/../.." || exit 2
secs=$1
shift
export LSAN_OPTIONS=${LSAN_OPTIONS:-print_suppressions=0}
# UBSan only reports and goes on by default: stop, so that libFuzzer keeps
# the input as a crash file.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
rc=0
for name in "$@"; do
	bin=build/fuzz/fuzz_$name
	work=build/fuzz/corpus/$name
	log=build/fuzz/$name.log
	mkdir -p "$work"
	# The unwinder's input is a stack copy: 20 KB is plenty, and keeps
	# the corpus small.  Elsewhere libFuzzer's default (the largest seed).
	max_len=0
	[ "$name" = unwind ] && max_len=20000
	"$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=20 -rss_limit_mb=4096 -max_len="$max_len" \
		-artifact_prefix="build/fuzz/crash-$name-" "$work" "tests/fuzz/corpus/$name" \
		>"$log" 2>&1
	r=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	crashes=$(ls build/fuzz/crash-"$name"-* 2>/dev/null | wc -l)
	echo "fuzz_$name: ${execs:-?} executions in $secs s, exit $r, $crashes crash file(s) (log: $log)"
	[ "$r" = 0 ] || rc=1
done
exit $rc
