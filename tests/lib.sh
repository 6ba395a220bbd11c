# Shared helpers for the integration tests (tests/t_*.sh), sourced by each.
#
# Output: one TAP-like line per check, "ok - NAME" or "not ok - NAME (why)";
# tests/run.sh counts them.  Synchronization is always a bounded polling loop
# on something observable (a ready file, /proc state), never a fixed sleep;
# the only plain sleeps are "let the profiler collect samples for a while".
#
# Environment: CPROF (the profiler, default ./cprof-attach from the repo
# root), GO (go binary for `go tool pprof`), KEEP=1 keeps the scratch dir.
#
# The polling and /proc helpers (wait_until, alive, untraced, ...) are in
# tests/lib-core.sh, sourced here; bench/run.sh sources that file alone.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/tests/bin
CPROF=${CPROF:-./cprof-attach}
case $CPROF in /*) ;; *) CPROF=$ROOT/${CPROF#./} ;; esac
GO=${GO:-/usr/lib/go-1.19/bin/go}
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "/tmp/cprof-$TEST_NAME.XXXXXX")
chmod 755 "$TMP"
# python3 is Debian's where a version manager's shim stands before it on
# PATH (pyenv's costs 0.3-3 s a call on a loaded machine, and the tests
# call python3 for JSON and small targets dozens of times): as on a fresh
# Debian machine.  Tests of given CPython versions name them by path.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir -p "$TMP/.python3"
	ln -sf /usr/bin/python3 "$TMP/.python3/python3"
	PATH=$TMP/.python3:$PATH
fi
FAILED=0
PIDS=()         # everything we started, killed on exit
MOUNTS=()       # anything we mounted, unmounted on exit
. "$ROOT/tests/lib-core.sh"

cleanup() {
	local p m
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null
	done
	if [ "${KEEP:-0}" = 1 ]; then
		echo "# kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# check NAME CONDITION...: run CONDITION (one string: eval'd; several words:
# run as a command) and print the TAP line.  Set DETAIL (e.g. as a prefix,
# DETAIL="got $x" check ...) to say why on failure.
check() {
	local name=$1
	shift
	local ok=1
	if [ $# -eq 1 ]; then
		eval "$1" || ok=0
	else
		"$@" || ok=0
	fi
	if [ $ok = 1 ]; then
		echo "ok - $name"
	else
		echo "not ok - $name${DETAIL:+ ($DETAIL)}"
		FAILED=$((FAILED + 1))
	fi
	DETAIL=
	return $((1 - ok))
}

skip() {
	echo "ok - $1 # skip ${2:-}"
}

# diag TEXT...: a comment line in the output (shown with failures by run.sh)
diag() {
	echo "# $*"
}

# Show a file as comments, for context after a failure.
diag_file() {
	[ -f "$1" ] && sed -n "1,${2:-20}p" "$1" | cut -c1-300 | sed 's/^/#   /'
}

done_testing() {
	wait_beside
	exit $((FAILED > 0))
}

# beside NAME FUNCTION ARGS...: run a section of checks beside the rest of
# the file, for a section that waits on time (a profiler's periods, a
# memory bound over seconds) rather than the CPU.  Its lines are kept in a
# file and printed, in order, by wait_beside (done_testing calls it); its
# "not ok" lines count in FAILED.  It has its own targets: what it started
# is killed when it ends, however it ends.  It must not share scratch
# names with the rest of the file; its targets' ready files are numbered
# from a range of its own (two wallclock targets, one beside and one not,
# once wrote the same READY.tmp and one of them died in its rename).
BESIDE=()
beside() {
	local name=$1
	shift
	(
		PIDS=()
		MOUNTS=()
		TARGET_SEQ=$(((${#BESIDE[@]} + 1) * 1000))
		[ -z "${CPROF_TEST_WAITING:-}" ] || CPROF_TEST_WAITING=$CPROF_TEST_WAITING.$name
		trap 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null
			for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done' EXIT
		"$@"
	) >"$TMP/beside.$name.out" 2>&1 &
	BESIDE+=("$name:$!")
}

wait_beside() {
	local s out
	for s in "${BESIDE[@]}"; do
		wait "${s#*:}"
		out=$TMP/beside.${s%%:*}.out
		cat "$out"
		FAILED=$((FAILED + $(grep -c '^not ok' "$out")))
	done
	BESIDE=()
}

# start_target NAME ARGS...: start tests/bin/NAME READY ARGS... in the
# background and wait (at most 10 s) for its ready file.  Sets TARGET_PID
# and TARGET_READY; returns non-zero (and prints a failed check) if it did
# not become ready.
TARGET_SEQ=0
start_target() {
	local name=$1
	shift
	TARGET_SEQ=$((TARGET_SEQ + 1))
	TARGET_READY=$TMP/$name.$TARGET_SEQ.ready
	"$BIN/$name" "$TARGET_READY" "$@" &
	TARGET_PID=$!
	PIDS+=("$TARGET_PID")
	if ! wait_until 10 file_ready "$TARGET_READY"; then
		DETAIL="no $TARGET_READY after 10 s" check "target $name starts" false
		return 1
	fi
	return 0
}

stop_target() {
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# check_unharmed LABEL PID NTHREADS: the standard "attach without harm"
# checks for a target that should have survived the profiler.
check_unharmed() {
	local label=$1 pid=$2 n=$3 now
	check "$label: target alive" alive "$pid"
	check "$label: every thread untraced (TracerPid 0)" untraced "$pid"
	now=$(thread_count "$pid")
	DETAIL="had $n threads, now $now" check "$label: same thread count" \
		"[ '$now' = '$n' ]"
	check "$label: no thread stopped" not_stopped "$pid"
	check "$label: target keeps running (CPU time grows)" progresses "$pid"
}

# --- the error contract ------------------------------------------------------

# CWD: where expect_error runs the profiler, an empty directory anyone may
# write to (some runs are as the user nobody); a refused run leaves it empty.
CWD=$TMP/cwd
mkdir -m 777 "$CWD"

# expect_error LABEL MESSAGE_ERE OUTFILE TARGET -- COMMAND...: run COMMAND
# (the profiler, maybe wrapped) in $CWD and check the error contract: a
# non-zero exit (not a timeout or a signal); exactly one line on stderr,
# starting "cprof-attach: ", that matches MESSAGE_ERE (case-insensitive; ""
# skips that check); no OUTFILE ("" if none, or if it is in $CWD: the next
# check covers it); nothing written to $CWD; and TARGET (a PID, or "") still
# running and untraced.  Sets ELAPSED_MS, the run's wall time.
expect_error() {
	local label=$1 re=$2 outfile=$3 target=$4 base=$TMP/e.$RANDOM rc lines t0 t1
	shift 5
	t0=$(date +%s%N)
	(cd "$CWD" && timeout --foreground -k 5 30 "$@" >"$base.out" 2>"$base.err")
	rc=$?
	t1=$(date +%s%N)
	ELAPSED_MS=$(((t1 - t0) / 1000000))
	DETAIL="exit $rc" check "$label: non-zero exit" "[ $rc != 0 ] && [ $rc != 124 ] && [ $rc -lt 128 ]"
	lines=$(wc -l <"$base.err")
	DETAIL="$lines lines: $(head -c 400 "$base.err" | tr '\n' '|')" \
		check "$label: exactly one line on stderr, 'cprof-attach: ...'" \
		"[ '$lines' = 1 ] && grep -q '^cprof-attach: ' '$base.err'"
	if [ -n "$re" ]; then
		DETAIL="message: $(head -c 300 "$base.err")" \
			check "$label: message mentions /$re/" "grep -qiE '$re' '$base.err'"
	fi
	if [ -n "$outfile" ]; then
		check "$label: no output file" "[ ! -e '$outfile' ]"
	fi
	DETAIL="left in cwd: $(ls -A "$CWD" | tr '\n' ' ')" \
		check "$label: nothing written to the working directory" "[ -z \"\$(ls -A '$CWD')\" ]"
	if [ -n "$target" ]; then
		check "$label: target still running" not_stopped "$target"
		check "$label: target untraced" untraced "$target"
	fi
	rm -rf "${CWD:?}"/* 2>/dev/null
}

# --- running the profiler ---------------------------------------------------

# prof OUTBASE ARGS...: run the profiler in the foreground (60 s guard).
# stdout to OUTBASE.out, stderr to OUTBASE.err; sets PROF_RC.
prof() {
	local base=$1
	shift
	[ -z "${CPROF_TEST_WAITING:-}" ] ||
		echo "waiting up to 60 s for the profiler: $*" >"$CPROF_TEST_WAITING" 2>/dev/null || :
	timeout --foreground -k 5 60 "$CPROF" "$@" >"$base.out" 2>"$base.err"
	PROF_RC=$?
	[ -z "${CPROF_TEST_WAITING:-}" ] || : >"$CPROF_TEST_WAITING" 2>/dev/null || :
	return 0
}

# prof_bg OUTBASE ARGS...: start the profiler in the background, with
# SIGINT at its default (bash makes background jobs ignore it).  Sets
# PROF_PID.  Finish with prof_wait.
prof_bg() {
	local base=$1
	shift
	env --default-signal=INT,QUIT "$CPROF" "$@" >"$base.out" 2>"$base.err" &
	PROF_PID=$!
	PROF_ERR=$base.err
	PIDS+=("$PROF_PID")
}

# prof_wait [SECONDS]: wait for the background profiler to end (default
# 30 s); if it does not, SIGKILL it and set PROF_RC=124 (hung).
prof_wait() {
	local limit=${1:-30}
	if wait_until "$limit" gone "$PROF_PID"; then
		wait "$PROF_PID" 2>/dev/null
		PROF_RC=$?
	else
		kill -KILL "$PROF_PID" 2>/dev/null
		wait "$PROF_PID" 2>/dev/null
		PROF_RC=124
	fi
	return 0
}

# wait_attached PID: the profiler (PROF_PID) has seized every thread of PID
# (at most 30 s: a target whose threads come and go 200 a second took over
# 10 s on a loaded 2-core machine; gives up at once if the profiler has
# exited).
_attached_or_gone() { all_traced "$1" || gone "$PROF_PID"; }
wait_attached() {
	if wait_until 30 _attached_or_gone "$1" && all_traced "$1"; then
		return 0
	fi
	DETAIL="TracerPid 0; profiler $(alive "$PROF_PID" && echo running || echo exited): $(head -c 200 "$PROF_ERR" 2>/dev/null)" \
		check "profiler attaches to $1" false
	return 1
}

# --- the summary ------------------------------------------------------------------
# Two lines on stderr at the end of a run:
#   cprof-attach: N samples, N threads, N processes, N.NN s, REASON, wrote FILE
#   cprof-attach: N.N of N Hz, N missed ticks, CAPTURE (perf or ptrace),
#     N.N% reached their root, N not fully unwound
# (singular forms for 1: "1 sample", "1 thread", "1 process", "1 missed tick").

# summary ERRFILE: the summary's two lines (the last of each).
summary() {
	grep -E '^cprof-attach: [0-9]+ samples?, ' "$1" | tail -n 1
	grep -E '^cprof-attach: [0-9.]+ of [0-9]+ Hz, ' "$1" | tail -n 1
}

# SUMMARY_RE: an ERE matching either summary line (grep -E).
SUMMARY_RE='^cprof-attach: ([0-9]+ samples?, |[0-9.]+ of [0-9]+ Hz, )'

# only_summary ERRFILE: stderr is the summary's two lines and nothing else.
only_summary() { [ "$(grep -c . "$1")" = 2 ] && [ "$(grep -cE "$SUMMARY_RE" "$1")" = 2 ]; }

# each_ok FUNC PID...: FUNC holds for every PID; DETAIL lists those it does not.
each_ok() {
	local f=$1 p bad=
	shift
	for p in "$@"; do
		DETAIL=
		"$f" "$p" || bad="$bad $p${DETAIL:+ ($DETAIL)}"
	done
	DETAIL=${bad# }
	[ -z "$bad" ]
}

# stats_blocked ERRFILE: the samples --stats says were taken without
# stopping their thread: read while blocked ("N blocked"), or counted again
# from an unchanged stack ("N counted again").
stats_blocked() {
	local st b a
	st=$(grep -E '^cprof-attach: stats:' "$1" | tail -n 1)
	b=$(sed -nE 's/.* ([0-9]+) blocked,.*/\1/p' <<<"$st")
	a=$(sed -nE 's/.* ([0-9]+) counted again.*/\1/p' <<<"$st")
	[ -n "$b" ] && echo $((b + ${a:-0}))
}

# capture_counts ERRFILE: "STOPPED BYPERF" from --stats: the threads'
# samples taken by a ptrace stop, and those from perf events (0 if none).
capture_counts() {
	local st stopped byperf
	st=$(grep -E '^cprof-attach: stats:' "$1" | tail -n 1)
	stopped=$(sed -nE 's/.* ([0-9]+) stopped,.*/\1/p' <<<"$st")
	byperf=$(sed -nE 's/.* ([0-9]+) by perf events.*/\1/p' <<<"$st")
	echo "${stopped:--} ${byperf:-0}"
}

# summary_field ERRFILE WHAT: one figure from the summary; WHAT is
# samples | threads | processes | seconds | achieved | requested | missed |
# partial | rooted (the % of samples whose stack reached its root) |
# reason | wrote
summary_field() {
	local one two
	one=$(grep -E '^cprof-attach: [0-9]+ samples?, ' "$1" | tail -n 1)
	two=$(grep -E '^cprof-attach: [0-9.]+ of [0-9]+ Hz, ' "$1" | tail -n 1)
	case $2 in
	samples) sed -nE 's/^cprof-attach: ([0-9]+) samples?,.*/\1/p' <<<"$one" ;;
	threads) sed -nE 's/^[^,]*, ([0-9]+ goroutines? on )?([0-9]+) threads?,.*/\2/p' <<<"$one" ;;
	goroutines) sed -nE 's/^[^,]*, ([0-9]+) goroutines? on [0-9]+ threads?,.*/\1/p' <<<"$one" ;;
	processes) sed -nE 's/^[^,]*, [^,]*, ([0-9]+) process(es)?,.*/\1/p' <<<"$one" ;;
	seconds) sed -nE 's/^[^,]*, [^,]*, [^,]*, ([0-9.]+) s,.*/\1/p' <<<"$one" ;;
	reason) sed -nE 's/^[^,]*, [^,]*, [^,]*, [^,]*, (.*), wrote .*/\1/p' <<<"$one" ;;
	wrote) sed -nE 's/^[^,]*, [^,]*, [^,]*, [^,]*, .*, wrote (.*)$/\1/p' <<<"$one" ;;
	achieved) sed -nE 's/^cprof-attach: ([0-9.]+) of [0-9]+ Hz,.*/\1/p' <<<"$two" ;;
	requested) sed -nE 's/^cprof-attach: [0-9.]+ of ([0-9]+) Hz,.*/\1/p' <<<"$two" ;;
	missed) sed -nE 's/.* ([0-9]+) missed ticks?,.*/\1/p' <<<"$two" ;;
	partial) sed -nE 's/.* ([0-9]+) not fully unwound$/\1/p' <<<"$two" ;;
	rooted) sed -nE 's/.* ([0-9.]+)% reached their root,.*/\1/p' <<<"$two" ;;
	esac
}

# check_ran LABEL BASE OUTFILE: the profiler exited 0, printed a summary with
# at least one sample, and wrote OUTFILE.
check_ran() {
	local label=$1 base=$2 out=$3 n
	DETAIL="exit $PROF_RC: $(head -c 300 "$base.err")" \
		check "$label: profiler exits 0" "[ '$PROF_RC' = 0 ]"
	n=$(summary_field "$base.err" samples)
	DETAIL="stderr: $(head -c 300 "$base.err")" \
		check "$label: summary line with samples" "[ -n '$n' ] && [ '$n' -gt 0 ]"
	DETAIL="no file $out" check "$label: output written" "[ -s '$out' ]"
}

# --- folded files ---------------------------------------------------------------
# A line is "frame;frame;... COUNT"; frames may contain spaces, the count is
# after the last one.
#
# Patterns and names reach awk through the environment (ENVIRON), never
# `awk -v`: -v processes backslash escapes, and gawk turns "\(" into "("
# where mawk keeps "\(", so a regex would mean one thing under each.

folded_total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

# folded_count FILE ERE: samples whose stack (any frame) matches ERE, where
# ERE is matched against the whole "a;b;c" stack string.
folded_count() {
	re=$2 awk 'BEGIN { re = ENVIRON["re"] }
		{ s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) n += $NF }
		END { print n + 0 }' "$1"
}

# folded_has_frame FILE NAME: samples with a frame exactly NAME.
folded_frame_count() {
	name=$2 awk 'BEGIN { name = ENVIRON["name"] }
		{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		for (i = 1; i <= k; i++) if (f[i] == name) { n += $NF; break } }
		END { print n + 0 }' "$1"
}

# pct PART TOTAL: percentage with one decimal
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", 100 * a / b; else print "0" }'; }

# within VALUE CENTER TOL: |VALUE - CENTER| <= TOL (decimals allowed)
within() { awk -v v="$1" -v c="$2" -v t="$3" 'BEGIN { d = v - c; if (d < 0) d = -d; exit !(d <= t) }'; }

# ge A B: A >= B (decimals allowed)
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# --- pprof ----------------------------------------------------------------------

have_pprof() { [ -x "$GO" ]; }

# pprof_raw FILE: `go tool pprof -raw` with no symbolization (the names must
# come from the profile itself).
pprof_raw() { "$GO" tool pprof -symbolize=none -raw "$1" 2>&1; }
# label_stats RAW KEY: from RAW (`go tool pprof -raw`'s output), "TID<TAB>VALUE<TAB>
# SAMPLES" lines, VALUE the label KEY's value ("held", "not held" for gil),
# "-" where a sample has none.
label_stats() {
	awk -v OFS='\t' -v key="$2" '
		function lab(line, key,   s, i) {
			s = " " line; i = index(s, " " key ":[")
			if (i == 0) return ""
			s = substr(s, i + length(key) + 3)
			return substr(s, 1, index(s, "]") - 1)
		}
		function flush() { if (c != "") n[(t == "" ? "-" : t) SUBSEP (g == "" ? "-" : g)] += c }
		/^Samples:/ { on = 1; next }
		/^(Locations|Mappings)/ { on = 0 }
		on && /^ +[0-9]+ +[0-9]+ +[0-9]+:/ { flush(); c = $1; t = ""; g = ""; next }
		on { v = lab($0, "tid"); if (v != "") t = v; v = lab($0, key); if (v != "") g = v }
		END { flush(); for (x in n) { split(x, p, SUBSEP); print p[1], p[2], n[x] } }' "$1"
}

pprof_top() {
	local f=$1
	shift
	"$GO" tool pprof -symbolize=none -top -nodecount=100 "$@" "$f" 2>&1
}

is_gzip() { [ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' \n')" = 1f8b ]; }

build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1
}

# --- targets that write a report on SIGUSR1 (eintr) ----------------------------

# report_serial REPORT: the "serial N" line of a report file.
report_serial() { sed -n 's/^serial //p' "$1" 2>/dev/null; }
_serial_is() { [ "$(report_serial "$1")" = "$2" ]; }

# request_report PID REPORT: ask for a fresh report (SIGUSR1) and wait for it.
request_report() {
	local want=$(($(report_serial "$2") + 1))
	kill -USR1 "$1"
	wait_until 5 _serial_is "$2" "$want"
}

# --- headless Chromium (t_flamegraph, t_hostile) ----------------------------------

find_chromium() {
	local c
	for c in chromium chromium-browser google-chrome; do
		command -v "$c" >/dev/null && { command -v "$c"; return 0; }
	done
	return 1
}

# need_chromium: sets CHROMIUM to the browser found; returns 1 if there is
# none.  It installs nothing: contrib/install-deps.sh (make deps) installs
# Debian's package "chromium" before the tests run.
need_chromium() {
	CHROMIUM=$(find_chromium)
	[ -n "$CHROMIUM" ]
}

# browser ARGS... URL: headless Chromium with a profile of its own (two
# browsers sharing one would hand the page to each other), no GPU, no
# network of its own, output at scale 1; its log (console messages
# included) goes to $TMP/browser.log.
browser() {
	timeout -k 5 40 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$TMP/chromium-profile" --force-device-scale-factor=1 \
		--hide-scrollbars --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --enable-logging=stderr --v=0 \
		"$@" 2>>"$TMP/browser.log"
}
