#!/usr/bin/env bash
# bench/watchdog.sh [RUNS]: the window a killed watchdog leaves (issue 27,
# item 1; docs/safety.md).  For a target of 1 thread (tests/bin/sigcount)
# and of 1,000 (tests/bin/many): the microseconds from the watchdog's
# SIGKILL to every thread of the target untraced, RUNS times each, sorted;
# then RUNS times a SIGKILL of the watchdog and a SIGSTOP of the profiler
# back to back: how many runs held the target (still traced after 2 s,
# until the profiler is continued).  bench/untraced.c kills and polls.
set -u
RUNS=${1:-10}
CPROF=${CPROF:-./cprof-attach}
TMP=$(mktemp -d /tmp/cprof-dog.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o "$TMP/untraced" bench/untraced.c || exit 1

# window TARGET ARGS STOP: RUNS lines, one a run
window() {
	local tgt=$1 args=$2 stop=$3 t p dog
	tests/bin/"$tgt" "$TMP/ready" $args &
	t=$!
	while [ ! -s "$TMP/ready" ]; do sleep 0.05; done
	for _ in $(seq "$RUNS"); do
		"$CPROF" "$t" -F 99 -o "$TMP/out.folded" 2>"$TMP/err" &
		p=$!
		for _ in $(seq 500); do grep -q "TracerPid:.$p\$" "/proc/$t/status" 2>/dev/null && break; sleep 0.01; done
		sleep "0.$((RANDOM % 10))"
		dog=$(pgrep -P "$p" -x cprof-watchdog | head -n 1)
		"$TMP/untraced" "$dog" "$t" ${stop:+$p}
		kill -CONT "$p" 2>/dev/null
		wait "$p"
	done
	kill -KILL "$t"
	wait "$t" 2>/dev/null
	rm -f "$TMP/ready"
}
echo "watchdog.untraced_us.1_thread $(window sigcount '' '' | sort -n | tr '\n' ' ')"
echo "watchdog.untraced_us.1000_threads $(window many 1000 '' | sort -n | tr '\n' ' ')"
echo "watchdog.held_back_to_back $(window sigcount '' stop | grep -c held) of $RUNS"
