#!/bin/bash
# PHP's frames (sample/rt_php.c, php/): Debian's PHP 8.2, read from outside.
#   1. offsets: tests/targets/phpoffsets/phpoffsets.c, built against the
#      installed headers (php8.2-dev), prints every field php/layout.c
#      reads; tests/bin/phplayout prints our table in the same words: every
#      entry equal (a mismatch names the field).
#   2. the known split (tests/targets/phpsplit.php, php8.2-cli) attached to
#      for 3 s: compute_inner ~40%, usleep ~30%, stream_select ~30%, each
#      within 5 points of the truth the target measured by its own clock;
#      compute's chain in order (<main>, compute_outer, compute_middle,
#      compute_inner) in >= 95% of compute_inner's samples; each frame at
#      the line the file says (found with awk, not written here); no
#      execute_ex left.  --no-php: no PHP frame (execute_ex there).  The
#      pprof label php_request: the script's path on every sample.
#   3. php-fpm8.2 with 2 workers (static) behind nginx (or, without nginx,
#      over its FastCGI socket with cgi-fcgi) under a bounded client loop,
#      profiled with --subprocesses --processes: handle_request and
#      request_inner (tests/targets/phpreq.php) under each worker's own
#      root, none under the master; the pprof label php_request "GET
#      /req/path" (the request's query, a token, written nowhere).
# Every target is killed at the end (lib.sh's cleanup).  Debian's packages
# it needs (php8.2-cli, php8.2-fpm, php8.2-dev, nginx or libfcgi-bin, curl)
# are installed by contrib/install-deps.sh; a step that needs a missing one
# is skipped, naming it.
. "$(dirname "$0")/lib.sh"

PHP=$(command -v php8.2 || :)
PHPSPLIT=$ROOT/tests/targets/phpsplit.php
EXEC_RE='(^|;)execute_ex(;|$)'
PHPFRAME_RE=' \([^ ;()]*\.php(:[0-9]+)?\)(;|$)'

# line_of FILE FUNC TEXT: the first line of FILE after "function FUNC("
# holding TEXT (strings through ENVIRON, compared exactly).
line_of() {
	D="function $2(" X=$3 awk 'index($0, ENVIRON["D"]) == 1 { on = 1; next }
		on && index($0, ENVIRON["X"]) { print NR; exit }' "$1"
}
# main_line FILE TEXT: the first line of FILE outside any function and
# comment that holds TEXT.
main_line() {
	X=$2 awk '/^(\/\/|<\?php)/ { next } /^function / { inf = 1 } inf && /^}/ { inf = 0; next }
		!inf && index($0, ENVIRON["X"]) { print NR; exit }' "$1"
}

# share FILE NAME: the percentage of FILE's samples with a frame starting "NAME (".
share() {
	N="$2 (" awk '{ s = $0; sub(/ [0-9]+$/, "", s); all += $NF; k = split(s, f, ";")
		for (i = 1; i <= k; i++) if (index(f[i], ENVIRON["N"]) == 1) { n += $NF; break } }
		END { if (all) printf "%.1f", 100 * n / all; else print 0 }' "$1"
}
# frame_share FILE FRAME: the percentage with a frame exactly FRAME.
frame_share() {
	N=$2 awk '{ s = $0; sub(/ [0-9]+$/, "", s); all += $NF; k = split(s, f, ";")
		for (i = 1; i <= k; i++) if (f[i] == ENVIRON["N"]) { n += $NF; break } }
		END { if (all) printf "%.1f", 100 * n / all; else print 0 }' "$1"
}
# chain FILE: of the samples with compute_inner, the percentage whose PHP
# frames, root first, are exactly <main>, compute_outer, compute_middle,
# compute_inner.
chain() {
	awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); c = ""; in_ = 0
		for (i = 1; i <= k; i++) if (f[i] ~ / \([^ ;()]*\.php:[0-9]+\)$/) {
			x = f[i]; sub(/ \(.*$/, "", x); c = c "," x; if (x == "compute_inner") in_ = 1 }
		if (!in_) next; all += $NF
		if (c == ",<main>,compute_outer,compute_middle,compute_inner") n += $NF }
		END { if (all) printf "%.1f", 100 * n / all; else print 0 }' "$1"
}
# pct_ok PART TOTAL MIN: TOTAL > 0 and PART is at least MIN% of it.
pct_ok() { [ "${2:-0}" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * $3)) ]; }
truth() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

if [ -z "$PHP" ]; then
	skip "php" "php8.2 is not installed (Debian package php8.2-cli: make deps installs it)"
	done_testing
	exit 0
fi

# --- 1. offsets ---------------------------------------------------------------------
if command -v php-config8.2 >/dev/null; then
	if cc -std=gnu11 $(php-config8.2 --includes) -o "$TMP/phpoffsets" \
		"$ROOT/tests/targets/phpoffsets/phpoffsets.c" 2>"$TMP/phpoffsets.log"; then
		"$TMP/phpoffsets" >"$TMP/headers.txt"
		read -r major minor < <(awk '$1 == "major" { a = $2 } $1 == "minor" { b = $2 } END { print a, b }' "$TMP/headers.txt")
		"$BIN/phplayout" "$major" "$minor" >"$TMP/ours.txt"
		bad=$(awk 'FNR == NR { h[$1] = $2; next } { o[$1] = $2 }
			END { for (k in h) if (!(k in o) || o[k] != h[k]) b = b k ":" ((k in o) ? o[k] : "none") "/" h[k] ","
			      for (k in o) if (!(k in h)) b = b k ":" o[k] "/none,"; print b }' "$TMP/headers.txt" "$TMP/ours.txt")
		DETAIL="ours/headers: $bad" check "offsets $major.$minor: php/layout.c's table is the headers' ($(wc -l <"$TMP/headers.txt") fields)" "[ -z '$bad' ] && [ -s '$TMP/ours.txt' ]"
	else
		DETAIL="$(head -c 300 "$TMP/phpoffsets.log")" check "offsets: phpoffsets builds against php8.2's headers" false
	fi
else
	skip "offsets" "php-config8.2 is missing (Debian package php8.2-dev: make deps installs it)"
fi

# --- 2. the known split -------------------------------------------------------------
READY=$TMP/split.ready
"$PHP" "$PHPSPLIT" "$READY" "$TMP/split.truth" &
PHP_PID=$!
PIDS+=("$PHP_PID")
if ! wait_until 10 file_ready "$READY"; then
	check "split: php8.2 starts" false
else
	prof "$TMP/split" -p "$PHP_PID" -d 3 --stats -o "$TMP/split.folded"
	cp "$TMP/split.truth" "$TMP/split.truth.end" 2>/dev/null
	prof "$TMP/nophp" -p "$PHP_PID" -d 1 --no-php -o "$TMP/nophp.folded"
	check_ran split "$TMP/split" "$TMP/split.folded"
	out=$TMP/split.folded
	f=$(basename "$PHPSPLIT")
	for k in compute:compute_inner usleep:usleep select:stream_select; do
		t=$(truth "$TMP/split.truth.end" "${k%%:*}")
		case ${k#*:} in
		compute_inner) got=$(share "$out" compute_inner) ;;
		*) got=$(frame_share "$out" "${k#*:}") ;;
		esac
		DETAIL="got $got%, truth ${t:-none}%" check "split: ${k#*:} within 5 points of its truth" \
			"[ -n '$t' ] && within '$got' '$t' 5"
	done
	c=$(chain "$out")
	DETAIL="$c%; $(grep -F compute_inner "$out" | head -n 1 | cut -c1-400)" \
		check "split: the chain <main> -> compute_outer -> compute_middle -> compute_inner, in order (>= 95%)" "ge '$c' 95"
	# a caller at the line of its call to its callee (compute_middle also
	# calls hrtime(), on its loop's line); the innermost at its loop's body
	for x in "compute_outer:compute_middle:compute_middle(" "compute_middle:compute_inner:compute_inner(" \
		"compute_inner::\$s += "; do
		IFS=: read -r fn callee text <<<"$x"
		l=$(line_of "$PHPSPLIT" "$fn" "$text")
		if [ -n "$callee" ]; then
			got=$(N=";$fn (" C=";$callee (" awk '{ s = $0; sub(/ [0-9]+$/, "", s); all += $NF
				i = index(s, ENVIRON["N"]); if (i && index(substr(s, i + 1), ENVIRON["C"])) n += $NF }
				END { print n + 0 }' "$out")
			at=$(folded_count "$out" ";$fn \\($f:$l\\);$callee \\(")
		else
			got=$(folded_count "$out" ";$fn \\(")
			at=$(folded_count "$out" ";$fn \\($f:$l\\)")
		fi
		DETAIL="line $l: $at of $got samples" check "split: $fn at $f:$l${callee:+ calling $callee} (>= 90%)" \
			"[ -n '$l' ] && pct_ok '$at' '$got' 90"
	done
	for x in "compute_outer:compute_outer(4" "usleep:usleep(" "stream_select:stream_select("; do
		l=$(main_line "$PHPSPLIT" "${x#*:}")
		got=$(frame_share "$out" "<main> ($f:$l)")
		DETAIL="line $l: $got%" check "split: <main> at $f:$l (calling ${x%%:*}) in some samples" "[ -n '$l' ] && ge '$got' 10"
	done
	n=$(folded_count "$out" "$EXEC_RE")
	DETAIL="$n samples; $(grep -E "$EXEC_RE" "$out" | head -n 1 | cut -c1-300)" \
		check "split: no execute_ex left where PHP frames replace it" "[ '$n' = 0 ]"
	check_ran "--no-php" "$TMP/nophp" "$TMP/nophp.folded"
	n=$(folded_count "$TMP/nophp.folded" "$PHPFRAME_RE")
	e=$(folded_count "$TMP/nophp.folded" "$EXEC_RE")
	DETAIL="$n with PHP frames, $e with execute_ex" check "--no-php: no PHP frame, execute_ex in place" "[ '$n' = 0 ] && [ '$e' -gt 0 ]"
	if have_pprof; then
		prof "$TMP/cli" -p "$PHP_PID" -d 1 -o "$TMP/cli.pprof"
		pprof_raw "$TMP/cli.pprof" >"$TMP/cli.raw"
		tot=0 n=0
		while IFS=$'\t' read -r t v c; do
			tot=$((tot + c)); [ "$v" = "$PHPSPLIT" ] && n=$((n + c))
		done < <(label_stats "$TMP/cli.raw" php_request)
		DETAIL="$n of $tot; $(label_stats "$TMP/cli.raw" php_request | head -n 3 | tr '\n\t' '| ')" \
			check "split: pprof: label php_request = the script's path on every sample (the CLI)" \
			"[ '$tot' -gt 0 ] && [ '$n' = '$tot' ]"
	fi
	kill "$PHP_PID" 2>/dev/null
	wait "$PHP_PID" 2>/dev/null
fi

# --- 3. php-fpm ----------------------------------------------------------------------
FPM=$(command -v php-fpm8.2 || ls /usr/sbin/php-fpm8.2 2>/dev/null || :)
fpm_test() {
	local base=$TMP/fpm sock=$TMP/fpm.sock port master load client n tot w req
	cat >"$base.conf" <<EOC
[global]
pid = $TMP/fpm.pid
error_log = $TMP/fpm.log
daemonize = no
[www]
user = root
group = root
listen = $sock
listen.mode = 0666
pm = static
pm.max_children = 2
EOC
	"$FPM" -R -F -n -y "$base.conf" -d opcache.enable=0 >"$base.log" 2>&1 &
	master=$!
	PIDS+=("$master")
	FPM_MASTER=$master
	if ! wait_until 10 test -S "$sock"; then
		DETAIL="$(tail -c 300 "$base.log"; tail -c 300 "$TMP/fpm.log" 2>/dev/null)" check "fpm: php-fpm8.2 starts" false
		return
	fi
	if command -v nginx >/dev/null && command -v curl >/dev/null; then
		port=$((20000 + RANDOM % 20000))
		mkdir -p "$TMP/nginx/logs"
		cat >"$TMP/nginx/nginx.conf" <<EOC
daemon off;
master_process off;
worker_processes 1;
error_log $TMP/nginx/logs/error.log;
pid $TMP/nginx/nginx.pid;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $TMP/nginx; proxy_temp_path $TMP/nginx; fastcgi_temp_path $TMP/nginx;
	uwsgi_temp_path $TMP/nginx; scgi_temp_path $TMP/nginx;
	server {
		listen 127.0.0.1:$port;
		location / {
			include /etc/nginx/fastcgi_params;
			fastcgi_param SCRIPT_FILENAME $ROOT/tests/targets/phpreq.php;
			fastcgi_pass unix:$sock;
		}
	}
}
EOC
		nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" >"$TMP/nginx.log" 2>&1 &
		PIDS+=("$!")
		client="curl -sf -o /dev/null http://127.0.0.1:$port/req/path?token=s3cr3t"
		req=nginx
	elif command -v cgi-fcgi >/dev/null; then
		client="env SCRIPT_FILENAME=$ROOT/tests/targets/phpreq.php REQUEST_METHOD=GET REQUEST_URI=/req/path?token=s3cr3t cgi-fcgi -bind -connect $sock"
		req=cgi-fcgi
	else
		skip "fpm" "neither nginx (with curl) nor cgi-fcgi is installed (Debian packages nginx curl, or libfcgi-bin)"
		return
	fi
	if ! wait_until 10 bash -c "$client >/dev/null 2>&1"; then
		DETAIL="$(tail -c 300 "$TMP/nginx.log" 2>/dev/null) $(tail -c 300 "$TMP/fpm.log")" check "fpm: answers through $req" false
		return
	fi
	wait_until 10 _children_are "$master" 2
	local workers
	workers=$(ps -o pid= --ppid "$master" | tr -d ' ')
	PIDS+=($workers)
	# two clients, 10 s at most each (their own deadline: killed, no
	# loop is left behind)
	bash -c "end=\$((SECONDS + 10)); while [ \$SECONDS -lt \$end ]; do $client >/dev/null 2>&1; done" &
	load=$!
	PIDS+=("$load")
	bash -c "end=\$((SECONDS + 10)); while [ \$SECONDS -lt \$end ]; do $client >/dev/null 2>&1; done" &
	PIDS+=("$!")
	prof "$base" -p "$master" --subprocesses --processes -d 3 -o "$base.folded"
	have_pprof && prof "$base.l" -p "$master" --subprocesses -d 2 -o "$base.pprof"
	kill "$load" 2>/dev/null
	check_ran "fpm ($req)" "$base" "$base.folded"
	check "fpm: 2 workers" "[ \$(wc -w <<<'$workers') = 2 ]"
	tot=$(folded_count "$base.folded" ';handle_request \(phpreq\.php:[0-9]+\);request_inner \(phpreq\.php:[0-9]+\)')
	for w in $workers; do
		n=$(awk -v w=" ($w)" '{ s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";"); r = f[1]
			if (substr(r, length(r) - length(w) + 1) == w && index(s, ";handle_request (phpreq.php:")) n += $NF }
			END { print n + 0 }' "$base.folded")
		DETAIL="$n samples; roots: $(cut -d';' -f1 "$base.folded" | sort -u | tr '\n' '|' | cut -c1-200)" \
			check "fpm: worker $w: handle_request (phpreq.php:N) under its own root (>= 5 samples)" "[ '$n' -ge 5 ]"
	done
	n=$(awk -v w=" ($master)" '{ s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";"); r = f[1]
		if (substr(r, length(r) - length(w) + 1) == w && index(s, "handle_request")) n += $NF } END { print n + 0 }' "$base.folded")
	DETAIL="$n" check "fpm: none under the master" "[ '$n' = 0 ]"
	DETAIL="$tot" check "fpm: handle_request -> request_inner in order (>= 10 samples)" "[ '$tot' -ge 10 ]"
	n=$(folded_count "$base.folded" "$EXEC_RE")
	DETAIL="$n" check "fpm: no execute_ex left" "[ '$n' = 0 ]"
	if have_pprof; then
		# php_request: the request (its query left out) on the workers'
		# samples in PHP code, on none of the master's
		pprof_raw "$base.pprof" >"$base.raw"
		local bad='' m=0
		while IFS=$'\t' read -r t v c; do
			case $v in
			"GET /req/path") m=$((m + c)) ;;
			-) ;;
			*) bad="$bad $t:$v" ;;
			esac
		done < <(label_stats "$base.raw" php_request)
		DETAIL="$m samples; other values:${bad:- none}" \
			check "fpm: pprof: label php_request 'GET /req/path' on the workers' samples (>= 10), no other value" \
			"[ '$m' -ge 10 ] && [ -z '$bad' ]"
		n=$(grep -c 's3cr3t' "$base.raw")
		DETAIL="$n lines" check "fpm: pprof: the request's query (token=s3cr3t) written nowhere" "[ '$n' = 0 ]"
	fi
}
_children_are() { [ "$(ps -o pid= --ppid "$1" | wc -l)" -ge "$2" ]; }
if [ -z "$FPM" ]; then
	skip "fpm" "php-fpm8.2 is not installed (Debian package php8.2-fpm: make deps installs it)"
else
	fpm_test
	# its workers too, whatever ended the steps (a master killed at the
	# end would leave them)
	if [ -n "${FPM_MASTER:-}" ]; then
		PIDS+=($(ps -o pid= --ppid "$FPM_MASTER"))
		kill -TERM "$FPM_MASTER" 2>/dev/null
		wait_until 10 gone "$FPM_MASTER"
	fi
fi

done_testing
