#!/usr/bin/env bash
# Names: Rust's legacy and v0 manglings demangled as
# perf prints them (libiberty's demangler), libc's signal trampoline
# __restore_rt named, node's own C++ functions named from its .symtab.
. "$(dirname "$0")/lib.sh"

stacks() { cut -c1-240 "$1" | tr '\n' '|'; }

# perf_leaves PID OUT: the user-space function names perf samples in PID
# over 0.5 s (innermost frames), one per line; fails if perf cannot
# record here (no perf, or perf_event_open refused).
perf_leaves() {
	command -v perf >/dev/null || return 1
	timeout -k 2 10 perf record -q -F 499 -o "$2.data" -p "$1" -- sleep 0.5 >/dev/null 2>&1 || return 1
	perf script -i "$2.data" -F ip,sym 2>/dev/null | sed -E 's/^[[:space:]]*[0-9a-f]+ //' |
		grep -v '^[[:space:]]*$' | sort -u >"$2"
	[ -s "$2" ]
}

# --- Rust ---------------------------------------------------------------------
RUSTC=$(command -v rustc)
if [ -z "$RUSTC" ]; then
	skip "Rust names" "no rustc on PATH"
else
	# Both builds at once (one core each): rustc takes seconds.
	"$RUSTC" -O -g -o "$TMP/spin-legacy" "$ROOT/tests/targets/spin.rs" 2>"$TMP/rustc-legacy.err" &
	"$RUSTC" -O -g -C symbol-mangling-version=v0 -o "$TMP/spin-v0" "$ROOT/tests/targets/spin.rs" \
		2>"$TMP/rustc-v0.err" &
	wait
	for mangling in legacy v0; do
		bin=$TMP/spin-$mangling
		if [ ! -x "$bin" ]; then
			DETAIL="$(head -c 300 "$TMP/rustc-$mangling.err")" check "rust $mangling: builds" false
			continue
		fi
		raw=$(nm "$bin" | grep -cE ' (_ZN4spin5heavy17h[0-9a-f]{16}E|_RNvCs[0-9A-Za-z_]+_4spin5heavy)$')
		DETAIL="nm finds no $mangling-mangled spin::heavy" \
			check "rust $mangling: symbols are $mangling-mangled" "[ '$raw' -gt 0 ]"
		ready=$TMP/spin-$mangling.ready
		"$bin" "$ready" &
		pid=$!
		PIDS+=("$pid")
		if ! wait_until 10 file_ready "$ready"; then
			check "rust $mangling: target starts" false
			continue
		fi
		f=$TMP/rust-$mangling.folded
		prof "$TMP/rust-$mangling" "$pid" --duration 0.7 -o "$f"
		check_ran "rust $mangling" "$TMP/rust-$mangling" "$f"
		for fn in 'spin::heavy' '<spin::Hasher as spin::Worker>::run'; do
			c=$(folded_frame_count "$f" "$fn")
			DETAIL="$(stacks "$f")" check "rust $mangling: frame '$fn'" "[ '$c' -gt 0 ]"
		done
		# Rust's DWARF puts functions inside namespaces, where libdw's
		# dwarf_getscopes does not look: the standard library's code
		# inlined into spin::heavy and run (Range::next, black_box...)
		# must still be frames, as perf --call-graph dwarf shows them.
		# Every instruction of both loops is inlined code: >= 50%.
		mine=$(folded_count "$f" ';(spin::heavy|<spin::Hasher as spin::Worker>::run)(;|$)')
		inl=$(folded_count "$f" ';(spin::heavy|<spin::Hasher as spin::Worker>::run);(core::|<core::|<u64)')
		DETAIL="$inl of $mine; $(stacks "$f")" \
			check "rust $mangling: inlined standard-library frames under spin::heavy and run (>= 50%)" \
			"[ '$mine' -gt 0 ] && [ \$((inl * 2)) -ge '$mine' ]"
		bad=$(grep -E '_ZN|(^|;)_R[A-Z]|17h[0-9a-f]{16}|\$LT\$|\$u20\$|\.\.' "$f" | head -3)
		DETAIL="$bad" check "rust $mangling: no mangled name left" "[ -z \"\$bad\" ]"
		if perf_leaves "$pid" "$TMP/perf-$mangling"; then
			# perf without a call graph names the function that holds
			# the code; ours is the innermost spin frame (inlined
			# standard-library frames are below it)
			ours=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
				for (i = n; i > 0; i--) if (index(f[i], "spin::")) { print f[i]; break } }' "$f" | sort -u)
			missing=$(comm -23 <(echo "$ours") "$TMP/perf-$mangling")
			DETAIL="ours: $(tr '\n' '|' <<<"$ours") perf: $(grep spin "$TMP/perf-$mangling" | tr '\n' '|')" \
				check "rust $mangling: innermost spin functions named as perf names them" \
				"[ -n \"\$ours\" ] && [ -z \"\$missing\" ]"
		else
			skip "rust $mangling: names compared with perf's" "perf cannot record here"
		fi
		stop_target "$pid"
	done
fi

# --- __restore_rt -------------------------------------------------------------
# libc keeps __restore_rt only in .symtab, which Debian ships in libc6-dbg
# (found by build ID under /usr/lib/debug).  The frame below the handler
# returns to its first byte: looked up at pc - 1, it fell in the padding
# before it and showed as libc.so.6+0xOFFSET.
libc_dbg() { dpkg-query -W -f='${Status}' libc6-dbg 2>/dev/null | grep -q 'install ok installed'; }
if ! libc_dbg; then
	skip "__restore_rt named" "libc6-dbg (libc's .symtab) is not installed (Debian package libc6-dbg: make deps installs it)"
elif start_target sigtramp; then
	f=$TMP/sigtramp.folded
	prof "$TMP/sigtramp" "$TARGET_PID" --duration 0.7 -o "$f"
	check_ran "sigtramp" "$TMP/sigtramp" "$f"
	stop_target "$TARGET_PID"
	total=$(folded_total "$f")
	c=$(folded_count "$f" ';__restore_rt;on_alarm(;|$)')
	DETAIL="$c of $total; $(stacks "$f")" \
		check "sigtramp: on_alarm called from __restore_rt (>= 50% of samples)" \
		"[ '$total' -gt 0 ] && ge \$(pct $c $total) 50"
	bad=$(grep -cE 'libc\.so\.6\+0x[0-9a-f]+;on_alarm' "$f")
	DETAIL="$(stacks "$f")" check "sigtramp: no libc.so.6+0x... frame for the trampoline" "[ '$bad' = 0 ]"
fi

# --- node's own frames ----------------------------------------------------------
# node's segments leave a hole between them, so its mappings make several
# modules of one file; reporting the file to libdwfl twice made libdwfl
# drop it, and every frame of node itself was node+0xOFFSET.
NODE=$(command -v node)
if [ -z "$NODE" ]; then
	skip "node frames named" "no node on PATH"
elif ! readelf -S "$(readlink -f "$NODE")" 2>/dev/null | grep -q '\.symtab'; then
	skip "node frames named" "this node has no .symtab"
else
	ready=$TMP/node.ready
	cat >"$TMP/idle.js" <<'JS'
const fs = require('fs');
fs.writeFileSync(process.argv[2] + '.tmp', process.pid + '\n');
fs.renameSync(process.argv[2] + '.tmp', process.argv[2]);
setInterval(() => {}, 1000);
JS
	"$NODE" "$TMP/idle.js" "$ready" &
	pid=$!
	PIDS+=("$pid")
	if wait_until 20 file_ready "$ready"; then
		f=$TMP/node.folded
		prof "$TMP/node" "$pid" --duration 0.5 -o "$f"
		check_ran "node" "$TMP/node" "$f"
		bad=$(grep -oE '(^|;)node\+0x[0-9a-f]+' "$f" | sort -u | head -5 | tr '\n' ' ')
		DETAIL="$bad; $(stacks "$f")" check "node: no node+0x... frame (names from node's .symtab)" \
			"[ -z '$bad' ]"
		c=$(folded_count "$f" '(^|;)(node::|uv_)')
		DETAIL="$(stacks "$f")" check "node: node's own functions (node::..., uv_...) named" "[ '$c' -gt 0 ]"
	else
		check "node: target starts" false
	fi
	stop_target "$pid"
fi

done_testing
