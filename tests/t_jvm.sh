#!/usr/bin/env bash
# The JVM read from outside (jvm/): Debian's openjdk-17, through the
# tables libjvm.so exports for the Serviceability Agent; skipped, saying
# so, without a JDK.
#   1. the reader: tests/bin/jvmdump reads tests/targets/JvmSplit.java
#      (computing, asleep, blocked on a monitor main holds, main asleep
#      holding it): every thread of the ready file listed by its OS tid;
#      each thread with a last Java frame (asleep, blocked: main, sleeper,
#      blocked) has the Java frames the JDK's own `jcmd PID Thread.print`
#      gives, in order, each class.method with the same line (no line
#      where jcmd says Native Method or Unknown Source); the walk ends at
#      the call stub.
. "$(dirname "$0")/lib.sh"

JAVA=$(command -v java || :)
if [ -z "$JAVA" ] || ! command -v jcmd >/dev/null; then
	skip "jvm" "no java or jcmd (Debian package openjdk-17-jdk-headless: make deps installs it)"
	done_testing
fi
check "jvm: tests/bin/jvmdump built" "[ -x '$BIN/jvmdump' ]" || done_testing
check "jvm: tests/bin/java/JvmSplit.class built" "[ -f '$BIN/java/JvmSplit.class' ]" || done_testing

ready=$TMP/jvm.ready
"$JAVA" -Xss1m -cp "$BIN/java" JvmSplit "$ready" >"$TMP/java.out" 2>&1 &
pid=$!
PIDS+=("$pid")
if ! wait_until 30 file_ready "$ready"; then
	DETAIL="$(head -c 300 "$TMP/java.out")" check "jvm: JvmSplit starts" false
	done_testing
fi
tid_of() { awk -v n="$1" '$1 == n { print $2 }' "$ready"; }

# --- 1. the reader against jcmd ------------------------------------------------------
"$BIN/jvmdump" "$pid" >"$TMP/dump" 2>&1
diag_file "$TMP/dump" 40
jcmd "$pid" Thread.print >"$TMP/jcmd" 2>&1
for t in main compute sleeper blocked; do
	tid=$(tid_of "$t")
	n=$(grep -c "^thread $tid " "$TMP/dump")
	check "jvm: the $t thread (tid $tid) listed" "[ '$n' = 1 ]"
done
# THREAD TID's frames by jvmdump, "CLASS.METHOD:LINE" a line, innermost
# first; line 0 for a native method or an unknown line
ours() {
	T=$1 awk '/^thread / { on = ($2 == ENVIRON["T"]); next }
		on && /^  end / { exit }
		on { split($2, a, ":"); print $1 ":" a[length(a)] }' "$TMP/dump"
}
# the same from jcmd: the thread whose nid is TID in hex
theirs() {
	N=$(printf '0x%x' "$1") awk '
		/^"/ { on = index($0, " nid=" ENVIRON["N"] " ") > 0; next }
		on && /^$/ { exit }
		on && /^\tat / { s = $2; i = index(s, "("); m = substr(s, 1, i - 1)
			l = substr(s, i + 1); sub(/\)$/, "", l); n = split(l, p, ":")
			line = (n > 1 && p[n] ~ /^[0-9]+$/) ? p[n] : 0
			print m ":" line }' "$TMP/jcmd"
}
for t in main sleeper blocked; do
	tid=$(tid_of "$t")
	o=$(ours "$tid" | tr '\n' ' ')
	j=$(theirs "$tid" | tr '\n' ' ')
	DETAIL="ours: $o; jcmd: $j" check "jvm: the $t thread's Java frames, methods and lines, as jcmd gives them" \
		"[ -n '$j' ] && [ '$o' = '$j' ]"
	e=$(T=$tid awk '/^thread / { on = ($2 == ENVIRON["T"]); next } on && /^  end / { print $2; exit }' "$TMP/dump")
	DETAIL="end $e" check "jvm: the $t thread's walk ends at the call stub" "[ '$e' = entry ]"
done

check_unharmed jvm "$pid" "$(thread_count "$pid")"
stop_target "$pid"
done_testing
