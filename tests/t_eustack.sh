#!/usr/bin/env bash
# Issue 6, frame for frame against a reference: tests/targets/resting.c's
# threads sit still, each blocked in its own system call under its own
# call chain (two chains through inlined functions, one 100 frames deep).
# elfutils' eu-stack -p PID -i unwinds them first; then cprof-attach
# samples them for a second.  For every thread: one distinct stack (they
# do not move), about 99 samples, and the same frames as eu-stack's, in
# the same order, inlined frames included: no frame missing, none extra.
#
# Names may differ only where both are names of the same code: ours come
# from the symbol table like perf's (read, pthread_cond_wait, w_block.
# constprop.0), eu-stack prefers DWARF's (__GI___libc_read,
# ___pthread_cond_wait, w_block).  Such a pair is accepted when our name is
# a function symbol of that module (its file or its debug file) whose range
# holds the frame's address, and only for the function that holds the code
# (inlined frames are named from DWARF by both); every such pair is printed.
# Where eu-stack has no name at all (libc's static functions when libc6-dbg
# is not installed), ours must be MODULE+0xSTART for the module holding the
# address, START at or below it.
. "$(dirname "$0")/lib.sh"

if ! command -v eu-stack >/dev/null; then
	check "eu-stack installed (package elfutils, see contrib/install-deps.sh)" false
	done_testing
fi

start_target resting || done_testing
PID=$TARGET_PID
TIDS=$TARGET_READY.tids

# The reference first: eu-stack stops every thread and resumes it.
eu-stack -p "$PID" -i -m >"$TMP/eu.txt" 2>"$TMP/eu.err"
check "eu-stack unwinds the target" "[ -s '$TMP/eu.txt' ]" || diag_file "$TMP/eu.err"
# (after eu-stack's detach, the threads are asleep again where they were)
prof "$TMP/p" "$PID" --duration 1 --threads -o "$TMP/p.folded"
check_ran "cprof-attach" "$TMP/p" "$TMP/p.folded"

# symtab MODULE: "START END NAME" for every function symbol of MODULE and of
# its debug file (by build ID, if installed), addresses as file offsets
# from the module's load address (ELF vaddr), decimal.
symtab() {
	local m=$1 id dbg files
	files=("$m")
	id=$(build_id "$m")
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && [ -f "$dbg" ] && files+=("$dbg")
	for f in "${files[@]}"; do
		readelf -sW "$f" 2>/dev/null
	done | awk '$4 == "FUNC" || $4 == "IFUNC" { n = $8; sub(/@.*/, "", n)
		v = 0; h = tolower($2); for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		s = ($3 ~ /^0x/) ? 0 : $3 + 0; if (s == 0) s = 1
		print v, v + s, n }'
}

# load_address MODULE: where MODULE's offset-0 mapping starts, decimal.
load_address() {
	awk -v m="$1" '$6 == m && $3 ~ /^0+$/ { split($1, r, "-"); print r[1]; exit }' "/proc/$PID/maps" |
		while read -r hex; do printf '%d\n' "0x$hex"; done
}

declare -A SYMS LOAD
# alias OURS MODULE PC ADJUST: our name OURS is a function symbol of MODULE
# whose range holds PC - ADJUST (PC a runtime address, hex with 0x).
alias_ok() {
	local name=$1 m=$2 pc=$3 adj=$4 key off
	key=$(tr -c 'a-zA-Z0-9' _ <<<"$m")
	if [ -z "${SYMS[$key]:-}" ]; then
		symtab "$m" >"$TMP/syms.$key"
		SYMS[$key]=$TMP/syms.$key
		LOAD[$key]=$(load_address "$m")
	fi
	[ -n "${LOAD[$key]}" ] || return 1
	off=$(($(printf '%d' "$pc") - adj - LOAD[$key]))
	awk -v n="$name" -v o="$off" '$3 == n && $1 <= o && o < $2 { found = 1; exit } END { exit !found }' \
		"${SYMS[$key]}"
}

# unnamed_ok OURS PC ADJUST: OURS is "MODULE+0xSTART" with MODULE the file
# mapped at PC - ADJUST and START <= its offset there (ELF vaddr).
unnamed_ok() {
	local name=$1 pc=$(($(printf '%d' "$2") - $3)) m start load
	[[ $name =~ ^(.+)\+0x([0-9a-f]+)$ ]] || return 1
	start=$((16#${BASH_REMATCH[2]}))
	m=$(awk -v pc="$pc" '{ split($1, r, "-"); lo = 0; hi = 0
		for (i = 1; i <= length(r[1]); i++) lo = lo * 16 + index("0123456789abcdef", substr(r[1], i, 1)) - 1
		for (i = 1; i <= length(r[2]); i++) hi = hi * 16 + index("0123456789abcdef", substr(r[2], i, 1)) - 1
		if (lo <= pc && pc < hi && $6 ~ /^\//) { print $6; exit } }' "/proc/$PID/maps")
	[ -n "$m" ] && [ "$(basename "$m")" = "${BASH_REMATCH[1]}" ] || return 1
	load=$(load_address "$m")
	[ -n "$load" ] && [ "$start" -le $((pc - load)) ]
}

# eu_frames TID: "PC NAME MODULE" per frame, innermost first.
eu_frames() {
	awk -v tid="$1" '/^TID / { on = ($2 == tid ":") ; next }
		on && /^#[0-9]+ / { name = $3; mod = ""; for (i = 4; i <= NF; i++) if ($i == "-") { mod = $(i + 1); break }
			if (name == "-") name = "??"
			print $2, name, mod }' "$TMP/eu.txt"
}

# our_counts NAME TID: sets OUR_STACKS (distinct stacks of that thread)
# and OUR_SAMPLES.
our_counts() {
	local label="$1 ($2)"
	OUR_STACKS=$(awk -v l="$label;" 'index($0, l) == 1 { n++ } END { print n + 0 }' "$TMP/p.folded")
	OUR_SAMPLES=$(awk -v l="$label;" 'index($0, l) == 1 { n += $NF } END { print n + 0 }' "$TMP/p.folded")
}

# our_frames NAME TID: our frames (of its first stack) innermost first, one
# per line, without the thread's label.
our_frames() {
	local label="$1 ($2)"
	awk -v l="$label;" 'index($0, l) == 1 { s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
		for (i = n; i >= 2; i--) print f[i]; exit }' "$TMP/p.folded"
}

total_frames=0
total_aliases=0
while read -r name tid; do
	[ -n "$tid" ] || continue
	mapfile -t eu < <(eu_frames "$tid")
	mapfile -t ours < <(our_frames "$name" "$tid")
	our_counts "$name" "$tid"
	label="$name ($tid)"
	DETAIL="$OUR_STACKS distinct stacks" check "$label: one stack, the thread does not move" \
		"[ '$OUR_STACKS' = 1 ]"
	DETAIL="$OUR_SAMPLES samples" check "$label: sampled all along (>= 80 samples in 1 s)" \
		"[ '$OUR_SAMPLES' -ge 80 ]"
	bad=
	aliases=()
	n=${#eu[@]}
	if [ "$n" != "${#ours[@]}" ]; then
		bad="eu-stack has $n frames, we have ${#ours[@]}"
	fi
	for ((i = 0; i < n && i < ${#ours[@]}; i++)); do
		read -r pc ename mod <<<"${eu[$i]}"
		o=${ours[$i]}
		[ "$o" = "$ename" ] && continue
		adj=1
		[ "$i" = 0 ] && adj=0
		# An inlined frame (the next one has the same PC) is named from
		# DWARF by both: only the function that holds the code, the last
		# frame at its PC, may carry another of its names.
		read -r npc _ <<<"${eu[$((i + 1))]:-}"
		if [ "$npc" != "$pc" ] && [ -n "$mod" ] && alias_ok "$o" "$mod" "$pc" "$adj"; then
			aliases+=("#$i $o = $ename")
			continue
		fi
		# No symbol for eu-stack (a library without its debug file): ours
		# must be MODULE+0xSTART, the module holding PC and START at or
		# below its offset (where its function starts).
		if [ "$ename" = "??" ] && unnamed_ok "$o" "$pc" "$adj"; then
			aliases+=("#$i $o = ??")
			continue
		fi
		bad="${bad:+$bad; }frame #$i: ours $o, eu-stack $ename ($mod)"
	done
	total_frames=$((total_frames + n))
	total_aliases=$((total_aliases + ${#aliases[@]}))
	if ! DETAIL="$bad" check "$label: the same $n frames as eu-stack -i, in order" "[ -z '$bad' ]"; then
		diag "  #  eu-stack -i | cprof-attach"
		for ((i = 0; i < n || i < ${#ours[@]}; i++)); do
			read -r pc ename mod <<<"${eu[$i]:-- - -}"
			diag "  $i  $ename | ${ours[$i]:--}"
		done
	fi
	[ ${#aliases[@]} -gt 0 ] && diag "$label: same code, other name: ${aliases[*]}"
	case $name in
	deep)
		c=$(printf '%s\n' "${ours[@]}" | grep -cx descend)
		e=$(printf '%s\n' "${eu[@]}" | awk '$2 == "descend"' | wc -l)
		DETAIL="ours $c, eu-stack $e" check "$label: 100 descend frames in both" \
			"[ '$c' = 100 ] && [ '$e' = 100 ]" ;;
	waiter)
		s=$(printf '%s;' "${ours[@]}")
		DETAIL="$s" check "$label: inlined w_mid and w_wrap between w_block and w_outer" \
			"[[ '$s' == *';w_mid;w_wrap;w_outer;'* ]]" ;;
	poller)
		s=$(printf '%s;' "${ours[@]}")
		DETAIL="$s" check "$label: inlined p_inline between p_inner and p_outer" \
			"[[ '$s' == *'p_inner;p_inline;p_outer;'* ]]" ;;
	esac
done <"$TIDS"
diag "compared $total_frames frames in $(wc -l <"$TIDS") threads; $total_aliases named differently for the same code"

# Still where it was: alive, untraced, not stopped (it uses no CPU).
check "after both: target alive" alive "$PID"
check "after both: every thread untraced" untraced "$PID"
check "after both: no thread stopped" not_stopped "$PID"
done_testing
