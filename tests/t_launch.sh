#!/usr/bin/env bash
# Launch mode: cprof-attach [OPTIONS] -- COMMAND ARGS... runs COMMAND with
# its arguments, profiles it until it exits, writes the profile, and exits
# with the child's exit status.
. "$(dirname "$0")/lib.sh"

# launch LABEL STATUS SECS OUT [OPTIONS...]: run exiter for SECS, exiting STATUS
launch() {
	local label=$1 status=$2 secs=$3 out=$4 ready=$TMP/$1.ready
	shift 4
	prof "$TMP/$label" "$@" -o "$out" -- "$BIN/exiter" "$ready" "$secs" "$status"
	DETAIL="exit $PROF_RC, stderr: $(head -c 300 "$TMP/$label.err")" \
		check "$label: exit status is the child's ($status)" "[ '$PROF_RC' = '$status' ]"
	check "$label: the child ran with its arguments (wrote its ready file)" "[ -s '$ready' ]"
	n=$(summary_field "$TMP/$label.err" samples)
	DETAIL="stderr: $(head -c 300 "$TMP/$label.err")" \
		check "$label: summary line with samples" "[ -n '$n' ] && [ '$n' -gt 0 ]"
	DETAIL="$(grep -c . "$TMP/$label.err") lines" \
		check "$label: nothing on stderr but the summary (2 lines)" only_summary "$TMP/$label.err"
	child=$(cat "$ready" 2>/dev/null)
	[ -n "$child" ] && check "$label: the child is gone" gone "$child"
}

out=$TMP/l3.folded
launch "launch exit 3" 3 1 "$out"
check "launch exit 3: output written" "[ -s '$out' ]"
c=$(folded_count "$out" '^_start;.*;main;exiter_work$')
DETAIL="$c samples; $(cut -c1-150 "$out" | tr '\n' '|')" \
	check "launch exit 3: main thread in exiter_work, rooted at _start" "[ '$c' -gt 0 ]"
c=$(folded_count "$out" 'idle_here')
DETAIL="$c samples" check "launch exit 3: the second thread is sampled too" "[ '$c' -gt 0 ]"
total=$(folded_total "$out")
n=$(summary_field "$TMP/launch exit 3.err" samples)
DETAIL="folded $total, summary $n" check "launch exit 3: counts add up to the summary" "[ '$total' = '$n' ]"
secs=$(summary_field "$TMP/launch exit 3.err" seconds)
DETAIL="${secs:-?} s" check "launch exit 3: profiled for about the child's 1 s" \
	"[ -n '$secs' ] && within '$secs' 1 0.3"

out=$TMP/l0.folded
launch "launch exit 0" 0 0.5 "$out" --threads
check "launch exit 0: output written" "[ -s '$out' ]"
c=$(folded_count "$out" '^idler \([0-9]+\);')
DETAIL="$(cut -d';' -f1 "$out" | sort -u | tr '\n' ',')" check "launch --threads: 'idler (TID)' root" "[ '$c' -gt 0 ]"

if have_pprof; then
	out=$TMP/l.pprof
	launch "launch pprof" 0 0.5 "$out" --hz 200
	raw=$(pprof_raw "$out")
	check "launch pprof: go tool pprof reads it, exiter_work present" \
		"grep -q ' exiter_work ' <<<\"\$raw\""
	period=$(sed -n 's/^Period: //p' <<<"$raw")
	DETAIL="Period: $period" check "launch pprof: --hz 200 gives period 5000000" "[ '$period' = 5000000 ]"
fi

done_testing
