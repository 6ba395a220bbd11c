#!/usr/bin/env bash
# --push: each period sent to a Pyroscope-compatible /ingest.
# No Pyroscope server installs on these machines: tests/bin/pyroreceiver
# (Go's net/http) checks each request against Pyroscope's documented HTTP
# API and keeps the profile, which Go's own pprof reader then reads.
#   1. a store that refuses the first request (503): retried, every period
#      arrives, named APP{host,pid,process,tags}, from/until of its period
#      (windows that tile: each from the previous until),
#      a known split (a third each) in each profile;
#   2. a store that is down (nothing listens): the periods' files are still
#      written, one per period, the run ends on time, the summary counts
#      the failures; /metrics shows them;
#   3. bad --push, --tag and --app-name refused before anything attaches
#      (an --app-name outside Pyroscope's [A-Za-z0-9_.-]; a command's name
#      outside it is mapped, and that said);
#   4. secrets: credentials in --push's URL (user:password@, ?token=) are
#      used but never written: not in the summary, the period files, the
#      profile --listen serves nor the pushed bodies; --push-auth-file
#      (basic, or a bearer token) and --push-header-file are sent; bad ones
#      refused before anything attaches;
#   5. stores that misbehave: one that never answers does not keep the
#      run past its 5 s of grace (before: 30 s more); one whose answer never
#      ends is read a few KiB (the push counted as sent); a failing push is
#      said once as it happens.
#   6. a store that refuses a profile (400, as Pyroscope answers an invalid
#      one): that profile is dropped, counted and said once with the
#      store's reason, never sent again, and the later ones arrive (before:
#      retried for ever at the head of the queue, nothing else delivered);
#      a 429 before it is retried; the failure and the recovery each said
#      as they happen.
. "$(dirname "$0")/lib.sh"

if [ ! -x "$BIN/pyroreceiver" ] || ! have_pprof; then
	skip "push: tests/bin/pyroreceiver or go tool pprof missing (Go 1.19 not installed)"
	done_testing
	exit 0
fi

# --- 5. stores that misbehave --------------------------------------------------------
# (a store that never answers waits its 5 s of grace: beside the rest)
bad_stores() {
	PYTHON=$(command -v python3 || true)
	for mode in silent endless; do
		[ -n "$PYTHON" ] || break
		"$PYTHON" "$ROOT/tests/targets/badstore.py" "$TMP/$mode.ready" "$mode" &
		PIDS+=("$!")
	done
	if [ -z "$PYTHON" ]; then
		skip "misbehaving stores" "no python3"
	elif wait_until 10 file_ready "$TMP/silent.ready" && wait_until 10 file_ready "$TMP/endless.ready" &&
		start_target wallclock; then
		pid=$TARGET_PID
		t0=$(date +%s%N)
		prof "$TMP/silent" "$pid" --push "$(cat "$TMP/silent.ready")" --period 0.5s --duration 2
		ms=$((($(date +%s%N) - t0) / 1000000))
		DETAIL="exit $PROF_RC in $ms ms: $(tail -n 2 "$TMP/silent.err" | tr '\n' '|')" \
			check "a store that never answers: the run ends within its 5 s of grace (2 s + 5 s + 2 s)" \
			"[ '$PROF_RC' = 0 ] && [ '$ms' -lt 9000 ]"
		prof "$TMP/endless" "$pid" --push "$(cat "$TMP/endless.ready")" --period 0.5s --duration 2
		wait_until 5 test -s "$TMP/endless.ready.bytes"
		most=$(sort -n "$TMP/endless.ready.bytes" 2>/dev/null | tail -n 1)
		DETAIL="exit $PROF_RC; bytes written before the client left, the most: ${most:-none}; $(grep -E '^cprof-attach: pushed' "$TMP/endless.err")" \
			check "an answer that never ends: read a few KiB (under 16 MiB written into the socket's buffers), the push counted as sent" \
			"[ '$PROF_RC' = 0 ] && [ -n '$most' ] && [ '$most' -lt 16777216 ] && grep -qE '^cprof-attach: pushed [1-9][0-9]* profiles? to .*: 0 sends failed' '$TMP/endless.err'"
		prof "$TMP/once" "$pid" --push http://127.0.0.1:1 --period 0.5s --duration 2
		n=$(grep -c '^cprof-attach: note: a push to http://127.0.0.1:1/ingest failed' "$TMP/once.err")
		DETAIL="$n notes: $(head -n 3 "$TMP/once.err" | tr '\n' '|')" \
			check "a failing push is said once, as it happens" "[ '$n' = 1 ]"
		check_unharmed "misbehaving stores" "$pid" 3
		stop_target "$pid"
	fi
}
beside stores bad_stores


# --- 1. a store that fails once -------------------------------------------------
mkdir -p "$TMP/rx"
"$BIN/pyroreceiver" "$TMP/rx.ready" "$TMP/rx" 1 &
PIDS+=("$!")
if wait_until 10 file_ready "$TMP/rx.ready" && start_target wallclock; then
	pid=$TARGET_PID
	store=$(cat "$TMP/rx.ready")
	prof "$TMP/push" "$pid" --push "$store" --period 1s --duration 3.5 --hz 99 --app-name demo.app \
		--tag env=ci --tag region=eu-1
	DETAIL="exit $PROF_RC: $(tail -n 4 "$TMP/push.err")" check "push: exit 0" "[ '$PROF_RC' = 0 ]"
	n=$(ls "$TMP/rx" | grep -c '\.pprof$')
	DETAIL="$n received; errors: $(head -c 300 "$TMP/rx/errors" 2>/dev/null)" \
		check "push: every period arrives (4: 3 whole and the last part), the refused one retried" \
		"[ '$n' = 4 ] && [ ! -s '$TMP/rx/errors' ]"
	check "push: the summary says so (4 pushed, 1 send failed)" \
		"grep -qE '^cprof-attach: pushed 4 profiles to .*: 1 send failed \\(retried\\), 0 dropped' '$TMP/push.err'"
	check "push: no file written without -o" "[ -z \"\$(ls '$CWD')\" ] && ! ls cprof-$pid.* >/dev/null 2>&1"
	q=$(cat "$TMP/rx/0.query" 2>/dev/null)
	name=$(printf '%b' "$(echo "$q" | sed -nE 's/.*name=([^&]*).*/\1/p' | sed 's/%/\\x/g')")
	host=$(hostname)
	DETAIL="name '$name'" check "push: named APP{host,pid,process,tags}" \
		"[ '$name' = 'demo.app{host=$host,pid=$pid,process=demo.app,env=ci,region=eu-1}' ]"
	check "push: format=pprof, sampleRate=99, spyName" \
		"echo '$q' | grep -q 'format=pprof' && echo '$q' | grep -q 'sampleRate=99' && echo '$q' | grep -q 'spyName=cprof-attach'"
	f1=$(echo "$(cat "$TMP/rx/1.query")" | sed -nE 's/.*from=([0-9]+).*/\1/p')
	u1=$(echo "$(cat "$TMP/rx/1.query")" | sed -nE 's/.*until=([0-9]+).*/\1/p')
	now=$(date +%s)
	# Whole seconds, each boundary rounded once so that the windows tile: a
	# 1-s period is 0 to 2 s wide (a period that ends on time after one
	# that ended late is shorter than 1 s: 7.55-8.35 s is 8-8).
	DETAIL="from $f1 until $u1, now $now" check "push: from/until are the period's (0-2 s apart, this minute)" \
		"[ \$(($u1 - $f1)) -ge 0 ] && [ \$(($u1 - $f1)) -le 2 ] && [ \$(($now - $f1)) -lt 60 ]"
	# the windows tile: each period's from is the one before's until
	tiles=$(for i in 0 1 2 3; do sed -nE 's/.*from=([0-9]+).*until=([0-9]+).*/\1 \2/p' "$TMP/rx/$i.query"; done |
		awk 'NR > 1 && $1 != u { bad = bad " " NR ":" $1 "!=" u } { u = $2 } END { print NR ":" bad }')
	DETAIL="$tiles" check "push: the windows tile (from = the previous until: no overlap, no gap)" "[ '$tiles' = '4:' ]"
	span=$(for i in 0 3; do sed -nE 's/.*from=([0-9]+).*until=([0-9]+).*/\1 \2/p' "$TMP/rx/$i.query"; done |
		awk 'NR == 1 { f = $1 } END { print $2 - f }')
	DETAIL="$span s" check "push: the four windows span the run (3.5 s: 3 to 5 s in whole seconds)" \
		"[ '${span:-0}' -ge 3 ] && [ '${span:-0}' -le 5 ]"
	bad=
	for i in 0 1 2; do
		pprof_top "$TMP/rx/$i.pprof" >"$TMP/top.$i"
		for fn in burn_cpu clock_nanosleep; do
			v=$(awk -v f="$fn" '$NF == f { v = $2; sub(/%$/, "", v); print v; exit }' "$TMP/top.$i")
			within "${v:-0}" 33.3 12 || bad="$bad $i:$fn=$v%"
		done
	done
	DETAIL="$bad" check "push: go tool pprof reads each profile sent: a third each (+-12)" "[ -z '$bad' ]"
	check_unharmed push "$pid" 3
	stop_target "$pid"
	# a command whose name Pyroscope would refuse: mapped, and said
	cp "$BIN/wallclock" "$TMP/my app:v2"
	"$TMP/my app:v2" "$TMP/mapped.ready" &
	PIDS+=("$!")
	mpid=$!
	if wait_until 10 file_ready "$TMP/mapped.ready"; then
		prof "$TMP/mapped" "$mpid" --push "$store" --period 0.5s --duration 0.7
		mq=$(grep -l 'process%3Dmy' "$TMP"/rx/*.query 2>/dev/null | head -n 1)
		mname=$(printf '%b' "$(sed -nE 's/.*name=([^&]*).*/\1/p' "${mq:-/dev/null}" | sed 's/%/\\x/g')")
		DETAIL="exit $PROF_RC; name '$mname'; $(grep note: "$TMP/mapped.err")" \
			check "push: a command named 'my app:v2' is pushed as my_app_v2 (Pyroscope's [A-Za-z0-9_.-]), and that is said" \
			"[ '$PROF_RC' = 0 ] && [ '$mname' = 'my_app_v2{host=$host,pid=$mpid,process=my_app_v2}' ] && grep -qF \"note: pushing as 'my_app_v2': the command's name 'my app:v2'\" '$TMP/mapped.err'"
	fi
	stop_target "$mpid"
fi

# --- 6. a store that refuses a profile ------------------------------------------------
refusing_store() {
	mkdir -p "$TMP/rx6"
	"$BIN/pyroreceiver" "$TMP/rx6.ready" "$TMP/rx6" refuse &
	PIDS+=("$!")
	if wait_until 10 file_ready "$TMP/rx6.ready" && start_target wallclock; then
		pid=$TARGET_PID
		prof "$TMP/ref" "$pid" --push "$(cat "$TMP/rx6.ready")" --period 0.5s --duration 2.2
		n=$(ls "$TMP/rx6" | grep -c '\.pprof$')
		r=$(cat "$TMP/rx6/refused" 2>/dev/null | wc -l)
		sum=$(grep -E '^cprof-attach: pushed' "$TMP/ref.err")
		DETAIL="exit $PROF_RC; $n received, $r refusals; $sum" \
			check "refused: the profile refused is dropped, sent once more after its 429 and no more; the next ones arrive" \
			"[ '$PROF_RC' = 0 ] && [ '$r' = 1 ] && [ '$n' -ge 3 ] && [ ! -s '$TMP/rx6/errors' ]"
		DETAIL="$sum" check "refused: the summary counts it, the 429 as a failure retried" \
			"echo '$sum' | grep -qE '^cprof-attach: pushed $n profiles to .*: 1 send failed \\(retried\\), 0 dropped .*, 1 refused by the store'"
		said=$(grep -c 'refused a profile (HTTP 400: invalid profile: refused by the test store)' "$TMP/ref.err")
		DETAIL="$said lines: $(grep note: "$TMP/ref.err" | tr '\n' '|')" \
			check "refused: said once, with the store's reason (its first line)" "[ '$said' = 1 ]"
		DETAIL="$(grep note: "$TMP/ref.err" | tr '\n' '|')" \
			check "refused: the failure (429) said as it happens, and the recovery" \
			"[ \"\$(grep -c '^cprof-attach: note: a push to .* failed (HTTP 429: slow down)' '$TMP/ref.err')\" = 1 ] && [ \"\$(grep -c '^cprof-attach: note: pushes to .* get through again, after 1 failed send$' '$TMP/ref.err')\" = 1 ]"
		check_unharmed refused "$pid" 3
		stop_target "$pid"
	fi
}
# (beside the rest, after section 1: its shares are checked against
# the wall clock, which a second profiler under the sanitizers bent)
beside refused refusing_store

# --- 2. a store that is down ---------------------------------------------------------
if start_target wallclock; then
	pid=$TARGET_PID
	mkdir -p "$TMP/down"
	t0=$(date +%s%N)
	prof_bg "$TMP/down" "$pid" --push http://127.0.0.1:1 --period 0.5s --duration 3.2 \
		-o "$TMP/down/d-%n.folded" --listen 127.0.0.1:0
	wait_until 10 grep -q '^cprof-attach: serving' "$TMP/down.err"
	url=$(sed -nE 's,^cprof-attach: serving (http://[^ ]+)/debug/pprof/$,\1,p' "$TMP/down.err")
	_failed_metric() { curl -s "$url/metrics" | grep -qE '^cprof_pushes_total\{result="failed"\} [1-9]'; }
	if command -v curl >/dev/null; then
		DETAIL="$(curl -s "$url/metrics" | grep push)" \
			check "store down: /metrics counts the failed sends and the queue" wait_until 5 _failed_metric
	fi
	prof_wait 20
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	DETAIL="exit $PROF_RC: $(tail -n 4 "$TMP/down.err")" check "store down: exit 0" "[ '$PROF_RC' = 0 ]"
	files=$(ls "$TMP/down" | grep -c '\.folded$')
	# 3.2 s of 0.5-s periods: 6 whole and the last part; under load the
	# run's end can fall on the 6th boundary (no part left): 6.
	nper=$(sed -nE 's/^cprof-attach: ([0-9]+) periods? and .*/\1/p' "$TMP/down.err" | head -n 1)
	DETAIL="$files files, the summary says ${nper:-nothing} periods" \
		check "store down: the files of every period are written (6 or 7, as many as the periods)" \
		"[ '$files' -ge 6 ] && [ '$files' -le 7 ] && [ '$files' = '${nper:-x}' ]"
	DETAIL="$ms ms" check "store down: the run ends within 5 s of its duration" "[ '$ms' -lt 8500 ]"
	check "store down: the summary counts the failures and the profiles left" \
		"grep -qE '^cprof-attach: pushed 0 profiles to http://127.0.0.1:1: [1-9][0-9]* sends? failed \\(retried\\), 0 dropped \\(the queue was full\\), [1-9][0-9]* left unsent' '$TMP/down.err'"
	check_unharmed down "$pid" 3

	# --- 3. refused before anything attaches ------------------------------------------
	expect_error "--push ftp://" "http:// or https://" "" "$pid" -- "$CPROF" "$pid" --push ftp://x/
	expect_error "--tag without =" "KEY=VALUE" "" "$pid" -- "$CPROF" "$pid" --push http://127.0.0.1:1 --tag env
	expect_error "--tag with a brace" "KEY=VALUE" "" "$pid" -- "$CPROF" "$pid" --push http://127.0.0.1:1 --tag 'env=a}b'
	expect_error "--app-name with a comma" "app-name" "" "$pid" -- "$CPROF" "$pid" --push http://127.0.0.1:1 --app-name a,b
	expect_error "--app-name Pyroscope refuses" "app-name needs .*letters, digits, _ \. and -.*say .my_app_v2" "" "$pid" -- \
		"$CPROF" "$pid" --push http://127.0.0.1:1 -d 0.3 --app-name 'my app:v2'
	expect_error "--tag without --push" "needs --push" "" "$pid" -- "$CPROF" "$pid" --tag env=x
	expect_error "--push with --dump" "not with --dump" "" "$pid" -- "$CPROF" "$pid" --push http://127.0.0.1:1 --dump
	expect_error "--push ftp:// with a password" "http:// or https://" "" "$pid" -- "$CPROF" "$pid" --push ftp://u:Zq9Sekret@x/
	DETAIL="$(cat "$CWD"/../e.*.err 2>/dev/null | grep -c Zq9Sekret) lines" \
		check "--push refused: the message does not show the password" \
		"! grep -rqs Zq9Sekret '$TMP'/e.*.err"
	printf 'two words\n' >"$TMP/bad.auth"
	printf 'X-Scope-OrgID: t\nnot a header\n' >"$TMP/bad.hdr"
	expect_error "--push-auth-file missing" "push-auth-file .*No such file" "" "$pid" -- "$CPROF" "$pid" \
		--push http://127.0.0.1:1 --push-auth-file "$TMP/none.auth"
	expect_error "--push-auth-file of two words" "push-auth-file .*USER:PASSWORD or one token" "" "$pid" -- \
		"$CPROF" "$pid" --push http://127.0.0.1:1 --push-auth-file "$TMP/bad.auth"
	expect_error "--push-header-file with a bad line" "push-header-file .*line 2 is not a header" "" "$pid" -- \
		"$CPROF" "$pid" --push http://127.0.0.1:1 --push-header-file "$TMP/bad.hdr"
	expect_error "--push-auth-file without --push" "is for --push" "" "$pid" -- "$CPROF" "$pid" \
		--push-auth-file "$TMP/bad.auth"
	stop_target "$pid"
fi

# --- 4. secrets ------------------------------------------------------------------------
# has_secret FILE...: a file (gzipped or not) holds the secret.
SECRET=Zq9Sekret
has_secret() {
	local f
	for f in "$@"; do
		{ gzip -dc "$f" 2>/dev/null || cat "$f"; } | grep -aq "$SECRET" && return 0
	done
	return 1
}
mkdir -p "$TMP/rx4" "$TMP/sec"
"$BIN/pyroreceiver" "$TMP/rx4.ready" "$TMP/rx4" 0 &
PIDS+=("$!")
if wait_until 10 file_ready "$TMP/rx4.ready" && start_target wallclock; then
	pid=$TARGET_PID
	store=$(cat "$TMP/rx4.ready")
	url="http://user:$SECRET@${store#http://}"
	prof_bg "$TMP/sec" "$pid" --push "$url" --period 0.5s --duration 2.2 -o "$TMP/sec/s-%n.pprof" \
		--listen 127.0.0.1:0
	wait_until 10 grep -q '^cprof-attach: serving' "$TMP/sec.err"
	surl=$(sed -nE 's,^cprof-attach: serving (http://[^ ]+)/debug/pprof/$,\1,p' "$TMP/sec.err")
	wait_until 10 test -s "$TMP/rx4/0.pprof"
	curl -s -o "$TMP/sec.served" "$surl/debug/fgprof?last=1" 2>/dev/null
	prof_wait 20
	DETAIL="exit $PROF_RC: $(tail -n 3 "$TMP/sec.err")" check "secrets: exit 0" "[ '$PROF_RC' = 0 ]"
	n=$(ls "$TMP/rx4" | grep -c '\.pprof$')
	DETAIL="$n received; errors: $(head -c 300 "$TMP/rx4/errors" 2>/dev/null)" \
		check "secrets: the periods pushed with the URL's credentials (>= 3)" "[ '$n' -ge 3 ]"
	want="Basic $(printf 'user:%s' "$SECRET" | base64)"
	DETAIL="$(head -n 1 "$TMP/rx4/0.auth")" \
		check "secrets: the store got the URL's user and password (basic)" \
		"[ \"\$(head -n 1 '$TMP/rx4/0.auth')\" = '$want' ]"
	check "secrets: not in the summary" "! has_secret '$TMP/sec.err' '$TMP/sec.out'"
	DETAIL="$(ls "$TMP/sec" | wc -l) files" \
		check "secrets: not in the period files" "[ -n \"\$(ls '$TMP/sec')\" ] && ! has_secret '$TMP'/sec/*"
	DETAIL="$(wc -c <"$TMP/sec.served") bytes" \
		check "secrets: not in the profile --listen serves" "[ -s '$TMP/sec.served' ] && ! has_secret '$TMP/sec.served'"
	check "secrets: not in the pushed bodies" "! has_secret '$TMP'/rx4/*.pprof"
	check "secrets: the command line is still in the profiles, its secrets hidden" \
		"gzip -dc '$TMP/sec/s-1.pprof' | grep -aqF 'user:***@'"

	# the credentials from files
	rm -f "$TMP/rx4"/*
	printf 'tok3n-%s\n' "$SECRET" >"$TMP/sec.auth"
	printf '# a tenant\nX-Scope-OrgID: tenant-7\n' >"$TMP/sec.hdr"
	prof "$TMP/sec2" "$pid" --push "$store" --push-auth-file "$TMP/sec.auth" \
		--push-header-file "$TMP/sec.hdr" --period 0.5s --duration 1.2
	a=$(ls "$TMP/rx4"/*.auth 2>/dev/null | head -n 1)   # (the receiver counts on from the run before)
	DETAIL="exit $PROF_RC; $(cat "${a:-/dev/null}" | tr '\n' '|')" \
		check "secrets: --push-auth-file's token sent as Authorization: Bearer, --push-header-file's header sent" \
		"[ '$PROF_RC' = 0 ] && [ -n '$a' ] && grep -qx 'Bearer tok3n-$SECRET' '$a' && grep -qx 'X-Scope-OrgID: tenant-7' '$a'"
	check "secrets: the token not in the summary nor the bodies" \
		"! has_secret '$TMP/sec2.err' '$TMP'/rx4/*.pprof"
	check_unharmed secrets "$pid" 3
	stop_target "$pid"
fi


done_testing
