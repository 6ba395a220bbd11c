#!/usr/bin/env bash
# Safety: a set-uid copy, launch mode's command left as it was, out of
# memory, hostile --convert input.
#  4  a set-uid copy refuses to run (it would run -- COMMAND as its owner);
#  5  launch mode does not change the command: SIGPIPE at its default
#     (yes | head exits 141 inside, no "Broken pipe"), the caller's nice
#     value, not the tracer's;
#  8  out of memory (ulimit -v) is one line and a non-zero exit, with the
#     target left running and untraced;
# 12  --convert input: a negative count, a count past 2^64, a directory,
#     a read error are refused with the line or the reason; a 100,000-frame
#     line becomes a flame graph (the writers do not recurse per frame).
. "$(dirname "$0")/lib.sh"

# --- 4: set-uid ---------------------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	cp "$CPROF" "$TMP/suid-cprof"
	chmod 4755 "$TMP/suid-cprof"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/suid-cprof" -o "$TMP/x.folded" -- id -u 2>&1)
	rc=$?
	DETAIL="exit $rc: $out" check "set-uid copy: refused, one line, non-zero exit" \
		"[ $rc != 0 ] && [ \$(grep -c . <<<\"\$out\") = 1 ] && grep -q 'set-uid' <<<\"\$out\""
	DETAIL="$out" check "set-uid copy: the command did not run as root" "! grep -qx 0 <<<\"\$out\""
else
	skip "set-uid copy" "needs root and setpriv"
fi

# --- 5: launch mode leaves the command as it was -----------------------------
prof "$TMP/pipe" -o "$TMP/pipe.folded" -- bash -c 'yes | head -n 1 >/dev/null; exit ${PIPESTATUS[0]}'
DETAIL="exit $PROF_RC; stderr: $(head -c 300 "$TMP/pipe.err" | tr '\n' '|')" \
	check "yes | head: yes dies of SIGPIPE (status 141), no 'Broken pipe'" \
	"[ '$PROF_RC' = 141 ] && ! grep -qi 'broken pipe' '$TMP/pipe.err'"
if [ "$(id -u)" = 0 ]; then
	want=$(nice)
	prof "$TMP/nice" -o "$TMP/nice.folded" -- sh -c 'nice >"$0"' "$TMP/nice.txt"
	got=$(cat "$TMP/nice.txt" 2>/dev/null)
	DETAIL="the command's nice $got, ours $want" check "the command runs at the caller's nice value, not the tracer's -10" \
		"[ '$got' = '$want' ]"
else
	skip "nice value" "the tracer raises its priority only as root"
fi

# --- 8: out of memory ------------------------------------------------------------
start_target wallclock || done_testing
pid=$TARGET_PID
# The limit: what the profiler needs to load its libraries (found here: it
# grows with them), and 12 MB more, too little for its tracer thread's
# stack and tables.
base=
for v in $(seq 16000 2000 80000); do
	if (ulimit -v "$v"; exec "$CPROF" --version) >/dev/null 2>&1; then
		base=$v
		break
	fi
done
# Three limits past it: the tracer thread cannot start; sampling runs out;
# naming runs out (libdw crashes there: the crash is one line too).
for extra in 4000 12000 26000; do
	lim=$((${base:-16000} + extra))
	(ulimit -v "$lim"; exec "$CPROF" "$pid" --duration 0.5 -o "$TMP/oom.folded") >"$TMP/oom.out" 2>"$TMP/oom.err"
	rc=$?
	DETAIL="exit $rc: $(head -c 300 "$TMP/oom.err" | tr '\n' '|')" \
		check "ulimit -v $lim (loading needs $base): our line last, a non-zero exit below 128 (no abort, no core)" \
		"[ $rc != 0 ] && [ $rc -lt 128 ] && tail -n 1 '$TMP/oom.err' | grep -qiE '^cprof-attach: error: .*(out of memory|cannot allocate memory)'"
	check "ulimit -v $lim: the target runs on, untraced" "untraced $pid && not_stopped $pid"
done
stop_target "$pid"

# --- 12: --convert input ---------------------------------------------------------
printf 'a;b 3\na;b -5\n' >"$TMP/neg.folded"
prof "$TMP/neg" --convert "$TMP/neg.folded" -o "$TMP/neg.svg"
DETAIL="exit $PROF_RC: $(cat "$TMP/neg.err")" check "--convert: a negative count refused, with file:line" \
	"[ '$PROF_RC' != 0 ] && grep -q 'neg.folded:2:' '$TMP/neg.err' && [ ! -e '$TMP/neg.svg' ]"
printf 'a 18446744073709551615\nb 2\n' >"$TMP/big.folded"
prof "$TMP/big" --convert "$TMP/big.folded" -o "$TMP/big.svg"
DETAIL="exit $PROF_RC: $(cat "$TMP/big.err")" check "--convert: counts adding up past 2^64 refused, with the line" \
	"[ '$PROF_RC' != 0 ] && grep -q 'big.folded:2:' '$TMP/big.err'"
printf 'a 99999999999999999999\n' >"$TMP/huge.folded"
prof "$TMP/huge" --convert "$TMP/huge.folded" -o "$TMP/huge.svg"
DETAIL="exit $PROF_RC: $(cat "$TMP/huge.err")" check "--convert: a count past 2^64 refused" "[ '$PROF_RC' != 0 ] && grep -q 'huge.folded:1:' '$TMP/huge.err'"
mkdir "$TMP/adir"
prof "$TMP/dir" --convert "$TMP/adir" -o "$TMP/dir.svg"
DETAIL="exit $PROF_RC: $(cat "$TMP/dir.err")" check "--convert: a directory is refused (not read as empty)" \
	"[ '$PROF_RC' != 0 ] && grep -qi 'director' '$TMP/dir.err'"
python3 -c "print(';'.join('f%d' % i for i in range(100000)) + ' 1')" >"$TMP/deep.folded"
prof "$TMP/deep" --convert "$TMP/deep.folded" -o "$TMP/deep.svg"
DETAIL="exit $PROF_RC: $(head -c 200 "$TMP/deep.err")" check "--convert: a 100,000-frame line becomes a flame graph" \
	"[ '$PROF_RC' = 0 ] && grep -q '</svg>' '$TMP/deep.svg'"
prof "$TMP/deepj" --convert "$TMP/deep.folded" -o "$TMP/deep.json"
check "--convert: ... and speedscope" "[ '$PROF_RC' = 0 ] && [ -s '$TMP/deep.json' ]"
done_testing
