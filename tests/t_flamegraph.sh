#!/usr/bin/env bash
# The flame graph in a real browser: -o out.svg opened in headless
# Chromium.  The screenshot shows each expected frame in its own colour at
# the place the SVG gives it; the DOM after load has the function names and
# the embedded script raised no error; clicking a frame zooms (also on the
# screenshot), "Reset zoom" restores, hovering fills the details line, and
# Search (the button and Ctrl-F) highlights and reports the matched share.
# The title names the program, its PID, the duration, the samples and the
# view; a legend names the colours; the graph follows the window's width
# (two window sizes, screenshots and DOM); an off-CPU frame is drawn paler
# than an on-CPU one; no internal marker shows in any label or title after
# load, zoom, search and reset (cpuidle with --threads --syscalls).
# Then speedscope itself (its npm release, run in the same browser) imports
# our speedscope file.
#
# Chromium: Debian's package "chromium", which contrib/install-deps.sh
# (make deps) installs; when it is missing the checks are skipped with the
# reason.
# speedscope: npm package speedscope@SPEEDSCOPE_VERSION, cached in
# build/tests/speedscope; skipped when npm cannot fetch it.
. "$(dirname "$0")/lib.sh"

SPEEDSCOPE_VERSION=1.20.0

if ! need_chromium; then
	skip "flame graph in headless Chromium" \
		"chromium is not installed (Debian package chromium: make deps installs it)"
	done_testing
fi
diag "$("$CHROMIUM" --version 2>/dev/null)"

# png_at FILE X,Y...: prints "W H" then "R,G,B" of each pixel (PNG, 8 bit
# RGB or RGBA, as Chromium writes), then the number of distinct colours.
png_at() {
	python3 - "$@" <<-'EOF'
	import struct, sys, zlib
	data = open(sys.argv[1], "rb").read()
	if data[:8] != b"\x89PNG\r\n\x1a\n":
	    sys.exit("not a PNG")
	pos, idat = 8, b""
	while pos < len(data):
	    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
	    body = data[pos + 8:pos + 8 + n]
	    if kind == b"IHDR":
	        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
	    elif kind == b"IDAT":
	        idat += body
	    pos += 12 + n
	if depth != 8 or ctype not in (2, 6):
	    sys.exit("PNG depth %d colour type %d" % (depth, ctype))
	bpp = 3 if ctype == 2 else 4
	raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
	for y in range(h):
	    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
	    for i in range(stride):
	        a = line[i - bpp] if i >= bpp else 0
	        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
	        if f == 1: line[i] = (line[i] + a) & 255
	        elif f == 2: line[i] = (line[i] + b) & 255
	        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
	        elif f == 4:
	            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
	            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
	    rows.append(line)
	    prev = line
	print(w, h)
	for xy in sys.argv[2:]:
	    x, y = (int(float(v)) for v in xy.split(","))
	    print("%d,%d,%d" % tuple(rows[y][x * bpp:x * bpp + 3]) if 0 <= x < w and 0 <= y < h else "outside")
	print(len({bytes(r[i:i + 3]) for r in rows for i in range(0, stride, bpp)}))
	EOF
}

# frame_geom SVG NAME: "X Y W H R,G,B" of the first frame called NAME
frame_geom() {
	grep -F "<title>$2 " "$1" | head -1 |
		sed -nE 's/.*<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9]+)" fill="rgb\(([0-9]+),([0-9]+),([0-9]+)\)".*/\1 \2 \3 \4 \5,\6,\7/p'
}

# close_colour A B: two "R,G,B" within 6 per channel (anti-aliasing)
close_colour() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, ","); split(b, y, ",")
		for (i = 1; i <= 3; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 6) exit 1 } }'
}

# inject SVG OUT PROBE_JS: a copy of SVG with an error catcher before the
# embedded script and PROBE_JS after it (the probe sees its globals).
inject() {
	python3 - "$1" "$2" "$3" <<-'EOF'
	import sys
	svg = open(sys.argv[1]).read()
	head = svg.index(">", svg.index("<svg")) + 1
	catcher = ("<script type=\"text/ecmascript\"><![CDATA[window.probeErrors = [];"
	           "window.addEventListener('error', e => window.probeErrors.push(e.message));]]></script>\n")
	probe = "<script type=\"text/ecmascript\"><![CDATA[\n" + sys.argv[3] + "\n]]></script>\n"
	end = svg.rindex("</svg>")
	open(sys.argv[2], "w").write(svg[:head] + catcher + svg[head:end] + probe + svg[end:])
	EOF
}

# The probe: works the page as a user would (click, mouseover, the Search
# button, Ctrl-F with prompt() answered), and writes what it saw as JSON
# into the root's data-probe attribute, for --dump-dom.
PROBE=$(cat <<-'EOF'
	(function () {
	  const res = { errors: window.probeErrors };
	  const click = (el) => el.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	  const frame = (n) => Array.from(document.querySelectorAll('g.f')).find(
	    (g) => g.querySelector('title').textContent.startsWith(n + ' '));
	  const rect = (g) => g.querySelector('rect');
	  const width = (g) => +rect(g).getAttribute('width');
	  const shown = (g) => g.style.display !== 'none';
	  try {
	    const burn = frame('burn_cpu'), sleep = frame('sleep_here'), all = frame('all');
	    if (window.ZOOM_FOR_SCREENSHOT) {
	      click(burn);
	      throw 'zoomed, no more';
	    }
	    res.found = !!(burn && sleep && all);
	    res.before = [width(burn), width(sleep), width(all)];
	    click(burn);
	    res.zoomed = [width(burn), shown(sleep), width(all), shown(all)];
	    res.zoomedText = burn.querySelector('text').textContent;
	    click(document.getElementById('reset'));
	    res.reset = [width(burn), width(sleep), shown(sleep)];
	    burn.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
	    res.details = document.getElementById('details').textContent;
	    res.title = burn.querySelector('title').textContent;
	    window.prompt = () => '^sleep_here$';
	    click(document.getElementById('search'));
	    res.matched = document.getElementById('matched').textContent;
	    res.fills = [rect(sleep).getAttribute('fill'), rect(burn).getAttribute('fill')];
	    window.prompt = () => 'burn_cpu|sleep_here';
	    window.dispatchEvent(new KeyboardEvent('keydown', { key: 'f', ctrlKey: true }));
	    res.matched2 = document.getElementById('matched').textContent;
	  } catch (e) {
	    res.errors.push(String(e));
	  }
	  document.documentElement.setAttribute('data-probe', JSON.stringify(res));
	})();
	EOF
)

probe_field() { # JSON FIELD: one field of the probe's result, as JSON
	python3 -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1]).get(sys.argv[2])))' "$1" "$2" 2>/dev/null
}

if start_target wallclock; then
	pid=$TARGET_PID
	svg=$TMP/wall.svg
	prof "$TMP/wall" "$pid" --duration 1 -o "$svg"
	check_ran "svg" "$TMP/wall" "$svg"
	stop_target "$pid"
	height=$(sed -nE 's/^<svg [^>]*height="([0-9]+)".*/\1/p' "$svg" | head -1)
	# The frames' width at a 1200-pixel window: the static layout's, which
	# the script keeps at that width ('all' spans it).
	read -r _ _ fw _ _ < <(frame_geom "$svg" all)
	fw=${fw:-1180}

	# --- the screenshot ------------------------------------------------------
	png=$TMP/wall.png
	browser --screenshot="$png" --window-size="1200,${height:-400}" "file://$svg" >/dev/null
	size=$(stat -c %s "$png" 2>/dev/null || echo 0)
	DETAIL="$size bytes; $(grep -v -e dbus -e vaapi -e sandbox "$TMP/browser.log" | tail -3 | tr '\n' '|')" \
		check "screenshot: a PNG of more than 5 KB" "[ '$size' -gt 5000 ] && [ \"\$(head -c 4 '$png' | tail -c 3)\" = PNG ]"
	points=() expect=()
	for fn in burn_cpu sleep_here main burner_main sleeper_main __pthread_clockjoin_ex all; do
		read -r x y w _ rgb < <(frame_geom "$svg" "$fn")
		[ -n "$rgb" ] || { DETAIL="no <rect> for $fn in the SVG" check "svg: frame $fn" false; continue; }
		# The top-right of the frame: inside the rect, clear of its label.
		points+=("$(awk -v x="$x" -v w="$w" 'BEGIN { printf "%d", x + w - 5 }'),$(awk -v y="$y" 'BEGIN { printf "%d", y + 1 }')")
		expect+=("$fn:$rgb")
	done
	mapfile -t got < <(png_at "$png" "${points[@]}" 2>&1)
	DETAIL="${got[0]}" check "screenshot: 1200 x $height, as the SVG" "[ '${got[0]}' = '1200 $height' ]"
	ncol=${got[$((${#got[@]} - 1))]}
	DETAIL="$ncol colours" check "screenshot: not blank (more than 20 colours)" "[ '$ncol' -gt 20 ] 2>/dev/null"
	for i in "${!expect[@]}"; do
		fn=${expect[$i]%%:*} want=${expect[$i]#*:} have=${got[$((i + 1))]}
		DETAIL="pixel at ${points[$i]} is $have, frame fill $want" \
			check "screenshot: frame $fn is drawn where the SVG puts it, in its colour" \
			close_colour "$have" "$want"
	done

	# --- the DOM after load --------------------------------------------------
	: >"$TMP/browser.log"
	browser --dump-dom "file://$svg" >"$TMP/dom.svg"
	for fn in burn_cpu sleep_here main burner_main sleeper_main __pthread_clockjoin_ex; do
		check "DOM after load: frame $fn (title and label)" \
			"grep -qF '<title>$fn [' '$TMP/dom.svg' && grep -qE '<text x=\"[0-9.]+\" y=\"[0-9]+\">$fn</text>' '$TMP/dom.svg'"
	done
	n=$(grep -c '<g class="f"' "$TMP/dom.svg")
	DETAIL="$n frames" check "DOM after load: the frames are all there (>= 15)" "[ '$n' -ge 15 ]"
	errs=$(grep -E 'CONSOLE.*(Uncaught|Error)' "$TMP/browser.log" | head -3)
	DETAIL="$errs" check "DOM after load: the embedded script raised no error" \
		"[ -s '$TMP/dom.svg' ] && [ -z \"\$errs\" ]"

	# --- the script at work ----------------------------------------------------
	inject "$svg" "$TMP/probe.svg" "$PROBE"
	: >"$TMP/browser.log"
	browser --dump-dom "file://$TMP/probe.svg" >"$TMP/probe.dom"
	res=$(sed -nE "s/.*data-probe=\"([^\"]*)\".*/\\1/p" "$TMP/probe.dom" | head -1 |
		sed 's/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g')
	DETAIL="$(head -c 300 "$TMP/probe.dom")" check "probe: ran and reported" "[ -n '$res' ]"
	v=$(probe_field "$res" errors)
	DETAIL="$v" check "probe: no script error" "[ '$v' = '[]' ]"
	v=$(probe_field "$res" found)
	check "probe: frames burn_cpu, sleep_here, all found by their titles" "[ '$v' = true ]"
	read -r bw sw aw < <(probe_field "$res" before | tr -d '[],')
	DETAIL="widths: burn_cpu $bw, sleep_here $sw, all $aw" \
		check "before zoom: burn_cpu and sleep_here a third of the width each" \
		"within '${bw:-0}' $(awk -v w="$fw" 'BEGIN { print w / 3 }') 60 && within '${sw:-0}' $(awk -v w="$fw" 'BEGIN { print w / 3 }') 60 && within '${aw:-0}' '$fw' 0.5"
	v=$(probe_field "$res" zoomed)
	DETAIL="$v (burn_cpu width, sleep_here shown, all width, all shown)" \
		check "click on burn_cpu: it fills the width, sleep_here hidden, 'all' below it stays" \
		"python3 -c 'import json, sys; z = json.loads(sys.argv[1]); sys.exit(not (abs(z[0] - $fw) < 0.5 and z[1] is False and abs(z[2] - $fw) < 0.5 and z[3] is True))' '$v'"
	v=$(probe_field "$res" zoomedText)
	check "click on burn_cpu: its label is the full name" "[ '$v' = '\"burn_cpu\"' ]"
	v=$(probe_field "$res" reset)
	DETAIL="$v; before $bw $sw" check "Reset zoom: the widths come back" \
		"python3 -c 'import json, sys; r = json.loads(sys.argv[1]); sys.exit(not (abs(r[0] - $bw) < 0.01 and abs(r[1] - $sw) < 0.01 and r[2] is True))' '$v'"
	d=$(probe_field "$res" details)
	t=$(probe_field "$res" title)
	DETAIL="details $d, title $t" check "hover on burn_cpu: the details line shows its title" \
		"[ -n '$t' ] && [ '$t' != null ] && [ '$d' = '$t' ]"
	m=$(probe_field "$res" matched)
	p=$(sed -nE 's/"Matched: ([0-9.]+)%"/\1/p' <<<"$m")
	sp=$(awk -v w="$sw" -v f="$fw" 'BEGIN { printf "%.1f", 100 * w / f }')
	DETAIL="$m, sleep_here is $sp%" check "Search '^sleep_here\$': 'Matched: N%' with sleep_here's share" \
		"[ -n '$p' ] && within '$p' '$sp' 0.15"
	v=$(probe_field "$res" fills)
	DETAIL="$v" check "Search: the match is highlighted, the rest keeps its colour" \
		"grep -q '^\\[\"rgb(230,0,230)\", \"rgb(' <<<'$v' && ! grep -q 'rgb(230,0,230)\"\\]' <<<'$v'"
	m=$(probe_field "$res" matched2)
	p2=$(sed -nE 's/"Matched: ([0-9.]+)%"/\1/p' <<<"$m")
	bs=$(awk -v a="$bw" -v b="$sw" -v f="$fw" 'BEGIN { printf "%.1f", 100 * (a + b) / f }')
	DETAIL="$m, burn_cpu + sleep_here is $bs%" \
		check "Ctrl-F 'burn_cpu|sleep_here': both highlighted, shares added" \
		"[ -n '$p2' ] && within '$p2' '$bs' 0.15"

	# The zoom as drawn: burn_cpu across the width, the frames beside it
	# and above it (__nanosleep, the top of main's stack) gone to the
	# background.
	read -r x y _ _ rgb < <(frame_geom "$svg" burn_cpu)
	gone=()
	for fn in __nanosleep __futex_abstimed_wait_common64; do
		read -r fx fy fw _ < <(frame_geom "$svg" "$fn")
		gone+=("$(awk -v x="$fx" -v w="$fw" 'BEGIN { printf "%d", x + w - 5 }'),$((${fy%.*} + 1))")
	done
	inject "$svg" "$TMP/zoom.svg" "window.ZOOM_FOR_SCREENSHOT = true; $PROBE"
	browser --screenshot="$TMP/zoom.png" --window-size="1200,${height:-400}" "file://$TMP/zoom.svg" >/dev/null
	mapfile -t after < <(png_at "$TMP/zoom.png" "1000,$((${y%.*} + 1))" "${gone[@]}" 2>&1)
	DETAIL="pixel at 1000,$((${y%.*} + 1)): ${after[1]}, burn_cpu $rgb" \
		check "screenshot after a click on burn_cpu: burn_cpu drawn across the width" \
		close_colour "${after[1]}" "$rgb"
	DETAIL="pixels where __nanosleep and main's top frame were: ${after[2]} ${after[3]}" \
		check "screenshot after a click on burn_cpu: the frames beside it are gone" \
		"close_colour '${after[2]}' 250,250,245 && close_colour '${after[3]}' 250,250,245"
	mkdir -p "$ROOT/build/tests"
	cp "$png" "$ROOT/build/tests/flamegraph.png" 2>/dev/null
fi

# --- what the graph says about itself: title, legend, width, on/off CPU ------------
# cpuidle: burn_cpu always on CPU, sleep_here always asleep; with --threads
# and --syscalls, so the frames the writer makes itself (a thread's root,
# a system call's leaf) are there too.  The probe records the title, the
# legend, where the frames end, and every frame's title and label after
# load, a zoom on the burner thread's root, a search and a reset.
PROBE2=$(cat <<-'EOF'
	(function () {
	  const res = { errors: window.probeErrors, snaps: [] };
	  const click = (el) => el.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	  const frames = Array.from(document.querySelectorAll('g.f'));
	  const frame = (n) => frames.find((g) => g.querySelector('title').textContent.startsWith(n));
	  const rect = (g) => g.querySelector('rect');
	  const snap = (what) => res.snaps.push([what, document.getElementById('details').textContent,
	    frames.filter((g) => g.style.display !== 'none').map((g) =>
	      [g.querySelector('title').textContent, g.querySelector('text').textContent])]);
	  try {
	    res.width = Math.round(document.documentElement.getBoundingClientRect().width);
	    res.title = document.getElementById('title').textContent;
	    res.legend = Array.from(document.querySelectorAll('#legend text')).map((t) => t.textContent);
	    const on = Array.from(document.querySelectorAll('#legend g')).find((g) => g.textContent === 'on CPU');
	    res.swatch = on ? [+rect(on).getAttribute('x') + 7, +rect(on).getAttribute('y') + 6, rect(on).getAttribute('fill')] : null;
	    const all = frame('all ');
	    res.all = [+rect(all).getAttribute('x'), +rect(all).getAttribute('x') + +rect(all).getAttribute('width')];
	    const burn = frame('burn_cpu '), sleep = frame('sleep_here ');
	    res.fills = [rect(burn).getAttribute('fill'), rect(sleep).getAttribute('fill')];
	    res.titles = [burn.querySelector('title').textContent, sleep.querySelector('title').textContent];
	    snap('load');
	    const thread = frame('burner (');
	    click(thread);
	    thread.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
	    snap('zoom on the burner thread');
	    res.threadLabel = thread.querySelector('text').textContent;
	    window.prompt = () => 'sleep|burn|syscall';
	    click(document.getElementById('search'));
	    snap('search');
	    click(document.getElementById('reset'));
	    snap('reset');
	  } catch (e) {
	    res.errors.push(String(e));
	  }
	  document.documentElement.setAttribute('data-probe', JSON.stringify(res));
	})();
	EOF
)

# probe_run SVG WIDTH: the probe's JSON, from the DOM at that window width.
probe_run() {
	inject "$1" "$TMP/probe2.svg" "$PROBE2"
	browser --window-size="$2,600" --dump-dom "file://$TMP/probe2.svg" |
		sed -nE "s/.*data-probe=\"([^\"]*)\".*/\\1/p" | head -1 |
		sed 's/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g'
}

# json_get JSON EXPR: a Python expression over the parsed JSON `j`, printed.
json_get() {
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}

# lighter A B: colour "R,G,B" A is lighter than B by more than 90 (sum of channels)
lighter() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, ","); split(b, y, ",")
		exit !(x[1] + x[2] + x[3] > y[1] + y[2] + y[3] + 90) }'
}

# on_off "TITLE|TITLE": the first frame's title says "on CPU", the
# second's "off CPU" or at least 80% off (a sleeper is running for a
# moment each time it wakes).
on_off() {
	python3 - "$1" <<-'EOF'
	import re, sys
	b, s = sys.argv[1].split("|")
	m = re.search(r", (\d+)% off CPU\)$", s)
	sys.exit(not (b.endswith(", on CPU)") and (s.endswith(", off CPU)") or (m and int(m.group(1)) >= 80))))
	EOF
}

if start_target cpuidle; then
	pid=$TARGET_PID
	svg=$TMP/cpuidle.svg
	prof "$TMP/cpuidle" "$pid" --duration 1 --threads --syscalls -o "$svg"
	check_ran "svg --threads --syscalls" "$TMP/cpuidle" "$svg"
	stop_target "$pid"
	samples=$(summary_field "$TMP/cpuidle.err" samples)
	secs=$(summary_field "$TMP/cpuidle.err" seconds)
	height=$(sed -nE 's/^<svg [^>]*height="([0-9]+)".*/\1/p' "$svg" | head -1)
	read -r _ ay _ _ allrgb < <(frame_geom "$svg" all)

	: >"$TMP/browser.log"
	res=$(probe_run "$svg" 1600)
	res1600=$res
	DETAIL="$(head -c 300 "$TMP/browser.log")" check "title probe: ran and reported" "[ -n '$res' ]"
	v=$(json_get "$res" "j['errors']")
	DETAIL="$v" check "title probe: no script error" "[ '$v' = '[]' ]"
	title=$(json_get "$res" "j['title']")
	t_secs=$(sed -nE 's/.*\): ([0-9.]+) s, .*/\1/p' <<<"$title")
	DETAIL="title: '$title'; summary: $samples samples, $secs s" \
		check "title: view, program, PID, duration and samples" \
		"grep -qxF 'Wall-clock flame graph of cpuidle (PID $pid): $t_secs s, $samples samples' <<<\"\$title\" && within '${t_secs:-0}' '${secs:-9}' 0.06"
	legend=$(json_get "$res" "'|'.join(j['legend'])")
	for want in cpuidle libc.so.6 'system call' 'on CPU' 'off CPU'; do
		DETAIL="legend: $legend" check "legend: names '$want'" "grep -qF '|$want' <<<'|$legend'"
	done
	v=$(json_get "$res" "'|'.join(j['titles'])")
	DETAIL="$v" check "titles: burn_cpu is 'on CPU', sleep_here off CPU (>= 80%)" on_off "$v"
	read -r bf sf < <(json_get "$res" "' '.join(f[4:-1] for f in j['fills'])")
	DETAIL="burn_cpu rgb($bf), sleep_here rgb($sf)" \
		check "off CPU drawn paler: sleep_here's fill is lighter than burn_cpu's" lighter "$sf" "$bf"

	# No internal marker: every title and label the probe saw, in each state.
	v=$(python3 - "$res" <<-'EOF'
	import json, re, sys
	j, bad = json.loads(sys.argv[1]), []
	for what, details, frames in j["snaps"]:
	    for text in [details] + [t for f in frames for t in f]:
	        if re.search(r"\[\[|\[thread\]|\[kernel\]|process or thread|system call\]", text):
	            bad.append("%s: %r" % (what, text))
	    for title, label in frames:
	        if label and not (title.startswith(label) or (label.endswith("..") and title.startswith(label[:-2]))):
	            bad.append("%s: label %r of %r" % (what, label, title))
	        if re.match(r"(burner|cpuidle) \(\d+\) ", title) and not re.match(r"\S+ \(\d+\) \(\d+ samples, ", title):
	            bad.append("%s: thread title %r" % (what, title))
	n = sum(len(f) for _, _, f in j["snaps"])
	print("; ".join(bad[:3]) if bad else "ok %d" % n if len(j["snaps"]) == 4 and n else "no snapshots")
	EOF
	)
	DETAIL="$v" check "no internal marker in titles, labels or details (load, zoom, search, reset)" \
		grep -qE '^ok [0-9]+$' <<<"$v"
	v=$(json_get "$res" "j['threadLabel']")
	DETAIL="label '$v'" check "zoomed on the burner thread: its label is 'burner (TID)'" \
		grep -qxE 'burner \([0-9]+\)' <<<"$v"

	# Width: the graph spans the window, at two widths.
	for w in 900 1600; do
		if [ "$w" = 1600 ]; then res=$res1600; else res=$(probe_run "$svg" "$w"); fi
		read -r left right < <(json_get "$res" "'%.1f %.1f' % tuple(j['all'])")
		DETAIL="window $w: 'all' from ${left:-?} to ${right:-?}" \
			check "window $w px: the frames span it (10 px margins)" \
			"within '${left:-0}' 10 1 && within '${right:-0}' $((w - 10)) 1"
		png=$TMP/cpuidle$w.png
		browser --screenshot="$png" --window-size="$w,$height" "file://$svg" >/dev/null
		read -r sx sy srgb < <(json_get "$res" "'%d %d %s' % (j['swatch'][0], j['swatch'][1], j['swatch'][2][4:-1])")
		mapfile -t got < <(png_at "$png" "$((w - 16)),$((${ay%.*} + 7))" "$((w - 4)),$((${ay%.*} + 7))" "$sx,$sy")
		DETAIL="${got[0]}; near the right edge: ${got[1]} ('all' is $allrgb), at the edge: ${got[2]}" \
			check "screenshot at $w px: 'all' reaches the right margin" \
			"[ '${got[0]}' = '$w $height' ] && close_colour '${got[1]}' '$allrgb' && close_colour '${got[2]}' 250,250,245"
		DETAIL="pixel at $sx,$sy: ${got[3]}, swatch $srgb" \
			check "screenshot at $w px: the legend's 'on CPU' swatch is drawn" close_colour "${got[3]}" "$srgb"
	done
	cp "$TMP/cpuidle1600.png" "$ROOT/build/tests/flamegraph-cpuidle.png" 2>/dev/null
fi

# --- speedscope imports our file ------------------------------------------------
SS=$ROOT/build/tests/speedscope
SS_APP=$SS/node_modules/speedscope/dist/release
if [ ! -f "$SS_APP/index.html" ] && command -v npm >/dev/null; then
	# Into a directory of our own, moved into place when complete (other
	# runs may be doing the same).
	mkdir -p "$TMP/npm" "$(dirname "$SS")"
	timeout 60 npm install --prefix "$TMP/npm" --no-audit --no-fund --no-save \
		"speedscope@$SPEEDSCOPE_VERSION" >"$TMP/npm.log" 2>&1 &&
		[ -f "$TMP/npm/node_modules/speedscope/dist/release/index.html" ] &&
		mv -T "$TMP/npm" "$SS" 2>/dev/null
fi
if [ ! -f "$SS_APP/index.html" ]; then
	skip "speedscope imports our file" "speedscope@$SPEEDSCOPE_VERSION not available (npm install failed or no npm)"
elif start_target cpuidle; then
	pid=$TARGET_PID
	json=$TMP/cpuidle.json
	prof "$TMP/json" "$pid" --duration 1 -o "$json"
	check_ran "speedscope" "$TMP/json" "$json"
	threads=$(for t in $(tids "$pid"); do echo "$(cat "/proc/$pid/task/$t/comm") ($t)"; done)
	stop_target "$pid"
	if python3 -c 'import jsonschema' 2>/dev/null; then
		v=$(python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
			"$json" "$SS_APP/file-format-schema.json" 2>&1 | tail -3)
		DETAIL="$v" check "speedscope: valid against speedscope's file-format-schema.json" "[ -z \"\$v\" ]"
	else
		skip "speedscope: schema validation" "no python3 jsonschema"
	fi
	# speedscope's own command line (bin/cli.js) opens
	# index.html#localProfilePath=JS, JS calling loadFileFromBase64.
	echo "speedscope.loadFileFromBase64(\"cpuidle.json\", \"$(base64 -w0 "$json")\")" >"$TMP/load.js"
	: >"$TMP/browser.log"
	browser --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom \
		"file://$SS_APP/index.html#localProfilePath=$TMP/load.js" >"$TMP/ss.html"
	check "speedscope: imported it as a speedscope file" \
		"grep -q 'Importing as speedscope json file' '$TMP/browser.log'"
	errs=$(grep -E 'CONSOLE.*(Uncaught|rror)' "$TMP/browser.log" | head -3)
	DETAIL="$errs" check "speedscope: no error while importing" "[ -z \"\$errs\" ]"
	while read -r th; do
		DETAIL="$(sed 's/<[^>]*>/ /g' "$TMP/ss.html" | tr -s ' \n' ' ' | head -c 400)" \
			check "speedscope: shows thread '$th'" "grep -qF '$th' '$TMP/ss.html'"
	done <<<"$threads"
fi

# --- colours by package (issue 28, item 4) -----------------------------------------
# A Go program is one module: its frames are coloured by package ("main
# (goroutines)", "runtime (goroutines)"), a C++ program's by namespace; the
# module stays in each frame's title.
# legend_of SVG: the legend's names, one per line.
legend_of() { grep -o '<g id="legend".*' "$1" | grep -oE '<text[^>]*>[^<]*' | sed 's/<text[^>]*>//'; }
# fill_of SVG FUNC: the fill of FUNC's first frame.
fill_of() { grep -F "<title>$2 [" "$1" | head -n 1 | grep -oE 'fill="rgb\([0-9,]+\)"'; }
if [ -x "$BIN/goroutines" ] && start_target goroutines split; then
	pid=$TARGET_PID
	prof "$TMP/gocol" "$pid" --duration 1 -o "$TMP/gocol.svg"
	legend_of "$TMP/gocol.svg" >"$TMP/gocol.legend"
	DETAIL="$(tr '\n' '|' <"$TMP/gocol.legend")" \
		check "Go colours: the legend names packages of the program (main, runtime)" \
		"grep -qx 'main (goroutines)' '$TMP/gocol.legend' && grep -qx 'runtime (goroutines)' '$TMP/gocol.legend'"
	a=$(fill_of "$TMP/gocol.svg" main.compute)
	b=$(fill_of "$TMP/gocol.svg" runtime.gopark)
	DETAIL="main.compute $a, runtime.gopark $b" check "Go colours: main.compute and runtime.gopark differ" \
		"[ -n '$a' ] && [ -n '$b' ] && [ '$a' != '$b' ]"
	check "Go colours: the module is still in the frame's title" "grep -qF '<title>main.compute [goroutines]' '$TMP/gocol.svg'"
	stop_target "$pid"
fi
if start_target cxx; then
	pid=$TARGET_PID
	prof "$TMP/cxxcol" "$pid" --duration 0.5 -o "$TMP/cxxcol.svg"
	DETAIL="$(legend_of "$TMP/cxxcol.svg" | tr '\n' '|')" \
		check "C++ colours: the namespace ns of ns::Widget::spin is a colour of its own" \
		"legend_of '$TMP/cxxcol.svg' | grep -qx 'ns (cxx)'"
	stop_target "$pid"
fi

done_testing
