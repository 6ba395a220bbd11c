#!/usr/bin/env bash
# Output paths (run/outfile.c): only a
# regular file or a new name is replaced, atomically; devices, FIFOs and
# links to our own descriptors (-, /dev/stdout, /proc/self/fd/1,
# /dev/fd/1) are written through, byte for byte what the file would hold;
# what can be checked is checked before anything starts; a naming that
# fails at the end says where the profile went instead of losing it.
# As root: /dev cases in a private mount namespace (unshare -m, a tmpfs on
# /dev), the unprivileged side as nobody (setpriv).  The real /dev is never
# written by root here.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	skip "output paths" "needs root (mount namespaces, a second user)"
	done_testing
fi
cd "$TMP" || exit 1      # a stray relative output lands here, not in the tree
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
MARK=$TMP/mark          # markers left by launched commands
NT=$TMP/nobody          # nobody's scratch directory
STICKY=$TMP/sticky      # like /tmp
mkdir -p "$MARK" "$NT" "$STICKY"
chmod 777 "$MARK"
chown 65534:65534 "$NT"
chmod 1777 "$STICKY"

# is_folded FILE: non-empty, every line "frame;...;frame COUNT".
is_folded() { [ -s "$1" ] && ! grep -qvE '^[^ ].* [0-9]+$' "$1"; }
# same_total FILE ERRFILE: the folded counts add up to the summary's samples.
same_total() {
	local t n
	t=$(folded_total "$1")
	n=$(summary_field "$2" samples)
	DETAIL="folded total $t, summary $n"
	[ -n "$n" ] && [ "$t" = "$n" ]
}

# refused LABEL ERE OUTPATH [WRAPPER...]: the profiler, asked to launch a
# command that leaves a marker, refuses OUTPATH with one line matching ERE,
# before the command ever runs.
refused() {
	local label=$1 re=$2 out=$3 base=$TMP/r.$RANDOM marker=$MARK/m.$RANDOM rc
	shift 3
	# --format: these paths are refused for what they are, whatever
	# their names say of the format.
	timeout --foreground -k 5 30 "$@" "$CPROF" --duration 0.5 --format folded -o "$out" -- \
		/bin/sh -c "touch '$marker'" >"$base.out" 2>"$base.err"
	rc=$?
	DETAIL="exit $rc" check "$label: refused (non-zero exit)" \
		"[ $rc != 0 ] && [ $rc != 124 ] && [ $rc -lt 128 ]"
	DETAIL="stderr: $(head -c 400 "$base.err" | tr '\n' '|')" \
		check "$label: one line saying why (/$re/)" \
		"[ \$(wc -l <'$base.err') = 1 ] && grep -q '^cprof-attach: error: ' '$base.err' && grep -qiE '$re' '$base.err'"
	check "$label: refused before anything started (the command did not run)" "[ ! -e '$marker' ]"
}

start_target wallclock || done_testing
pid=$TARGET_PID

# A FIFO whose reader never reads (its buffer made one page, so that an
# SVG fills it): the profile is given up after 10 s and saved elsewhere,
# the run ends (before: blocked in write() for as long as the reader
# lived, SIGTERM ignored).  It waits 10 s: run beside the rest, with a
# target of its own.
stuck_fifo() {
	local py reader t0 ms saved
	py=$(command -v python3 || true)
	[ -n "$py" ] || { skip "FIFO whose reader never reads" "no python3"; return; }
	start_target wallclock || return
	mkfifo "$TMP/stuck.fifo"
	"$py" -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
fcntl.fcntl(fd, 1031, 4096)     # F_SETPIPE_SZ
open(sys.argv[2], "w").close()
time.sleep(120)' "$TMP/stuck.fifo" "$TMP/stuck.reading" &
	reader=$!
	PIDS+=("$reader")
	if wait_until 10 test -e "$TMP/stuck.reading"; then
		t0=$(date +%s%N)
		prof "$TMP/stuck" "$TARGET_PID" --duration 0.5 --format svg -o "$TMP/stuck.fifo"
		ms=$((($(date +%s%N) - t0) / 1000000))
		saved=$(sed -nE 's/.*the profile was saved as ([^ ]+) instead.*/\1/p' "$TMP/stuck.err")
		DETAIL="exit $PROF_RC in $ms ms: $(head -c 300 "$TMP/stuck.err")" \
			check "FIFO whose reader never reads: given up after 10 s, the profile saved elsewhere and named" \
			"[ '$PROF_RC' = 1 ] && [ '$ms' -lt 30000 ] && [ -n '$saved' ] && grep -q '<svg' '$saved'"
		rm -f "$saved"
	fi
}
beside stuck stuck_fifo

# --- -o - into a pipe: the same bytes as a file ------------------------------
prof "$TMP/file" "$pid" --duration 0.5 --format folded -o "$TMP/file.folded"
check_ran "to a file" "$TMP/file" "$TMP/file.folded"
(cd "$TMP" && timeout --foreground -k 5 60 "$CPROF" "$pid" --duration 0.5 --format folded -o - \
	2>"$TMP/pipe.err" | cat >"$TMP/pipe.folded")
DETAIL="stderr: $(head -c 300 "$TMP/pipe.err")" \
	check "-o - | cat: summary on stderr says 'wrote to standard output'" \
	"summary '$TMP/pipe.err' | grep -q ', wrote to standard output\$'"
check "-o - | cat: folded lines, like the file" "is_folded '$TMP/file.folded' && is_folded '$TMP/pipe.folded'"
check "-o - | cat: every sample of the summary is in the stream" same_total "$TMP/pipe.folded" "$TMP/pipe.err"
check "-o - | cat: the same frames as the file (burn_cpu, sleep_here)" \
	"grep -q 'burn_cpu' '$TMP/pipe.folded' && grep -q 'sleep_here' '$TMP/pipe.folded' && grep -q 'burn_cpu' '$TMP/file.folded'"
check "-o - | cat: nothing of the summary in the stream" "! grep -q 'cprof-attach' '$TMP/pipe.folded'"
check "-o -: no file named '-'" "[ ! -e '$TMP/-' ]"
(cd "$TMP" && timeout --foreground -k 5 60 "$CPROF" "$pid" --duration 0.5 --format pprof -o - \
	2>"$TMP/pipe-pprof.err" | cat >"$TMP/pipe.pprof")
check "-o - --format pprof | cat: gzip data" is_gzip "$TMP/pipe.pprof"
if have_pprof; then
	pprof_raw "$TMP/pipe.pprof" >"$TMP/pipe.raw"
	DETAIL="$(head -c 300 "$TMP/pipe.raw")" \
		check "-o - --format pprof | cat: go tool pprof -raw reads it" \
		"grep -q '^Samples:' '$TMP/pipe.raw' && grep -q 'burn_cpu' '$TMP/pipe.raw'"
else
	skip "-o - pprof read by go tool pprof" "no $GO"
fi

# --- /dev/null, /dev/stdout, /dev/fd/1 as root, in a /dev of our own ---------
cat >"$TMP/ns.sh" <<'EOF'
# In a private mount namespace: a tmpfs /dev with null, stdout and fd.
mount -t tmpfs none /dev || exit 3
mknod /dev/null c 1 3 || exit 3
chmod 666 /dev/null
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd /dev/fd
cd "$TMP" || exit 3
timeout -k 5 60 "$CPROF" "$pid" --duration 0.5 -o /dev/null 2>ns-null.err
echo "null_rc=$?"
[ -c /dev/null ] && echo "null_char=1"
timeout -k 5 60 "$CPROF" "$pid" --duration 0.5 --format folded -o /dev/stdout 2>ns-stdout.err | cat >ns-stdout.folded
[ -L /dev/stdout ] && [ "$(readlink /dev/stdout)" = /proc/self/fd/1 ] && echo "stdout_link=1"
(echo hello >/dev/stdout) >ns-hello.txt
timeout -k 5 60 "$CPROF" "$pid" --duration 0.5 --format folded -o /dev/fd/1 2>ns-fd.err | cat >ns-fd.folded
[ -L /dev/fd ] && echo "fd_link=1"
ls -A /dev | tr '\n' ' ' >ns-dev.txt
EOF
if unshare -m true 2>/dev/null; then
	TMP=$TMP CPROF=$CPROF pid=$pid timeout -k 5 120 unshare -m bash "$TMP/ns.sh" >"$TMP/ns.res" 2>"$TMP/ns.log"
	res() { grep -qx "$1" "$TMP/ns.res"; }
	DETAIL="$(head -c 300 "$TMP/ns-null.err")" check "root -o /dev/null: exit 0" res null_rc=0
	check "root -o /dev/null: /dev/null is still a character device" res null_char=1
	DETAIL="$(head -c 300 "$TMP/ns-null.err")" check "root -o /dev/null: 'wrote to /dev/null'" \
		"summary '$TMP/ns-null.err' | grep -q ', wrote to /dev/null\$'"
	DETAIL="/dev holds: $(cat "$TMP/ns-dev.txt" 2>/dev/null)" \
		check "root -o /dev/stdout: /dev/stdout is still the link to /proc/self/fd/1" res stdout_link=1
	check "root -o /dev/stdout: the pipe got the profile" \
		"is_folded '$TMP/ns-stdout.folded' && same_total '$TMP/ns-stdout.folded' '$TMP/ns-stdout.err'"
	check "root -o /dev/stdout: later 'echo hello > /dev/stdout' still goes to stdout" \
		"[ \"\$(cat '$TMP/ns-hello.txt' 2>/dev/null)\" = hello ]"
	check "root -o /dev/fd/1: the pipe got the profile, /dev/fd still a link" \
		"res fd_link=1 && is_folded '$TMP/ns-fd.folded' && same_total '$TMP/ns-fd.folded' '$TMP/ns-fd.err'"
	check "root, private /dev: nothing left in /dev but ours" \
		"[ \"\$(cat '$TMP/ns-dev.txt')\" = 'fd null stdout ' ]"
else
	skip "root /dev/null, /dev/stdout, /dev/fd/1" "unshare -m does not work here"
fi

# --- a FIFO ---------------------------------------------------------------------
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.got" &
reader=$!
PIDS+=("$reader")
reader_waits() { [ "$(cat "/proc/$reader/wchan" 2>/dev/null)" = wait_for_partner ]; }
if wait_until 10 reader_waits; then
	prof "$TMP/fifo" "$pid" --duration 0.5 --format folded -o "$TMP/fifo"
	wait_until 10 gone "$reader"
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/fifo.err")" check "FIFO with a reader: exit 0" "[ $PROF_RC = 0 ]"
	check "FIFO with a reader: the reader got the whole profile and its end" \
		"gone $reader && is_folded '$TMP/fifo.got' && same_total '$TMP/fifo.got' '$TMP/fifo.err'"
	check "FIFO with a reader: still a FIFO" "[ -p '$TMP/fifo' ]"
	kill -KILL "$reader" 2>/dev/null
else
	skip "FIFO with a reader" "cat did not wait on the FIFO"
fi
refused "FIFO with no reader" 'FIFO.*no reader' "$TMP/fifo"
check "FIFO with no reader: still a FIFO" "[ -p '$TMP/fifo' ]"


# --- links to a regular file: the link stays, the file it names is replaced ----
echo old >"$TMP/real.folded"
chmod 600 "$TMP/real.folded"
ln -s real.folded "$TMP/link.folded"
prof "$TMP/link" "$pid" --duration 0.5 -o "$TMP/link.folded"
check_ran "symlink to a file" "$TMP/link" "$TMP/real.folded"
check "symlink to a file: still a link to real.folded" \
	"[ -L '$TMP/link.folded' ] && [ \"\$(readlink '$TMP/link.folded')\" = real.folded ]"
check "symlink to a file: the file it names holds the profile, mode 600 kept" \
	"is_folded '$TMP/real.folded' && [ \"\$(stat -c %a '$TMP/real.folded')\" = 600 ]"
ln -s new.folded "$TMP/dangling.folded"
prof "$TMP/dangling" "$pid" --duration 0.5 -o "$TMP/dangling.folded"
check "dangling symlink: stays a link, the file it names is created" \
	"[ $PROF_RC = 0 ] && [ -L '$TMP/dangling.folded' ] && is_folded '$TMP/new.folded'"
# Another user's link in a sticky world-writable directory is not followed
# (the kernel's protected_symlinks rule): root must not be sent to any file.
echo precious >"$TMP/victim"
ln -s "$TMP/victim" "$STICKY/trap.folded"
chown -h 65534:65534 "$STICKY/trap.folded"
refused "another user's symlink in a sticky directory" 'link|sticky' "$STICKY/trap.folded"
check "another user's symlink: the file it names is untouched" \
	"[ \"\$(cat '$TMP/victim')\" = precious ] && [ -L '$STICKY/trap.folded' ]"

# --- a replaced file keeps its mode and, as root, its owner --------------------
echo old >"$TMP/nobodys.folded"
chown 65534:65534 "$TMP/nobodys.folded"
chmod 600 "$TMP/nobodys.folded"
prof "$TMP/owner" "$pid" --duration 0.5 -o "$TMP/nobodys.folded"
check_ran "root replaces nobody's 0600 file" "$TMP/owner" "$TMP/nobodys.folded"
DETAIL="now $(stat -c '%U %a' "$TMP/nobodys.folded")" \
	check "root replaces nobody's 0600 file: still nobody's, still 0600" \
	"[ \"\$(stat -c '%u %a' '$TMP/nobodys.folded')\" = '65534 600' ] && is_folded '$TMP/nobodys.folded'"

# --- checked before anything starts ----------------------------------------------
long=$TMP/$(printf 'n%.0s' $(seq 300)).folded
refused "a 300-character file name" 'long|name' "$long"
refused "a trailing slash, new name (-o newdir/)" "'/'|director" "$TMP/newdir/"
check "a trailing slash: nothing created" "[ ! -e '$TMP/newdir' ]"
mkdir "$TMP/adir"
refused "a trailing slash, a directory (-o adir/)" 'director' "$TMP/adir/"
refused "a directory (-o adir)" 'director' "$TMP/adir"
echo roots >"$STICKY/roots.folded"
refused "nobody, root's file in a sticky directory" 'another user|sticky|permi' \
	"$STICKY/roots.folded" "${NOBODY[@]}"
check "nobody, root's file in a sticky directory: untouched" "[ \"\$(cat '$STICKY/roots.folded')\" = roots ]"

# --- the unprivileged user: streams, and a temporary name squatted ---------------
"${NOBODY[@]}" "$BIN/wallclock" "$NT/w.ready" &
npid=$!
PIDS+=("$npid")
if wait_until 10 file_ready "$NT/w.ready"; then
	for p in /proc/self/fd/1 /dev/fd/1 /dev/stdout; do
		timeout --foreground -k 5 60 "${NOBODY[@]}" "$CPROF" "$npid" --duration 0.5 --format folded \
			-o "$p" 2>"$TMP/n.err" | cat >"$TMP/n.folded"
		DETAIL="stderr: $(head -c 300 "$TMP/n.err")" \
			check "nobody -o $p | cat: the pipe got the profile" \
			"is_folded '$TMP/n.folded' && same_total '$TMP/n.folded' '$TMP/n.err'"
		check "nobody -o $p: 'wrote to standard output'" \
			"summary '$TMP/n.err' | grep -q ', wrote to standard output\$'"
	done
	check "nobody -o /dev/stdout: the system's /dev/stdout still a link" "[ -L /dev/stdout ]"
	# Before: the temporary name was .cprof-attach.PID, which another user
	# could create first ("File exists" after the whole run).  The profiler
	# is exec'd by a shell whose PID is known in advance.
	"${NOBODY[@]}" /bin/sh -c 'echo $$ >"$1.pid"; while [ ! -e "$1.go" ]; do sleep 0.01; done
		exec "$2" "$3" --duration 0.5 -o "$4"' sh "$NT/squat" "$CPROF" "$npid" "$STICKY/squat.folded" \
		>"$TMP/squat.out" 2>"$TMP/squat.err" &
	PROF_PID=$!
	PROF_ERR=$TMP/squat.err
	PIDS+=("$PROF_PID")
	wait_until 10 file_ready "$NT/squat.pid"
	sq=$(cat "$NT/squat.pid")
	echo squatted >"$STICKY/.cprof-attach.$sq"
	touch "$NT/squat.go"
	prof_wait 30
	check_ran "nobody, temporary name squatted by root" "$TMP/squat" "$STICKY/squat.folded"
	check "nobody, temporary name squatted: the squatter's file untouched" \
		"[ \"\$(cat '$STICKY/.cprof-attach.$sq')\" = squatted ]"
	stop_target "$npid"
else
	skip "nobody's streams and squatted name" "nobody's target did not start"
fi

# --- a naming that fails at the end: the profile is saved, and said where --------
# The launched command makes the path a directory while we sample.
base=$TMP/late
timeout --foreground -k 5 60 "$CPROF" --hz 199 -o "$TMP/late.folded" -- \
	/bin/sh -c "mkdir '$TMP/late.folded'; sleep 0.3" >"$base.out" 2>"$base.err"
rc=$?
saved=$(sed -n 's/.*the profile was saved as \(.*\) instead: .*/\1/p' "$base.err")
DETAIL="exit $rc: $(head -c 400 "$base.err")" \
	check "path became a directory: non-zero exit, says where the profile went" \
	"[ $rc != 0 ] && [ -n '$saved' ]"
check "path became a directory: saved next to the path, a profile" \
	"[ \"\$(dirname '$saved')\" = '$TMP' ] && is_folded '$saved'"
# As nobody, the directory turns read-only: saved in $TMPDIR, private.
mkdir "$NT/ro" "$NT/spill"
chown 65534:65534 "$NT/ro" "$NT/spill"
base=$TMP/rolate
TMPDIR=$NT/spill timeout --foreground -k 5 60 "${NOBODY[@]}" "$CPROF" --hz 199 -o "$NT/ro/out.folded" -- \
	/bin/sh -c "chmod 555 '$NT/ro'; sleep 0.3" >"$base.out" 2>"$base.err"
rc=$?
saved=$(sed -n 's/.*the profile was saved as \(.*\) instead: .*/\1/p' "$base.err")
DETAIL="exit $rc: $(head -c 400 "$base.err")" \
	check "directory turned read-only: non-zero exit, says where the profile went" \
	"[ $rc != 0 ] && [ -n '$saved' ]"
check "directory turned read-only: saved in \$TMPDIR, mode 600, a profile" \
	"[ \"\$(dirname '$saved')\" = '$NT/spill' ] && [ \"\$(stat -c %a '$saved')\" = 600 ] && is_folded '$saved'"
check "directory turned read-only: no temporary file left there" "[ -z \"\$(ls -A '$NT/ro')\" ]"
# -o - whose reader is gone before the end: EPIPE, not SIGPIPE, and saved.
mkdir "$TMP/spill"
base=$TMP/epipe
TMPDIR=$TMP/spill timeout --foreground -k 5 60 "$CPROF" --hz 199 --format folded -o - -- \
	/bin/sh -c "while [ ! -e '$TMP/epipe.gone' ]; do sleep 0.01; done; sleep 0.3" 2>"$base.err" |
	{ exec 0<&-; touch "$TMP/epipe.gone"; }
saved=$(sed -n 's/.*the profile was saved as \(.*\) instead: .*/\1/p' "$base.err")
DETAIL="$(head -c 400 "$base.err")" \
	check "-o - with the reader gone: says where the profile went (Broken pipe)" \
	"[ -n '$saved' ] && grep -qi 'broken pipe' '$base.err'"
check "-o - with the reader gone: the whole profile saved in \$TMPDIR" \
	"[ \"\$(dirname '$saved')\" = '$TMP/spill' ] && is_folded '$saved'"

# --- a file system without O_TMPFILE (NFS, vfat...): a shim makes it fail ------
cat >"$TMP/notmpfile.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
static int call(const char *sym, int dfd, const char *p, int fl, mode_t m)
{
	int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, sym);
	if ((fl & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return real(dfd, p, fl, m);
}
#define WRAP(name) int name(int dfd, const char *p, int fl, ...) { \
	va_list ap; va_start(ap, fl); mode_t m = va_arg(ap, mode_t); va_end(ap); \
	return call(#name, dfd, p, fl, m); }
WRAP(openat)
WRAP(openat64)
EOF
if cc -shared -fPIC -o "$TMP/notmpfile.so" "$TMP/notmpfile.c" -ldl 2>"$TMP/shim.log"; then
	mkdir "$TMP/nt"
	# (ASan wants to be first; the shim does not care.)
	ntrun() {
		LD_PRELOAD=$TMP/notmpfile.so ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
			timeout --foreground -k 5 60 "$CPROF" "$@"
	}
	ntrun --hz 199 -o "$TMP/nt/out.folded" -- /bin/sh -c 'sleep 0.3' >"$TMP/nt1.out" 2>"$TMP/nt1.err"
	DETAIL="exit $?: $(head -c 300 "$TMP/nt1.err")" \
		check "no O_TMPFILE: a profile written under its name, no temporary left" \
		"is_folded '$TMP/nt/out.folded' && [ \"\$(ls -A '$TMP/nt')\" = out.folded ]"
	ntrun --hz 199 -o "$TMP/nt/late.folded" -- /bin/sh -c "mkdir '$TMP/nt/late.folded'; sleep 0.3" \
		>"$TMP/nt2.out" 2>"$TMP/nt2.err"
	saved=$(sed -n 's/.*the profile was saved as \(.*\) instead: .*/\1/p' "$TMP/nt2.err")
	DETAIL="$(head -c 300 "$TMP/nt2.err"); left: $(ls -A "$TMP/nt" | tr '\n' ' ')" \
		check "no O_TMPFILE, path became a directory: saved next to it, no temporary left" \
		"[ \"\$(dirname '$saved')\" = '$TMP/nt' ] && is_folded '$saved' && [ \$(ls -A '$TMP/nt' | wc -l) = 3 ]"
else
	skip "a file system without O_TMPFILE" "cannot build the LD_PRELOAD shim: $(head -c 200 "$TMP/shim.log")"
fi

# --- --convert to standard output ------------------------------------------------
timeout --foreground -k 5 60 "$CPROF" --convert "$TMP/file.folded" --format svg -o - \
	2>"$TMP/conv.err" | cat >"$TMP/conv.svg"
DETAIL="$(head -c 300 "$TMP/conv.err")" \
	check "--convert -o - | cat: an SVG on the pipe" "grep -q '<svg' '$TMP/conv.svg' && grep -q 'burn_cpu' '$TMP/conv.svg'"

check "the target was not harmed" untraced "$pid"
done_testing
