#!/usr/bin/env bash
# Ruby's methods and blocks from outside, on every thread, merged with the
# native frames.  Debian's ruby 3.1 (libruby-3.1.so.3.1); skipped, saying
# so, without ruby.
#   1. layout: tests/bin/rbdump reads, with ruby/layout.c's 3.1 table and
#      ruby/vm.c, the VM of tests/targets/rbthreads.rb (compute, sleeper,
#      waiter, holder of a Mutex, locked on it, main) 20 times while it
#      runs: every thread of the ready file listed by its OS tid; each
#      thread's method at the line the file says (found with grep, not
#      written here) in >= 90% of the reads, under its callers in order
#      (compute: compute_inner under "block in compute_outer" under
#      compute_outer under the thread's block at the Thread.new line); the
#      GVL held by the computing thread in most reads, never by the blocked
#      ones.  Thread#name beside the tid (tests/targets/rbnamed.rb).
#   2. profiles of the same process, by perf (no stop) and by ptrace stops:
#      each thread's own method, at its line, in >= 90% of its samples, its
#      callers in order; rb_vm_exec left in at most 5% of the samples (each
#      one is replaced by its Ruby frames); the labels gvl (not held on
#      every blocked thread's samples, held on most of the computing
#      thread's) and ruby_thread (the Thread#name on every sample of each
#      named thread); --no-ruby: native frames only; the target unharmed.
#   3. a Rack app (tests/targets/rbrack.ru) under Debian's puma, 4 threads,
#      two curl clients (each its requests over one connection): the handler's chain (App#call -> handle_request ->
#      render_page or lookup, at their lines) in the samples of at least
#      two of puma's worker threads, under puma's own methods.
. "$(dirname "$0")/lib.sh"

if ! command -v ruby >/dev/null; then
	skip "ruby" "ruby is not installed (Debian package ruby: make deps installs it)"
	done_testing
fi
ver=$(ruby -e 'print RUBY_VERSION[/\A\d+\.\d+/]')
if [ "$ver" != 3.1 ]; then
	skip "ruby" "ruby $ver: only 3.1's layout is known"
	done_testing
fi
if ! command -v nm >/dev/null; then
	skip "ruby layout" "no nm (binutils)"
	done_testing
fi
# make check builds it: missing, the reader is missing
check "ruby: tests/bin/rbdump built" "[ -x '$BIN/rbdump' ]" || done_testing

src=$ROOT/tests/targets/rbthreads.rb
ready=$TMP/rb.ready
ruby "$src" "$ready" &
pid=$!
PIDS+=("$pid")
if ! wait_until 15 file_ready "$ready"; then
	check "ruby: rbthreads.rb starts" false
	done_testing
fi
lib=$(awk '/libruby-3\.1\.so/ { print $6; exit }' "/proc/$pid/maps")
base=$(awk '/libruby-3\.1\.so/ { sub(/-.*/, "", $1); print $1; exit }' "/proc/$pid/maps")
off=$(nm -D "$lib" | awk '$3 == "ruby_current_vm_ptr" { print $1 }')
check "ruby: libruby and its ruby_current_vm_ptr found" "[ -n '$base' ] && [ -n '$off' ]"
vmptr=$(printf %x $((0x$base + 0x$off)))
# the ready file is renamed a line before main joins: wait (bounded) until
# a read shows main in its join, where it stays
join_line=$(grep -nF 'threads.each(&:join)' "$src" | head -n 1 | cut -d: -f1)
main_joined() {
	"$BIN/rbdump" "$pid" "$vmptr" 2>/dev/null | M="$(sed -n 1p "$ready")" L=":$join_line " awk '
		/^thread / { on = ($2 == ENVIRON["M"]); next }
		on && /^  <main> / && index($0, ENVIRON["L"]) { f = 1 } END { exit !f }'
}
wait_until 5 main_joined || diag "ruby: main not seen in its join within 5 s"
for i in $(seq 20); do
	echo "--- $i"
	"$BIN/rbdump" "$pid" "$vmptr" || echo "rbdump failed"
done >"$TMP/dump" 2>&1
diag_file "$TMP/dump" 12

# THREAD TID's frames in each read, one line per read: "LABEL:LINE|..."
chains() {
	T=$1 awk '/^--- / { if (on) print c; on = 0; next }
		/^thread / { if (on) print c; on = ($2 == ENVIRON["T"]); c = ""; next }
		on && !/\[cfunc\]/ { l = $NF; sub(/^flags=.*/, "", l); p = $(NF - 1); sub(/.*:/, "", p)
			lab = $0; sub(/^  /, "", lab); sub(/ [^ ]+ flags=.*$/, "", lab)
			c = c (c == "" ? "" : "|") lab ":" p }
		END { if (on) print c }' "$TMP/dump"
}
line_of() { grep -nF -- "$1" "$src" | head -n 1 | cut -d: -f1; }
reads=20
for t in compute sleeper waiter; do
	tid=$(awk -v n="$t" '$1 == n { print $2 }' "$ready")
	n=$(grep -c "^thread $tid " "$TMP/dump")
	check "ruby: the $t thread (tid $tid) listed in every read" "[ '$n' = $reads ]"
done
tc=$(awk '$1 == "compute" { print $2 }' "$ready")
ts=$(awk '$1 == "sleeper" { print $2 }' "$ready")
tw=$(awk '$1 == "waiter" { print $2 }' "$ready")
tm=$(sed -n 1p "$ready")
lnew=$(line_of 'Thread.new')
want_c="compute_inner:$(line_of 'n.times')|block in compute_outer:$(line_of 'loop { compute_inner')|compute_outer:$(line_of 'loop { compute_inner')|block (2 levels) in <main>:$lnew"
want_s="block in sleeper:$(line_of 'sleep 3600')|sleeper:$(line_of 'sleep 3600')|block (2 levels) in <main>:$lnew"
want_w="waiter:$(line_of 'Queue.new.pop')|block (2 levels) in <main>:$lnew"
want_m="<main>:$(line_of 'threads.each(&:join)')"
# compute: its innermost frame may be compute_inner's block (the
# multiplication) or compute_inner itself; the rest of the chain is fixed
check_chain() {
	local name=$1 tid=$2 want=$3 n
	n=$(chains "$tid" | W="$want" awk '{ s = $0; sub(/^block in compute_inner:[0-9]+\|/, "", s)
		if (s == ENVIRON["W"]) n++ } END { print n + 0 }')
	diag "ruby: $name: $n of $reads reads with the whole chain"
	DETAIL="$n of $reads; want $want; got $(chains "$tid" | sort | uniq -c | sort -rn | head -n 2 | tr '\n' ';')" \
		check "ruby: the $name thread's chain, methods and lines, in >= 90% of reads" \
		"[ \$(($n * 100)) -ge \$(($reads * 90)) ]"
}
check_chain compute "$tc" "$want_c"
check_chain sleeper "$ts" "$want_s"
check_chain waiter "$tw" "$want_w"
check_chain main "$tm" "$want_m"
held() { grep -c "^thread $1 gvl=held" "$TMP/dump"; }
hc=$(held "$tc") hs=$(held "$ts") hw=$(held "$tw")
diag "ruby: gvl=held in $hc (compute), $hs (sleeper), $hw (waiter) of $reads reads"
DETAIL="compute $hc, sleeper $hs, waiter $hw of $reads" \
	check "ruby: the GVL held by the computing thread in most reads, never by a blocked one" \
	"[ \$(($hc * 2)) -gt $reads ] && [ $hs = 0 ] && [ $hw = 0 ]"
# --- 2. profiles ------------------------------------------------------------------
th=$(awk '$1 == "holder" { print $2 }' "$ready")
tl=$(awk '$1 == "locked" { print $2 }' "$ready")
lsync=$(line_of 'M.synchronize { HELD')
llock=$(line_of 'M.synchronize { }')
F=rbthreads.rb
# per thread (the root of --threads: 'NAME "NAME" (TID)'): the frames that
# must follow each other, innermost last, anything between
declare -A WANT=(
	[compute]="compute_outer \\($F:[0-9]+\\);(.*;)?block in compute_outer \\($F:[0-9]+\\);compute_inner \\($F:$(line_of 'n.times')\\)"
	[sleeper]="sleeper \\($F:[0-9]+\\);(.*;)?block in sleeper \\($F:$(line_of 'sleep 3600 }')\\)"
	[waiter]="block \\(2 levels\\) in <main> \\($F:$lnew\\);waiter \\($F:$(line_of 'Queue.new.pop')\\)"
	[holder]="holder \\($F:$lsync\\);(.*;)?block in holder \\($F:$lsync\\)"
	[locked]="block \\(2 levels\\) in <main> \\($F:$lnew\\);locked \\($F:$llock\\)"
	[ruby]="<main> \\($F:$(line_of 'threads.each(&:join)')\\)"
)
profile_checks() {
	local cap=$1 out=$TMP/$1.folded name tot n
	prof "$TMP/$cap" -p "$pid" -d 2 --capture "$cap" --threads --stats -o "$out"
	check_ran "ruby ($cap)" "$TMP/$cap" "$out"
	diag "ruby ($cap): $(grep -o 'ruby: [^;]*' "$TMP/$cap.err" | head -c 600)"
	for name in compute sleeper waiter holder locked ruby; do
		t=$tm
		[ "$name" = ruby ] || t=$(awk -v n="$name" '$1 == n { print $2 }' "$ready")
		tot=$(folded_count "$out" "^[^;]* \\($t\\);")
		n=$(folded_count "$out" "^[^;]* \\($t\\);(.*;)?${WANT[$name]}(;|\$)")
		DETAIL="$n of $tot; want ${WANT[$name]}; top: $(grep -F " ($t);" "$out" | sort -t' ' -k2 -nr | head -n 1 | cut -c1-600)" \
			check "ruby ($cap): the $name thread's method at its line, under its callers, in >= 90% of its samples" \
			pct_ok "$n" "$tot" 90
	done
	tot=$(folded_total "$out")
	n=$(folded_count "$out" '(^|;)rb_vm_exec(;|$)')
	DETAIL="$n of $tot" check "ruby ($cap): rb_vm_exec left in <= 5% of the samples" \
		"[ \$(($n * 100)) -le \$(($tot * 5)) ]"
}
pct_ok() { [ "${2:-0}" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * $3)) ]; }
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ] || [ "$(id -u)" = 0 ]; then
	profile_checks perf
else
	skip "ruby (perf)" "perf events not permitted here"
fi
profile_checks ptrace
if have_pprof; then
	prof "$TMP/labels" -p "$pid" -d 2 -o "$TMP/labels.pprof"
	pprof_raw "$TMP/labels.pprof" >"$TMP/labels.raw"
	declare -A G=() R=()
	while IFS=$'\t' read -r t v n; do
		G["$t|$v"]=$(( ${G["$t|$v"]:-0} + n )); G["$t|"]=$(( ${G["$t|"]:-0} + n ))
	done < <(label_stats "$TMP/labels.raw" gvl)
	while IFS=$'\t' read -r t v n; do
		R["$t|$v"]=$(( ${R["$t|$v"]:-0} + n ))
	done < <(label_stats "$TMP/labels.raw" ruby_thread)
	bad=
	for name in sleeper waiter holder locked; do
		t=$(awk -v n="$name" '$1 == n { print $2 }' "$ready")
		[ "${G["$t|"]:-0}" -gt 0 ] && [ "${G["$t|not held"]:-0}" = "${G["$t|"]}" ] ||
			bad="$bad $name:${G["$t|not held"]:-0}/${G["$t|"]:-0}"
	done
	DETAIL="$bad" check "ruby: pprof: gvl=not held on every sample of each blocked thread" "[ -z '$bad' ]"
	DETAIL="${G["$tc|held"]:-0} of ${G["$tc|"]:-0}" \
		check "ruby: pprof: gvl=held on >= 50% of the computing thread's samples" \
		pct_ok "${G["$tc|held"]:-0}" "${G["$tc|"]:-0}" 50
	bad=
	for name in compute sleeper waiter holder locked; do
		t=$(awk -v n="$name" '$1 == n { print $2 }' "$ready")
		[ "${G["$t|"]:-0}" -gt 0 ] && [ "${R["$t|$name"]:-0}" = "${G["$t|"]}" ] ||
			bad="$bad $name:${R["$t|$name"]:-0}/${G["$t|"]:-0}"
	done
	DETAIL="$bad" check "ruby: pprof: label ruby_thread = the Thread#name on every sample of each thread" "[ -z '$bad' ]"
	DETAIL="${R["$tm|-"]:-0} of ${G["$tm|"]:-0}" \
		check "ruby: pprof: the unnamed main thread has no ruby_thread label" \
		"[ '${G["$tm|"]:-0}' -gt 0 ] && [ '${R["$tm|-"]:-0}' = '${G["$tm|"]:-0}' ]"
else
	skip "ruby: pprof labels" "no go tool pprof ($GO)"
fi
prof "$TMP/noruby" -p "$pid" -d 1 --no-ruby -o "$TMP/noruby.folded"
check_ran "ruby --no-ruby" "$TMP/noruby" "$TMP/noruby.folded"
n=$(folded_count "$TMP/noruby.folded" " \\($F:[0-9]+\\)(;|\$)")
e=$(folded_count "$TMP/noruby.folded" '(^|;)rb_vm_exec(;|$)')
DETAIL="$n with Ruby frames, $e with rb_vm_exec" \
	check "ruby --no-ruby: native frames only (rb_vm_exec, no Ruby frame)" "[ '$n' = 0 ] && [ '$e' -gt 0 ]"
check_unharmed ruby "$pid" "$(thread_count "$pid")"
stop_target "$pid"

# (after rbthreads.rb is stopped: its computing thread holds a core)
# --- 3. a Rack app under puma ----------------------------------------------------
rack_app() {
	local log=$TMP/puma.log port ppid n t tot h seen=0 all=0 ok=0
	puma -b tcp://127.0.0.1:0 -t 4:4 "$ROOT/tests/targets/rbrack.ru" >"$log" 2>&1 &
	ppid=$!
	PIDS+=("$ppid")
	listening() { grep -q 'Listening on http://127.0.0.1:[0-9]' "$log"; }
	if ! wait_until 20 listening; then
		DETAIL="$(head -c 300 "$log")" check "ruby: puma starts" false
		return
	fi
	port=$(grep -o 'Listening on http://127.0.0.1:[0-9]*' "$log" | head -n 1 | grep -o '[0-9]*$')
	local curls=()
	for j in 1 2; do
		# one curl a loop, its requests over one connection (URL globbing)
		curl -s -o /dev/null "http://127.0.0.1:$port/r$j/[1-100000]" &
		PIDS+=("$!")
		curls+=("$!")
	done
	prof "$TMP/rack" -p "$ppid" -d 3 --threads -o "$TMP/rack.folded"
	check_ran "ruby: puma" "$TMP/rack" "$TMP/rack.folded"
	local want="call \\(rbrack\\.ru:$(grep -nF 'handle_request(env' "$ROOT/tests/targets/rbrack.ru" | cut -d: -f1)\\);handle_request \\(rbrack\\.ru:[0-9]+\\);(render_page|lookup) \\(rbrack\\.ru:[0-9]+\\)"
	for t in $(grep -o '^puma srv tp [0-9]* "[^"]*" ([0-9]*)' "$TMP/rack.folded" | grep -o '([0-9]*)$' | tr -d '()' | sort -u); do
		tot=$(folded_count "$TMP/rack.folded" "^[^;]* \\($t\\);")
		h=$(folded_count "$TMP/rack.folded" "^[^;]* \\($t\\);(.*;)?(process_client|handle_request) \\([a-z_]*\\.rb:[0-9]+\\);(.*;)?$want(;|\$)")
		all=$((all + 1))
		[ "$h" -gt 0 ] && seen=$((seen + 1))
		diag "ruby: puma worker $t: the handler in $h of its $tot samples"
	done
	DETAIL="$seen of $all worker threads" \
		check "ruby: puma: the handler's chain (call, handle_request, render_page or lookup, lines) under puma's methods in >= 2 worker threads" \
		"[ $seen -ge 2 ]"
	check_unharmed "ruby: puma" "$ppid" "$(thread_count "$ppid")"
	kill "${curls[@]}" 2>/dev/null
	stop_target "$ppid"
}
if command -v puma >/dev/null && command -v curl >/dev/null; then
	rack_app
else
	skip "ruby: puma" "puma or curl is not installed (Debian packages puma, curl: make deps installs them)"
fi


# Thread#name read beside the tid (rbnamed.rb); the unnamed main has none
ready=$TMP/named.ready
ruby "$ROOT/tests/targets/rbnamed.rb" "$ready" &
pid=$!
PIDS+=("$pid")
if wait_until 15 file_ready "$ready"; then
	base=$(awk '/libruby-3\.1\.so/ { sub(/-.*/, "", $1); print $1; exit }' "/proc/$pid/maps")
	"$BIN/rbdump" "$pid" "$(printf %x $((0x$base + 0x$off)))" >"$TMP/named" 2>&1
	DETAIL="$(grep '^thread' "$TMP/named" | tr '\n' ';')" \
		check "ruby: Thread#name read (worker-xyz), the unnamed main thread without one" \
		"[ \$(grep -c '^thread [0-9]* gvl=[-a-z]* name=worker-xyz\$' '$TMP/named') = 1 ] &&
		[ \$(grep -c '^thread $pid gvl=[-a-z]*\$' '$TMP/named') = 1 ]"
else
	check "ruby: rbnamed.rb starts" false
fi
stop_target "$pid"
done_testing
