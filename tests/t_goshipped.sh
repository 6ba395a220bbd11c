#!/usr/bin/env bash
# Go as distributions ship it.  Most Go programs a host runs are
# built with cgo and linked by the system linker, then stripped: .gopclntab
# and a small .eh_frame for the C part, no .symtab, no DWARF.  There the C
# start-up code comes before Go's text, so .gopclntab's function offsets do
# not count from .text's start (they count from the runtime's own text
# start, which the table's header keeps); every name and frame size was
# shifted, and most samples were cut short or carried invented frames
# ([unknown]+0xc000...: a heap address taken as a return address).
#   1. gounwind built here with cgo and -linkmode=external, with and without
#      -s -w: the checks the internally linked build passes
#      (tests/t_gounwind.sh) hold, no [unknown] frame, and every frame of
#      the stripped build is named as the unstripped build's .symtab names
#      it (both link Go's code at the same addresses);
#   2. goalloc (GOGC=10: goroutines assist the garbage collector on the
#      system stack): every sample in runtime.gcAssistAlloc1 goes on, past
#      runtime.systemstack, to the goroutine that allocated (main.deep,
#      rooted at runtime.goexit), stripped or not; no sample whose root is
#      runtime.systemstack is counted as reaching its root;
#   3. Debian's own prometheus (scraping itself), restic (backup),
#      rclone (md5sum) and hugo (building a site): >= 95% of samples rooted,
#      no [unknown] frame in the Go binary, a blocked thread's innermost
#      function is the one its system call (/proc/PID/task/TID/syscall)
#      says (futex -> runtime.futex, ...), and rclone's frames are named as
#      its .dynsym names them (>= 95%);
#   4. the same four by goroutine (t_goversions.sh: they have no DWARF; the layout
#      comes from their Go version's table and their runtime's code): the
#      summary counts goroutines, the program's own functions are in the
#      profile, and every goroutine of its own SIGQUIT dump (GOTRACEBACK=all,
#      taken at the end of the run while it is profiled) is in the profile,
#      but those started after it was stopped for the dump (rclone: up to
#      3 that ran; see by_goroutine).
. "$(dirname "$0")/lib.sh"

GO_ROOT='runtime\.(goexit|mstart|rt0_go|sigtramp|mcall|systemstack|morestack|asmcgocall)(\.abi0)?'

# samples FILE ERE: samples whose line matches ERE (grep -E).
samples() { grep -E "$2" "$1" | awk '{ n += $NF } END { print n + 0 }'; }

# names_match BINARY PPROF: "N M": of the N locations of PPROF in BINARY's
# mapping (the first, M=1) that fall in a function of BINARY's symbol
# table (nm; .dynsym with -D in NM_FLAGS), M are named as it names them
# (Go's ABI suffix .abi0 aside).  Addresses and symbols are merged in one
# sorted stream (fixed-width hex sorts as text), so any awk will do.
names_match() {
	local bin=$1 prof=$2
	{
		nm $NM_FLAGS -S --defined-only "$bin" 2>/dev/null |
			awk 'NF == 4 && ($3 == "T" || $3 == "t") { print $1, "S", $4, $2 }'
		"$GO" tool pprof -raw "$prof" 2>/dev/null | sed -n '/^Locations/,/^Mappings/p' |
			awk '$1 ~ /^[0-9]+:$/ && $3 == "M=1" && $4 != "" {
				a = substr($2, 3); while (length(a) < 16) a = "0" a; print a, "L", $4 }'
	} | sort | awk '
		function hex(s,  i, v) { v = 0; s = tolower(s)
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		$2 == "S" { lo = hex($1); hi = lo + hex($4); name = $3; sub(/\.abi0$/, "", name); next }
		$2 == "L" { a = hex($1); if (a >= lo && a < hi) { n++; if ($3 == name) ok++ } }
		END { print n + 0, ok + 0 }'
}

# no_unknown FILE: no frame "[unknown]" (an address outside every module).
no_unknown() { ! grep -qF '[unknown]' "$1"; }

# syscall_leaves FILE: with --threads --syscalls, every stack that ends in
# a futex, epoll or sleep system call has Go's wrapper of that call as its
# innermost function.  Prints "checked right".
syscall_leaves() {
	awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = split(line, f, ";")
		if (n < 2) next
		want = ""
		if (f[n] == "[syscall futex]") want = "runtime.futex"
		else if (f[n] ~ /^\[syscall epoll_(p)?wait\]$/) want = "runtime.epollwait"
		else if (f[n] == "[syscall nanosleep]") want = "runtime.usleep"
		if (want == "") next
		c++; if (f[n - 1] == want || f[n - 1] == want ".abi0") r++ }
		END { print c + 0, r + 0 }' "$1"
}

# restic's repository, made while sections 1 and 2 run: its key derivation
# (scrypt) takes about 3 s of one CPU.
if command -v restic >/dev/null; then
	export RESTIC_PASSWORD=cprof-test
	restic init --repo "$TMP/repo" -q >/dev/null 2>&1 &
	restic_init=$!
	PIDS+=("$restic_init")
fi

# started PID BINARY: PID (started with &) runs BINARY now, not the shell
# that forked it.
started() { [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$2")" ]; }

have_go=1
for b in gounwind-ext gounwind-ext-sw goalloc goalloc-sw; do
	[ -x "$BIN/$b" ] || have_go=0
done
if [ $have_go = 0 ] && [ -x "$GO" ] && command -v gcc >/dev/null; then
	make -C "$ROOT" --no-print-directory -s GO_BIN="$GO" tests/bin/gounwind-ext \
		tests/bin/gounwind-ext-sw tests/bin/goalloc tests/bin/goalloc-sw >/dev/null 2>&1 && have_go=1
fi

# --- 1. externally linked, with and without symbols ---------------------------
# busy LABEL TARGET: what tests/t_gounwind.sh asks of the internal build.
busy() {
	local label=$1 target=$2 pid out total rooted at_root work chain
	start_target "$target" || return
	pid=$TARGET_PID
	out=$TMP/$label.folded
	prof "$TMP/$label" "$pid" --duration 2 --threads --os-threads -o "$out"
	check_ran "$label" "$TMP/$label" "$out"
	prof "$TMP/$label-p" "$pid" --duration 1 --os-threads -o "$TMP/$label.pprof"
	total=$(folded_total "$out")
	rooted=$(summary_field "$TMP/$label.err" rooted)
	DETAIL="$(summary "$TMP/$label.err")" check "$label: >= 95% of samples reached their root" \
		"ge '${rooted:-0}' 95"
	at_root=$(samples "$out" "^[^;]+;$GO_ROOT[; ]")
	DETAIL="$at_root of $total; $(grep -vE "^[^;]+;$GO_ROOT[; ]" "$out" | head -3 | cut -c1-200 | tr '\n' '|')" \
		check "$label: >= 95% of samples start at one of Go's roots" \
		"[ \$((at_root * 100)) -ge \$((total * 95)) ]"
	work=$(samples "$out" ';main\.work[; ]')
	chain=$(samples "$out" '^[^;]+;runtime\.goexit(\.abi0)?;main\.work;main\.hashLoop;crypto/sha256\.')
	DETAIL="$chain of $work; $(grep -F ';main.work' "$out" | head -3 | cut -c1-250 | tr '\n' '|')" \
		check "$label: the computing goroutine: runtime.goexit;main.work;main.hashLoop;crypto/sha256... (>= 95%)" \
		"[ '$work' -gt 0 ] && [ \$((chain * 100)) -ge \$((work * 95)) ]"
	DETAIL="$(grep -F '[unknown]' "$out" | head -3 | cut -c1-200 | tr '\n' '|')" \
		check "$label: no [unknown] frame" no_unknown "$out"
	check "$label: target alive" alive "$pid"
	check "$label: every thread untraced" untraced "$pid"
	stop_target "$pid"
}

if [ $have_go = 0 ]; then
	skip "externally linked Go" "no Go toolchain at $GO (golang-1.19-go) or no gcc to build the cgo targets"
else
	check "ext: the cgo build starts .text with C code (runtime.text is past .text's start)" \
		"[ \"\$(readelf -SW '$BIN/gounwind-ext' | awk '\$2 == \".text\" { print \$4 }')\" != \
		   \"\$(nm '$BIN/gounwind-ext' | awk '\$3 == \"runtime.text\" { print \$1 }')\" ]"
	check "ext-sw: stripped (no .symtab, no DWARF) and with .eh_frame_hdr" \
		"! readelf -SW '$BIN/gounwind-ext-sw' | grep -qE '\\.symtab|\\.debug_' &&
		 readelf -SW '$BIN/gounwind-ext-sw' | grep -qF .eh_frame_hdr"
	busy ext gounwind-ext
	busy ext-sw gounwind-ext-sw
	if have_pprof && [ -s "$TMP/ext-sw.pprof" ]; then
		read -r n ok <<<"$(NM_FLAGS= names_match "$BIN/gounwind-ext" "$TMP/ext-sw.pprof")"
		DETAIL="$ok of $n" check "ext-sw: every frame named as the unstripped build's .symtab names it" \
			"[ '$n' -ge 10 ] && [ '$ok' = '$n' ]"
	fi

	# --- 2. past the system stack --------------------------------------------
	assisted=0
	for target in goalloc goalloc-sw; do
		for view in goroutines os-threads; do
			label=$target-$view
			GOGC=10 start_target "$target" || continue
			pid=$TARGET_PID
			out=$TMP/$label.folded
			args=(--duration 2)
			[ $view = os-threads ] && args+=(--os-threads)
			prof "$TMP/$label" "$pid" "${args[@]}" -o "$out"
			check_ran "$label" "$TMP/$label" "$out"
			assist=$(samples "$out" ';runtime\.gcAssistAlloc1[; ]')
			if [ "${assist:-0}" -lt 20 ] && [ $view = os-threads ]; then
				# A loaded machine can leave the collector ahead of the
				# allocating goroutine for 2 s: no assist to look at, or
				# too few for a share (one sample that lost its
				# goroutine, a race, is 17% of 6).
				diag "$label: $assist GC assist samples in 2 s: once more, 5 s"
				prof "$TMP/$label" "$pid" --duration 5 "${args[@]:2}" -o "$out"
				assist=$(samples "$out" ';runtime\.gcAssistAlloc1[; ]')
			fi
			user=$(samples "$out" '^runtime\.goexit;.*main\.deep;.*;runtime\.gcAssistAlloc1[; ]')
			if [ "${assist:-0}" -gt 0 ] && [ "$assist" -lt 20 ]; then
				# Too few for a share: one sample that lost its
				# goroutine (a race) is 25% of 4.
				skip "$label: GC assists go on past runtime.systemstack" "$assist GC assist samples: too few to judge a share (20 needed)"
			elif [ "${assist:-0}" = 0 ]; then
				# Nothing to look at: the collector kept ahead for 7 s
				# (a busy machine); or, by goroutine, an assisting
				# goroutine is waiting ("GC assist marking") and counted
				# from its saved context, and its thread's samples in
				# gcAssistAlloc1 are few (0 to 2 in 2 s, DWARF or not: not
				# run again).  At least one of the four runs must see
				# assists: checked after the loop.
				skip "$label: GC assists go on past runtime.systemstack" "no GC assist sampled in 2 s$([ $view = os-threads ] && echo ' + 5 s') (the collector kept ahead, or the assisting goroutine was counted waiting)"
			else
				assisted=$((assisted + 1))
				DETAIL="$user of $assist; $(grep -E ';runtime\.gcAssistAlloc1[; ]' "$out" | grep -v main.deep | head -2 | cut -c1-250 | tr '\n' '|')" \
					check "$label: GC assists go on past runtime.systemstack to the goroutine that allocated (>= 90%)" \
					"[ \$((user * 100)) -ge \$((assist * 90)) ]"
			fi
			at_sys=$(samples "$out" '^runtime\.systemstack(\.abi0)?;')
			partial=$(summary_field "$TMP/$label.err" partial)
			DETAIL="$at_sys samples start at runtime.systemstack; $(summary "$TMP/$label.err" | tail -1)" \
				check "$label: a stack that starts at runtime.systemstack is not counted as rooted" \
				"[ '$at_sys' -le '${partial:-0}' ]"
			stop_target "$pid"
		done
	done
	DETAIL="$assisted of 4" check "GC assists sampled in at least one of the four goalloc runs" "[ $assisted -gt 0 ]"
fi

# --- 3. Debian's own Go programs -------------------------------------------------

# shipped LABEL BINARY OUT ERR: the checks every shipped program passes.
shipped() {
	local label=$1 bin=$2 out=$3 base=$4 rooted
	check_ran "$label" "$base" "$out"
	rooted=$(summary_field "$base.err" rooted)
	DETAIL="$(summary "$base.err")" check "$label: >= 95% of samples reached their root" \
		"ge '${rooted:-0}' 95"
	DETAIL="$(grep -F '[unknown]' "$out" | head -3 | cut -c1-200 | tr '\n' '|')" \
		check "$label: no [unknown] frame" no_unknown "$out"
	check "$label: stripped as shipped (no .symtab), and linked by the system linker (.eh_frame_hdr)" \
		"! readelf -SW '$bin' | grep -qF .symtab && readelf -SW '$bin' | grep -qF .eh_frame_hdr"
}


# --- 4. by goroutine, against the program's own dump ------------------------------
# by_goroutine LABEL PID DUMP OWN: profiles PID (already running, its stderr
# in DUMP, GOTRACEBACK=all) by goroutine, runtime goroutines included, a
# file each 300 ms (--period: each file written says a period was sampled).
# Then the program is stopped (SIGSTOP), sampled for a whole period while
# stopped, and sent SIGQUIT and SIGCONT: Go prints every goroutine and
# exits.  A goroutine started between SIGCONT and the dump cannot be in the
# profile: it is in the dump as one that never ran (runnable, at its
# function's first instruction: no +0x offset); every other goroutine of
# the dump must be in the profile, but for SLACK (default 0) of them: a
# program that starts hundreds of goroutines a second (rclone) may start
# one and run it in the moment between SIGCONT and Go stopping the world
# for the dump (seen once in 15 runs, with 2).  OWN: the program's own
# package prefix (an ERE).
# never_ran DUMP: the ids in $MISSING (" A B ") of goroutines that the dump
# shows runnable at their function's entry.
never_ran() {
	MISSING=" $MISSING " awk '
		/^goroutine [0-9]+ \[/ { id = $2; st = $3; n = 0; next }
		id != "" { n++
			if (n == 2) {
				if (index(ENVIRON["MISSING"], " " id " ") && st == "[runnable]:" && $0 !~ /\+0x/) print id
				id = "" } }' "$1"
}
by_goroutine() {
	local label=$1 pid=$2 dump=$3 own=$4 slack=${5:-0} base=$TMP/$1-g n seen missing fresh fn files
	prof_bg "$base" "$pid" --go-system --threads --period 300ms -o "$base.%n.folded"
	if ! wait_until 30 file_ready "$base.1.folded"; then
		DETAIL="$(tail -c 300 "$base.err")" check "$label by goroutine: sampled for a second" false
		kill -KILL "$pid" 2>/dev/null
		prof_wait 10
		return
	fi
	kill -STOP "$pid"
	files=$(ls "$base".*.folded | wc -l)
	wait_until 30 file_ready "$base.$((files + 1)).folded"
	kill -QUIT "$pid"
	kill -CONT "$pid"
	prof_wait 30
	cat "$base".*.folded >"$base.folded" 2>/dev/null
	n=$(summary_field "$base.err" goroutines)
	DETAIL="$(summary "$base.err" | head -n 1); $(grep note "$base.err" | head -2)" \
		check "$label by goroutine: the summary counts goroutines, no note that they cannot be found" \
		"[ '${n:-0}' -gt 0 ] && ! grep -q 'is a Go program, but' '$base.err'"
	grep -oE '\(goroutine [0-9]+\);' "$base.folded" | grep -oE '[0-9]+' | sort -u >"$base.ids"
	grep -oE '^goroutine [0-9]+ \[' "$dump" | grep -oE '[0-9]+' | grep -vx 0 | sort -u >"$base.dumpids"
	MISSING=$(comm -23 "$base.dumpids" "$base.ids" | tr '\n' ' ')
	fresh=$(never_ran "$dump" | tr '\n' ' ')
	missing=$(for id in $MISSING; do case " $fresh " in *" $id "*) ;; *) printf '%s ' "$id" ;; esac; done)
	seen=$(comm -12 "$base.dumpids" "$base.ids" | wc -l)
	DETAIL="$seen of $(wc -l <"$base.dumpids") of the dump's goroutines seen; not seen, never ran: ${fresh:-none}; not seen: ${missing:-none}" \
		check "$label by goroutine: every goroutine of its own SIGQUIT dump is in the profile (but those started after; $slack more may have)" \
		"[ -s '$base.dumpids' ] && [ \$(wc -w <<<'$missing') -le $slack ]"
	# The dump's own functions (a frame line: NAME(ARGS), Go's tracebacks
	# name inlined calls too, which the profile does not expand).
	grep -E '^[^[:space:]].*\)$' "$dump" | grep -vE '^(goroutine|created by) ' | sed -E 's/\([^()]*\)$//' | grep -E "^$own" | sort -u >"$base.dumpfuncs"
	cut -d';' -f2- "$base.folded" | tr ';' '\n' | sed -E 's/ [0-9]+$//' | sort -u >"$base.funcs"
	n=$(wc -l <"$base.dumpfuncs")
	seen=$(comm -12 "$base.dumpfuncs" "$base.funcs" | wc -l)
	DETAIL="$seen of $n; not seen: $(comm -23 "$base.dumpfuncs" "$base.funcs" | head -5 | tr '\n' ' ')" \
		check "$label by goroutine: >= 80% of its own functions in its dump are in the profile (inlined ones are not expanded)" \
		"[ '$n' -gt 0 ] && [ \$((seen * 100)) -ge \$((n * 80)) ]"
	seen=$(comm -12 "$base.dumpids" "$base.ids" | wc -l)
	fn=$(grep -cE "^$own" "$base.funcs")
	DETAIL="$fn of its functions; $(grep -E "^$own" "$base.funcs" | head -5 | tr '\n' ' ')" \
		check "$label by goroutine: its own functions ($own...) are in the profile" "[ '$fn' -gt 0 ]"
	diag "$label by goroutine: $(summary "$base.err" | head -n 1); $seen of $(wc -l <"$base.dumpids") goroutines of its dump seen (${fresh:-none} never ran); $(comm -12 "$base.dumpfuncs" "$base.funcs" | wc -l) of the dump's $(wc -l <"$base.dumpfuncs") own functions"
}

if ! command -v prometheus >/dev/null; then
	skip "prometheus" "not installed (Debian package prometheus: make deps installs it)"
else
	port=$((20000 + RANDOM % 20000))
	cat >"$TMP/prom.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: self
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
	GOTRACEBACK=all prometheus --config.file="$TMP/prom.yml" --web.listen-address="127.0.0.1:$port" \
		--storage.tsdb.path="$TMP/promdata" >"$TMP/prom.log" 2>&1 &
	ppid=$!
	PIDS+=("$ppid")
	if wait_until 20 grep -q 'Server is ready to receive web requests' "$TMP/prom.log"; then
		out=$TMP/prom.folded
		prof "$TMP/prom" "$ppid" --duration 3 --threads --os-threads --syscalls -o "$out"
		shipped prometheus "$(command -v prometheus)" "$out" "$TMP/prom"
		read -r n r <<<"$(syscall_leaves "$out")"
		DETAIL="$r of $n" check "prometheus: a thread blocked in futex/epoll_wait/nanosleep is in runtime.futex/epollwait/usleep" \
			"[ '$n' -gt 0 ] && [ '$r' = '$n' ]"
		check "prometheus: still serving after" alive "$ppid"
		by_goroutine prometheus "$ppid" "$TMP/prom.log" 'github\.com/prometheus/'
	else
		DETAIL="$(tail -c 300 "$TMP/prom.log")" check "prometheus starts" false
	fi
	stop_target "$ppid"
fi

if ! command -v restic >/dev/null; then
	skip "restic" "not installed (Debian package restic: make deps installs it)"
else
	wait "$restic_init"
	# One backup of all of /usr/share (about 15 s of work): sampled for 3 s
	# (a run of the profiler with `-- restic ...` waits for the command to
	# end), then by goroutine until it is stopped for its dump.
	GOTRACEBACK=all restic --repo "$TMP/repo" backup /usr/share -q 2>"$TMP/restic.dump" >/dev/null &
	rpid=$!
	PIDS+=("$rpid")
	out=$TMP/restic.folded
	wait_until 10 started "$rpid" "$(command -v restic)"
	prof "$TMP/restic" "$rpid" --duration 3 -o "$out"
	shipped restic "$(command -v restic)" "$out" "$TMP/restic"
	by_goroutine restic "$rpid" "$TMP/restic.dump" 'github\.com/restic/'
	stop_target "$rpid"
fi

if ! command -v rclone >/dev/null; then
	skip "rclone" "not installed (Debian package rclone: make deps installs it)"
else
	# md5sum of all of /usr/share (about 10 s of work), sampled 3 s, then
	# 2 s for the pprof file (a run with `-- rclone ...` would wait for all
	# of it each time)
	rclone --config /dev/null md5sum /usr/share >/dev/null 2>&1 &
	wpid=$!
	PIDS+=("$wpid")
	out=$TMP/rclone.folded
	wait_until 10 started "$wpid" "$(command -v rclone)"
	prof "$TMP/rclone" "$wpid" --duration 3 -o "$out"
	shipped rclone "$(command -v rclone)" "$out" "$TMP/rclone"
	if have_pprof; then
		prof "$TMP/rclone-p" "$wpid" --duration 2 -o "$TMP/rclone.pprof"
		read -r n ok <<<"$(NM_FLAGS=-D names_match "$(command -v rclone)" "$TMP/rclone.pprof")"
		DETAIL="$ok of $n" check "rclone: >= 95% of frames named as its .dynsym names them" \
			"[ '$n' -ge 20 ] && [ $((ok * 100)) -ge $((n * 95)) ]"
	fi
	stop_target "$wpid"
	GOTRACEBACK=all rclone --config /dev/null md5sum /usr/share 2>"$TMP/rclone.dump" >/dev/null &
	rpid=$!
	PIDS+=("$rpid")
	by_goroutine rclone "$rpid" "$TMP/rclone.dump" 'github\.com/rclone/' 3
	stop_target "$rpid"
fi

if ! command -v hugo >/dev/null; then
	skip "hugo" "not installed (Debian package hugo: make deps installs it)"
else
	site=$TMP/site
	mkdir -p "$site/content/posts" "$site/layouts/_default"
	printf 'baseURL = "http://127.0.0.1/"\ntitle = "t"\n' >"$site/config.toml"
	printf '<html><body>{{ .Content }}{{ range .Site.RegularPages }}{{ .Title }}{{ end }}</body></html>\n' \
		>"$site/layouts/_default/single.html"
	printf '<html><body>{{ range .Pages }}{{ .Title }}{{ end }}</body></html>\n' >"$site/layouts/_default/list.html"
	text=$(printf 'Some *text* and a [link](http://127.0.0.1/) %.0s' $(seq 1 40))
	for i in $(seq 1 400); do
		printf -- '---\ntitle: "post %d"\n---\n# Post %d\n\n%s\n' "$i" "$i" "$text" >"$site/content/posts/p$i.md"
	done
	out=$TMP/hugo.folded
	prof "$TMP/hugo" --duration 3 -o "$out" -- sh -c \
		"for i in 1 2 3 4 5; do hugo --quiet -s '$site' -d '$TMP/public' || exit 1; done"
	shipped hugo "$(command -v hugo)" "$out" "$TMP/hugo"
	# hugo serving the site (its watcher, its HTTP server), until the dump
	hport=$((20000 + RANDOM % 20000))
	GOTRACEBACK=all hugo server -s "$site" -d "$TMP/public2" --bind 127.0.0.1 --port "$hport" \
		--disableLiveReload >"$TMP/hugo.dump" 2>&1 &
	hpid=$!
	PIDS+=("$hpid")
	if wait_until 30 grep -q 'Web Server is available' "$TMP/hugo.dump"; then
		by_goroutine hugo "$hpid" "$TMP/hugo.dump" 'github\.com/gohugoio/'
	else
		DETAIL="$(tail -c 300 "$TMP/hugo.dump")" check "hugo server starts" false
	fi
	stop_target "$hpid"
fi
done_testing
