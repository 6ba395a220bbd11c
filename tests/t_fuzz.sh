#!/usr/bin/env bash
# The fuzz corpus (tests/fuzz/corpus/NAME/), replayed through each fuzz
# harness (tests/fuzz/fuzz_NAME.c) built without libFuzzer but with ASan +
# UBSan: every input that fuzzing ever found interesting must still run
# clean.  No fuzzing here (that is `make fuzz FUZZ_SECS=600`).
# FUZZ_REPLAY is the directory of the replay_NAME binaries (set by `make
# check`); tests/run.sh fails the file on any sanitizer report.
. "$(dirname "$0")/lib.sh"

if [ -z "${FUZZ_REPLAY:-}" ]; then
	skip "fuzz corpus replay" "FUZZ_REPLAY not set (run through make check)"
	done_testing
fi
if [ "${PASS_INDEX:-1}" != 1 ]; then
	skip "fuzz corpus replay" "replayed in the first pass already"
	done_testing
fi
case $FUZZ_REPLAY in /*) ;; *) FUZZ_REPLAY=$ROOT/$FUZZ_REPLAY ;; esac

for name in maps elf unwind writers gopclntab cfi pylines pyinterp phpinterp goroutines golayout rbvm jvm; do
	bin=$FUZZ_REPLAY/replay_$name
	corpus=$ROOT/tests/fuzz/corpus/$name
	n=$(find "$corpus" -type f 2>/dev/null | wc -l)
	DETAIL="$corpus has $n files" check "fuzz $name: corpus present" "[ '$n' -gt 0 ]"
	if [ ! -x "$bin" ]; then
		DETAIL="no $bin" check "fuzz $name: replay harness built" false
		continue
	fi
	timeout -k 5 120 "$bin" "$corpus" >"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	DETAIL="exit $rc: $(tail -c 600 "$TMP/$name.err" | tr '\n' '|')" \
		check "fuzz $name: $n corpus inputs replay clean (ASan + UBSan)" \
		"[ $rc = 0 ] && grep -qx 'replayed $n inputs' '$TMP/$name.out' &&
		! grep -qE 'runtime error|Sanitizer|LeakSanitizer' '$TMP/$name.err'"
done

done_testing
