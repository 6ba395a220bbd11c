#!/usr/bin/env bash
# Frame for frame against a reference: tests/targets/still.c's six
# threads sit still, each asleep in a system call of its own (rt_sigsuspend,
# read, clock_nanosleep, futex, epoll_wait, pause) under a call chain of its
# own: one through two nested inlined functions, one whose libc call is made
# from an inlined body, one 100 x (e_recurse -> inlined e_step) deep.
# elfutils' eu-stack -p PID -i unwinds them first; once every thread is
# back asleep at the same sp and pc, cprof-attach samples them for a second.
# For every thread: one distinct stack (it does not move), >= 80 samples,
# and eu-stack's frames reversed, name for name, inlined frames included:
# no frame missing, none extra, none out of order.  (It found the second
# level of a nested inline missing: c_wrap between c_mid and c_outer.)
#
# Only these differences of naming are forgiven, each one printed:
#   - a symbol version (@@GLIBC_2.34, @GLIBC_2.2.5) is dropped;
#   - the function that holds the code (the last frame at its PC: inlined
#     frames are named from DWARF by both) may carry another name of the
#     same code: eu-stack takes DWARF's (__GI___libc_read,
#     __libc_start_main_impl), we take the symbol table's (read,
#     __libc_start_main).  Accepted only if both are function symbols of
#     that module (its file or its debug file, by build ID) at the same
#     address, and that symbol's range holds the frame's address.
#   - where eu-stack has no name (a library without its debug file), ours
#     must be MODULE+0xSTART, START at or below the frame's offset.
# Checked with and without libc6-dbg (/usr/lib/debug hidden in a mount
# namespace).
. "$(dirname "$0")/lib.sh"

if ! command -v eu-stack >/dev/null; then
	check "eu-stack installed (package elfutils, see contrib/install-deps.sh)" false
	done_testing
fi

start_target still || done_testing
PID=$TARGET_PID
mapfile -t THREADS <"$TARGET_READY.tids"    # "NAME TID NR", main first
NTHREADS=${#THREADS[@]}

# syscall_place TID NR: "sp pc" from /proc/PID/task/TID/syscall if TID is
# asleep (S) in system call NR (any, if NR is empty), else nothing.
syscall_place() {
	local line
	[ "$(proc_state "$PID" "$1")" = S ] || return 1
	line=$(cat "/proc/$PID/task/$1/syscall" 2>/dev/null) || return 1
	set -- $line "$2"
	[ $# = 10 ] && { [ -z "${10}" ] || [ "$1" = "${10}" ]; } || return 1
	echo "$8 $9"
}

# all_in_syscall: every thread asleep in its own call (main blocks only
# after writing READY); remembers each one's sp and pc in PLACE.
declare -A PLACE
all_in_syscall() {
	local name tid nr p
	for t in "${THREADS[@]}"; do
		read -r name tid nr <<<"$t"
		p=$(syscall_place "$tid" "$nr") || return 1
		PLACE[$tid]=$p
	done
}

# all_in_place: every thread asleep in a system call at the sp and pc it
# had (a call interrupted by a ptrace stop may come back as
# restart_syscall, or as the same call made again from the same place).
all_in_place() {
	local name tid nr
	for t in "${THREADS[@]}"; do
		read -r name tid nr <<<"$t"
		[ "$(syscall_place "$tid" "")" = "${PLACE[$tid]}" ] || return 1
	done
}

# where_all: each thread's state and system call, for a failure.
where_all() {
	local name tid nr
	for t in "${THREADS[@]}"; do
		read -r name tid nr <<<"$t"
		echo -n "$name: $(proc_state "$PID" "$tid") $(cut -d' ' -f1,8,9 "/proc/$PID/task/$tid/syscall" 2>/dev/null); "
	done
}

wait_until 5 all_in_syscall
DETAIL="$(where_all)" check "every thread asleep in its own system call" all_in_syscall || done_testing

# The reference first: eu-stack stops every thread, unwinds, resumes it.
eu-stack -p "$PID" -i -m -b -n 0 >"$TMP/eu.txt" 2>"$TMP/eu.err"
EU_RC=$?
DETAIL="exit $EU_RC: $(head -c 300 "$TMP/eu.err")" \
	check "eu-stack -i unwinds every thread without error" "[ $EU_RC = 0 ] && [ -s '$TMP/eu.txt' ]"
wait_until 5 all_in_place
DETAIL="$(where_all)" check "after eu-stack: every thread asleep again where it was" all_in_place
prof "$TMP/p" "$PID" --duration 1 --threads -o "$TMP/p.folded"
check_ran "cprof-attach" "$TMP/p" "$TMP/p.folded"

# eu_frames TID: "PC NAME MODULE BUILD_ID OFFSET" per frame, innermost
# first.  -b's OFFSET is the frame's address (PC, or PC - 1 for a return
# address) minus the module's start, its ELF address: the start is where
# the first segment, at address 0, is loaded (shared libraries, PIE).
eu_frames() {
	awk -v tid="$1" '/^TID / { on = ($2 == tid ":"); next }
		!on { next }
		/^#[0-9]+ / { if (f != "") print f
			name = $3; mod = "-"
			if (name == "-") { name = "??"; mod = $4 } else if ($4 == "-") mod = $5
			f = $2 " " name " " mod " - -"; next }
		/^ +\[[0-9a-f]*\]@0x[0-9a-f]+\+0x[0-9a-f]+$/ && f != "" {
			split($1, b, /[][@+]/); sub(/ - -$/, "", f)
			f = f " " b[2] " " b[5]; print f; f = "" }
		END { if (f != "") print f }' "$TMP/eu.txt"
}

# our_stacks NAME TID: that thread's distinct stacks, "COUNT frames..."
# leaf first, most sampled first.
our_stacks() {
	l="$1 ($2);" awk 'BEGIN { l = ENVIRON["l"] }
		index($0, l) == 1 { s = substr($0, length(l) + 1)
		c = s; sub(/.* /, "", c); sub(/ [0-9]+$/, "", s)
		n = split(s, f, ";"); r = c; for (i = n; i >= 1; i--) r = r " " f[i]; print r }' \
		"$TMP/p.folded" | sort -k1,1nr
}

# symtab BUILD_ID MODULE: "VALUE SIZE NAME" (decimal, ELF addresses) for
# every function symbol of MODULE and of its debug file, cached.
declare -A SYMTAB
symtab() {
	local f=$TMP/syms.$1 dbg=/usr/lib/debug/.build-id/${1:0:2}/${1:2}.debug
	if [ -z "${SYMTAB[$1]:-}" ]; then
		{ readelf -sW "$2"; [ -f "$dbg" ] && readelf -sW "$dbg"; } 2>/dev/null |
			awk '($4 == "FUNC" || $4 == "IFUNC") && $2 ~ /^[0-9a-f]+$/ {
				n = $8; sub(/@.*/, "", n); v = 0
				for (i = 1; i <= length($2); i++) v = v * 16 + index("0123456789abcdef", substr($2, i, 1)) - 1
				printf "%.0f %d %s\n", v, $3, n }' |
			sort -u >"$f"
		SYMTAB[$1]=$f
	fi
	echo "$f"
}

# symbol_at BUILD_ID MODULE NAME OFFSET: the value of function symbol NAME
# if its range holds OFFSET (hex).
symbol_at() {
	n=$3 awk -v o="$(printf '%d' "$4")" 'BEGIN { n = ENVIRON["n"] }
		$3 == n && $1 <= o && o < $1 + ($2 ? $2 : 1) {
		print $1; exit }' "$(symtab "$1" "$2")"
}

# same_code BUILD_ID MODULE OURS THEIRS OFFSET: both names are function
# symbols at one address, whose range holds OFFSET.
same_code() {
	local a b
	a=$(symbol_at "$1" "$2" "$3" "$5")
	b=$(symbol_at "$1" "$2" "$4" "$5")
	[ -n "$a" ] && [ "$a" = "$b" ]
}

# unnamed_ok OURS MODULE OFFSET: OURS is "BASENAME(MODULE)+0xSTART" with
# START <= OFFSET.
unnamed_ok() {
	[[ $1 =~ ^(.+)\+0x([0-9a-f]+)$ ]] && [ "${BASH_REMATCH[1]}" = "$(basename "$2")" ] &&
		[ $((16#${BASH_REMATCH[2]})) -le $(($3)) ]
}

unversioned() { echo "${1%%@*}"; }

# chain_has STRING ERE: the "root;...;leaf" string matches ERE.
chain_has() { [[ $1 =~ $2 ]]; }

# The chain each thread must show, root first, in both stacks (so that two
# equally wrong stacks cannot agree), and the recursion's depth.
# libc's static functions have no name without libc6-dbg: for eu-stack "??",
# for us libc.so.6+0xSTART (the frame-for-frame check holds them to that).
ST='(start_thread|libc\.so\.6\+0x[0-9a-f]+|\?\?)'
SCM='(__libc_start_call_main|libc\.so\.6\+0x[0-9a-f]+|\?\?)'
declare -A CHAIN=(
	[still]=";_start;__libc_start_main[^;]*;$SCM;main;m_wait;[^;]*\$"
	[reader]=";$ST;thread_main;a_outer;a_middle;a_inner;"
	[sleeper]=";$ST;thread_main;b_outer;b_middle;b_inner;"
	[futex]=";$ST;thread_main;c_outer;c_wrap;c_mid;c_block;[^;]+\$"
	[poller]=";$ST;thread_main;d_outer;d_inline;[^;]+\$"
	[deep]=";$ST;thread_main;e_outer;(e_recurse;e_step;){100}e_bottom;[^;]+\$"
)

total_frames=0
total_norms=0
for t in "${THREADS[@]}"; do
	read -r name tid nr <<<"$t"
	label="$name ($tid)"
	mapfile -t eu < <(eu_frames "$tid")
	mapfile -t stacks < <(our_stacks "$name" "$tid")
	read -r count frames <<<"${stacks[0]:-0}"
	read -r -a ours <<<"$frames"
	samples=$(awk '{ n += $1 } END { print n + 0 }' < <(printf '%s\n' "${stacks[@]}"))
	DETAIL="${#stacks[@]} distinct stacks: $(printf '%s | ' "${stacks[@]}" | cut -c1-400)" \
		check "$label: one stack, the thread does not move" "[ ${#stacks[@]} = 1 ]"
	DETAIL="$samples samples" check "$label: sampled all along (>= 80 samples in 1 s)" \
		"[ '$samples' -ge 80 ]"

	bad=
	diffs=0
	norms=()
	marks=()
	n=${#eu[@]}
	[ "$n" = "${#ours[@]}" ] || bad="eu-stack has $n frames, we have ${#ours[@]}"
	[ "$n" -gt 0 ] || bad="no stack from eu-stack"
	for ((i = 0; i < n && i < ${#ours[@]}; i++)); do
		read -r pc ename mod id off <<<"${eu[$i]}"
		o=${ours[$i]}
		marks[$i]='|'
		[ "$o" = "$ename" ] && continue
		marks[$i]='='
		# a symbol version: the same name
		if [ "$(unversioned "$o")" = "$(unversioned "$ename")" ]; then
			norms+=("#$i $o = $ename (version)")
			continue
		fi
		# another name of the code that holds the PC: only the function
		# itself, the last frame at its PC (inlined frames precede it)
		read -r npc _ <<<"${eu[$((i + 1))]:-}"
		if [ "$npc" != "$pc" ] && [ "$id" != - ] &&
			same_code "$id" "$mod" "$(unversioned "$o")" "$(unversioned "$ename")" "$off"; then
			norms+=("#$i $o = $ename (one address in $(basename "$mod"))")
			continue
		fi
		if [ "$ename" = "??" ] && [ "$off" != - ] && unnamed_ok "$o" "$mod" "$off"; then
			norms+=("#$i $o = ?? (unnamed by eu-stack)")
			continue
		fi
		marks[$i]='*'
		diffs=$((diffs + 1))
		[ "$diffs" -le 3 ] && bad="${bad:+$bad; }frame #$i: ours $o, eu-stack $ename ($(basename "$mod")+$off)"
	done
	[ "$diffs" -gt 3 ] && bad="$bad; $((diffs - 3)) more frames differ"
	total_frames=$((total_frames + n))
	total_norms=$((total_norms + ${#norms[@]}))
	if ! DETAIL="$bad" check "$label: the same $n frames as eu-stack -i, in order" "[ -z \"\$bad\" ]"; then
		diag "  #   eu-stack -i (innermost first)         | cprof-attach (= renamed, * differs)"
		for ((i = 0; i < n || i < ${#ours[@]}; i++)); do
			read -r pc ename mod id off <<<"${eu[$i]:-- - - - -}"
			o=${ours[$i]:--}
			diag "$(printf '  %-3d %-38s %s %s' "$i" "$ename" "${marks[$i]:-*}" "$o")"
		done
	fi
	[ ${#norms[@]} -gt 0 ] && diag "$label: normalized: ${norms[*]}"

	# the expected chain, in both (root first, as in the folded line)
	ours_s=";$(printf '%s\n' "${ours[@]}" | tac | paste -sd';')"
	eu_s=";$(printf '%s\n' "${eu[@]}" | awk '{ print $2 }' | tac | paste -sd';')"
	re=${CHAIN[$name]:-'^$'}
	DETAIL="ours ${ours_s:0:300}; eu-stack ${eu_s:0:300}" \
		check "$label: chain $re in both" "chain_has '$ours_s' '$re' && chain_has '$eu_s' '$re'"
	if [ "$name" = deep ]; then
		a=$(printf '%s\n' "${ours[@]}" | grep -cx e_recurse)
		b=$(printf '%s\n' "${eu[@]}" | awk '$2 == "e_recurse"' | wc -l)
		DETAIL="ours $a, eu-stack $b" check "$label: 100 e_recurse frames in both" \
			"[ '$a' = 100 ] && [ '$b' = 100 ]"
	fi
done
diag "compared $total_frames frames in $NTHREADS threads; $total_norms names normalized"

# Unharmed: still there, untraced, nobody stopped, every thread asleep
# where it was (it uses no CPU, so no "keeps running" check).
check "after both: target alive" alive "$PID"
check "after both: every thread untraced" untraced "$PID"
now=$(thread_count "$PID")
DETAIL="had $NTHREADS threads, now $now" check "after both: same thread count" "[ '$now' = '$NTHREADS' ]"
check "after both: no thread stopped" not_stopped "$PID"
wait_until 5 all_in_place
DETAIL="$(where_all)" check "after both: every thread asleep where it was" all_in_place
done_testing
