#!/usr/bin/env bash
# Following a service that writes no PID file, and one not started yet
# (issue 43, item 8):
#   1. --cgroup PATH: a cgroup made for the test (cgroup2, else the v1
#      name=systemd hierarchy), its process killed and another started in
#      it: the profiler attaches to the first (not to the worker it forked),
#      waits, attaches to the second; the period files hold both
#      processes' samples; the summary says 2 processes were followed;
#   2. --unit NAME: system.slice/NAME.service made under the hierarchy,
#      empty at the start (the profiler waits for it), removed when its
#      process is killed and made again (as systemd does across a
#      restart): both processes followed, both in the files;
#   3. a PID file not written yet: the profiler says once that it waits,
#      attaches when the file names a process; --duration bounds the wait
#      (exit 1, an error line); a directory fails at once;
#   4. errors: no such cgroup or unit, not a cgroup, two sources, a PID
#      beside --unit, no --period: one line, exit 2, nothing traced.
# The cgroups are removed at the end; sections 1 and 2 are skipped (with
# the reason) where no cgroup hierarchy can be written.
. "$(dirname "$0")/lib.sh"

# The hierarchy to make cgroups in: cgroup2 (a v2 or hybrid system), else
# v1's name=systemd (where systemd keeps its units' cgroups).
H=
while read -r _ _ _ _ mnt _ rest; do
	fs=${rest#*- }
	case $fs in
	cgroup2\ *) [ -z "$H" ] && H=$mnt ;;
	esac
done </proc/self/mountinfo
[ -n "$H" ] || H=$(awk '$0 ~ / - cgroup / && $0 ~ /name=systemd/ { print $5; exit }' /proc/self/mountinfo)
MADE=()         # the cgroups made here, removed at the end (deepest first)
cg_cleanup() {
	local i d p
	for ((i = ${#MADE[@]} - 1; i >= 0; i--)); do
		d=${MADE[$i]}
		[ -d "$d" ] || continue
		# only our processes are in our cgroups
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		wait_until 5 test -z "$(cat "$d/cgroup.procs" 2>/dev/null)"
		rmdir "$d" 2>/dev/null
	done
}
trap 'cleanup; cg_cleanup' EXIT
CG_OK=0
if [ -n "$H" ] && mkdir "$H/cprof-test-$$" 2>/dev/null; then
	MADE+=("$H/cprof-test-$$")
	CG_OK=1
fi
CG_WHY="no writable cgroup hierarchy here (cgroup2 or name=systemd: ${H:-none mounted})"

# start_in CGROUP TARGET ARGS...: start tests/bin/TARGET in CGROUP (it
# puts itself there before exec: its readiness is the target's own ready
# file); sets TARGET_PID as start_target does.
start_in() {
	local cg=$1 name=$2
	shift 2
	TARGET_SEQ=$((TARGET_SEQ + 1))
	TARGET_READY=$TMP/$name.$TARGET_SEQ.ready
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$BIN/$name" "$TARGET_READY" "$@" &
	TARGET_PID=$!
	PIDS+=("$TARGET_PID")
	if ! wait_until 10 file_ready "$TARGET_READY"; then
		DETAIL="no $TARGET_READY after 10 s" check "target $name starts in $cg" false
		return 1
	fi
}

# in_files DIR PREFIX PID: some period file DIR/PREFIX-N.folded has samples
# of process PID (--processes: "still (PID)" as the root frame).
in_files() {
	grep -lE "^still \\($3\\);" "$1/$2"-*.folded >/dev/null 2>&1
}
nfiles() { ls "$1" | grep -cE "^$2-[0-9]+\\.folded\$"; }

# follow_restart LABEL DIR PREFIX FIRST SECOND: the checks after a run
# that followed FIRST then SECOND (the profiler ended by SIGINT).
follow_restart() {
	local label=$1 dir=$2 prefix=$3 first=$4 second=$5 ws n
	DETAIL="exit $PROF_RC: $(head -c 600 "$PROF_ERR" | tr '\n' '|')" \
		check "$label: the profiler exits 0" "[ '$PROF_RC' = 0 ]"
	check "$label: attached to the second process" "grep -q 'attached to PID $second, from' '$PROF_ERR'"
	DETAIL="$(ls "$dir" | tr '\n' ' ')" check "$label: the first process's samples are in the period files" \
		in_files "$dir" "$prefix" "$first"
	DETAIL="$(ls "$dir" | tr '\n' ' ')" check "$label: the second process's samples are in the period files" \
		in_files "$dir" "$prefix" "$second"
	check "$label: the summary says 2 processes were followed" "grep -q '2 processes followed through' '$PROF_ERR'"
	n=$(nfiles "$dir" "$prefix")
	ws=$(sed -nE 's/^cprof-attach: [0-9]+ periods? and [0-9]+ dumps? of the history: ([0-9]+) files? written.*/\1/p' "$PROF_ERR")
	DETAIL="$n files, the summary says ${ws:-nothing}" \
		check "$label: the summary counts both processes' files" "[ '$ws' = '$n' ]"
	check "$label: the second process is untraced after" untraced "$second"
}

# _second_then_end LABEL DIR PREFIX FIRST SECOND: the followed service's
# second process (SECOND) is attached to and sampled into the next file,
# then the run is ended and both processes' files checked (follow_restart).
_second_then_end() {
	local n0
	wait_until 10 grep -q "attached to PID $5" "$PROF_ERR"
	n0=$(nfiles "$2" "$3")
	wait_until 10 file_ready "$2/$3-$((n0 + 1)).folded"
	check "$1: the second process is traced" all_traced "$5"
	kill -INT "$PROF_PID"
	prof_wait 20
	follow_restart "$1" "$2" "$3" "$4" "$5"
}


# --- 1. --cgroup ------------------------------------------------------------------
if [ $CG_OK = 1 ]; then
	CG=$H/cprof-test-$$
	mkdir "$TMP/cg"
	# The first process forks a worker (sleep) into the cgroup before it
	# becomes the target: the worker's parent is in the cgroup, so it is
	# not the main process.
	TARGET_SEQ=$((TARGET_SEQ + 1))
	TARGET_READY=$TMP/still.$TARGET_SEQ.ready
	sh -c 'echo $$ >"$1/cgroup.procs" && sleep 600 & echo $! >"$2.worker"; exec "$3" "$2"' \
		sh "$CG" "$TARGET_READY" "$BIN/still" &
	first=$!
	PIDS+=("$first")
	if wait_until 10 file_ready "$TARGET_READY" && wait_until 5 file_ready "$TARGET_READY.worker"; then
		worker=$(cat "$TARGET_READY.worker")
		PIDS+=("$worker")
		prof_bg "$TMP/cgroup" --cgroup "$CG" --period 0.5s --processes -o "$TMP/cg/c-%n.folded"
		if wait_attached "$first"; then
			check "--cgroup: the worker (its parent in the cgroup) is not traced" untraced "$worker"
			wait_until 10 file_ready "$TMP/cg/c-1.folded"
			kill -KILL "$worker" "$first"
			wait_until 10 grep -q 'waiting for cgroup' "$PROF_ERR"
			DETAIL="$(head -c 400 "$PROF_ERR")" check "--cgroup: says it waits for the cgroup's next process" \
				"grep -q 'PID $first exited after [0-9]* samples; waiting for cgroup $CG to name the next' '$PROF_ERR'"
			if start_in "$CG" still; then
				_second_then_end "--cgroup" "$TMP/cg" c "$first" "$TARGET_PID"
				stop_target "$TARGET_PID"
			fi
		fi
	fi
else
	skip "--cgroup across a restart" "$CG_WHY"
fi

# --- 2. --unit --------------------------------------------------------------------
UNIT=cprof-test-$$
if [ $CG_OK = 1 ] && { [ -d "$H/system.slice" ] || { mkdir "$H/system.slice" 2>/dev/null && MADE+=("$H/system.slice"); }; }; then
	UCG=$H/system.slice/$UNIT.service
	mkdir "$UCG" && MADE+=("$UCG")
	mkdir "$TMP/un"
	# Empty at the start: the unit "not started yet".
	prof_bg "$TMP/unit" --unit "$UNIT" --period 0.5s --processes -o "$TMP/un/u-%n.folded"
	wait_until 10 grep -q 'waiting for unit' "$PROF_ERR"
	DETAIL="$(head -c 300 "$PROF_ERR")" check "--unit: an empty cgroup at the start is waited on, said once" \
		"[ \"\$(grep -c 'waiting for unit $UNIT.service to start' '$PROF_ERR')\" = 1 ] && alive '$PROF_PID'"
	if start_in "$UCG" still; then
		first=$TARGET_PID
		if wait_attached "$first"; then
			wait_until 10 file_ready "$TMP/un/u-1.folded"
			kill -KILL "$first"
			wait_until 10 grep -q "PID $first exited" "$PROF_ERR"
			# systemd removes a stopped unit's cgroup and makes it again
			wait_until 5 test -z "$(cat "$UCG/cgroup.procs" 2>/dev/null)"
			rmdir "$UCG"
			mkdir "$UCG"
			if start_in "$UCG" still; then
				_second_then_end "--unit" "$TMP/un" u "$first" "$TARGET_PID"
				check "--unit: names the unit" "grep -q 'followed through unit $UNIT.service' '$PROF_ERR'"
				stop_target "$TARGET_PID"
			fi
		fi
	fi
	kill -KILL "$PROF_PID" 2>/dev/null
else
	skip "--unit across a restart" "$CG_WHY"
fi

# --- 3. a PID file not written yet ------------------------------------------------------
mkdir "$TMP/pf"
prof_bg "$TMP/late" --pid-file "$TMP/late.pid" --period 0.5s --processes -o "$TMP/pf/p-%n.folded"
wait_until 10 grep -q 'waiting for' "$PROF_ERR"
DETAIL="$(head -c 300 "$PROF_ERR")" check "--pid-file not there: says once that it waits, and waits" \
	"[ \"\$(grep -c 'waiting for $TMP/late.pid to be written' '$PROF_ERR')\" = 1 ] && alive '$PROF_PID'"
if start_target still; then
	pid=$TARGET_PID
	echo "$pid" >"$TMP/late.pid.tmp" && mv "$TMP/late.pid.tmp" "$TMP/late.pid"
	if wait_attached "$pid"; then
		check "--pid-file written later: attached to its process" "grep -q 'attached to PID $pid, from $TMP/late.pid' '$PROF_ERR'"
		wait_until 10 file_ready "$TMP/pf/p-1.folded"
		kill -INT "$PROF_PID"
		prof_wait 20
		DETAIL="exit $PROF_RC: $(head -c 400 "$PROF_ERR" | tr '\n' '|')" \
			check "--pid-file written later: exit 0, its samples in the files" \
			"[ '$PROF_RC' = 0 ] && in_files '$TMP/pf' p '$pid'"
		check "--pid-file written later: untraced after" untraced "$pid"
	fi
	stop_target "$pid"
fi
t0=${EPOCHREALTIME/[.,]/}
prof "$TMP/never" --pid-file "$TMP/never.pid" --period 0.5s -d 1 -o "$TMP/pf/n-%n.folded"
ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
DETAIL="exit $PROF_RC after $ms ms: $(tr '\n' '|' <"$TMP/never.err")" \
	check "--pid-file never written: --duration ends the wait (exit 1, a line that says why)" \
	"[ '$PROF_RC' = 1 ] && [ '$ms' -lt 5000 ] && grep -q '^cprof-attach: error: duration reached while waiting for' '$TMP/never.err'"
check "--pid-file never written: no file" "[ -z \"\$(ls '$TMP/pf' | grep '^n-')\" ]"
mkdir "$TMP/dir.pid"
expect_error "--pid-file a directory" "not a regular file" "" "" -- \
	"$CPROF" --pid-file "$TMP/dir.pid" --period 1s -o "$TMP/x-%n.folded"
DETAIL="$ELAPSED_MS ms" check "--pid-file a directory: fails at once" "[ '$ELAPSED_MS' -lt 3000 ]"

# --- 4. errors --------------------------------------------------------------------------
if start_target still; then
	pid=$TARGET_PID
	expect_error "--cgroup not there" "no such cgroup" "" "$pid" -- \
		"$CPROF" --cgroup "$TMP/nocgroup" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--cgroup not a cgroup" "not a cgroup" "" "$pid" -- \
		"$CPROF" --cgroup "$TMP" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--unit unknown" "no such unit|no cgroup hierarchy" "" "$pid" -- \
		"$CPROF" --unit "cprof-none-$$" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--unit not a unit name" "systemd unit.s name" "" "$pid" -- \
		"$CPROF" --unit "a/b" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--unit with --pid-file" "give one" "" "$pid" -- \
		"$CPROF" --unit x --pid-file "$TMP/late.pid" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--cgroup with a PID" "takes the PID.s place" "" "$pid" -- \
		"$CPROF" "$pid" --cgroup "$TMP" --period 1s -o "$TMP/x-%n.folded"
	expect_error "--unit without --period" "needs --period" "" "$pid" -- \
		"$CPROF" --unit x -o "$TMP/x.folded"
	stop_target "$pid"
fi

done_testing
