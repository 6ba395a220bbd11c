#!/usr/bin/env bash
# Other tools' habits (and -p with a list): what perf, py-spy, strace and
# gdb users type works end to end on a real target: -p/--pid, -F/--rate,
# -d with s/ms/m, -f, -t, -V; the format follows the output's name
# (.prof, .pb, .SVG, .collapsed) and an unknown ending is refused before
# attaching; the default name follows --format; a subcommand word gets a
# one-line pointer; an option the format does not use is a warning.
. "$(dirname "$0")/lib.sh"

CWD=$TMP/cwd
mkdir -p "$CWD"

is_folded() { [ -s "$1" ] && ! is_gzip "$1" && grep -qE '^[^ ].* [0-9]+$' "$1"; }
is_svg() { [ -s "$1" ] && grep -q '<svg ' "$1"; }
is_json() { [ -s "$1" ] && grep -q '"\$schema": *"https://www.speedscope.app' "$1"; }
warnings() { grep -c '^cprof-attach: warning: ' "$1"; }

# refused LABEL ERE ARGS...: the profiler with "--duration 2" and ARGS,
# run in $CWD, exits 2 at once (before attaching: well under
# the 2 s) with one line on stderr matching ERE, writes nothing, and
# leaves the target ($pid) running and untraced.
refused() {
	local label=$1 re=$2 base=$TMP/r.$RANDOM t0 t1 lines
	shift 2
	t0=${EPOCHREALTIME/[.,]/}
	(cd "$CWD" && prof "$base" --duration 2 "$@"; exit "$PROF_RC")
	local rc=$?
	t1=${EPOCHREALTIME/[.,]/}
	lines=$(wc -l <"$base.err")
	DETAIL="exit $rc after $(((t1 - t0) / 1000)) ms" \
		check "$label: exit 2, at once" "[ $rc = 2 ] && [ $(((t1 - t0) / 1000)) -lt 1500 ]"
	DETAIL="$lines lines: $(head -c 400 "$base.err" | tr '\n' '|')" \
		check "$label: one line, 'cprof-attach: error: ...' matching /$re/" \
		"[ '$lines' = 1 ] && grep -q '^cprof-attach: error: ' '$base.err' && grep -qE -- \"\$re\" '$base.err'"
	DETAIL="left in cwd: $(ls -A "$CWD" | tr '\n' ' ')" \
		check "$label: nothing written" "[ -z \"\$(ls -A '$CWD')\" ]"
	check "$label: target untraced, running" "untraced $pid && not_stopped $pid"
	rm -f "$CWD"/* 2>/dev/null
}

start_target wallclock || done_testing
pid=$TARGET_PID
tid_sleeper=$(for t in $(tids "$pid"); do [ "$(cat "/proc/$pid/task/$t/comm")" = sleeper ] && echo "$t"; done)

# --- the habits, end to end ------------------------------------------------------
out=$TMP/habit.out
prof "$TMP/h1" -p "$pid" -F 49 -d 1s -f folded -t -o "$out"
check_ran "-p PID -F 49 -d 1s -f folded -t -o x.out" "$TMP/h1" "$out"
DETAIL="$(summary "$TMP/h1.err")" check "-F 49: 49 Hz requested" \
	"[ \"\$(summary_field '$TMP/h1.err' requested)\" = 49 ]"
secs=$(summary_field "$TMP/h1.err" seconds)
DETAIL="$secs s" check "-d 1s: about 1 s" "[ -n '$secs' ] && within '$secs' 1 0.3"
check "-f folded: a folded file (whatever its name)" is_folded "$out"
DETAIL="$(cut -d';' -f1 "$out" | sort -u | tr '\n' ',')" \
	check "-t: 'sleeper ($tid_sleeper)' is a root frame" "grep -qF 'sleeper ($tid_sleeper);' '$out'"

out=$TMP/habit2.folded
prof "$TMP/h2" --pid="$pid" --rate 99 --duration 700ms --format=folded --threads -o "$out"
check_ran "--pid=PID --rate 99 --duration 700ms --format=folded --threads" "$TMP/h2" "$out"
secs=$(summary_field "$TMP/h2.err" seconds)
DETAIL="$secs s" check "--duration 700ms: about 0.7 s" "[ -n '$secs' ] && within '$secs' 0.7 0.3"
DETAIL="$(summary "$TMP/h2.err")" check "--rate 99: 99 Hz requested" \
	"[ \"\$(summary_field '$TMP/h2.err' requested)\" = 99 ]"
check "--threads: thread root frames" "grep -qF 'sleeper ($tid_sleeper);' '$out'"

out=$TMP/habit3.folded
prof "$TMP/h3" --pid "$pid" -d 0.01m -o "$out"
secs=$(summary_field "$TMP/h3.err" seconds)
DETAIL="exit $PROF_RC, $secs s: $(head -c 200 "$TMP/h3.err")" \
	check "--pid PID -d 0.01m: exit 0, about 0.6 s" "[ $PROF_RC = 0 ] && [ -n '$secs' ] && within '$secs' 0.6 0.3"

for v in -V --version; do
	got=$("$CPROF" $v 2>&1)
	rc=$?
	DETAIL="exit $rc: $got" check "$v prints the version" \
		"[ $rc = 0 ] && [[ '$got' =~ ^cprof-attach\\ [0-9]+\\.[0-9]+\\.[0-9]+\$ ]]"
done

# --- the format from the name, refused when unknown -----------------------------
for f in x.prof x.pb X.PPROF; do
	prof "$TMP/fmt" "$pid" -d 0.3 -o "$TMP/$f"
	DETAIL="exit $PROF_RC: $(head -c 200 "$TMP/fmt.err")" \
		check "-o $f writes pprof (gzip)" "[ $PROF_RC = 0 ] && is_gzip '$TMP/$f'"
done
prof "$TMP/fmt" "$pid" -d 0.3 -o "$TMP/x.SVG"
DETAIL="exit $PROF_RC" check "-o x.SVG writes a flame graph" "[ $PROF_RC = 0 ] && is_svg '$TMP/x.SVG'"
prof "$TMP/fmt" "$pid" -d 0.3 -o "$TMP/x.collapsed"
DETAIL="exit $PROF_RC" check "-o x.collapsed writes folded" "[ $PROF_RC = 0 ] && is_folded '$TMP/x.collapsed'"
if [ -n "$GO" ] && [ -x "$GO" ]; then
	check "-o x.prof: go tool pprof reads it" "pprof_raw '$TMP/x.prof' | grep -q '^samples/count wall/nanoseconds'"
else
	skip "-o x.prof: go tool pprof reads it" "no go at $GO"
fi

FMT_RE="format.*\\.pb\\.gz.*\\.prof.*\\.svg.*\\.json.*\\.collapsed"
refused "-o x.html" "'x.html'.*$FMT_RE" "$pid" -o x.html
refused "-o x.gz" "$FMT_RE" "$pid" -o x.gz
refused "-o with no ending" "$FMT_RE" "$pid" -o profile
(cd "$CWD" && prof "$TMP/any" "$pid" -d 0.3 -o x.html -f svg)
DETAIL="exit $PROF_RC" check "-o x.html -f svg: any name with --format" \
	"[ $PROF_RC = 0 ] && is_svg '$CWD/x.html'"
rm -f "$CWD"/*

# The default name follows the format.
for f in "svg svg is_svg" "folded folded is_folded" "speedscope json is_json" "pprof pprof is_gzip"; do
	read -r fmt ext test <<<"$f"
	(cd "$CWD" && prof "$TMP/def" "$pid" -d 0.3 --format "$fmt")
	DETAIL="exit $PROF_RC; files: $(ls -A "$CWD" | tr '\n' ' ')" \
		check "--format $fmt without -o: writes cprof-$pid.$ext, nothing else" \
		"[ $PROF_RC = 0 ] && [ \"\$(ls -A '$CWD')\" = 'cprof-$pid.$ext' ] && $test '$CWD/cprof-$pid.$ext'"
	rm -f "$CWD"/*
done

# --- pointers for other tools' words and spellings -------------------------------
refused "record PID" "'record' is not a subcommand: .*-o out\\.pprof.*-p PID" record "$pid"
refused "dump PID" "'dump' is not a subcommand: .*--dump" dump "$pid"
refused "top PID" "'top' is not a subcommand: .*go tool pprof -top" top "$pid"
refused "record -p PID" "'record' is not a subcommand" record -p "$pid"
refused "-p without a value" "-p PID.*cprof-attach PID" -p
refused "unknown short option -x" "positionally or with -p" -x "$pid"
refused "-p PID and a PID" "not both" -p "$pid" "$pid"
refused "-d 2x" "duration.*2x" "$pid" -o x.folded -d 2x
refused "-d -1" "duration" "$pid" -o x.folded -d -1
refused "-F 0" "hz.*'0'" "$pid" -o x.folded -F 0

# --- warnings: options the format does not use ------------------------------------
prof "$TMP/w1" "$pid" -d 0.3 -t -o "$TMP/w1.pprof"
DETAIL="exit $PROF_RC: $(head -c 400 "$TMP/w1.err" | tr '\n' '|')" \
	check "-t with pprof: one warning naming the thread labels, profile written" \
	"[ $PROF_RC = 0 ] && [ \$(warnings '$TMP/w1.err') = 1 ] &&
	 grep -q '^cprof-attach: warning: --threads .*pprof.*thread.*label' '$TMP/w1.err' && is_gzip '$TMP/w1.pprof'"
prof "$TMP/w2" "$pid" -d 0.3 --cpu -o "$TMP/w2.pb.gz"
DETAIL="exit $PROF_RC: $(head -c 400 "$TMP/w2.err" | tr '\n' '|')" \
	check "--cpu with pprof: one warning pointing to -sample_index=cpu" \
	"[ $PROF_RC = 0 ] && [ \$(warnings '$TMP/w2.err') = 1 ] &&
	 grep -q '^cprof-attach: warning: --cpu .*-sample_index=cpu' '$TMP/w2.err'"
prof "$TMP/w3" "$pid" -d 0.3 --processes -o "$TMP/w3.pprof"
DETAIL="$(head -c 400 "$TMP/w3.err" | tr '\n' '|')" \
	check "--processes with pprof: one warning" \
	"[ $PROF_RC = 0 ] && [ \$(warnings '$TMP/w3.err') = 1 ] && grep -q 'warning: --processes' '$TMP/w3.err'"
prof "$TMP/w4" "$pid" -d 0.3 -t --cpu -o "$TMP/w4.folded"
DETAIL="$(head -c 400 "$TMP/w4.err" | tr '\n' '|')" \
	check "-t --cpu with folded: no warning" "[ $PROF_RC = 0 ] && [ \$(warnings '$TMP/w4.err') = 0 ]"
DETAIL="$(head -c 400 "$TMP/h1.err" | tr '\n' '|')" \
	check "the habit runs above: no warning" "[ \$(warnings '$TMP/h1.err') = 0 ]"

check_unharmed "after every run" "$pid" 3
done_testing
