#!/usr/bin/env bash
# The profiler under valgrind (memcheck): one whole run, attach to
# wallclock, sample for 1 s, detach, symbolize, write folded output, with
# no memory error and no definite leak (--error-exitcode).  Valgrind runs
# the profiler only (--trace-children=no); its ptrace calls go to the real
# kernel.  Skipped without valgrind, and in the sanitizer pass (ASan and
# valgrind do not mix; that pass has its own checks).
. "$(dirname "$0")/lib.sh"

if ! command -v valgrind >/dev/null; then
	skip "valgrind run" "valgrind is not installed (Debian package valgrind: make deps installs it)"
	done_testing
fi
if [ "${CPROF_SANITIZED:-0}" = 1 ]; then
	skip "valgrind run" "runs on the plain build only, not with the sanitizers"
	done_testing
fi

if start_target wallclock; then
	pid=$TARGET_PID
	n=$(thread_count "$pid")
	out=$TMP/vg.folded
	base=$TMP/vg
	t0=$(date +%s)
	timeout --foreground -k 5 60 valgrind -q --tool=memcheck --error-exitcode=99 \
		--trace-children=no --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --track-origins=yes --log-file="$base.vg" \
		--suppressions="$ROOT/tests/valgrind.supp" \
		"$CPROF" "$pid" --duration 1 -o "$out" >"$base.out" 2>"$base.err"
	PROF_RC=$?
	diag "valgrind run took $(($(date +%s) - t0)) s"
	DETAIL="exit $PROF_RC; valgrind says: $(grep -m3 -E '==[0-9]+== [A-Z]' "$base.vg" | tr '\n' '|'); stderr: $(head -c 300 "$base.err")" \
		check "valgrind: no memory error, no definite leak (exit 0, not 99)" "[ $PROF_RC = 0 ]"
	DETAIL="$(head -c 600 "$base.vg")" check "valgrind: its log is empty (-q)" "[ ! -s '$base.vg' ]"
	[ -s "$base.vg" ] && diag_file "$base.vg" 30
	DETAIL="stderr: $(head -c 300 "$base.err")" \
		check "valgrind: summary line" "[ -n \"\$(summary '$base.err')\" ]"
	c=$(folded_count "$out" 'burn_cpu')
	DETAIL="burn_cpu in $c samples" check "valgrind: profile has burn_cpu" "[ '$c' -gt 0 ]"
	check_unharmed "valgrind" "$pid" "$n"
	stop_target "$pid"
fi

done_testing
