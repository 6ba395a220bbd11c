#!/usr/bin/env bash
# The documentation's commands work as printed.
#   1. Every command block of README.md and docs/*.md marked runnable (the
#      line `<!-- runnable -->` just before a fenced ```sh block) runs, as
#      printed, in a scratch directory of its own, with bash -e and a
#      timeout, and exits 0.  Each block gets a target of its own,
#      tests/bin/wallclock (three threads: computing, asleep, joining), its
#      PID in $PID; `cprof-attach` (the profiler under test, also as
#      ./cprof-attach), `go` and the repository's tests/ are at hand as on
#      a machine where it was built (go tool pprof saves what it fetches
#      there too, not in ~/pprof).  Blocks run three at a time (most of
#      their time is sampling); whatever a block left running (a profiler
#      in the background) is killed with the block's process group, and its
#      target must be untraced afterwards.  A block that needs what is not
#      installed here (go, curl, tests/bin/goweb) is skipped, named.
#   2. README.md is at most 400 lines, every docs/ page it links to exists,
#      and every relative link of docs/*.md (and of README.md) resolves to
#      a file of the repository.
# Blocks that need what a fresh machine has not (a Parca or Pyroscope
# server, a nginx) are not marked runnable: they are not run.
. "$(dirname "$0")/lib.sh"

cd "$ROOT" || exit 1
DOCS=(README.md docs/*.md)
BLOCK_TIMEOUT=${BLOCK_TIMEOUT:-40}
JOBS=${DOCS_JOBS:-3}

# --- 2. the README's size and the links -------------------------------------
n=$(wc -l <README.md)
DETAIL="$n lines" check "README.md is at most 400 lines" "[ $n -le 400 ]"

# links FILE: the targets of FILE's markdown links and images, one a line
# (the part in parentheses after "]"), outside fenced code blocks.
links() {
	awk '/^```/ { fence = !fence; next } !fence { print }' "$1" |
		grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\(//; s/\)$//'
}
readme_docs=0
bad=
for f in "${DOCS[@]}"; do
	dir=$(dirname "$f")
	while IFS= read -r l; do
		case $l in
		http://* | https://* | mailto:* | '#'*) continue ;;
		esac
		path=${l%%#*}
		[ -n "$path" ] || continue
		[ "$f" = README.md ] && case $path in docs/*.md) readme_docs=$((readme_docs + 1)) ;; esac
		[ -e "$dir/$path" ] || bad="$bad $f:$l"
	done < <(links "$f")
done
DETAIL="README.md links $readme_docs docs/*.md pages" \
	check "README.md links to docs/ pages" "[ $readme_docs -ge 5 ]"
DETAIL="unresolved:$bad" check "every relative link of README.md and docs/*.md resolves to a file" "[ -z '$bad' ]"
unlinked=
for p in docs/*.md; do
	grep -qF "($p" README.md || unlinked="$unlinked $p"
done
DETAIL="not linked from README.md:$unlinked" check "every docs/*.md page is linked from README.md" "[ -z '$unlinked' ]"

# --- 1. the runnable blocks ---------------------------------------------------
# Extract them: BLOCKS/N.sh, and BLOCKS/N.where (FILE:LINE of the fence).
# Plain string comparisons only, for mawk and gawk alike.
BLOCKS=$TMP/blocks
mkdir -p "$BLOCKS"
marked=0 bad_marks=
for f in "${DOCS[@]}"; do
	marked=$((marked + $(grep -c '^<!-- runnable -->$' "$f")))
	awk -v out="$BLOCKS" -v file="$f" -v tag="${f//\//_}" '
		BEGIN { n = 0; state = 0 }
		state == 2 && $0 == "```" { close(body); state = 0; next }
		state == 2 { print > body; next }
		state == 1 {
			if ($0 == "```sh") {
				state = 2
				body = out "/" tag "." NR ".sh"
				printf "" > body
				print file ":" NR > (body ".where")
				close(body ".where")
			} else {
				print file ":" NR > (out "/bad_marks")
				state = 0
			}
			next
		}
		$0 == "<!-- runnable -->" { state = 1 }
	' "$f"
done
[ -f "$BLOCKS/bad_marks" ] && bad_marks=$(tr '\n' ' ' <"$BLOCKS/bad_marks")
DETAIL="a marker not followed by a \`\`\`sh fence at: $bad_marks" \
	check "every runnable marker is followed by a \`\`\`sh block" "[ -z '$bad_marks' ]"
nblocks=$(ls "$BLOCKS"/*.sh 2>/dev/null | wc -l)
DETAIL="$marked markers, $nblocks blocks extracted" \
	check "runnable blocks found ($nblocks)" "[ $nblocks -ge 8 ] && [ $nblocks = $marked ]"

# What a block finds: cprof-attach and go on PATH, tests/ and ./cprof-attach
# in its directory.
mkdir -p "$TMP/path"
ln -s "$CPROF" "$TMP/path/cprof-attach"
GODIR=$(dirname "$GO")

# run_block BLOCK: in $TMP/run.NAME, start a wallclock, run the block, and
# write rc, the target's PID and whether it was untraced at the end.
run_block() {
	local b=$1 name dir tpid tmo rc
	name=$(basename "$b" .sh)
	dir=$TMP/run.$name
	mkdir -p "$dir"
	ln -s "$ROOT/tests" "$dir/tests"
	ln -s "$CPROF" "$dir/cprof-attach"
	# At nice 19: the blocks check that the commands work, not what the
	# computing thread's share is, and its core is the suite's.
	nice -n 19 "$BIN/wallclock" "$dir/.target-ready" </dev/null >/dev/null 2>&1 &
	tpid=$!
	if ! wait_until 10 file_ready "$dir/.target-ready"; then
		echo "no target" >"$dir/.result"
		kill -KILL "$tpid" 2>/dev/null
		return
	fi
	# timeout makes itself the leader of a process group: the block and
	# whatever it started in the background, killed together at the end.
	(cd "$dir" && PID=$tpid PATH=$TMP/path:$GODIR:$PATH PPROF_TMPDIR=$dir \
		exec timeout -k 5 "$BLOCK_TIMEOUT" bash -e "$b" </dev/null >"$dir/.out" 2>&1) &
	tmo=$!
	wait "$tmo"
	rc=$?
	kill -TERM -- "-$tmo" 2>/dev/null
	wait_until 10 untraced "$tpid"
	if untraced "$tpid"; then u=untraced; else u=traced; fi
	kill -KILL "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	echo "$rc $u" >"$dir/.result"
}

need_of() {
	local b=$1
	if grep -q 'go tool' "$b" && ! have_pprof; then echo "go ($GO)"; return; fi
	if grep -q 'curl ' "$b" && ! command -v curl >/dev/null; then echo curl; return; fi
	if grep -q 'tests/bin/goweb' "$b" && [ ! -x "$BIN/goweb" ]; then echo "tests/bin/goweb (make test-bins)"; return; fi
}

started=$(date +%s)
running=0
for b in "$BLOCKS"/*.sh; do
	miss=$(need_of "$b")
	if [ -n "$miss" ]; then
		echo "$miss" >"$b.skip"
		continue
	fi
	if [ $running -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_block "$b" &
	running=$((running + 1))
done
wait
took=$(($(date +%s) - started))

for b in "$BLOCKS"/*.sh; do
	name=$(basename "$b" .sh)
	where=$(cat "$b.where")
	first=$(grep -m1 -v '^#' "$b" | cut -c1-60)
	if [ -f "$b.skip" ]; then
		skip "$where runs as printed ($first...)" "needs $(cat "$b.skip")"
		continue
	fi
	read -r rc u <"$TMP/run.$name/.result"
	DETAIL="exit $rc; output: $(tail -c 600 "$TMP/run.$name/.out" | tr '\n' '|')" \
		check "$where runs as printed, exit 0 ($first...)" "[ '$rc' = 0 ]"
	DETAIL="the target is still $u" \
		check "$where: its target untraced afterwards" "[ '$u' = untraced ]"
done
DETAIL="$took s" check "the blocks ran within 60 s ($took s)" "[ $took -le 60 ]"

done_testing
