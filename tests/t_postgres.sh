#!/usr/bin/env bash
# A real service of many processes: PostgreSQL under pgbench,
# profiled with --subprocesses from the postmaster.
#   set-up   Debian's postgresql (contrib/install-deps.sh installs it,
#            no service started; skipped when missing); a cluster of our own under
#            $TMP (initdb as the postgres user), its postmaster on
#            127.0.0.1 and a free port, pgbench -i -s 2.
#   control  one backend attached to directly (without --subprocesses) has the
#            frames looked for (so a failure below is the profiler's)
#   run 1    pgbench -c 4 -T 8 connected first (4 backends that exist at
#            the attach), then --subprocesses --processes --duration 4
#            into folded: a root "postgres (PID)" for the postmaster, each
#            backend and the walwriter; the backends' executor frames
#            (standard_ExecutorRun, ExecScan: Debian's postgres is stripped
#            but exports them in .dynsym) and WAL flush frames (XLogFlush,
#            called at commit); the walwriter in WalWriterMain; pgbench ends
#            without a failed transaction; every process left untraced
#            and running.
#   run 2    the profiler first, then pgbench -c 4 -T 4: backends forked
#            during the run, each with its pid label (process=postgres) in
#            pprof (or its root in folded without go), executor frames.
#   end      pg_ctl stop -m fast stops the server (also on failure, at
#            exit).
# Figures (tps, samples per kind of process) are printed as diag lines.
# Plain pass only: about 20 s.
. "$(dirname "$0")/lib.sh"

if [ "${CPROF_SANITIZED:-0}" = 1 ]; then
	skip "postgres under pgbench" "plain pass only (about 20 s)"
	done_testing
fi

# --- set-up: the packages ---------------------------------------------------------
find_pgbin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		[ -x "$d/postgres" ] && [ -x "$d/initdb" ] && [ -x "$d/pgbench" ] &&
			[ -x "$d/pg_ctl" ] && [ -x "$d/pg_isready" ] && { echo "$d"; return 0; }
	done
	return 1
}

PGBIN=$(find_pgbin)
if [ -z "$PGBIN" ]; then
	skip "postgres under pgbench" \
		"no postgres/initdb/pgbench under /usr/lib/postgresql/*/bin: postgresql is not installed (Debian packages postgresql postgresql-contrib: make deps installs them)"
	done_testing
fi
diag "$("$PGBIN/postgres" --version)"

# The server runs as an unprivileged user (postgres refuses root).
PGUSER_OS=postgres
if ! id -u "$PGUSER_OS" >/dev/null 2>&1; then
	PGUSER_OS=cprofpg
	id -u "$PGUSER_OS" >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /usr/sbin/nologin "$PGUSER_OS" 2>/dev/null
fi
if ! id -u "$PGUSER_OS" >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
	skip "postgres under pgbench" "needs root and a user to run the server as (postgres or cprofpg)"
	done_testing
fi
AS_PG=(setpriv --reuid="$PGUSER_OS" --regid="$(id -g "$PGUSER_OS")" --init-groups)
as_pg() { "${AS_PG[@]}" "$@"; }

# --- set-up: a cluster under $TMP ----------------------------------------------------
DATA=$TMP/pgdata
PM=
PORT=

# pg_stop: stop the server (fast shutdown), SIGQUIT then SIGKILL if that
# hangs.  Runs at exit too, before lib.sh's cleanup.
pg_stop() {
	[ -n "$PM" ] && alive "$PM" || return 0
	as_pg timeout 20 "$PGBIN/pg_ctl" stop -D "$DATA" -m fast -w >"$TMP/pg_ctl.log" 2>&1
	alive "$PM" && kill -QUIT "$PM" 2>/dev/null && wait_until 5 gone "$PM"
	alive "$PM" && kill -KILL "$PM" 2>/dev/null
	wait "$PM" 2>/dev/null
	return 0
}
trap 'pg_stop; cleanup' EXIT

mkdir -p "$DATA"
chown "$PGUSER_OS" "$DATA"
chmod 700 "$DATA"
t0=${EPOCHREALTIME/[.,]/}
if ! as_pg "$PGBIN/initdb" -D "$DATA" -A trust -U postgres -N -E UTF8 --locale=C \
	>"$TMP/initdb.log" 2>&1; then
	DETAIL="$(tail -n 3 "$TMP/initdb.log" | tr '\n' '|')" check "set-up: initdb" false
	done_testing
fi

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
_ready_or_dead() {
	"$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" && return 0
	gone "$PM"
}
for _ in 1 2 3; do
	PORT=$((20000 + RANDOM % 20000))
	port_free "$PORT" || continue
	# setpriv execs: $! is the postmaster (not through a function: that
	# would be a subshell of its own).
	"${AS_PG[@]}" "$PGBIN/postgres" -D "$DATA" -k "$DATA" -c listen_addresses=127.0.0.1 -p "$PORT" >"$TMP/postgres.log" 2>&1 &
	PM=$!
	wait_until 30 _ready_or_dead
	alive "$PM" && break
	wait "$PM" 2>/dev/null
	grep -q 'could not bind\|in use' "$TMP/postgres.log" || break
done
DETAIL="$(tail -n 3 "$TMP/postgres.log" | tr '\n' '|')" \
	check "set-up: postmaster $PM ready on 127.0.0.1:$PORT" \
	"alive '$PM' && '$PGBIN/pg_isready' -q -h 127.0.0.1 -p '$PORT'" || done_testing
DETAIL="postmaster.pid says $(head -n 1 "$DATA/postmaster.pid" 2>/dev/null)" \
	check "set-up: the postmaster is the process we started" \
	"[ \"\$(head -n 1 '$DATA/postmaster.pid')\" = '$PM' ]" || done_testing

bench() { "$PGBIN/pgbench" -h 127.0.0.1 -p "$PORT" -U postgres "$@" postgres; }
if ! bench -i -s 2 -q >"$TMP/init.log" 2>&1; then
	DETAIL="$(tail -n 3 "$TMP/init.log" | tr '\n' '|')" check "set-up: pgbench -i -s 2" false
	done_testing
fi
diag "set-up (initdb, start, pgbench -i -s 2): $(((${EPOCHREALTIME/[.,]/} - t0) / 1000)) ms"

# --- helpers ---------------------------------------------------------------------------

# kind PID: what the postmaster's child PID is, from its process title.
kind() {
	local t
	[ "$1" = "$PM" ] && { echo postmaster; return; }
	t=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline")
	case $t in
	"postgres: postgres postgres "*) echo backend ;;
	"postgres: walwriter"*) echo walwriter ;;
	"postgres: checkpointer"*) echo checkpointer ;;
	"postgres: background writer"*) echo bgwriter ;;
	"postgres: autovacuum"*) echo autovacuum ;;
	"postgres: logical replication"*) echo logical ;;
	*) echo other ;;
	esac
}

# backends: the postmaster's children serving pgbench, one PID a line.
backends() {
	local c
	for c in $(cat "/proc/$PM/task/$PM/children" 2>/dev/null); do
		[ "$(kind "$c")" = backend ] && echo "$c"
	done
}
_backends_at_least() { [ "$(backends | grep -c .)" -ge "$1" ]; }

# remember_kinds: note the kind of the postmaster and each of its children
# (KINDS[PID]), for the figures.
declare -A KINDS=()
remember_kinds() {
	local c
	KINDS[$PM]=postmaster
	for c in $(cat "/proc/$PM/task/$PM/children" 2>/dev/null); do
		[ -n "${KINDS[$c]:-}" ] || KINDS[$c]=$(kind "$c")
	done
}

# root_samples FILE: "PID COUNT" for each root "NAME (PID)" of folded FILE.
root_samples() {
	[ -f "$1" ] || return 0
	awk '{ s = $0; sub(/ [0-9]+$/, "", s); sub(/;.*/, "", s)
		if (s ~ /\([0-9]+\)$/) { p = s; sub(/.*\(/, "", p); sub(/\)$/, "", p); n[p] += $NF } }
		END { for (p in n) print p, n[p] }' "$1" | sort -n
}

# frames_under FILE PIDS NAME...: samples whose root is "NAME (PID)" with
# PID in the space-separated PIDS (any root if PIDS is "*"), holding a
# frame named exactly one of NAME...
frames_under() {
	local f=$1
	[ -f "$f" ] || { echo 0; return 0; }
	P=" $2 " N=" ${*:3} " awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		p = f[1]; sub(/.*\(/, "", p); sub(/\)$/, "", p)
		if (ENVIRON["P"] != " * " && index(ENVIRON["P"], " " p " ") == 0) next
		for (i = 2; i <= k; i++) if (index(ENVIRON["N"], " " f[i] " ")) { n += $NF; break } }
		END { print n + 0 }' "$f"
}

# per_kind FILE: "KIND: SAMPLES (PROCESSES)" for the figures.
per_kind() {
	local p n k
	declare -A s=() c=()
	while read -r p n; do
		[ -n "$p" ] || continue
		k=${KINDS[$p]:-other}
		s[$k]=$((${s[$k]:-0} + n))
		c[$k]=$((${c[$k]:-0} + 1))
	done <<<"$(root_samples "$1")"
	for k in "${!s[@]}"; do printf '%s %d (%d), ' "$k" "${s[$k]}" "${c[$k]}"; done
}


# A backend may end with its client: gone is fine for it, stopped or
# traced is not.
untraced_or_gone() { untraced "$1" || gone "$1"; }
not_stopped_or_gone() { not_stopped "$1" || gone "$1"; }

# check_left LABEL PID...: the postmaster and its children other than
# backends (which must all be there) and the backends (which may have
# ended with pgbench) are untraced and not stopped.
check_left() {
	local label=$1 p stay=() any=()
	shift
	for p in $(printf '%s\n' "$@" | sort -nu); do
		case $(kind "$p") in backend | other) any+=("$p") ;; *) stay+=("$p") ;; esac
	done
	check "$label: afterwards the ${#stay[@]} server processes (postmaster, walwriter, ...) untraced" \
		each_ok untraced "${stay[@]}"
	check "$label: afterwards none of them stopped" each_ok not_stopped "${stay[@]}"
	check "$label: afterwards the ${#any[@]} backends untraced (or ended)" \
		each_ok untraced_or_gone "${any[@]}"
	check "$label: afterwards no backend stopped" each_ok not_stopped_or_gone "${any[@]}"
}

# bench_ok LABEL OUT RC: pgbench ended well; prints its tps.
bench_ok() {
	local label=$1 out=$2 rc=$3 tps
	tps=$(sed -nE 's/^tps = ([0-9.]+) .*/\1/p' "$out" | tail -n 1)
	diag "$label: pgbench $(grep -E 'transactions actually processed|failed transactions' "$out" | tr '\n' ' ')tps $tps"
	DETAIL="exit $rc: $(grep -iE 'error|fatal|abort' "$out" | head -n 2 | tr '\n' '|')" \
		check "$label: pgbench finished without errors" \
		"[ '$rc' = 0 ] && grep -q '^number of failed transactions: 0 ' '$out' && [ -n '$tps' ] &&
		 ! grep -qiE 'error|fatal|abort' '$out'"
}

EXECUTOR="standard_ExecutorRun ExecutorRun ExecScan"
WALFLUSH="XLogFlush XLogWrite issue_xlog_fsync XLogBackgroundFlush"

# --- run 1: backends that exist at the attach, folded with --processes --------------------
bench -c 4 -T 8 >"$TMP/bench1.out" 2>&1 &
bp=$!
PIDS+=("$bp")
if wait_until 10 _backends_at_least 4; then
	old=$(backends | tr '\n' ' ')
	remember_kinds
	ww=$(for c in $(cat "/proc/$PM/task/$PM/children"); do [ "$(kind "$c")" = walwriter ] && echo "$c"; done | head -n 1)
	# Control: one backend, attached to directly as always, has the frames
	# looked for below (the names this postgres build exports).
	b1=${old%% *}
	base=$TMP/control
	prof "$base" "$b1" --duration 1.5 -o "$base.folded"
	check_ran "control" "$base" "$base.folded"
	# shellcheck disable=SC2086
	n=$(frames_under "$base.folded" "*" $EXECUTOR)
	# shellcheck disable=SC2086
	m=$(frames_under "$base.folded" "*" $WALFLUSH)
	diag "control: backend $b1 alone: executor $n, WAL flush $m, of $(folded_total "$base.folded") samples"
	DETAIL="executor $n, WAL flush $m: this postgres may name them otherwise" \
		check "control: backend $b1 attached to directly shows executor and WAL flush frames" \
		"[ '$n' -gt 0 ] && [ '$m' -gt 0 ]"
	base=$TMP/run1
	out=$base.folded
	t1=${EPOCHREALTIME/[.,]/}
	prof "$base" "$PM" --subprocesses --processes --duration 4 -o "$out"
	remember_kinds
	after=$(cat "/proc/$PM/task/$PM/children" 2>/dev/null)
	check_ran "run 1" "$base" "$out"
	diag "run 1: $(summary "$base.err")"
	diag "run 1: samples (processes) per kind: $(per_kind "$out")"
	n=$(frames_under "$out" "$PM" PostmasterMain)
	DETAIL="$n samples" check "run 1: the postmaster's root 'postgres ($PM)', in PostmasterMain" "[ '$n' -gt 0 ]"
	missing=
	for b in $old; do
		n=$(frames_under "$out" "$b" PostgresMain)
		[ "$n" -gt 0 ] || missing="$missing $b"
	done
	DETAIL="no samples of backend(s)$missing; roots: $(root_samples "$out" | tr '\n' ',')" \
		check "run 1: each of the 4 backends ($old) sampled, under its own root, in PostgresMain" \
		"[ -z '$missing' ]"
	# shellcheck disable=SC2086
	n=$(frames_under "$out" "$old" $EXECUTOR)
	DETAIL="$n samples" check "run 1: the backends' executor frames ($EXECUTOR)" "[ '$n' -gt 0 ]"
	# shellcheck disable=SC2086
	n=$(frames_under "$out" "*" $WALFLUSH)
	DETAIL="$n samples" check "run 1: WAL flush frames ($WALFLUSH)" "[ '$n' -gt 0 ]"
	# shellcheck disable=SC2086
	diag "run 1: executor $(frames_under "$out" "*" $EXECUTOR), WAL flush $(frames_under "$out" "*" $WALFLUSH), of $(folded_total "$out") samples"
	n=$(frames_under "$out" "$ww" WalWriterMain)
	DETAIL="walwriter ${ww:-not found}: $n samples" \
		check "run 1: the walwriter ($ww) sampled, in WalWriterMain" "[ -n '$ww' ] && [ '$n' -gt 0 ]"
	# Roles by name (issue 28, item 2): the titles PostgreSQL sets.
	cut -d';' -f1 "$out" | sort -u >"$base.roots"
	b1root=$(grep -E "^postgres: postgres postgres .* \\($b1\\)\$" "$base.roots" | head -n 1)
	DETAIL="roots: $(tr '\n' '|' <"$base.roots" | cut -c1-400)" \
		check "run 1: roots by title: 'postgres: walwriter ($ww)', 'postgres: checkpointer (PID)', a backend's 'postgres: postgres postgres ...'" \
		"grep -qx 'postgres: walwriter ($ww)' '$base.roots' && grep -qE '^postgres: checkpointer \\([0-9]+\\)\$' '$base.roots' && [ -n '$b1root' ] && grep -qx 'postgres ($PM)' '$base.roots'"
	n=$(root_samples "$out" | grep -c .)
	DETAIL="$n roots" check "run 1: samples of several processes (>= 7 roots: postmaster, 4 backends, walwriter, ...)" \
		"[ '$n' -ge 7 ]"
	n=$(summary "$base.err" | sed -nE 's/.* ([0-9]+) process(es)?(,.*|$)/\1/p')
	DETAIL="summary: $(summary "$base.err" | cut -c1-160)" \
		check "run 1: the summary counts the processes (>= 7)" "[ -n '$n' ] && [ '$n' -ge 7 ]"
	# shellcheck disable=SC2086
	check_left "run 1" "$PM" $after $old
	wait_until 15 gone "$bp"
	wait "$bp"
	rc=$?
	bench_ok "run 1" "$TMP/bench1.out" "$rc"
	diag "run 1 took $(((${EPOCHREALTIME/[.,]/} - t1) / 1000)) ms"
else
	DETAIL="backends: $(backends | tr '\n' ' '); $(tail -n 3 "$TMP/bench1.out" | tr '\n' '|')" \
		check "run 1: pgbench connects 4 backends" false
	kill -KILL "$bp" 2>/dev/null
fi

# --- run 2: backends forked during the run --------------------------------------------------
base=$TMP/run2
if have_pprof; then
	out=$base.pprof
	prof_bg "$base" "$PM" --subprocesses --duration 3 -o "$out"
else
	out=$base.folded
	prof_bg "$base" "$PM" --subprocesses --processes --duration 3 -o "$out"
fi
if wait_attached "$PM"; then
	before=" $(cat "/proc/$PM/task/$PM/children" 2>/dev/null) "
	bench -c 4 -T 4 >"$TMP/bench2.out" 2>&1 &
	bp=$!
	PIDS+=("$bp")
	wait_until 10 _backends_at_least 4
	new=$(backends | tr '\n' ' ')
	remember_kinds
	prof_wait 20
	check_ran "run 2" "$base" "$out"
	diag "run 2: $(summary "$base.err")"
	fresh=
	for b in $new; do
		case $before in *" $b "*) ;; *) fresh="$fresh $b" ;; esac
	done
	fresh=${fresh# }
	DETAIL="backends: $new; children at the attach:$before" \
		check "run 2: 4 backends forked during the run" "[ \$(wc -w <<<'$fresh') -ge 4 ]"
	if have_pprof; then
		samples=$(pprof_raw "$out" | awk '
			function lab(line, key,   s, i) {
				s = " " line; i = index(s, " " key ":[")
				if (i == 0) return ""
				s = substr(s, i + length(key) + 3)
				return substr(s, 1, index(s, "]") - 1)
			}
			function flush() { if (c != "") print c, (p == "" ? "-" : p), (m != "" ? m : n == "" ? "-" : n) }
			/^Samples:/ { on = 1; next }
			/^(Locations|Mappings)/ { on = 0 }
			on && /^ +[0-9]+ +[0-9]+ +[0-9]+:/ { flush(); c = $1; p = ""; n = ""; m = ""; next }
			on { v = lab($0, "pid"); if (v != "") p = v
				v = lab($0, "process"); if (v != "") n = v
				v = lab($0, "comm"); if (v != "") m = v }
			END { flush() }')
		pids=" $(awk '{ print $2 }' <<<"$samples" | sort -u | tr '\n' ' ') "
		missing=
		for b in $fresh; do case $pids in *" $b "*) ;; *) missing="$missing $b" ;; esac; done
		DETAIL="missing:$missing; pid labels:$pids" \
			check "run 2 pprof: a pid label for each backend forked during the run" \
			"[ -n '$fresh' ] && [ -z '$missing' ]"
		got=$(awk '{ print $3 }' <<<"$samples" | sort -u | tr '\n' ',')
		DETAIL="process labels: $got" \
			check "run 2 pprof: every sample's command is postgres (comm=postgres beside a title, or process=postgres)" "[ '$got' = 'postgres,' ]"
		diag "run 2: samples per pid: $(awk '{ n[$2] += $1 } END { for (p in n) printf "%s:%d ", p, n[p] }' <<<"$samples")"
		locs=$(pprof_raw "$out" | sed -n '/^Locations/,/^Mappings/p')
		n=0
		for f in $EXECUTOR; do grep -qE " $f( |\$)" <<<"$locs" && n=$((n + 1)); done
		DETAIL="$(grep -cE '^ +[0-9]+: ' <<<"$locs") locations" \
			check "run 2 pprof: the executor frames are in it" "[ '$n' -gt 0 ]"
	else
		skip "run 2 pprof: pid labels" "no go tool pprof at $GO: checked the folded roots instead"
		missing=
		for b in $fresh; do
			[ "$(frames_under "$out" "$b" PostgresMain)" -gt 0 ] || missing="$missing $b"
		done
		DETAIL="missing:$missing; roots: $(root_samples "$out" | tr '\n' ',')" \
			check "run 2: each backend forked during the run sampled, under its own root" \
			"[ -n '$fresh' ] && [ -z '$missing' ]"
	fi
	# shellcheck disable=SC2046,SC2086
	check_left "run 2" "$PM" $(cat "/proc/$PM/task/$PM/children" 2>/dev/null) $new
	wait_until 15 gone "$bp"
	wait "$bp"
	rc=$?
	bench_ok "run 2" "$TMP/bench2.out" "$rc"
fi
kill -KILL "$PROF_PID" 2>/dev/null

# --- end: the server stops cleanly ----------------------------------------------------------
pm=$PM
as_pg timeout 20 "$PGBIN/pg_ctl" stop -D "$DATA" -m fast -w >"$TMP/pg_ctl.log" 2>&1
rc=$?
DETAIL="exit $rc: $(tail -n 2 "$TMP/pg_ctl.log" | tr '\n' '|')" \
	check "end: pg_ctl stop -m fast stops the server" "[ $rc = 0 ] && wait_until 5 gone $pm"
wait "$pm" 2>/dev/null
diag "the whole file: $(((${EPOCHREALTIME/[.,]/} - t0) / 1000)) ms from initdb"

done_testing
