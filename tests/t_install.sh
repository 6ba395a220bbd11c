#!/usr/bin/env bash
# Packaging: `make install PREFIX=... DESTDIR=...` puts the
# profiler, cprof-folded2svg, the man page and the bash completion in their
# places; the installed man page renders without warnings and documents
# every option of --help; the completion offers those options, the
# --format values (--format=, -f too), PIDs by name in numeric order
# without kernel threads and PID 1, a process's threads, files; and
# cprof-folded2svg writes what --convert writes.  The systemd unit
# (contrib/cprof-attach@.service: always on) is installed with its path
# made the profiler's, passes systemd-analyze verify, and its command line
# writes its ring of profiles.
. "$(dirname "$0")/lib.sh"

DEST=$TMP/dest
P=/usr/local
# -o cprof-attach: install the profiler as built, never rebuild it here.
# (Not the jobserver of a `make check` we may run under.)
unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$ROOT" --no-print-directory -s -o cprof-attach install PREFIX=$P DESTDIR="$DEST" \
	>"$TMP/install.log" 2>&1
rc=$?
DETAIL="exit $rc: $(tail -3 "$TMP/install.log" | tr '\n' '|')" \
	check "make install PREFIX=$P DESTDIR=...: exit 0" "[ $rc = 0 ]"
for f in "bin/cprof-attach 755" "bin/cprof-folded2svg 755" \
	"share/man/man1/cprof-attach.1 644" \
	"share/bash-completion/completions/cprof-attach 644" \
	"lib/systemd/system/cprof-attach@.service 644"; do
	path=$DEST$P/${f% *} mode=${f#* }
	have=$(stat -c %a "$path" 2>/dev/null)
	DETAIL="mode ${have:-missing}" check "installed $P/${f% *}, mode $mode" "[ '$have' = '$mode' ]"
done
check "installed cprof-attach is the one built" "cmp -s '$ROOT/cprof-attach' '$DEST$P/bin/cprof-attach'"
v=$("$DEST$P/bin/cprof-attach" --version 2>&1)
DETAIL="$v" check "installed cprof-attach runs (--version)" "[[ '$v' =~ ^cprof-attach\ [0-9]+\.[0-9]+\.[0-9]+$ ]]"
make -C "$ROOT" --no-print-directory -s -o cprof-attach install PREFIX=/opt/cprof DESTDIR="$TMP/dest2" \
	>/dev/null 2>&1
check "PREFIX=/opt/cprof: files under /opt/cprof" \
	"[ -x '$TMP/dest2/opt/cprof/bin/cprof-attach' ] && [ -f '$TMP/dest2/opt/cprof/share/man/man1/cprof-attach.1' ]"
check "PREFIX=/opt/cprof: the systemd unit runs /opt/cprof/bin/cprof-attach" \
	"grep -q '^ExecStart=/opt/cprof/bin/cprof-attach ' '$TMP/dest2/opt/cprof/lib/systemd/system/cprof-attach@.service'"

# --- the systemd unit (contrib/cprof-attach@.service) ---------------------------
# systemd's own checks of the installed unit, where systemd-analyze is (the
# path it runs made the installed profiler's: verify wants the ExecStart
# binary to exist; the unit is otherwise as shipped): verify prints
# nothing, and `security --offline=true` rates its exposure 4.0 or less
# (before the sandbox of issue 43: 6.6 MEDIUM).  Then its ExecStart run as
# systemd would expand it, against a target writing a PID file: FOLLOW
# (--pid-file), STATE_DIRECTORY and %i as systemd sets them, CPROF_ARGS
# shortened to 1 s periods for 2.5 s; with the unit's UMask and, where
# setpriv is (as root), its CapabilityBoundingSet and NoNewPrivileges.  The
# ring's files are written, each a profile, readable by their owner alone.
UNIT=$DEST$P/lib/systemd/system/cprof-attach@.service
if command -v systemd-analyze >/dev/null; then
	sed "s|$P/bin/cprof-attach|$DEST$P/bin/cprof-attach|" "$UNIT" >"$TMP/cprof-attach@demo.service"
	out=$(systemd-analyze verify --man=no "$TMP/cprof-attach@demo.service" 2>&1)
	DETAIL="$out" check "systemd unit: systemd-analyze verify finds nothing" "[ -z \"\$out\" ]"
	sec=$(systemd-analyze security --offline=true "$TMP/cprof-attach@demo.service" 2>&1)
	score=$(printf '%s\n' "$sec" | sed -nE 's/^.*Overall exposure level for [^:]*: ([0-9]+\.[0-9]+) .*$/\1/p')
	diag "systemd-analyze security: ${score:-no score}"
	DETAIL="score ${score:-none}: $(printf '%s\n' "$sec" | grep -E 'Overall|^✗' | head -30 | tr '\n' '|')" \
		check "systemd unit: systemd-analyze security rates it 4.0 or less" \
		"[ -n '$score' ] && awk -v s='$score' 'BEGIN { exit !(s <= 4.0) }'"
else
	skip "systemd unit: systemd-analyze verify and security" "no systemd-analyze"
fi
if start_target wallclock; then
	echo "$TARGET_PID" >"$TMP/demo.pid"
	mkdir -p "$TMP/state"
	cmd=$(sed -n 's/^ExecStart=//p' "$UNIT")
	cmd=${cmd//'$FOLLOW'/--pid-file $TMP/demo.pid}
	cmd=${cmd//'${STATE_DIRECTORY}'/$TMP/state}
	cmd=${cmd//'$CPROF_ARGS'/--period 1s -d 2.5 -q}
	cmd=${cmd//'%i'/demo}
	cmd=${cmd//'%%'/%}
	cmd=${cmd/#$P\/bin\/cprof-attach/$CPROF}
	umask_=$(sed -n 's/^UMask=//p' "$UNIT")
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
	sandbox=()
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -n "$caps" ]; then
		sandbox=(setpriv --bounding-set "-all,$caps" --inh-caps -all --no-new-privs)
	else
		skip "systemd unit: run with its capabilities alone" "not root, or no setpriv"
	fi
	# shellcheck disable=SC2086 # systemd splits it into words as this does
	(umask "${umask_:-0022}" && exec "${sandbox[@]}" $cmd) >"$TMP/unit.out" 2>&1
	rc=$?
	files=$(cd "$TMP/state" && ls | sort -V | tr '\n' ' ')
	DETAIL="${sandbox[*]} $cmd: exit $rc, files: $files; $(head -c 300 "$TMP/unit.out")" \
		check "systemd unit: its command line writes the ring's files (demo-0.pprof ...)" \
		"[ $rc = 0 ] && [ '$files' = 'demo-0.pprof demo-1.pprof demo-2.pprof ' ]"
	check "systemd unit: its files are profiles (gzip)" "[ \"\$(head -c 2 '$TMP/state/demo-0.pprof' | od -An -tx1 | tr -d ' ')\" = 1f8b ]"
	modes=$(cd "$TMP/state" && stat -c %a -- * | sort -u | tr '\n' ' ')
	DETAIL="UMask=$umask_, modes: $modes" \
		check "systemd unit: its files are not readable by others (UMask=$umask_: 600)" \
		"[ '$umask_' = 0077 ] && [ '$modes' = '600 ' ]"
	stop_target "$TARGET_PID"
else
	skip "systemd unit: its command line" "the wallclock target did not start"
fi

# --- the unit's sandbox, run ---------------------------------------------------
# What systemd would install for the unit, where PID 1 is not systemd: its
# capability bounding set and no_new_privs (setpriv), its UMask, and the
# seccomp side (tests/bin/unitsandbox): SystemCallFilter= (the unit's
# groups expanded by systemd-analyze syscall-filter, less its ~ groups),
# RestrictAddressFamilies=, MemoryDenyWriteExecute=, RestrictNamespaces=,
# SystemCallArchitectures=.  Under it, with the default capture (perf
# where the host permits it) and with ptrace stops, the profiler samples,
# serves /metrics and a profile over HTTP, tries its pushes, writes a
# SIGUSR1 dump and its period files (0600), and exits 0; nothing refused
# on the way.  (The mount, /proc and device options are not run here.)
SB_BIN=$BIN/unitsandbox
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v systemd-analyze >/dev/null ||
	! command -v curl >/dev/null || [ ! -x "$SB_BIN" ]; then
	skip "systemd unit: run in its sandbox" "needs root, setpriv, systemd-analyze, curl and tests/bin/unitsandbox"
elif start_target wallclock; then
	sbpid=$TARGET_PID
	# _expand GROUP-OR-NAME: the system calls it names, one a line
	_expand() {
		local s
		case $1 in
		@*) systemd-analyze syscall-filter "$1" | awk '!/^ *#/ && NF { print $1 }' | while read -r s; do
			[ "$s" = "$1" ] || _expand "$s"
		done ;;
		*) echo "$1" ;;
		esac
	}
	: >"$TMP/sb.allow.all"
	: >"$TMP/sb.deny"
	while read -r line; do
		line=${line#SystemCallFilter=}
		if [ "${line:0:1}" = '~' ]; then
			for g in ${line#\~}; do _expand "$g"; done >>"$TMP/sb.deny"
		else
			for g in $line; do _expand "$g"; done >>"$TMP/sb.allow.all"
		fi
	done < <(grep '^SystemCallFilter=' "$UNIT")
	sort -u "$TMP/sb.allow.all" >"$TMP/sb.a"
	sort -u "$TMP/sb.deny" >"$TMP/sb.d"
	comm -23 "$TMP/sb.a" "$TMP/sb.d" >"$TMP/sb.allow"
	fams=
	for a in $(sed -n 's/^RestrictAddressFamilies=//p' "$UNIT"); do
		case $a in
		AF_UNIX) fams=$fams,1 ;; AF_INET) fams=$fams,2 ;; AF_INET6) fams=$fams,10 ;;
		AF_NETLINK) fams=$fams,16 ;; AF_PACKET) fams=$fams,17 ;; *) fams=$fams,unknown-$a ;;
		esac
	done
	fams=${fams#,}
	DETAIL="$(wc -l <"$TMP/sb.allow") calls allowed; families $fams; $(grep -E '^(MemoryDenyWriteExecute|RestrictNamespaces|SystemCallArchitectures)=' "$UNIT" | tr '\n' ' ')" \
		check "systemd unit: its seccomp options are those unitsandbox applies" \
		"[ \$(wc -l <'$TMP/sb.allow') -gt 100 ] && [[ '$fams' != *unknown* ]] && grep -qx 'MemoryDenyWriteExecute=yes' '$UNIT' && grep -qx 'RestrictNamespaces=yes' '$UNIT' && grep -qx 'SystemCallArchitectures=native' '$UNIT'"
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
	umask_=$(sed -n 's/^UMask=//p' "$UNIT")
	"$CPROF" "$sbpid" -d 0.3 -o "$TMP/sb.probe.folded" 2>"$TMP/sb.probe.err"
	plain=$(grep -oE ' (perf|ptrace), ' "$TMP/sb.probe.err" | tr -d ' ,')
	mkdir -p "$TMP/sb"
	for cap in auto ptrace; do
		capopt=()
		[ $cap = ptrace ] && capopt=(--capture ptrace)
		(umask "$umask_" && exec setpriv --bounding-set "-all,$caps" --inh-caps -all --no-new-privs \
			"$SB_BIN" "$TMP/sb.ready" "$TMP/sb.allow" "$fams" \
			"$CPROF" "$sbpid" "${capopt[@]}" --period 0.5s --history 1m --listen 127.0.0.1:0 \
			--push http://127.0.0.1:1/ -d 3 -o "$TMP/sb/$cap-%n.pprof") >"$TMP/sb.$cap.out" 2>"$TMP/sb.$cap.err" &
		sbprof=$!
		PIDS+=("$sbprof")
		wait_until 10 grep -q 'serving http' "$TMP/sb.$cap.err"
		addr=$(sed -n 's|.*serving http://\([^/]*\)/.*|\1|p' "$TMP/sb.$cap.err")
		m=$(curl -s -m 10 -o "$TMP/sb.$cap.metrics" -w '%{http_code}' "http://$addr/metrics")
		p=$(curl -s -m 10 -o "$TMP/sb.$cap.prof" -w '%{http_code}' "http://$addr/debug/pprof/profile?seconds=1")
		kill -USR1 "$sbprof"
		wait_until 10 gone "$sbprof"
		wait "$sbprof"
		rc=$?
		want=$plain
		[ $cap = ptrace ] && want=ptrace
		DETAIL="exit $rc: $(grep -v '^unitsandbox:' "$TMP/sb.$cap.err" | head -c 600 | tr '\n' '|')" \
			check "systemd unit, sandboxed, capture $cap: exit 0, sampled by $want" \
			"[ $rc = 0 ] && grep -q ' Hz, .* $want, ' '$TMP/sb.$cap.err'"
		DETAIL="/metrics $m, profile $p" check "systemd unit, sandboxed, capture $cap: /metrics and a profile served" \
			"[ '$m' = 200 ] && [ '$p' = 200 ] && [ -s '$TMP/sb.$cap.prof' ] && grep -q '^cprof_samples_total' '$TMP/sb.$cap.metrics'"
		check "systemd unit, sandboxed, capture $cap: the pushes tried (refused by the port, not the sandbox)" \
			"grep -q 'pushed 0 profiles to http://127.0.0.1:1/: [1-9][0-9]* sends failed' '$TMP/sb.$cap.err' && ! grep -qi 'not permitted\|not supported' '$TMP/sb.$cap.err'"
		DETAIL="$(ls "$TMP/sb" | tr '\n' ' ')" check "systemd unit, sandboxed, capture $cap: a SIGUSR1 dump and the period files written" \
			"grep -q 'SIGUSR1: wrote' '$TMP/sb.$cap.err' && [ -s '$TMP/sb/dump-$cap-0.pprof' ] && [ -s '$TMP/sb/$cap-1.pprof' ]"
		DETAIL="$(grep -iE 'seccomp|^cprof-attach: (error|warning)' "$TMP/sb.$cap.err" | head -3 | tr '\n' '|')" \
			check "systemd unit, sandboxed, capture $cap: no error, no warning, no note of a seccomp filter" \
			"! grep -qiE 'seccomp|^cprof-attach: (error|warning)' '$TMP/sb.$cap.err'"
	done
	modes=$(cd "$TMP/sb" && stat -c %a -- * | sort -u | tr '\n' ' ')
	DETAIL="modes: $modes" check "systemd unit, sandboxed: every file it wrote is 0600" "[ '$modes' = '600 ' ]"
	check "systemd unit, sandboxed: the target untraced after" untraced "$sbpid"
	stop_target "$sbpid"
fi

# --- the man page ---------------------------------------------------------------
MAN=$DEST$P/share/man/man1/cprof-attach.1
w=$(groff -man -ww -z "$MAN" 2>&1)
DETAIL="$w" check "man page: groff -man -ww -z, no warning" "[ -f '$MAN' ] && [ -z \"\$w\" ]"
MANWIDTH=80 man -l "$MAN" >"$TMP/man.txt" 2>"$TMP/man.err" </dev/null
rc=$?
DETAIL="exit $rc: $(head -c 300 "$TMP/man.err")" \
	check "man page: man -l renders it, nothing on stderr" "[ $rc = 0 ] && [ ! -s '$TMP/man.err' ]"
col -b <"$TMP/man.txt" >"$TMP/man.plain" 2>/dev/null || cp "$TMP/man.txt" "$TMP/man.plain"
for sec in NAME SYNOPSIS DESCRIPTION OPTIONS "OUTPUT FORMATS" "READING A PROFILE" "EXIT STATUS" EXAMPLES "SEE ALSO"; do
	check "man page: section $sec" "grep -q '^$sec\$' '$TMP/man.plain'"
done
# The options: the words starting with - on --help's option lines (those
# that start with one, before the examples); -F and -V too.
HELP_OPTS=$("$CPROF" --help | sed '/^examples:/,$d' | grep -E '^ +-' |
	sed -E 's/^ +//; s/   .*//' | grep -oE '(^|[ ,])--?[a-zA-Z][a-z-]*' | sed 's/^[ ,]*//' | sort -u)
for o in -p --pid -F --rate -d -f -t -V --processes --subprocesses --no-subprocesses --dump; do
	DETAIL="options of --help: $(tr '\n' ' ' <<<"$HELP_OPTS")" \
		check "--help lists $o" "grep -qx -- '$o' <<<\"\$HELP_OPTS\""
done
missing=$(for o in $HELP_OPTS; do grep -qE -- "(^|[ ,])$o( |,|\$)" "$TMP/man.plain" || echo "$o"; done)
DETAIL="not in the man page: $(tr '\n' ' ' <<<"$missing")" \
	check "man page: every option of --help ($(wc -w <<<"$HELP_OPTS") of them) is documented" \
	"[ -n '$HELP_OPTS' ] && [ -z \"\$missing\" ]"
FORMATS=$("$CPROF" 1 --format nosuch 2>&1 | sed -nE 's/.*--format must be (.*), not .*/\1/p' |
	sed 's/,\| or / /g' | tr -s ' ' '\n' | sort)
missing=$(for f in $FORMATS; do grep -qE "^ +$f( |\$)" "$TMP/man.plain" || echo "$f"; done)
DETAIL="formats $(tr '\n' ' ' <<<"$FORMATS"); missing: $missing" \
	check "man page: every output format (from --format's error) has an entry" \
	"[ -n '$FORMATS' ] && [ -z \"\$missing\" ]"
missing=$(for f in $FORMATS; do "$CPROF" --help | sed -n '/--format/,/--duration/p' | grep -qw "$f" || echo "$f"; done)
DETAIL="--format in --help: $("$CPROF" --help | sed -n '/--format/,/--duration/p' | head -2 | tr -s ' \n' ' '); missing: $missing" \
	check "--help: --format names every format the profiler accepts" "[ -z \"\$missing\" ]"
for code in 0 1 2 127; do
	check "man page: exit status $code" "sed -n '/^EXIT STATUS/,/^[A-Z]/p' '$TMP/man.plain' | grep -qE '^ +$code( |\$)'"
done

# --- the bash completion -----------------------------------------------------------
COMPL=$DEST$P/share/bash-completion/completions/cprof-attach
# complete WORD...: what the completion offers for the command line
# "cprof-attach WORD..." (the last word is the one completed), one per line.
complete_line() {
	bash --norc --noprofile -c '
		. "$1" || exit 9
		shift
		COMP_WORDS=(cprof-attach "$@"); COMP_CWORD=$#
		COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
		_cprof_attach
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPL" "$@" 2>&1
}
r=$(bash --norc --noprofile -c '. "$1" && complete -p cprof-attach' _ "$COMPL" 2>&1)
DETAIL="$r" check "completion: registers for cprof-attach" "grep -q '_cprof_attach cprof-attach' <<<'$r'"
got=$(complete_line - | grep -v '^--$' | sort -u)
missing=$(comm -23 <(echo "$HELP_OPTS") <(echo "$got") | tr '\n' ' ')
extra=$(comm -13 <(echo "$HELP_OPTS") <(echo "$got") | tr '\n' ' ')
DETAIL="missing: $missing; not in --help: $extra" \
	check "completion: '-' offers exactly the options of --help" "[ -z '$missing$extra' ]"
got=$(complete_line --format '' | sort | tr '\n' ' ')
DETAIL="offered: $got; formats: $(tr '\n' ' ' <<<"$FORMATS")" \
	check "completion: --format offers the formats the profiler accepts" \
	"[ '$got' = \"\$(tr '\\n' ' ' <<<\"\$FORMATS\")\" ]"
got=$(complete_line --format s | sort | tr '\n' ' ')
check "completion: --format s -> speedscope svg" "[ '$got' = 'speedscope svg ' ]"
# "--format=<Tab>": bash splits the word at "=" (COMP_WORDBREAKS).
fmts=$(tr '\n' ' ' <<<"$FORMATS")
for words in "--format =" "--format = ''" "-f ''" "--format=" "--format=''"; do
	eval "got=\$(complete_line $words | sort | tr '\\n' ' ')"
	DETAIL="offered: ${got:0:200}" check "completion: $words offers the formats" "[ '$got' = '$fmts' ]"
done
got=$(complete_line --format = s | sort | tr '\n' ' ')
DETAIL="offered: $got" check "completion: --format=s -> speedscope svg" "[ '$got' = 'speedscope svg ' ]"
got=$(complete_line --threads = '')
DETAIL="offered: $got" check "completion: --threads= (no value) offers nothing" "[ -z \"\$got\" ]"
mkdir -p "$TMP/files"
touch "$TMP/files/prof.folded" "$TMP/files/prof.svg" "$TMP/files/other"
for opt in -o --output --convert; do
	got=$(cd "$TMP/files" && complete_line "$opt" pro | sort | tr '\n' ' ')
	DETAIL="offered: $got" check "completion: $opt completes file names" \
		"[ '$got' = 'prof.folded prof.svg ' ]"
done
got=$(complete_line --debug-dir "$TMP/fi")
DETAIL="offered: $got" check "completion: --debug-dir completes directories" "[ '$got' = '$TMP/files' ]"

if start_target wallclock; then
	pid=$TARGET_PID
	got=$(complete_line "$pid")
	DETAIL="offered: $(head -5 <<<"$got" | tr '\n' '|')" \
		check "completion: a PID prefix completes to the PID" \
		"grep -qxE '$pid( wallclock)?' <<<\"\$got\""
	got=$(complete_line '')
	DETAIL="$(wc -l <<<"$got") offered: $(head -5 <<<"$got" | tr '\n' '|')" \
		check "completion: PIDs are listed with their process names" \
		"grep -qx '$pid wallclock' <<<\"\$got\""
	# Issue 15 item 9: not PID 1, not kernel threads, numeric order.
	DETAIL="offered: $(head -3 <<<"$got" | tr '\n' '|')" \
		check "completion: PID 1 is not offered" "! grep -q '^1 ' <<<\"\$got\""
	kthreads=$(for d in /proc/[0-9]*; do
		f=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f7)
		[ -n "$f" ] && [ $((f & 0x200000)) != 0 ] && echo "${d#/proc/}"
	done)
	if [ -n "$kthreads" ]; then
		bad=$(cut -d' ' -f1 <<<"$got" | grep -Fx "$kthreads" | head -3 | tr '\n' ' ')
		DETAIL="kernel threads offered: $bad" \
			check "completion: kernel threads ($(wc -l <<<"$kthreads") here) are not offered" "[ -z '$bad' ]"
	else
		skip "completion: kernel threads are not offered" "no kernel thread visible (another PID namespace)"
	fi
	DETAIL="order: $(cut -d' ' -f1 <<<"$got" | head -8 | tr '\n' ' ')" \
		check "completion: PIDs in numeric order ($(wc -l <<<"$got") of them)" \
		"[ \"\$(cut -d' ' -f1 <<<\"\$got\")\" = \"\$(cut -d' ' -f1 <<<\"\$got\" | sort -n)\" ]"
	# (Each run lists its own shell: compare the long-lived ones.)
	for words in "-p ''" "--pid = ''"; do
		eval "got2=\$(complete_line $words)"
		DETAIL="offered: $(head -3 <<<"$got2" | tr '\n' '|')" \
			check "completion: $words offers PIDs the same way" \
			"grep -qx '$pid wallclock' <<<\"\$got2\" && ! grep -q '^1 ' <<<\"\$got2\" &&
			 [ \"\$(cut -d' ' -f1 <<<\"\$got2\")\" = \"\$(cut -d' ' -f1 <<<\"\$got2\" | sort -n)\" ]"
	done
	got2=$(complete_line "1,$pid")
	DETAIL="offered: $got2" check "completion: a list, 1,$pid -> completes its last PID" \
		"grep -qxE '1,$pid( wallclock)?' <<<\"\$got2\""
	got=$(complete_line wallcl)
	DETAIL="offered: $(tr '\n' '|' <<<"$got")" \
		check "completion: a process name completes to its PID" \
		"grep -qxE '$pid( wallclock)?' <<<\"\$got\" && ! grep -qv 'wallclock\\|^[0-9]*\$' <<<\"\$got\""
	expected=$(for t in $(tids "$pid"); do echo "$t $(cat "/proc/$pid/task/$t/comm")"; done | sort)
	got=$(complete_line "$pid" --tid '' | sort)
	DETAIL="offered: $(tr '\n' '|' <<<"$got"); threads: $(tr '\n' '|' <<<"$expected")" \
		check "completion: $pid --tid lists its threads with their names" "[ \"\$got\" = \"\$expected\" ]"
	got=$(complete_line "$pid" --tid sle)
	sleeper=$(awk '$2 == "sleeper" { print $1 }' <<<"$expected")
	DETAIL="offered: $got" check "completion: --tid sle -> the sleeper's TID" "[ '$got' = '$sleeper' ]"
	got=$(complete_line "$pid" '')
	DETAIL="offered: $(head -3 <<<"$got" | tr '\n' '|')" \
		check "completion: no second PID after the PID" "[ -z \"\$got\" ]"
	got=$(complete_line -p "$pid" '')
	DETAIL="offered: $(head -3 <<<"$got" | tr '\n' '|')" \
		check "completion: no PID after -p PID" "[ -z \"\$got\" ]"
	for words in "-p $pid --tid ''" "--pid = $pid --tid ''" "-p $$,$pid --tid ''"; do
		eval "got=\$(complete_line $words | grep -v '^$$ ' | sort)"
		DETAIL="offered: $(tr '\n' '|' <<<"$got")" \
			check "completion: $words lists $pid's threads" "[ \"\$got\" = \"\$expected\" ]"
	done
	# With the bash-completion package's _init_completion, as in a real
	# shell: it joins "--format" "=" "s" back into one word.
	BASH_COMPLETION=/usr/share/bash-completion/bash_completion
	if [ -f "$BASH_COMPLETION" ]; then
		# complete_real LINE WORD...: LINE as typed, WORDs as bash splits it.
		complete_real() {
			bash --norc --noprofile -c '
				. "$1" && . "$2" || exit 9
				COMP_LINE="cprof-attach $3"; COMP_POINT=${#COMP_LINE}
				shift 3
				COMP_WORDS=(cprof-attach "$@"); COMP_CWORD=$#; COMPREPLY=()
				_cprof_attach
				printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_COMPLETION" "$COMPL" "$@" 2>&1
		}
		got=$(complete_real "--format=" --format = | sort | tr '\n' ' ')
		DETAIL="offered: $got" check "completion (bash-completion): --format= offers the formats" \
			"[ '$got' = '$fmts' ]"
		got=$(complete_real "--format=s" --format = s | sort | tr '\n' ' ')
		DETAIL="offered: $got" check "completion (bash-completion): --format=s -> speedscope svg" \
			"[ '$got' = 'speedscope svg ' ]"
		got=$(complete_real "--pid=$pid --tid " --pid = "$pid" --tid '' | sort)
		DETAIL="offered: $(tr '\n' '|' <<<"$got")" \
			check "completion (bash-completion): --pid=$pid --tid lists its threads" \
			"[ \"\$got\" = \"\$expected\" ]"
		got=$(complete_real "-p " -p '')
		DETAIL="offered: $(head -3 <<<"$got" | tr '\n' '|')" \
			check "completion (bash-completion): -p lists PIDs, not PID 1" \
			"grep -qx '$pid wallclock' <<<\"\$got\" && ! grep -q '^1 ' <<<\"\$got\""
	else
		skip "completion with the bash-completion package" "bash-completion is not installed (Debian package bash-completion: make deps installs it)"
	fi
	stop_target "$pid"
fi
got=$(complete_line -- ech)
DETAIL="offered: $(tr '\n' ' ' <<<"$got")" check "completion: after --, commands" "grep -qx echo <<<\"\$got\""

# --- cprof-folded2svg ----------------------------------------------------------------
F2S=$DEST$P/bin/cprof-folded2svg
printf '%s\n' 'main;parse;lex 30' 'main;parse 10' 'main;eval;call;eval 25' >"$TMP/in.folded"
(cd "$TMP" && "$F2S" in.folded)
rc=$?
DETAIL="exit $rc" check "cprof-folded2svg IN.folded: writes IN.svg" "[ $rc = 0 ] && [ -s '$TMP/in.svg' ]"
(cd "$TMP" && "$DEST$P/bin/cprof-attach" --convert in.folded -o ref.svg)
check "cprof-folded2svg: the same SVG as cprof-attach --convert" "cmp -s '$TMP/in.svg' '$TMP/ref.svg'"
check "cprof-folded2svg: the frames are in it" \
	"grep -q '<title>lex \\[' '$TMP/in.svg' || grep -q '<title>lex (30 samples' '$TMP/in.svg'"
"$F2S" <"$TMP/in.folded" >"$TMP/stdout.svg"
rc=$?
DETAIL="exit $rc; $(head -c 100 "$TMP/stdout.svg")" \
	check "cprof-folded2svg < IN > OUT: SVG on standard output" \
	"[ $rc = 0 ] && grep -q '^<svg ' '$TMP/stdout.svg' && grep -q '<title>lex (30 samples' '$TMP/stdout.svg'"
"$F2S" "$TMP/in.folded" "$TMP/named.out"
check "cprof-folded2svg IN OUT (any name): an SVG" "grep -q '^<svg ' '$TMP/named.out'"
printf '%s\n' 'a;b 1' 'not folded' >"$TMP/bad.folded"
"$F2S" "$TMP/bad.folded" "$TMP/bad.svg" 2>"$TMP/bad.err"
rc=$?
DETAIL="exit $rc: $(cat "$TMP/bad.err")" \
	check "cprof-folded2svg on bad input: the profiler's one-line error, non-zero exit" \
	"[ $rc != 0 ] && [ \$(grep -c . '$TMP/bad.err') = 1 ] && grep -q 'bad.folded:2' '$TMP/bad.err' && [ ! -e '$TMP/bad.svg' ]"
"$F2S" --help >"$TMP/help.out" 2>&1
check "cprof-folded2svg --help: usage" "[ \$? = 0 ] && grep -q 'folded2svg IN.folded' '$TMP/help.out'"

done_testing
