#!/usr/bin/env bash
# Programs no one here wrote: stripped binaries from Debian's
# packages, attached to while they do real work (contrib/install-deps.sh,
# make deps, installs them; when one is missing the test skips, naming it).
#   sqlite3  a CPU-heavy recursive query: most samples inside
#            sqlite3VdbeExec (exported by libsqlite3), stacks rooted at
#            _start (the stripped sqlite3's entry point).
#   gzip -9  on a generated file: samples in its own compression code,
#            several of its stripped functions deep, named gzip+0xSTART
#            where START is where the function starts (its FDE), rooted.
#   nginx    serving a local file to wrk on 127.0.0.1 (bounded run): the
#            worker's stacks through epoll_wait and the request path
#            (ngx_http_*), rooted; still serving afterwards, untraced.
#   debug    a stripped library's static functions (libc's __libc_start_call_main, _int_malloc,
#            _int_free, the memmove variants) are libc.so.6+0xSTART when
#            no debug file is found (the standard /usr/lib/debug hidden in
#            a mount namespace of the profiler's), and their names when
#            Debian's own debug file (libc6-dbg, by build ID) sits under a
#            --debug-dir (given twice, the first one empty); skipped when
#            libc6-dbg is not installed.
# Each run: at least 95% of samples reach the thread's root, in the
# folded stacks and in the summary line's "X% reached their root".
. "$(dirname "$0")/lib.sh"

export PATH=$PATH:/usr/sbin:/sbin

# --- set-up: the packages ---------------------------------------------------------
# command:package, for each program run here.
missing=()
for pair in sqlite3:sqlite3 gzip:gzip nginx:nginx wrk:wrk; do
	command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	skip "programs no one here wrote" \
		"not installed: ${missing[*]} (Debian packages ${missing[*]}: make deps installs them)"
	done_testing
fi

# --- helpers ------------------------------------------------------------------------

# rooted FILE: % of samples whose stack starts at _start (one thread per
# process here, all of them main threads).
rooted() { pct "$(folded_count "$1" '^_start;')" "$(folded_total "$1")"; }

# check_rooted LABEL BASE FOLDED: >= 95% rooted, by the stacks and by the
# profiler's own summary line.
check_rooted() {
	local r s
	r=$(rooted "$3")
	s=$(summary_field "$2.err" rooted)
	DETAIL="$r% start at _start; $(head -n 3 "$3" | cut -c1-300 | tr '\n' '|')" \
		check "$1: >= 95% of samples rooted at _start" "ge '$r' 95"
	DETAIL="summary: $(summary "$2.err")" \
		check "$1: summary says >= 95% reached their root" "[ -n '$s' ] && ge '$s' 95"
	diag "$1: $r% of $(folded_total "$3") samples rooted at _start; summary: $s% reached their root"
}

# fde_starts FILE: the start address (hex, no 0x, no leading zeros) of every
# FDE in FILE's .eh_frame.
fde_starts() {
	readelf --debug-dump=frames "$1" 2>/dev/null |
		sed -nE 's/.* FDE .*pc=0*([0-9a-f]+)\.\..*/\1/p' | sort -u
}

# check_offsets LABEL FOLDED MODULE FILE: every MODULE+0xOFF frame in FOLDED
# names the start of a function of FILE (an FDE start).
check_offsets() {
	local offs bad n
	offs=$(grep -oE "(^|;)$3\\+0x[0-9a-f]+" "$2" | sed -E "s/^;?$3\\+0x0*//" | sort -u)
	n=$(wc -w <<<"$offs")
	bad=$(comm -23 <(tr ' ' '\n' <<<"$offs" | sort -u) <(fde_starts "$4") | head -5 | tr '\n' ' ')
	DETAIL="$n offsets; not a function start: $bad" \
		check "$1: stripped functions are $3+0xSTART, START an FDE start of $4" \
		"[ '$n' -gt 0 ] && [ -z '$bad' ]"
}

# leaf_share FILE REGEX: % of samples whose leaf frame matches REGEX.
leaf_share() {
	pct "$(re=$2 awk 'BEGIN { re = ENVIRON["re"] }
		{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";")
		if (f[n] ~ re) c += $NF } END { print c + 0 }' "$1")" "$(folded_total "$1")"
}

# depth_share FILE REGEX K: % of samples with at least K frames matching REGEX.
depth_share() {
	pct "$(re=$2 awk -v k="$3" 'BEGIN { re = ENVIRON["re"] }
		{ s = $0; sub(/ [0-9]+$/, "", s); n = split(s, f, ";"); m = 0
		for (i = 1; i <= n; i++) if (f[i] ~ re) m++
		if (m >= k) c += $NF } END { print c + 0 }' "$1")" "$(folded_total "$1")"
}

# attach LABEL PID: 2 s at 99 Hz into $TMP/LABEL.folded, checked; sets F
# (the folded file) and TOTAL (its samples).
attach() {
	prof "$TMP/$1" "$2" --duration 2 -o "$TMP/$1.folded"
	check_ran "$1" "$TMP/$1" "$TMP/$1.folded"
	F=$TMP/$1.folded
	TOTAL=$(folded_total "$F")
}

# --- sqlite3: a recursive query --------------------------------------------------
# Counts to 2e9 in a recursive CTE: minutes of work, killed when done with.
sqlite3 :memory: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
	WHERE x < 2000000000) SELECT sum(x) FROM c;" >/dev/null 2>&1 &
SQ=$!
PIDS+=("$SQ")
if check "sqlite3: running the query (CPU time grows)" progresses "$SQ"; then
	attach sqlite3 "$SQ"
	f=$F total=$TOTAL
	v=$(pct "$(folded_count "$f" '(^|;)sqlite3VdbeExec(;|$)')" "$total")
	DETAIL="$v%; $(head -n 3 "$f" | cut -c1-300 | tr '\n' '|')" \
		check "sqlite3: most samples inside sqlite3VdbeExec (>= 80%)" "ge '$v' 80"
	diag "sqlite3: $v% of $total samples inside sqlite3VdbeExec"
	check_rooted "sqlite3" "$TMP/sqlite3" "$f"
	c=$(folded_count "$f" '^_start;__libc_start_main;__libc_start_call_main;sqlite3\+0x[0-9a-f]+;')
	DETAIL="$(head -n 2 "$f" | cut -c1-200 | tr '\n' '|')" \
		check "sqlite3: its stripped main is sqlite3+0xSTART under libc's start code" "[ '$c' -gt 0 ]"
	lib=$(awk '$6 ~ /libsqlite3\.so/ { print $6; exit }' "/proc/$SQ/maps")
	check_offsets "sqlite3" "$f" "$(basename "$lib")" "$lib"

	# --- debug files by build ID, under --debug-dir ----------------------------
	libc=$(awk '$6 ~ /\/libc\.so\.6$/ { print $6; exit }' "/proc/$SQ/maps")
	id=$(build_id "$libc")
	dbg=$TMP/dbg/.build-id/${id:0:2}/${id:2}.debug
	mkdir -p "$(dirname "$dbg")" "$TMP/empty"
	sysdbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	dbgver=$(dpkg-query -W -f='${Status} ${Version}' libc6-dbg 2>/dev/null |
		sed -n 's/^install ok installed //p')
	[ ! -f "$sysdbg" ] || cp "$sysdbg" "$dbg"
	if [ -z "$dbgver" ]; then
		skip "debug: Debian's debug file for $libc" \
			"libc6-dbg is not installed (Debian package libc6-dbg: make deps installs it)"
	elif DETAIL="libc build ID $id, libc6 $(dpkg-query -W -f='${Version}' libc6 2>/dev/null), libc6-dbg $dbgver: no $sysdbg" \
		check "debug: Debian's debug file for $libc (installed libc6-dbg)" "[ -s '$dbg' ]"; then
		# The profiler in a mount namespace of its own where /usr/lib/debug
		# is empty: only what --debug-dir gives is found.
		hidden() {
			unshare --mount --propagation private sh -c \
				'[ ! -d /usr/lib/debug ] || mount -t tmpfs none /usr/lib/debug || exit 97; exec "$@"' \
				sh "$@"
		}
		statics='(^|;)(__libc_start_call_main|_int_malloc|_int_free|_int_realloc|malloc_consolidate|__mem(move|cpy|set)_[a-z0-9_]+)(;|$)'
		hidden timeout -k 5 60 "$CPROF" "$SQ" --duration 2 -o "$TMP/nodbg.folded" \
			>"$TMP/nodbg.out" 2>"$TMP/nodbg.err"
		PROF_RC=$?
		check_ran "debug: without the debug file" "$TMP/nodbg" "$TMP/nodbg.folded"
		hidden timeout -k 5 60 "$CPROF" "$SQ" --duration 2 --debug-dir "$TMP/empty" \
			--debug-dir "$TMP/dbg" -o "$TMP/dbg.folded" >"$TMP/dbg.out" 2>"$TMP/dbg.err"
		PROF_RC=$?
		check_ran "debug: with --debug-dir" "$TMP/dbg" "$TMP/dbg.folded"
		a_off=$(folded_count "$TMP/nodbg.folded" '(^|;)libc\.so\.6\+0x')
		a_named=$(folded_count "$TMP/nodbg.folded" "$statics")
		b_off=$(folded_count "$TMP/dbg.folded" '(^|;)libc\.so\.6\+0x')
		b_named=$(folded_count "$TMP/dbg.folded" "$statics")
		diag "debug: without: $a_off samples with a libc.so.6+0x frame, $a_named with a named static function; with --debug-dir: $b_off and $b_named"
		DETAIL="$(grep -oE '(^|;)libc\.so\.6\+0x[0-9a-f]+' "$TMP/nodbg.folded" | sort | uniq -c | head -5 | tr '\n' ' ')" \
			check "debug: without a debug file, libc's static functions are libc.so.6+0xSTART" \
			"[ '$a_off' -gt 0 ] && [ '$a_named' = 0 ]"
		check_offsets "debug: without" "$TMP/nodbg.folded" libc.so.6 "$libc"
		DETAIL="$(grep -oE '(^|;)libc\.so\.6\+0x[0-9a-f]+' "$TMP/dbg.folded" | sort | uniq -c | head -5 | tr '\n' ' ')" \
			check "debug: with --debug-dir DIR (build ID), they have their names" \
			"[ '$b_named' -gt 0 ] && [ '$b_off' = 0 ]"
	fi
fi
stop_target "$SQ"

# --- gzip -9 -------------------------------------------------------------------------
# 30 MB of digits and newlines, compressed ten times over (one process,
# about ten seconds of work); killed when done with.
seq 1 4000000 >"$TMP/in.txt"
gzip -9 -c "$TMP/in.txt" "$TMP/in.txt" "$TMP/in.txt" "$TMP/in.txt" "$TMP/in.txt" \
	"$TMP/in.txt" "$TMP/in.txt" "$TMP/in.txt" "$TMP/in.txt" "$TMP/in.txt" >/dev/null &
GZ=$!
PIDS+=("$GZ")
if check "gzip: compressing (CPU time grows)" progresses "$GZ"; then
	gz=$(readlink "/proc/$GZ/exe")
	attach gzip "$GZ"
	f=$F
	leaf=$(leaf_share "$f" '^gzip\+0x')
	deep=$(depth_share "$f" '^gzip\+0x' 4)
	diag "gzip: $leaf% of $(folded_total "$f") samples in gzip's own code, $deep% at least 4 of its functions deep"
	DETAIL="$leaf%; $(sort -k2 -t' ' -nr "$f" | head -n 3 | cut -c1-300 | tr '\n' '|')" \
		check "gzip: >= 80% of samples in its own (stripped) code" "ge '$leaf' 80"
	DETAIL="$deep%" check "gzip: >= 80% of samples at least 4 gzip functions deep (main, file, zip, deflate loop)" \
		"ge '$deep' 80"
	check_rooted "gzip" "$TMP/gzip" "$f"
	check_offsets "gzip" "$f" gzip "$gz"
	check "gzip: keeps running after the profiler, untraced" untraced "$GZ"
fi
stop_target "$GZ"

# --- nginx under load ----------------------------------------------------------------
NG=$TMP/ng
mkdir -p "$NG/www" "$NG/tmp"
head -c 65536 /dev/urandom >"$NG/www/file.bin"
chmod -R a+rX "$NG"
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ngx_pid=
for try in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 20000))
	port_open "$port" && continue
	cat >"$NG/nginx.conf" <<-EOF
	worker_processes 1;
	daemon off;
	master_process on;
	pid $NG/nginx.pid;
	error_log $NG/error.log warn;
	events { worker_connections 256; }
	http {
	    access_log off;
	    client_body_temp_path $NG/tmp/body;
	    proxy_temp_path $NG/tmp/proxy;
	    fastcgi_temp_path $NG/tmp/fastcgi;
	    uwsgi_temp_path $NG/tmp/uwsgi;
	    scgi_temp_path $NG/tmp/scgi;
	    server { listen 127.0.0.1:$port; root $NG/www; }
	}
	EOF
	nginx -e "$NG/error.log" -c "$NG/nginx.conf" -p "$NG" >"$NG/stderr" 2>&1 &
	ngx_pid=$!
	PIDS+=("$ngx_pid")
	wait_until 10 port_open "$port" && break
	stop_target "$ngx_pid"
	ngx_pid=
done
if DETAIL="$(tail -n 3 "$NG/error.log" "$NG/stderr" 2>/dev/null | tr '\n' ' ')" \
	check "nginx: serving on 127.0.0.1" "[ -n '$ngx_pid' ]"; then
	worker=$(cat "/proc/$ngx_pid/task/$ngx_pid/children" 2>/dev/null | awk '{ print $1 }')
	PIDS+=("$worker")
	# A bounded load: 2 connections for 6 s, stopped by itself.
	timeout -k 5 20 wrk -t1 -c2 -d6s "http://127.0.0.1:$port/file.bin" >"$TMP/wrk.out" 2>&1 &
	WRK=$!
	if check "nginx: the worker works under load (CPU time grows)" progresses "$worker"; then
		attach nginx "$worker"
		f=$F total=$TOTAL
		ep=$(pct "$(folded_count "$f" '(^|;)(epoll_wait|__GI_epoll_wait)(;|$)')" "$total")
		rq=$(pct "$(folded_count "$f" '(^|;)ngx_http_[a-z_]+(;|$)')" "$total")
		diag "nginx: $total samples of the worker; $ep% in epoll_wait, $rq% in the request path (ngx_http_*)"
		DETAIL="$ep%" check "nginx: worker stacks through epoll_wait" "ge '$ep' 1"
		DETAIL="$rq%" check "nginx: worker stacks through the request path (ngx_http_*, >= 10%)" "ge '$rq' 10"
		c=$(folded_count "$f" '(^|;)ngx_process_events_and_timers;')
		DETAIL="$(head -n 2 "$f" | cut -c1-300)" \
			check "nginx: the worker's event loop (ngx_process_events_and_timers) in >= 95%" \
			"ge $(pct "$c" "$total") 95"
		check_rooted "nginx" "$TMP/nginx" "$f"
		check_offsets "nginx" "$f" nginx "$(readlink "/proc/$worker/exe")"
	fi
	wait "$WRK"
	reqs=$(sed -nE 's/^ *([0-9]+) requests in .*/\1/p' "$TMP/wrk.out")
	diag "wrk: $(grep -E 'requests in|Requests/sec|errors' "$TMP/wrk.out" | tr '\n' ' ')"
	DETAIL="$(head -c 400 "$TMP/wrk.out")" \
		check "nginx: wrk got answers, no socket errors, no non-2xx" \
		"[ '${reqs:-0}' -gt 0 ] && ! grep -qE 'Socket errors|Non-2xx' '$TMP/wrk.out'"
	check "nginx: worker untraced afterwards" untraced "$worker"
	check "nginx: still serving afterwards" port_open "$port"
	# Roles by name (issue 28, item 2): the master and its worker by the
	# titles they set ("nginx: master process ...", "nginx: worker
	# process"), in folded, svg and pprof (with comm=nginx beside).
	prof "$TMP/roles" "$ngx_pid" --subprocesses --processes --duration 0.5 -o "$TMP/roles.folded"
	cut -d';' -f1 "$TMP/roles.folded" | sort -u >"$TMP/roles.roots"
	DETAIL="$(tr '\n' '|' <"$TMP/roles.roots")" \
		check "nginx roles: folded roots are the titles, 'nginx: worker process (PID)' and the master's" \
		"grep -qx 'nginx: worker process ($worker)' '$TMP/roles.roots' && grep -qE '^nginx: master process .* \\($ngx_pid\\)\$' '$TMP/roles.roots'"
	prof "$TMP/roles-svg" "$ngx_pid" --subprocesses --processes --duration 0.5 -o "$TMP/roles.svg"
	check "nginx roles: the flame graph names the worker by its title" "grep -q 'nginx: worker process ($worker)' '$TMP/roles.svg'"
	if have_pprof; then
		prof "$TMP/roles-pp" "$ngx_pid" --subprocesses --duration 0.5 -o "$TMP/roles.pprof"
		"$GO" tool pprof -tags "$TMP/roles.pprof" >"$TMP/roles.tags" 2>&1
		DETAIL="$(grep -A4 -E '^ (process|comm):' "$TMP/roles.tags" | tr '\n' '|')" \
			check "nginx roles: pprof process=nginx: worker process, comm=nginx" \
			"grep -q ': nginx: worker process\$' '$TMP/roles.tags' && grep -A2 '^ comm:' '$TMP/roles.tags' | grep -q ': nginx\$'"
	fi
	kill -QUIT "$ngx_pid" 2>/dev/null
	wait_until 10 gone "$ngx_pid"
fi

done_testing
