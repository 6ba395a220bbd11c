#!/usr/bin/env bash
# The JVM read from outside (jvm/): Debian's openjdk-17, through the
# tables libjvm.so exports for the Serviceability Agent; skipped, saying
# so, without a JDK.  Sections 1-2 run again on each other JDK under
# /usr/lib/jvm (Temurin 25 on these machines: its fields moved and
# renamed, its streams coded otherwise), their checks named with its
# release; sections 3-4 too with JVM_ALL=1.
#   1. the reader: tests/bin/jvmdump reads tests/targets/JvmSplit.java
#      (computing, asleep, blocked on a monitor main holds, main asleep
#      holding it): every thread of the ready file listed by its OS tid;
#      each thread with a last Java frame (asleep, blocked: main, sleeper,
#      blocked) has the Java frames the JDK's own `jcmd PID Thread.print`
#      gives, in order, each class.method with the same line (no line
#      where jcmd says Native Method or Unknown Source); the walk ends at
#      the call stub.
#   2. profiles of the same process by perf (no stop) and by ptrace stops,
#      3 s each, with no flag: each thread's own Java method (computeInner
#      with its inlined caller computeMiddle between computeOuter and it,
#      sleeper over Thread.sleep, blocked, main over Thread.sleep, and the
#      method called by reflection over the VM's frames over Method.invoke:
#      two runs of Java frames, the VM's native frames between) in >= 90%
#      of its samples; the most common stack of each has jcmd's Java
#      frames in jcmd's order with jcmd's lines (the computing thread's
#      innermost line aside: it moves in its loop); >= 95% of samples
#      rooted; the pprof label java_thread the Java thread's whole name
#      (longer than the OS thread's 15 bytes) on every sample; --no-java:
#      no Java method named.
#   3. a Java HTTP server (tests/targets/JvmHttp.java: the JDK's
#      com.sun.net.httpserver, 4 worker threads) under two curl clients (each its requests over one connection): the
#      handler's chain (Handler.handle -> handleRequest -> renderPage or
#      lookup, at their lines) under the executor's methods in >= 2 of its
#      worker threads; >= 95% of samples rooted.
#   4. code that changes under the profiler (tests/targets/JvmChurn.java):
#      a hot loop whose compiled code is deoptimized during the profile
#      (the JVM's -XX:+PrintCompilation says "made not entrant"), and a
#      class loaded, run and unloaded over and over (-Xlog:class+unload):
#      the loop's method in >= 90% of its thread's samples, at most 1% of
#      them [unknown java frame] or cut (1 of 396 was, once: a walk that
#      could not go on ends the stack rather than guess); the reloaded class's method named in
#      >= 30% of the loader's samples, [unknown java frame] in <= 2%.
. "$(dirname "$0")/lib.sh"

JAVA=$(command -v java || :)
if [ -z "$JAVA" ] || ! command -v jcmd >/dev/null; then
	skip "jvm" "no java or jcmd (Debian package openjdk-17-jdk-headless: make deps installs it)"
	done_testing
fi
check "jvm: tests/bin/jvmdump built" "[ -x '$BIN/jvmdump' ]" || done_testing
check "jvm: tests/bin/java/JvmSplit.class built" "[ -f '$BIN/java/JvmSplit.class' ]" || done_testing

tid_of() { awk -v n="$1" '$1 == n { print $2 }' "$ready"; }
# pct_ok PART TOTAL MIN: TOTAL > 0 and PART is at least MIN% of it
pct_ok() { [ "${2:-0}" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * $3)) ]; }

# --- 1 and 2: JvmSplit on the JDK $JAVA (checks named $J) --------------------------
jdk_split() {
ready=$TMP/jvm$K.ready
"$JAVA" -Xss1m -cp "$BIN/java" JvmSplit "$ready" >"$TMP/java$K.out" 2>&1 &
pid=$!
PIDS+=("$pid")
if ! wait_until 30 file_ready "$ready"; then
	DETAIL="$(head -c 300 "$TMP/java$K.out")" check "$J: JvmSplit starts" false
	stop_target "$pid"
	return
fi

# --- 1. the reader against jcmd ------------------------------------------------------
"$BIN/jvmdump" "$pid" >"$TMP/dump$K" 2>&1
diag_file "$TMP/dump$K" 40
"$JCMD" "$pid" Thread.print >"$TMP/jcmd$K" 2>&1
for t in main compute sleeper blocked; do
	tid=$(tid_of "$t")
	n=$(grep -c "^thread $tid " "$TMP/dump$K")
	check "$J: the $t thread (tid $tid) listed" "[ '$n' = 1 ]"
done
# THREAD TID's frames by jvmdump, "CLASS.METHOD:LINE" a line, innermost
# first; line 0 for a native method or an unknown line
ours() {
	T=$1 awk '/^thread / { on = ($2 == ENVIRON["T"]); next }
		on && /^  end / { exit }
		on { split($2, a, ":"); print $1 ":" a[length(a)] }' "$TMP/dump$K"
}
# the same from jcmd: the thread whose nid is TID in hex
theirs() {
	N=$(printf '0x%x' "$1") D=$1 awk '
		/^"/ { on = index($0, " nid=" ENVIRON["N"] " ") > 0 || index($0, " nid=" ENVIRON["D"] " ") > 0; next }
		on && /^$/ { exit }
		on && /^\tat / { s = $2; i = index(s, "("); m = substr(s, 1, i - 1)
			l = substr(s, i + 1); sub(/\)$/, "", l); n = split(l, p, ":")
			line = (n > 1 && p[n] ~ /^[0-9]+$/) ? p[n] : 0
			print m ":" line }' "$TMP/jcmd$K"
}
for t in main sleeper blocked; do
	tid=$(tid_of "$t")
	o=$(ours "$tid" | tr '\n' ' ')
	j=$(theirs "$tid" | tr '\n' ' ')
	DETAIL="ours: $o; jcmd: $j" check "$J: the $t thread's Java frames, methods and lines, as jcmd gives them" \
		"[ -n '$j' ] && [ '$o' = '$j' ]"
	e=$(T=$tid awk '/^thread / { on = ($2 == ENVIRON["T"]); next } on && /^  end / { print $2; exit }' "$TMP/dump$K")
	DETAIL="end $e" check "$J: the $t thread's walk ends at the call stub" "[ '$e' = entry ]"
done

# --- 2. profiles ----------------------------------------------------------------------
# ERE of jcmd's frames of TID, outermost first, each "M (FILE:LINE)" (or "M"
# or "M (FILE)" where jcmd has no line), anything between; NOLINE=1: no
# line for the innermost
jcmd_re() {
	theirs "$1" | awk -v noline="${2:-0}" '
		{ m = $0; l = m; sub(/:[0-9]+$/, "", m); sub(/^.*:/, "", l)
		  gsub(/[][\\.*^$()+?{}|\/]/, "\\\\&", m)
		  f[NR] = (l > 0 && !(noline && NR == 1)) ? m " \\([^;()]*:" l "\\)" : m "( \\([^;()]*\\))?" }
		END { for (i = NR; i >= 1; i--) r = r (i < NR ? ";(.*;)?" : "") f[i]; print r }'
}
declare -A WANT=(
	[compute]='JvmSplit\.computeOuter \(JvmSplit\.java:[0-9]+\);JvmSplit\.computeMiddle \(JvmSplit\.java:[0-9]+\);JvmSplit\.computeInner \(JvmSplit\.java:[0-9]+\)'
	[sleeper]='JvmSplit\.sleeper \(JvmSplit\.java:[0-9]+\);java\.lang\.Thread\.sleep( \(Thread\.java(:[0-9]+)?\))?;'
	[blocked]='JvmSplit\.blocked \(JvmSplit\.java:[0-9]+\);'
	[main]='JvmSplit\.main \(JvmSplit\.java:[0-9]+\);java\.lang\.Thread\.sleep( \(Thread\.java(:[0-9]+)?\))?;'
)
# (Thread.sleep is native on 17, Java with a line on 25.)  Method.invoke
# calls through the VM (JavaCalls::call_helper between two runs of Java
# frames) up to JDK 17; from JDK 18 (JEP 416) through method handles, Java
# all the way.
reflect_want() {
	local vm='(.*;)?'
	[ "${MAJOR:-0}" -ge 18 ] || vm='(.*;)?JavaCalls::call_helper[^;]*;'
	WANT[reflect]='JvmSplit\.reflect \(JvmSplit\.java:[0-9]+\);(.*;)?java\.lang\.reflect\.Method\.invoke \([^;()]*\);'$vm'JvmSplit\.reflectTarget \(JvmSplit\.java:[0-9]+\);java\.lang\.Thread\.sleep( \(Thread\.java(:[0-9]+)?\))?;'
}
profile_checks() {
	local cap=$1 out=$TMP/$1$K.folded t tid tot n top re
	reflect_want
	prof "$TMP/$cap$K" -p "$pid" -d 2 --capture "$cap" --threads --stats -o "$out"
	check_ran "$J ($cap)" "$TMP/$cap$K" "$out"
	diag "$J ($cap): $(grep -o 'java: [^;]*' "$TMP/$cap$K.err" | head -c 700)"
	for t in compute sleeper blocked main reflect; do
		tid=$(tid_of "$t")
		tot=$(folded_count "$out" "^[^;]* \\($tid\\);")
		n=$(folded_count "$out" "^[^;]* \\($tid\\);(.*;)?${WANT[$t]}")
		top=$(grep -F " ($tid);" "$out" | sort -t' ' -k2 -nr | head -n 1)
		DETAIL="$n of $tot; top: $(cut -c1-700 <<<"$top")" \
			check "$J ($cap): the $t thread's Java method under its callers in >= 90% of its samples" \
			pct_ok "$n" "$tot" 90
		noline=0
		[ "$t" = compute ] && noline=1
		re=$(jcmd_re "$tid" $noline)
		DETAIL="want $re; top: $(cut -c1-700 <<<"$top")" \
			check "$J ($cap): the $t thread's most common stack has jcmd's Java frames, in order, with its lines" \
			"[ -n '$re' ] && RE='$re' awk 'BEGIN { re = ENVIRON[\"RE\"] } { if (\$0 ~ re) f = 1 } END { exit !f }' <<<'$top'"
	done
	r=$(grep -o '[0-9.]*% reached their root' "$TMP/$cap$K.err" | grep -o '^[0-9.]*')
	DETAIL="$r%" check "$J ($cap): >= 95% of samples rooted" "[ -n '$r' ] && ge '$r' 95"
}
# The computing thread's loop compiled by C2 first (a level-4 computeOuter
# in the JIT's list): until then it runs C1's code, which calls into the
# VM as it counts, and on a loaded machine C2 can take seconds (once the
# most common stack was Runtime1::counter_overflow under computeOuter).
c2_ready() { "$JCMD" "$pid" Compiler.codelist 2>/dev/null | grep -qE '^[0-9]+ 4 0 JvmSplit\.computeOuter'; }
check "$J: computeOuter compiled by C2 before the profiles (jcmd Compiler.codelist)" wait_until 60 c2_ready
# jcmd again, now that the computing thread has long been in its loop (the
# first look may have caught it on its way there)
"$JCMD" "$pid" Thread.print >"$TMP/jcmd$K" 2>&1
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ] || [ "$(id -u)" = 0 ]; then
	profile_checks perf
else
	skip "$J (perf)" "perf events not permitted here"
fi
profile_checks ptrace
# the label java_thread: the java.lang.Thread's whole name on every sample
# of each thread (the reflect thread's longer than the OS name's 15 bytes)
if have_pprof; then
	prof "$TMP/labels$K" -p "$pid" -d 2 -o "$TMP/labels$K.pprof"
	pprof_raw "$TMP/labels$K.pprof" >"$TMP/labels$K.raw"
	declare -A L=() T=()
	while IFS=$'\t' read -r t v c; do
		L["$t|$v"]=$(( ${L["$t|$v"]:-0} + c )); T["$t"]=$(( ${T["$t"]:-0} + c ))
	done < <(label_stats "$TMP/labels$K.raw" java_thread)
	bad=
	for t in main compute sleeper blocked reflect; do
		tid=$(tid_of "$t")
		name=$t
		[ "$t" = reflect ] && name=reflect-worker-with-a-long-name
		[ "${T[$tid]:-0}" -gt 0 ] && [ "${L["$tid|$name"]:-0}" = "${T[$tid]}" ] ||
			bad="$bad $t:${L["$tid|$name"]:-0}/${T[$tid]:-0}"
	done
	DETAIL="$bad" check "$J: pprof: label java_thread = the Java thread's whole name on every sample of each thread" "[ -z '$bad' ]"
else
	skip "$J: pprof labels" "no go tool pprof ($GO)"
fi
prof "$TMP/nojava$K" -p "$pid" -d 1 --no-java -o "$TMP/nojava$K.folded"
check_ran "$J --no-java" "$TMP/nojava$K" "$TMP/nojava$K.folded"
n=$(folded_count "$TMP/nojava$K.folded" '(^|;)JvmSplit\.')
DETAIL="$n samples" check "$J --no-java: no Java method named" "[ '$n' = 0 ]"

check_unharmed "$J" "$pid" "$(thread_count "$pid")"
stop_target "$pid"
# (after JvmSplit is stopped: its computing thread holds a core)
}

# --- 3. an HTTP server under load ---------------------------------------------------
http_server() {
	local r=$TMP/http$K.ready hp port t seen=0 all=0 h tot jp
	"$JAVA" -cp "$BIN/java" JvmHttp "$r" >"$TMP/http$K.out" 2>&1 &
	jp=$!
	PIDS+=("$jp")
	if ! wait_until 30 file_ready "$r"; then
		DETAIL="$(head -c 300 "$TMP/http$K.out")" check "$J: JvmHttp starts" false
		stop_target "$jp"
		return
	fi
	read -r hp port <"$r"
	PIDS+=("$hp")
	local curls=()
	for k in 1 2; do
		# one curl a loop, its requests over one connection (URL globbing):
		# the load is the server's, not curl's starting
		curl -s -o /dev/null "http://127.0.0.1:$port/r$k/[1-100000]" &
		PIDS+=("$!")
		curls+=("$!")
	done
	prof "$TMP/http$K" -p "$hp" -d 3 --threads --stats -o "$TMP/http$K.folded"
	check_ran "$J: http" "$TMP/http$K" "$TMP/http$K.folded"
	diag "$J: http: $(grep -o 'java: [^;]*' "$TMP/http$K.err" | head -c 700)"
	local want='[^;]*ThreadPoolExecutor\.runWorker \([^;()]*\);(.*;)?JvmHttp\$Handler\.handle \(JvmHttp\.java:[0-9]+\);JvmHttp\$Handler\.handleRequest \(JvmHttp\.java:[0-9]+\);JvmHttp\$Handler\.(renderPage|lookup) \(JvmHttp\.java:[0-9]+\)'
	for t in $(grep -oE '^pool-[0-9]+-thread-[0-9]+[^;]* \([0-9]+\);' "$TMP/http$K.folded" | grep -oE '\([0-9]+\);$' | tr -d '();' | sort -u); do
		tot=$(folded_count "$TMP/http$K.folded" "^[^;]* \\($t\\);")
		h=$(folded_count "$TMP/http$K.folded" "^[^;]* \\($t\\);(.*;)?$want")
		all=$((all + 1))
		[ "$h" -gt 0 ] && seen=$((seen + 1))
		diag "$J: http worker $t: the handler in $h of its $tot samples"
	done
	DETAIL="$seen of $all workers; top: $(sort -t' ' -k2 -nr "$TMP/http$K.folded" | grep -F renderPage | head -n 1 | cut -c1-600)" \
		check "$J: http: the handler's chain under the executor's methods in >= 2 worker threads" \
		"[ $seen -ge 2 ]"
	r=$(grep -o '[0-9.]*% reached their root' "$TMP/http$K.err" | grep -o '^[0-9.]*')
	DETAIL="$r%" check "$J: http: >= 95% of samples rooted" "[ -n '$r' ] && ge '$r' 95"
	check_unharmed "$J: http" "$hp" "$(thread_count "$hp")"
	kill "${curls[@]}" 2>/dev/null
	stop_target "$hp"
}
# --- 4. deoptimization, classes unloaded ----------------------------------------------
churn() {
	local r=$TMP/churn$K.ready cp tid tot n bad
	"$JAVA" -XX:+UseSerialGC -XX:+PrintCompilation -Xlog:class+unload=info:file="$TMP/unload$K.log" \
		-cp "$BIN/java" JvmChurn "$r" >"$TMP/churn$K.out" 2>&1 &
	cp=$!
	PIDS+=("$cp")
	if ! wait_until 30 file_ready "$r"; then
		DETAIL="$(head -c 300 "$TMP/churn$K.out")" check "$J: JvmChurn starts" false
		stop_target "$cp"
		return
	fi
	prof_bg "$TMP/churn$K" -p "$cp" -d 4 --threads --stats -o "$TMP/churn$K.folded"
	# the loop mixes in a new class (and is deoptimized) within 100 ms
	# of this file, while the profiler runs
	: >"$r.go"
	prof_wait 30
	check_ran "$J: churn" "$TMP/churn$K" "$TMP/churn$K.folded"
	diag "$J: churn: $(grep -o 'java: [^;]*' "$TMP/churn$K.err" | head -c 700)"
	deopted() { grep -a 'made not entrant' "$TMP/churn$K.out" | grep -qE 'JvmChurn::(total|deoptLoop)'; }
	wait_until 5 deopted
	n=$(grep -a 'made not entrant' "$TMP/churn$K.out" | grep -cE 'JvmChurn::(total|deoptLoop)')
	[ "$n" -gt 0 ] || diag_file "$TMP/churn$K.out" 20
	DETAIL="$n lines" check "$J: churn: the loop's compiled code was deoptimized (PrintCompilation: made not entrant)" "[ '$n' -gt 0 ]"
	n=$(grep -c 'JvmChurned' "$TMP/unload$K.log" 2>/dev/null)
	DETAIL="${n:-0} lines" check "$J: churn: JvmChurned unloaded (class+unload)" "[ '${n:-0}' -gt 0 ]"
	tid=$(awk '$1 == "deopt" { print $2 }' "$r")
	tot=$(folded_count "$TMP/churn$K.folded" "^[^;]* \\($tid\\);")
	n=$(folded_count "$TMP/churn$K.folded" "^[^;]* \\($tid\\);(.*;)?JvmChurn\\.deoptLoop \\(JvmChurn\\.java:[0-9]+\\)")
	bad=$(folded_count "$TMP/churn$K.folded" "^[^;]* \\($tid\\);(.*)(\\[unknown java frame\\]|\\[truncated\\])")
	DETAIL="$n of $tot; $bad unknown or cut" \
		check "$J: churn: the deoptimized loop's method in >= 90% of its samples, <= 1% unknown or cut" \
		"pct_ok '$n' '$tot' 90 && [ \$(($bad * 100)) -le '$tot' ]"
	tid=$(awk '$1 == "loader" { print $2 }' "$r")
	tot=$(folded_count "$TMP/churn$K.folded" "^[^;]* \\($tid\\);")
	n=$(folded_count "$TMP/churn$K.folded" "^[^;]* \\($tid\\);(.*;)?JvmChurned\\.run \\(JvmChurned\\.java:[0-9]+\\)")
	bad=$(folded_count "$TMP/churn$K.folded" "^[^;]* \\($tid\\);(.*)\\[unknown java frame\\]")
	DETAIL="$n of $tot named; $bad unknown" \
		check "$J: churn: the reloaded class's method named in >= 30% of the loader's samples, unknown in <= 2%" \
		"pct_ok '$n' '$tot' 30 && [ \$(($bad * 100)) -le \$(($tot * 2)) ]"
	check_unharmed "$J: churn" "$cp" "$(thread_count "$cp")"
	stop_target "$cp"
}
# Each JDK: Debian's (java, jcmd on the PATH), then any other the machine
# has under /usr/lib/jvm (a vendor's, another release: Temurin 25 here),
# its checks named with its release.
jdk_all() {
	jdk_split
	# (another JDK: its HTTP server and churn with JVM_ALL=1, which make
	# check leaves out for time; they pass on Temurin 25 by hand)
	if [ "$K" != 0 ] && [ -z "${JVM_ALL:-}" ]; then
		skip "$J: http, churn" "sections 3-4 on Debian's JDK only (JVM_ALL=1 runs them here too)"
		return
	fi
	if command -v curl >/dev/null && [ -f "$BIN/java/JvmHttp.class" ]; then
		http_server
	else
		skip "$J: http" "no curl, or tests/bin/java/JvmHttp.class not built"
	fi
	if [ -f "$BIN/java/JvmChurn.class" ]; then
		churn
	else
		skip "$J: churn" "tests/bin/java/JvmChurn.class not built"
	fi
}
# MAJOR: a JDK's feature release (17, 25)
major() { "$1" -XshowSettings:properties -version 2>&1 | sed -nE 's/^ *java\.specification\.version = ([0-9]+).*/\1/p'; }
K=0 J=jvm JCMD=$(command -v jcmd) MAJOR=$(major "$JAVA")
jdk_all
ran=" $(readlink -f "$JAVA") "
for other in /usr/lib/jvm/*/bin/java; do
	[ -x "$other" ] && [ -x "${other%java}jcmd" ] || continue
	real=$(readlink -f "$other")
	case $ran in *" $real "*) continue ;; esac   # one run a JDK, whatever its names
	ran="$ran$real "
	release=$("$other" -XshowSettings:properties -version 2>&1 | sed -nE 's/^ *java\.version = //p')
	dir=${other%/bin/java}
	K=$((K + 1)) JAVA=$other JCMD=${other%java}jcmd J="jvm ${release:-?} (${dir#/usr/lib/jvm/})"
	MAJOR=$(major "$other")
	jdk_all
done

done_testing
