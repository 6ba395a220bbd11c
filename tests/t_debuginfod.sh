#!/usr/bin/env bash
# debuginfod: with DEBUGINFOD_URLS set, the debug file
# of a stripped program is fetched by build ID through libdwfl's
# standard find-debuginfo path (elfutils' debuginfod client) at
# symbolization time: names and lines come back.  Without the variable
# nothing is asked; with a server that does not answer, one note and the
# profile is still written.
#
# The server is Debian's debuginfod, which listens on every address: it
# runs in a network namespace of its own (unshare -n, as root) whose only
# interface is the loopback, so it is reachable on 127.0.0.1 only; the
# target and the profiler run in it too.
. "$(dirname "$0")/lib.sh"

PORT=8002               # the namespace is new: every port is free
CLOSED=8003             # and nothing listens on this one

if [ "${CPROF_DEBUGINFOD_NETNS:-}" != 1 ]; then
	if ! command -v debuginfod >/dev/null || ! command -v debuginfod-find >/dev/null; then
		skip "debuginfod" "debuginfod is not installed (Debian package debuginfod: make deps installs it)"
		done_testing
	fi
	if [ "$(id -u)" != 0 ] || ! unshare -n true 2>/dev/null || ! command -v ip >/dev/null; then
		skip "debuginfod" "needs root, unshare -n and ip: the server must reach 127.0.0.1 only"
		done_testing
	fi
	unshare -n env CPROF_DEBUGINFOD_NETNS=1 bash "$0"
	exit $?
fi

ip link set lo up
unset DEBUGINFOD_URLS   # set below for the commands that use it, only

# A stripped copy of tests/bin/wallclock (no .symtab, no DWARF; its build
# ID note kept), and its debug file in the server's directory only.
mkdir -p "$TMP/srv"
prog=$TMP/wallclock-stripped
cp "$BIN/wallclock" "$prog"
objcopy --only-keep-debug "$prog" "$TMP/srv/wallclock.debug"
strip -s "$prog"
bid=$(build_id "$prog")
DETAIL="build ID '$bid'; $(readelf -S "$prog" | grep -cE 'symtab|debug_info') symbol/debug sections" \
	check "stripped program keeps its build ID, has no .symtab nor DWARF" \
	"[ -n '$bid' ] && ! readelf -S '$prog' | grep -qE '\.symtab|\.debug_info'"

debuginfod -F -p "$PORT" -d "$TMP/db.sqlite" -t 0 -g 0 -v "$TMP/srv" >"$TMP/server.log" 2>&1 &
SERVER=$!
PIDS+=("$SERVER")
# (A fresh client cache for each try: the client remembers a miss.)
served() {
	rm -rf "$TMP/probe-cache"
	DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$TMP/probe-cache \
		DEBUGINFOD_TIMEOUT=2 debuginfod-find debuginfo "$bid" >/dev/null 2>&1
}
if ! wait_until 20 served; then
	DETAIL="$(tail -5 "$TMP/server.log" | tr '\n' '|')" check "debuginfod serves the debug file" false
	done_testing
fi
requests() { grep -c "GET /buildid/$bid/" "$TMP/server.log"; }
before=$(requests)

"$prog" "$TMP/w.ready" &
pid=$!
PIDS+=("$pid")
if ! wait_until 10 file_ready "$TMP/w.ready"; then
	check "stripped wallclock starts" false
	done_testing
fi

# 1. Without DEBUGINFOD_URLS: nothing asked, no names.
DEBUGINFOD_CACHE_PATH="$TMP/cache0" prof "$TMP/none" "$pid" --duration 0.5 -o "$TMP/none.folded"
check_ran "no DEBUGINFOD_URLS" "$TMP/none" "$TMP/none.folded"
DETAIL="$(requests) requests, $before before" \
	check "no DEBUGINFOD_URLS: no request reaches the server" "[ '$(requests)' = '$before' ]"
c=$(folded_count "$TMP/none.folded" '(^|;)(burn_cpu|sleep_here)(;|$)')
DETAIL="$(tr '\n' '|' <"$TMP/none.folded")" \
	check "no DEBUGINFOD_URLS: burn_cpu, sleep_here not named (stripped)" "[ '$c' = 0 ]"

# 2. With it: the debug file is fetched, names and lines come back.
out=$TMP/fetched.folded
DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$TMP/cache1 \
	prof "$TMP/fetched" "$pid" --duration 0.5 -o "$out"
check_ran "DEBUGINFOD_URLS" "$TMP/fetched" "$out"
DETAIL="$(requests) requests, $before before" \
	check "DEBUGINFOD_URLS: the debug file was asked for by build ID" "[ '$(requests)' -gt '$before' ]"
for fn in burn_cpu sleep_here; do
	c=$(folded_frame_count "$out" "$fn")
	DETAIL="$(tr '\n' '|' <"$out")" check "DEBUGINFOD_URLS: $fn named" "[ '$c' -gt 0 ]"
done
if have_pprof; then
	DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$TMP/cache2 \
		prof "$TMP/fetchedp" "$pid" --duration 0.5 -o "$TMP/fetched.pprof"
	raw=$(pprof_raw "$TMP/fetched.pprof")
	DETAIL="$(grep -m3 burn_cpu <<<"$raw")" \
		check "DEBUGINFOD_URLS: burn_cpu has its file and line (wallclock.c:N)" \
		"grep -qE ' burn_cpu [^ ]*wallclock\.c:[0-9]+ ' <<<\"\$raw\""
fi

# 3. A server that does not answer: one note, the profile still written,
# no long wait.
t0=${EPOCHREALTIME/[.,]/}
DEBUGINFOD_URLS=http://127.0.0.1:$CLOSED DEBUGINFOD_CACHE_PATH=$TMP/cache3 \
	prof "$TMP/closed" "$pid" --duration 0.5 -o "$TMP/closed.folded"
ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
check_ran "closed port" "$TMP/closed" "$TMP/closed.folded"
notes=$(grep -c 'cprof-attach: note: .*debuginfod' "$TMP/closed.err")
DETAIL="$(head -c 400 "$TMP/closed.err")" \
	check "closed port: one note naming the server" \
	"[ '$notes' = 1 ] && grep -q '127.0.0.1:$CLOSED' '$TMP/closed.err'"
DETAIL="took $ms ms" check "closed port: no wait for the server (under 10 s)" "[ $ms -lt 10000 ]"

# 4. A server that answers with another program's debug file for the
# build ID asked (issue 27, item 6): refused, with a note; nothing of it in
# the profile (b1f3e94 named the stripped program's code from it).
WRONG=8004
if command -v python3 >/dev/null; then
	mkdir -p "$TMP/fake/buildid/$bid"
	objcopy --only-keep-debug "$BIN/deep" "$TMP/fake/buildid/$bid/debuginfo"
	python3 -m http.server "$WRONG" --bind 127.0.0.1 --directory "$TMP/fake" >"$TMP/fake.log" 2>&1 &
	FAKE=$!
	PIDS+=("$FAKE")
	# Its status is debuginfod-find's (the cache cleared first, as served()
	# does): with rm last it was always 0, and the run below could start
	# before the server listened (Connection refused under load).
	fake_up() {
		rm -rf "$TMP/probe-fake"
		DEBUGINFOD_URLS=http://127.0.0.1:$WRONG DEBUGINFOD_CACHE_PATH=$TMP/probe-fake \
			DEBUGINFOD_TIMEOUT=2 debuginfod-find debuginfo "$bid" >/dev/null 2>&1
	}
	if wait_until 10 fake_up; then
		DEBUGINFOD_URLS=http://127.0.0.1:$WRONG DEBUGINFOD_CACHE_PATH=$TMP/cache4 \
			prof "$TMP/wrong" "$pid" --duration 0.5 -o "$TMP/wrong.folded"
		check_ran "wrong debug file" "$TMP/wrong" "$TMP/wrong.folded"
		DETAIL="$(head -c 400 "$TMP/wrong.err")" \
			check "wrong debug file: one note, the file refused for its build ID" \
			"[ \"\$(grep -c 'has another build ID than the module: not used' '$TMP/wrong.err')\" = 1 ]"
		# the stripped program's own code stays unnamed; the wrong file
		# gave it deep's names (ready_write, report_commit, deregister_tm_clones...)
		w=$(folded_count "$TMP/wrong.folded" '(^|;)(ready_[a-z_.0-9]*|report_[a-z_.0-9]*|deregister_tm_clones|register_tm_clones|frame_dummy|__do_global_dtors_aux|recurse|block_at_bottom|blocker_main|spin_at_bottom)(;|$)')
		DETAIL="$(tr '\n' '|' <"$TMP/wrong.folded" | head -c 300)" \
			check "wrong debug file: none of its names in the profile" "[ '$w' = 0 ]"
	else
		check "a fake debuginfod (python3 http.server) serves" false
	fi
	kill "$FAKE" 2>/dev/null
else
	skip "wrong debug file" "no python3 for a fake debuginfod server"
fi

# 5. A server that accepts and never answers (issue 27, item 5): the run's
# lookups share one budget (--debuginfod-deadline, 10 s by default); past
# it one note names the server and the rest is named without it.  b1f3e94
# waited ~10 s per request, several per module (62.9 s for a 1 s profile).
SILENT=8005
if command -v python3 >/dev/null; then
	python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", '"$SILENT"'))
s.listen(64)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
' >"$TMP/silent.log" 2>&1 &
	SIL=$!
	PIDS+=("$SIL")
	silent_up() { (exec 3<>"/dev/tcp/127.0.0.1/$SILENT") 2>/dev/null; }
	if wait_until 10 silent_up; then
		t0=${EPOCHREALTIME/[.,]/}
		DEBUGINFOD_URLS=http://127.0.0.1:$SILENT DEBUGINFOD_CACHE_PATH=$TMP/cache5 \
			prof "$TMP/silent" "$pid" --duration 0.5 --debuginfod-deadline 2 -o "$TMP/silent.folded"
		ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
		check_ran "silent server" "$TMP/silent" "$TMP/silent.folded"
		DETAIL="took $ms ms" check "silent server: the run ends soon after its 2 s budget (under 8 s)" "[ $ms -lt 8000 ]"
		DETAIL="$(head -c 400 "$TMP/silent.err")" \
			check "silent server: one note naming the server and the budget" \
			"[ \"\$(grep -c 'debuginfod (http://127.0.0.1:$SILENT).*budget' '$TMP/silent.err')\" = 1 ]"
	else
		check "a silent server (python3) listens" false
	fi
	kill "$SIL" 2>/dev/null
else
	skip "silent server" "no python3 for a server that never answers"
fi

stop_target "$pid"
kill "$SERVER" 2>/dev/null
wait "$SERVER" 2>/dev/null
done_testing
