#!/usr/bin/env bash
# Symbols: names from .symtab without debug info (nodebug),
# inlined functions as frames of their own with their own lines (inlined),
# demangled C++ (cxx), module+0xOFFSET for a stripped binary (stripped), and
# never an empty frame.
. "$(dirname "$0")/lib.sh"

SRC=$ROOT/tests/targets

# well_formed FILE: every line is "frame;...;frame COUNT", no empty frame.
well_formed() {
	local bad
	bad=$(grep -nEv '^[^; ][^;]*(;[^;]+)* [0-9]+$' "$1" | head -3)
	bad=$bad$(grep -nE '(^;|;;|; [0-9]+$|^ )' "$1" | head -3)
	[ -s "$1" ] && [ -z "$bad" ] && return 0
	DETAIL="bad lines: $(echo "$bad" | cut -c1-150 | tr '\n' '|')"
	return 1
}

# profile NAME: attach to tests/bin/NAME for 0.7 s into $TMP/NAME.folded and
# $TMP/NAME.pprof.  Returns non-zero if the target did not start.
profile() {
	local name=$1
	start_target "$name" || return 1
	prof "$TMP/$name" "$TARGET_PID" --duration 0.7 -o "$TMP/$name.folded"
	check_ran "$name" "$TMP/$name" "$TMP/$name.folded"
	check "$name: folded lines well formed, no empty frame" well_formed "$TMP/$name.folded"
	if have_pprof; then
		prof "$TMP/${name}p" "$TARGET_PID" --duration 0.7 -o "$TMP/$name.pprof"
		check_ran "$name pprof" "$TMP/${name}p" "$TMP/$name.pprof"
	fi
	stop_target "$TARGET_PID"
	return 0
}

stacks() { cut -c1-200 "$1" | tr '\n' '|'; }

# --- nodebug: .symtab only ------------------------------------------------------
if profile nodebug; then
	f=$TMP/nodebug.folded
	total=$(folded_total "$f")
	c=$(folded_count "$f" ';main;nodebug_outer;nodebug_work$')
	DETAIL="$c of $total; $(stacks "$f")" \
		check "nodebug: main;nodebug_outer;nodebug_work from .symtab (>= 95%)" \
		"[ '$total' -gt 0 ] && ge \$(pct $c $total) 95"
	if have_pprof; then
		raw=$(pprof_raw "$TMP/nodebug.pprof")
		DETAIL="$(grep -m3 nodebug_work <<<"$raw")" \
			check "nodebug pprof: function nodebug_work present" \
			"grep -qE '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ nodebug_work ' <<<\"\$raw\""
	fi
fi

# --- inlined ----------------------------------------------------------------------
if profile inlined; then
	f=$TMP/inlined.folded
	total=$(folded_total "$f")
	c=$(folded_count "$f" ';main;spin_caller;inlined_spin$')
	DETAIL="$c of $total; $(stacks "$f")" \
		check "inlined: inlined_spin is its own frame under spin_caller (>= 95%)" \
		"[ '$total' -gt 0 ] && ge \$(pct $c $total) 95"
	begin=$(grep -n 'INLINED_BEGIN' "$SRC/inlined.c" | cut -d: -f1)
	end=$(grep -n 'INLINED_END' "$SRC/inlined.c" | cut -d: -f1)
	call=$(grep -n 'CALLER_LINE' "$SRC/inlined.c" | cut -d: -f1)
	if have_pprof; then
		raw=$(pprof_raw "$TMP/inlined.pprof")
		# A location's first line is the innermost function; the inlined
		# caller follows as an indented line of the same location.
		pairs=$(awk '/^ +[0-9]+: 0x/ { inner = $0; next }
			/^ +[^ 0-9]/ && inner != "" { print inner " || " $0; inner = "" ; next }
			{ inner = "" }' <<<"$raw" | grep 'inlined_spin' | sed 's/  */ /g')
		lines=$(sed -nE 's/.* inlined_spin [^ ]*inlined\.c:([0-9]+) .*/\1/p' <<<"$pairs" | sort -u | tr '\n' ' ')
		DETAIL="inlined_spin locations: ${pairs:-none}; Locations: $(sed -n '/^Locations/,/^Mappings/p' <<<"$raw" | head -8 | tr '\n' '|')" \
			check "inlined pprof: one location = inlined_spin + its caller spin_caller" \
			"grep -q ' || spin_caller [^ ]*inlined\.c:' <<<\"\$pairs\""
		badl=$(for l in $lines; do [ "$l" -gt "$begin" ] && [ "$l" -lt "$end" ] || echo "$l"; done)
		DETAIL="inlined_spin lines: ${lines:-none}; body is $begin..$end" \
			check "inlined pprof: inlined_spin has its own source line (inside its body)" \
			"[ -n '$lines' ] && [ -z '$badl' ]"
		cl=$(sed -nE 's/.* \|\| spin_caller [^ ]*inlined\.c:([0-9]+).*/\1/p' <<<"$pairs" | sort -u | tr '\n' ' ')
		DETAIL="spin_caller line(s) in those locations: ${cl:-none}; call is at line $call" \
			check "inlined pprof: the caller's line is the call site (line $call)" \
			"[ '$cl' = '$call ' ]"
		top=$(pprof_top "$TMP/inlined.pprof" -lines)
		DETAIL="$(grep inlined_spin <<<"$top" | head -3 | tr '\n' '|')" \
			check "inlined pprof -top -lines: 'inlined_spin inlined.c:N (inline)'" \
			"grep -qE 'inlined_spin [^ ]*inlined\.c:[0-9]+ \(inline\)' <<<\"\$top\""
	fi
fi

# --- cxx ------------------------------------------------------------------------------
if profile cxx; then
	f=$TMP/cxx.folded
	total=$(folded_total "$f")
	c=$(folded_count "$f" ';main;ns::Widget::spin\(int\)$')
	DETAIL="$c of $total; $(stacks "$f")" \
		check "cxx: demangled ns::Widget::spin(int) under main (>= 95%)" \
		"[ '$total' -gt 0 ] && ge \$(pct $c $total) 95"
	c=$(folded_count "$f" '(^|;)_Z')
	DETAIL="$c samples with a mangled name" check "cxx: no mangled names" "[ '$c' = 0 ]"
	if have_pprof; then
		raw=$(pprof_raw "$TMP/cxx.pprof")
		check "cxx pprof: function ns::Widget::spin(int)" \
			"grep -qF ' ns::Widget::spin(int) ' <<<\"\$raw\""
	fi
fi

# --- stripped -------------------------------------------------------------------------
if profile stripped; then
	f=$TMP/stripped.folded
	total=$(folded_total "$f")
	c=$(folded_count "$f" ';stripped\+0x[0-9a-f]+$')
	DETAIL="$c of $total; $(stacks "$f")" \
		check "stripped: leaf frame is stripped+0xOFFSET (>= 95%)" \
		"[ '$total' -gt 0 ] && ge \$(pct $c $total) 95"
	c=$(folded_count "$f" '(^|;)(hidden_spin|hidden_outer)(;|$)')
	check "stripped: no invented names for the stripped functions" "[ '$c' = 0 ]"
	c=$(folded_count "$f" ';__libc_start_call_main;')
	DETAIL="$(stacks "$f")" check "stripped: libc frames keep their names" "[ '$c' -gt 0 ]"
	# Every stripped+0xN must lie in the binary's executable LOAD segment.
	read -r off fsz < <(readelf -lW "$BIN/stripped" | awk '$1 == "LOAD" && / R?W? ?E / { print $2, $5 }')
	lo=$((off)) hi=$((off + fsz))
	offs=$(grep -oE 'stripped\+0x[0-9a-f]+' "$f" | sort -u | sed 's/stripped+//')
	bad=$(for o in $offs; do [ $((o)) -ge "$lo" ] && [ $((o)) -lt "$hi" ] || echo -n "$o "; done)
	DETAIL="outside [$lo, $hi): $bad" \
		check "stripped: every +0xOFFSET is inside the binary's code" "[ -n '$offs' ] && [ -z '$bad' ]"
	# The offsets are where the functions start (their FDEs say, stripped or
	# not): one frame per function.  A twin linked without -s has the same
	# code at the same addresses and tells which functions those are.
	if gcc -std=gnu11 -O2 -fomit-frame-pointer -pthread -fPIE -pie -o "$TMP/twin" \
		"$SRC/stripped.c" 2>"$TMP/twin.err"; then
		spin=$(nm "$TMP/twin" | awk '$3 == "hidden_spin" { sub(/^0+/, "", $1); print $1 }')
		outer=$(nm "$TMP/twin" | awk '$3 == "hidden_outer" { sub(/^0+/, "", $1); print $1 }')
		c=$(folded_count "$f" ";stripped\\+0x$outer;stripped\\+0x$spin\$")
		DETAIL="hidden_outer at 0x$outer, hidden_spin at 0x$spin; $c of $total; $(stacks "$f")" \
			check "stripped: frames are named by function start (>= 95%)" \
			"[ -n '$spin' ] && ge \$(pct $c $total) 95"
	else
		check "stripped: building the unstripped twin" false
		diag_file "$TMP/twin.err"
	fi
	c=$(folded_count "$f" '^_start;__libc_start_main;')
	DETAIL="$c of $total; $(stacks "$f")" \
		check "stripped: the entry point is _start (>= 95%)" "ge \$(pct $c $total) 95"
fi

done_testing
