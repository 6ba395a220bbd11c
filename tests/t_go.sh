#!/usr/bin/env bash
# Go programs: names, files and lines of Go code from
# .gopclntab, in a normal build and a stripped one (-ldflags='-s -w': no
# .symtab, no DWARF); Go's runtime frames keep Go's names; the pprof
# mapping carries the Go build ID (.note.go.buildid) as `go tool buildid`
# prints it.
#
# Only the innermost frames are asserted here: whole Go stacks (callers up
# to runtime.goexit) need .debug_frame unwinding, and their completeness is
# asserted by the unwinding tests.
. "$(dirname "$0")/lib.sh"

SRC=$ROOT/tests/targets/gospin.go

if [ ! -x "$GO" ]; then
	skip "Go programs" "no Go toolchain at $GO (contrib/install-deps.sh installs golang-1.19-go)"
	done_testing
fi
for b in gospin gospin-stripped; do
	if [ ! -x "$BIN/$b" ]; then
		DETAIL="run make test-bins" check "tests/bin/$b built" false
		done_testing
	fi
done

stacks() { cut -c1-200 "$1" | tr '\n' '|'; }

# The lines of main.mixBytes's body in the source.
body_first=$(grep -n '^func mixBytes' "$SRC" | cut -d: -f1)
body_last=$(awk -v f="$body_first" 'NR > f && /^}/ { print NR; exit }' "$SRC")

for b in gospin gospin-stripped; do
	start_target "$b" || continue
	pid=$TARGET_PID
	prof "$TMP/$b" "$pid" --duration 0.7 --os-threads -o "$TMP/$b.folded"
	check_ran "$b" "$TMP/$b" "$TMP/$b.folded"
	prof "$TMP/${b}p" "$pid" --duration 0.7 --os-threads -o "$TMP/$b.pprof"
	check_ran "$b pprof" "$TMP/${b}p" "$TMP/$b.pprof"
	if [ $b = gospin ]; then
		# Perf capture stops a Go thread only where its sample is on its
		# system stack (g0: the probe of the goroutine it works for is
		# read in a stop); before, every running sample was a stop.
		prof "$TMP/${b}s" "$pid" --duration 1.5 --stats -o "$TMP/$b.s.folded"
		check_ran "$b --stats" "$TMP/${b}s" "$TMP/$b.s.folded"
		read -r stopped byperf <<<"$(capture_counts "$TMP/${b}s.err")"
		if ! grep -qE '^cprof-attach: [0-9.]+ of [0-9]+ Hz, .*, perf, ' "$TMP/${b}s.err"; then
			skip "$b: running Go threads sampled by perf" "perf events not permitted here"
		else
			DETAIL="$stopped stopped, $byperf by perf events; $(grep -oE '[0-9]+ stopped on a Go[^,]*' "$TMP/${b}s.err")" \
				check "$b: running threads sampled by perf events, stopped only on their system stack (<= 20%)" \
				"[ '${byperf:-0}' -gt 0 ] && [ \$((stopped * 5)) -le '${byperf:-0}' ]"
		fi
	fi
	stop_target "$pid"
	f=$TMP/$b.folded

	# The computing goroutine: Go code of the main package and of the
	# standard library (assembly), innermost.
	for fn in main.mixBytes crypto/sha256.block; do
		c=$(folded_count "$f" "(^|;)${fn//./\\.}\$")
		DETAIL="$c samples; $(stacks "$f")" \
			check "$b: innermost frame $fn named" "[ '$c' -gt 0 ]"
	done
	# The other threads sit in the runtime (futex, usleep, epollwait).
	c=$(folded_count "$f" '(^|;)runtime\.(futex|usleep|epollwait)$')
	DETAIL="$(stacks "$f")" \
		check "$b: blocked threads in runtime.futex/usleep/epollwait" "[ '$c' -gt 0 ]"
	bad=$(grep -E "$b\\+0x|\\.abi0|\\.abiinternal|\\[unknown\\]" "$f" | head -3)
	DETAIL="$bad" check "$b: every frame named as Go names it (no $b+0x..., no .abi0)" \
		"[ -z \"\$bad\" ]"

	raw=$(pprof_raw "$TMP/$b.pprof")
	want=$("$GO" tool buildid "$BIN/$b" 2>&1)
	maps=$(sed -n '/^Mappings/,$p' <<<"$raw")
	DETAIL="go tool buildid: $want; $(tr '\n' '|' <<<"$maps")" \
		check "$b pprof: mapping build ID is the Go build ID" \
		"[ -n '$want' ] && grep -qF \" $BIN/$b $want \" <<<\"\$maps\""

	# Every location of main.mixBytes: its line inside the body, and the
	# same function, file and line as `go tool addr2line` gives.
	locs=$(sed -n '/^Locations/,/^Mappings/p' <<<"$raw" |
		grep -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ main\.mixBytes ')
	lines=$(sed -nE 's/.* main\.mixBytes [^ ]*gospin\.go:([0-9]+) .*/\1/p' <<<"$locs" | sort -u | tr '\n' ' ')
	badl=$(for l in $lines; do [ "$l" -gt "$body_first" ] && [ "$l" -lt "$body_last" ] || echo "$l"; done)
	DETAIL="lines ${lines:-none}; body $body_first..$body_last; $(head -3 <<<"$locs" | tr '\n' '|')" \
		check "$b pprof: main.mixBytes has file gospin.go and lines of its body" \
		"[ -n '$lines' ] && [ -z '$badl' ]"
	ours=$(awk '{ print $2, $4, $5 }' <<<"$locs" | sort -u)
	theirs=$(awk '{ print $1 }' <<<"$ours" | "$GO" tool addr2line "$BIN/$b" 2>&1 |
		paste - - | awk '{ print $1, $2 }')
	theirs=$(paste -d' ' <(awk '{ print $1 }' <<<"$ours") <(cat <<<"$theirs") | sort -u)
	DETAIL="ours: $(tr '\n' '|' <<<"$ours") go tool addr2line: $(tr '\n' '|' <<<"$theirs")" \
		check "$b pprof: function, file and line equal go tool addr2line's" \
		"[ -n \"\$ours\" ] && [ \"\$ours\" = \"\$theirs\" ]"
done

done_testing
