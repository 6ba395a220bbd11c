#!/usr/bin/env bash
# Goroutines of Go programs built by other Go releases than the
# machine's (Debian 12 has Go 1.19 only), none with DWARF: release binaries
# from npm packages (esbuild, lefthook; contrib/install-deps.sh fetches them
# into GO_VERSIONS_DIR), one per Go minor version from 1.16 to 1.26.
#   1. each one's layout without DWARF (tests/bin/golayout: its Go version's
#      table, checked against its runtime's own code) is found, for the Go
#      version the binary says it was built with;
#   2. all of them running at once (esbuild serving a directory, lefthook
#      running a hook that sleeps), profiled together by goroutine, runtime
#      goroutines included, a file each 300 ms; then stopped, sampled while
#      stopped, and sent SIGQUIT (GOTRACEBACK=system: Go prints every
#      goroutine, its state and its frames): every goroutine of each dump is
#      in the profile, with the dump's state as its `state` label (in the
#      period sampled while stopped) and the dump's functions in its
#      stacks (all but inlined calls, which Go's tracebacks name with
#      arguments "(...)" and the profiler does not expand without DWARF).
. "$(dirname "$0")/lib.sh"

DIR=${GO_VERSIONS_DIR:-/var/cache/cprof-attach/go-versions}
# FILE GO-VERSION (as the binary's build info or runtime.buildVersion says)
VERSIONS='esbuild-0.11.23 go1.16.3
esbuild-0.14.10 go1.17.5
esbuild-0.14.39 go1.18.1
esbuild-0.19.12 go1.20.12
lefthook-1.6.10 go1.21.9
esbuild-0.23.1 go1.22.5
esbuild-0.25.12 go1.23.12
lefthook-1.11.10 go1.24.2
esbuild-0.27.7 go1.25.7
esbuild-0.28.2 go1.26.5'

present=()
while read -r file ver; do
	if [ -x "$DIR/$file" ]; then
		present+=("$file $ver")
	else
		skip "$ver ($file)" "not in $DIR (make deps fetches it with npm: contrib/install-deps.sh)"
	fi
done <<<"$VERSIONS"
if [ ${#present[@]} = 0 ]; then
	done_testing
	exit
fi

# --- 1. the layout, from the file -------------------------------------------------
if [ -x "$BIN/golayout" ] && [ -x "$BIN/goroutines" ]; then
	for p in "${present[@]}"; do
		read -r file ver <<<"$p"
		"$BIN/golayout" "$BIN/goroutines" "$DIR/$file" >"$TMP/$file.layout" 2>&1
		DETAIL="$(head -c 300 "$TMP/$file.layout")" \
			check "$ver ($file): a layout without DWARF, for the version it was built with" \
			"grep -qx 'version $ver' '$TMP/$file.layout'"
	done
else
	skip "layouts from the files" "no tests/bin/golayout or tests/bin/goroutines (make check-bins; Go 1.19 builds them)"
fi

# --- 2. all of them running, against their own dumps -------------------------------
# esbuild serves until its stdin closes: a FIFO the test holds open.
mkfifo "$TMP/stdin"
exec 7<>"$TMP/stdin"
mkdir -p "$TMP/www" "$TMP/repo"
echo hello >"$TMP/www/index.html"
# lefthook runs a hook that sleeps, in a repository with a staged file.
(cd "$TMP/repo" && git init -q . && echo x >f && git add f &&
	printf 'pre-commit:\n  commands:\n    wait:\n      run: sleep 600\n' >lefthook.yml) >/dev/null 2>&1
declare -A PID_OF
pids=()
port=$((20000 + RANDOM % 20000))
for p in "${present[@]}"; do
	read -r file ver <<<"$p"
	case $file in
	esbuild-*)
		# the next port nothing listens on (another file of the suite may
		# hold one of these: "bind: address already in use")
		port=$((port + 1))
		while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
		GOTRACEBACK=system "$DIR/$file" --serve=127.0.0.1:$port --servedir="$TMP/www" \
			<"$TMP/stdin" >/dev/null 2>"$TMP/$file.dump" &
		;;
	lefthook-*)
		(cd "$TMP/repo" && GOTRACEBACK=system exec "$DIR/$file" run pre-commit) \
			>/dev/null 2>"$TMP/$file.dump" &
		;;
	esac
	PID_OF[$file]=$!
	PIDS+=("$!")
	pids+=("$!")
done

# ready: esbuild says where it serves; lefthook's hook (sh, then sleep) runs
ready() {
	local file=$1 pid=${PID_OF[$1]} sh
	case $file in
	esbuild-*) grep -q 'http://127\.0\.0\.1:' "$TMP/$file.dump" ;;
	lefthook-*) sh=$(pgrep -P "$pid" | head -n 1) && [ -n "$sh" ] && pgrep -P "$sh" -x sleep >/dev/null ;;
	esac
}
running=()
for p in "${present[@]}"; do
	read -r file ver <<<"$p"
	if wait_until 20 ready "$file"; then
		running+=("$p")
	else
		DETAIL="$(tail -c 300 "$TMP/$file.dump")" check "$ver ($file) starts" false
	fi
done
# the hooks' sleeps: ended with the test
for p in "${running[@]}"; do
	read -r file ver <<<"$p"
	case $file in lefthook-*)
		for c in $(pgrep -P "${PID_OF[$file]}"); do PIDS+=("$c" $(pgrep -P "$c")); done ;;
	esac
done

if [ ${#running[@]} -gt 0 ]; then
	list=$(for p in "${running[@]}"; do read -r file ver <<<"$p"; printf '%s,' "${PID_OF[$file]}"; done)
	base=$TMP/all
	prof_bg "$base" -p "${list%,}" --go-system --period 300ms -o "$base.%n.pprof"
	if ! wait_until 30 file_ready "$base.1.pprof"; then
		DETAIL="$(tail -c 300 "$base.err")" check "the Go programs sampled for a period" false
	fi
	for p in "${running[@]}"; do read -r file ver <<<"$p"; kill -STOP "${PID_OF[$file]}"; done
	# the period after the next one is sampled while they are all stopped
	files=$(ls "$base".*.pprof | wc -l)
	stopped=$base.$((files + 2)).pprof
	wait_until 30 file_ready "$stopped"
	for p in "${running[@]}"; do
		read -r file ver <<<"$p"
		kill -QUIT "${PID_OF[$file]}"
		kill -CONT "${PID_OF[$file]}"
	done
	prof_wait 30
	for p in "${running[@]}"; do
		read -r file ver <<<"$p"
		wait_until 10 gone "${PID_OF[$file]}"
	done
	DETAIL="$(summary "$base.err" | head -n 1); $(grep note "$base.err" | head -3 | cut -c1-200 | tr '\n' '|')" \
		check "profiled together by goroutine, with no note that a program's goroutines cannot be found" \
		"[ -s '$stopped' ] && ! grep -q 'is a Go program, but' '$base.err'"
fi

# traces FILE...: "PID<TAB>GOID<TAB>STATE<TAB>FUNC;FUNC;..." a sample
# (go tool pprof -traces: its labels, then its frames, innermost first).
traces() {
	local f
	for f in "$@"; do "$GO" tool pprof -traces "$f" 2>/dev/null; done | awk '
		function flush() { if (g != "" && fr != "") print pid "\t" g "\t" st "\t" fr
			pid = ""; g = ""; st = ""; fr = "" }
		/^-+\+-+$/ { flush(); next }
		/^ *[a-z_]+: / { k = $1; sub(/:$/, "", k); v = $0; sub(/^ *[a-z_]+: +/, "", v)
			if (k == "pid") pid = v; else if (k == "goroutine") g = v; else if (k == "state") st = v
			next }
		g != "" && NF > 0 { f = $NF; fr = fr (fr == "" ? "" : ";") f }
		END { flush() }'
}
# dump FILE: "GOID<TAB>STATE<TAB>FUNC;FUNC;..." a goroutine of Go's
# traceback (its header "goroutine N [STATE, N minutes]:" or, since Go 1.23,
# "goroutine N gp=... m=... [STATE]:"); the state before any comma.  Its
# inlined calls (arguments "(...)") are left out: the profiler does not
# expand them without DWARF.
dump() {
	awk '
		function flush() { if (g != "") print g "\t" st "\t" fr; g = "" }
		/^goroutine [0-9]+ / { flush(); g = $2; st = $0; sub(/^[^[]*\[/, "", st); sub(/\]:.*$/, "", st)
			sub(/,.*$/, "", st); fr = ""; if (g == 0) g = ""; next }
		g != "" && /^[^[:space:]].*\(\.\.\.\)$/ { next }
		g != "" && /^[^[:space:]].*\)$/ && !/^created by / { f = $0; sub(/\([^()]*\)$/, "", f)
			fr = fr (fr == "" ? "" : ";") f; next }
		/^$/ { flush() }
		END { flush() }' "$1"
}

if [ ${#running[@]} -gt 0 ] && have_pprof && [ -s "${stopped:-}" ]; then
	traces "$base".*.pprof >"$TMP/all.traces"
	traces "$stopped" >"$TMP/stopped.traces"
	for p in "${running[@]}"; do
		read -r file ver <<<"$p"
		pid=${PID_OF[$file]}
		dump "$TMP/$file.dump" >"$TMP/$file.gs"
		awk -F'\t' -v p="$pid" '$1 == p { print $2 }' "$TMP/all.traces" | sort -u >"$TMP/$file.ids"
		cut -f1 "$TMP/$file.gs" | sort -u >"$TMP/$file.dumpids"
		n=$(wc -l <"$TMP/$file.dumpids")
		missing=$(comm -23 "$TMP/$file.dumpids" "$TMP/$file.ids" | tr '\n' ' ')
		DETAIL="$n in its dump; not in the profile: ${missing:-none}; $(head -c 200 "$TMP/$file.dump" | tr '\n' '|')" \
			check "$ver ($file): every goroutine of its own dump is in the profile" \
			"[ '$n' -gt 0 ] && [ -z '$missing' ]"
		# state and functions, goroutine by goroutine (ENVIRON, not -v:
		# the same under mawk and gawk)
		read -r same total fseen ftotal bad <<<"$(P=$pid awk -F'\t' '
			FILENAME == ARGV[1] { if ($1 != ENVIRON["P"]) next
				state[$2] = $3; n = split($4, f, ";"); for (i = 1; i <= n; i++) seen[$2 SUBSEP f[i]] = 1; next }
			FILENAME == ARGV[2] { if ($1 == ENVIRON["P"]) { n = split($4, f, ";")
					for (i = 1; i <= n; i++) seen[$2 SUBSEP f[i]] = 1 }
				next }
			{ t++; if (($1 in state) && state[$1] == $2) s++; else bad = bad $1 ":" $2 "/" state[$1] ","
				n = split($3, f, ";"); for (i = 1; i <= n; i++) { ft++; if (($1 SUBSEP f[i]) in seen) fs++ } }
			END { print s + 0, t + 0, fs + 0, ft + 0, (bad == "" ? "-" : bad) }' \
			"$TMP/stopped.traces" "$TMP/all.traces" "$TMP/$file.gs")"
		DETAIL="$same of $total; dump/profile: $bad" \
			check "$ver ($file): each goroutine's state is the dump's (sampled while stopped)" \
			"[ '$total' -gt 0 ] && [ '$same' = '$total' ]"
		DETAIL="$fseen of $ftotal" \
			check "$ver ($file): the dump's frames (but inlined calls) are in the same goroutine's stacks" \
			"[ '$ftotal' -gt 0 ] && [ '$fseen' = '$ftotal' ]"
		diag "$ver ($file): $n goroutines in its dump, $(wc -l <"$TMP/$file.ids") in the profile, $same of $total states as the dump's, $fseen of $ftotal of its frames"
	done
elif [ ${#running[@]} -gt 0 ]; then
	skip "against the dumps" "no go tool pprof at $GO (golang-1.19-go) to read the labels, or no period sampled while stopped"
fi
exec 7>&-
done_testing
