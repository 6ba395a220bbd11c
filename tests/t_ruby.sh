#!/usr/bin/env bash
# Issue 39 item 2, Ruby's methods from outside, on every thread (first
# part: the reader).  Debian's ruby 3.1 (libruby-3.1.so.3.1); skipped,
# saying so, without ruby.
#   1. layout: tests/bin/rbdump reads, with ruby/layout.c's 3.1 table and
#      ruby/vm.c, the VM of tests/targets/rbthreads.rb (compute, sleeper,
#      waiter, main) 20 times while it runs: every thread of the ready
#      file listed by its OS tid; each thread's method at the line the file
#      says (found with grep, not written here) in >= 90% of the reads,
#      under its callers in order (compute: compute_inner under
#      "block in compute_outer" under compute_outer under the thread's
#      block at the Thread.new line); the GVL held by the computing thread
#      in most reads, never by the blocked ones.  Thread#name beside the
#      tid (tests/targets/rbnamed.rb).
# Not yet: the sampler's view (sample/rt_ruby.c), the merge with native
# frames, --no-ruby, and the profile checks that go with them.
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
check_unharmed ruby "$pid" "$(thread_count "$pid")"
stop_target "$pid"

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
