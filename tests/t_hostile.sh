#!/usr/bin/env bash
# Hostile names: a target whose libraries, symbols, source
# file and threads are named to break every writer (tests/targets/hostile.c
# loading copies of tests/bin/libhostile*.so, see hostile_lib.c):
#   libraries  '<image href=x onerror=alert(1)>.so', one whose onerror
#              handler marks the page and logs PWNED, 'lib&<x>.so',
#              'it's a "lib".so', 'lib\xff\xfe\xc3x.so', 84 CJK characters
#              (stripped: its static function is named after it)
#   symbols    '<svg onload=alert(2)>', 'bad\xff\xc3name', 'tab\there\e[1m\x7f',
#              1400 CJK characters, CJK, 20 emoji (4-byte characters)
#   file       '<src&"'>\xff.c'
#   threads    'ééééééé\xc3' (the kernel's 15-byte cut), 'a线程名字' and a cut
#              character, '<b>&"'\e[1m\t'
# Profiled to svg (--threads), speedscope, folded (--threads) and pprof:
# the SVG is well-formed XML with only our own elements, and in headless
# Chromium no script of a name runs (a copy with the payload left raw shows
# that the check sees it when it does); speedscope has every thread, every
# frame index in range and stacks in the right order; folded lines parse;
# go tool pprof reads the pprof; all text is valid UTF-8 without control
# characters, names cleaned as util/text.h says.  Then --convert with
# hostile folded input to svg and speedscope (each sample's frames must be
# its line's: an index shifted by a refused string fails), and a fuzz loop
# of random byte names through --convert (fixed seed, a few seconds).
# Against 833e79e (before the fix) 61 of its checks fail.
. "$(dirname "$0")/lib.sh"

LIB=$BIN/libhostile.so
LIB_S=$BIN/libhostile-s.so
for f in "$BIN/hostile" "$LIB" "$LIB_S"; do
	[ -f "$f" ] || { DETAIL="no $f (make tests/bin/hostile tests/bin/libhostile.so tests/bin/libhostile-s.so)" check "test binaries built" false; done_testing; }
done

PWN='<image href="x" onerror="console.log(&apos;PWNED&apos;);document.documentElement.setAttribute(&apos;data-pwned&apos;,&apos;yes&apos;)">'
CJK84=$(printf '库%.0s' $(seq 84))
mkdir -p "$TMP/libs"
cp "$LIB" "$TMP/libs/<image href=x onerror=alert(1)>.so"
cp "$LIB" "$TMP/libs/$PWN.so"
cp "$LIB" "$TMP/libs/lib&<x>.so"
cp "$LIB" "$TMP/libs/it's a \"lib\".so"
cp "$LIB" "$TMP/libs/lib$(printf '\377\376\303')x.so"
cp "$LIB_S" "$TMP/libs/$CJK84.so"

# The checker: python3 (one run, it is slow to start on a busy machine)
# reads each output and prints one line per fact, "TAG NAME<TAB>ok|bad<TAB>
# detail"; fact turns one line into a check.
cat >"$TMP/facts.py" <<-'EOF'
	import json, os, random, re, sys
	import xml.dom.minidom

	def say(name, ok, detail=""):
	    print("%s\t%s\t%s" % (name, "ok" if ok else "bad", str(detail)[:300].replace("\n", " ")))

	def clean_text(s):
	    """No C0 (tab, newline too), DEL, C1, U+FFFE/U+FFFF: what util/text.h promises."""
	    bad = [c for c in s if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or ord(c) in (0xfffe, 0xffff)]
	    return not bad, bad[:3]

	def utf8(path):
	    data = open(path, "rb").read()
	    try:
	        return data.decode("utf-8"), None
	    except UnicodeDecodeError as e:
	        return None, "%s: %r" % (e, data[max(0, e.start - 20):e.end + 20])

	THREADS = ["hostile (", "ééééééé? (", "a线程名字? (", "<b>&\"'?[1m? ("]
	LIBS = ["<image href=x onerror=alert(1)>.so", sys.argv[1] + ".so", "lib&<x>.so",
	        "it's a \"lib\".so", "lib???x.so", "库" * 84 + ".so"]
	FUNCS = ["<svg onload=alert(2)>", "bad??name", "tab?here?[1m?", "名" * 1400,
	         "计算非常长的函数名字测试用例", "🔥" * 20, "anonymous_work"]

	def svg(path):
	    text, err = utf8(path)
	    say("svg utf8", text is not None, err)
	    try:
	        dom = xml.dom.minidom.parse(path)
	    except Exception as e:
	        say("svg xml", False, e)
	        return
	    say("svg xml", True)
	    names = sorted({e.tagName for e in dom.getElementsByTagName("*")})
	    say("svg elements", set(names) <= {"svg", "style", "rect", "text", "desc", "g", "title", "script"}, names)
	    say("svg no image", not dom.getElementsByTagName("image"), len(dom.getElementsByTagName("image")))
	    frames = [g for g in dom.getElementsByTagName("g") if g.getAttribute("class") == "f"]
	    titles, labels_bad = [], []
	    for g in frames:
	        t = "".join(n.data for n in g.getElementsByTagName("title")[0].childNodes)
	        titles.append(t)
	        name = re.sub(r" (\[[^\]]*\]?\] )?\(\d+ samples?.*$", "", t)
	        label = "".join(n.data for n in g.getElementsByTagName("text")[0].childNodes)
	        if not (label == "" or label == name or (label.endswith("..") and name.startswith(label[:-2]))):
	            labels_bad.append((name[:40], label))
	    ok, bad = clean_text("".join(titles))
	    say("svg titles clean", ok, bad)
	    say("svg labels", frames and not labels_bad, labels_bad[:3])
	    for th in THREADS:
	        say("svg thread " + th, any(t.startswith(th) for t in titles), len(titles))
	    for lib in LIBS:
	        say("svg module " + lib[:40], any(("[%s] (" % lib) in t for t in titles), len(titles))
	    for fn in FUNCS:
	        say("svg function " + fn[:24], any(t.startswith(fn + " [") for t in titles), len(titles))
	    say("svg stripped frame", any(t.startswith("库" * 84 + ".so+0x") for t in titles), "")
	    say("svg cut labels", any(l.endswith("..") and l.startswith("名") for l in
	        ("".join(n.data for n in g.getElementsByTagName("text")[0].childNodes) for g in frames)), "")
	    ok, bad = clean_text("".join("".join(n.data for n in t.childNodes) for t in dom.getElementsByTagName("text")))
	    say("svg labels clean", ok, bad)

	def speedscope(path):
	    text, err = utf8(path)
	    say("json utf8", text is not None, err)
	    try:
	        d = json.loads(text)
	    except Exception as e:
	        say("json parses", False, e)
	        return
	    say("json parses", True)
	    fr = d["shared"]["frames"]
	    names = [p["name"] for p in d["profiles"]]
	    for th in THREADS:
	        say("json thread " + th, any(n.startswith(th) for n in names), names)
	    bad, order = [], []
	    for p in d["profiles"]:
	        for s in p["samples"]:
	            bad += [i for i in s if not (isinstance(i, int) and 0 <= i < len(fr))]
	            st = [fr[i]["name"] if isinstance(i, int) and 0 <= i < len(fr) else None for i in s]
	            if "worker" in st:
	                k = st.index("worker")
	                # worker's own loop, and hostile_entry's own code, between
	                # two calls, are the other places its thread can be caught
	                # (rarely)
	                if len(st) != k + 1 and (st[k + 1:k + 2] != ["hostile_entry"] or
	                                         len(st) not in (k + 2, k + 3)):
	                    order.append(st[k:])
	    say("json indices", not bad, bad[:5])
	    say("json stacks", not order, order[:2])
	    ok, badc = clean_text("".join(f["name"] + f.get("file", "") for f in fr) + "".join(names))
	    say("json clean", ok, badc)
	    fnames = {f["name"] for f in fr}
	    for fn in FUNCS:
	        say("json function " + fn[:24], fn in fnames, "")
	    say("json file", any(f.get("file", "").endswith("<src&\"'>?.c") for f in fr),
	        {f.get("file") for f in fr})

	def folded(path):
	    text, err = utf8(path)
	    say("folded utf8", text is not None, err)
	    if text is None:
	        return
	    lines = text.split("\n")
	    say("folded ends with newline", lines[-1] == "", lines[-1][:50])
	    bad = [l for l in lines[:-1] if not re.fullmatch(r"[^;\n]+(;[^;\n]+)* [0-9]+", l)]
	    say("folded lines", lines[:-1] and not bad, bad[:2])
	    ok, badc = clean_text("".join(lines))
	    say("folded clean", ok, badc)
	    for th in THREADS:
	        say("folded thread " + th, any(l.startswith(th) for l in lines), "")

	def raw(path):
	    text, err = utf8(path)
	    say("pprof raw utf8", text is not None, err)
	    if text is None:
	        return
	    ok, badc = clean_text(text.replace("\n", "").replace("\t", ""))
	    say("pprof raw clean", ok, badc)
	    for th in THREADS[1:]:
	        say("pprof thread " + th, ("thread:[%s]" % th[:-2]) in text, "")
	    for lib in LIBS:
	        say("pprof mapping " + lib[:40], ("/%s " % lib) in text, "")

	def convjson(path):
	    """--convert's speedscope: each sample's frames, root first, are its input line's, cleaned."""
	    want = sorted(["main;bad?frame;leaf", "main;<image href=x onerror=alert(1)>;&amp;??[1m",
	                   "main;" + "名" * 100 + ";\u202e", "main;???surrogate;??overlong;?", "main;ok;leaf2"])
	    try:
	        d = json.loads(open(path, "rb").read().decode("utf-8"))
	        fr = d["shared"]["frames"]
	        got = sorted(";".join(fr[i]["name"] for i in s) for p in d["profiles"] for s in p["samples"])
	    except Exception as e:
	        got = repr(e)
	    say("stacks", got == want, got)

	def control(path):
	    """The payload left raw in a title: what an unescaped module name did."""
	    svg = open(path, encoding="utf-8", errors="surrogateescape").read()
	    at = svg.index("<title>") + len("<title>")
	    raw = sys.argv[1].replace("&apos;", "'") + "</image>"
	    open(path.replace(".svg", "-control.svg"), "w", encoding="utf-8", errors="surrogateescape").write(svg[:at] + raw + svg[at:])

	def probe(path):
	    """Clicks every frame (zoom: the script cuts labels), looks for half characters."""
	    svg = open(path, encoding="utf-8", errors="surrogateescape").read()
	    js = """<script type="text/ecmascript"><![CDATA[
	    (function () {
	      let zooms = 0, errors = 0, lone = 0;
	      try {
	        for (const g of document.querySelectorAll('g.f')) {
	          g.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	          zooms++;
	          for (const t of document.querySelectorAll('g.f text'))
	            lone += /[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?:[^\\uD800-\\uDBFF]|^)[\\uDC00-\\uDFFF]/.test(t.textContent);
	        }
	      } catch (e) { errors++; console.log('probe error: ' + e); }
	      document.documentElement.setAttribute('data-probe', 'zooms=' + zooms + ' errors=' + errors + ' lone=' + lone);
	    })();
	    ]]></script>
	    """
	    end = svg.rindex("</svg>")
	    open(path.replace(".svg", "-probe.svg"), "w", encoding="utf-8", errors="surrogateescape").write(svg[:end] + js + svg[end:])

	def fuzzgen(path):
	    """Fixed seed: 24 files of 30 folded lines, frames of 1-40 random bytes."""
	    random.seed(17)
	    os.makedirs(path, exist_ok=True)
	    for k in range(24):
	        with open(os.path.join(path, "%02d.folded" % k), "wb") as f:
	            for _ in range(30):
	                frames = [bytes(random.choice(b"\x01\x1b\x7f\x80\x9f\xc0\xc3\xe2\xed\xef\xf0\xf4\xff<>&\"';\\ a\xa9\xbf")
	                                if random.random() < 0.6 else random.randint(0, 255)
	                                for _ in range(random.randint(1, 40))) for _ in range(random.randint(1, 8))]
	                # Not ';' (the separator) nor what ends a line: '\n', '\r', NUL.
	                line = b";".join(fr.translate(None, b";\n\r\0") or b"x" for fr in frames)
	                f.write(line + b" %d\n" % random.randint(1, 9))

	def fuzzcheck(path):
	    bad = []
	    for p in sorted(os.listdir(path)):
	        p = os.path.join(path, p)
	        try:
	            if p.endswith(".svg"):
	                d = xml.dom.minidom.parse(p)
	                assert not d.getElementsByTagName("image"), "image element"
	            elif p.endswith(".json"):
	                d = json.loads(open(p, "rb").read().decode("utf-8"))
	                n = len(d["shared"]["frames"])
	                assert all(0 <= i < n for pr in d["profiles"] for s in pr["samples"] for i in s), "index"
	        except Exception as e:
	            bad.append("%s: %r" % (os.path.basename(p), e))
	    say("outputs", not bad, bad[:2])

	# facts.py PWN TAG:KIND:FILE...: each fact's name is prefixed with "TAG ".
	TAG = ""
	_say = say
	def say(name, ok, detail=""):
	    _say(TAG + " " + name, ok, detail)
	KINDS = {"svg": svg, "json": speedscope, "folded": folded, "raw": raw, "convjson": convjson,
	         "control": control, "probe": probe, "fuzzgen": fuzzgen, "fuzzcheck": fuzzcheck}
	for arg in sys.argv[2:]:
	    TAG, kind, path = arg.split(":", 2)
	    try:
	        if os.path.exists(path) or kind == "fuzzgen":
	            KINDS[kind](path)
	    except Exception as e:
	        say(kind + " checker failed", False, repr(e))
EOF

# facts TAG:KIND:FILE...: run the checker, its lines into $TMP/facts
facts() { python3 "$TMP/facts.py" "$PWN" "$@" >"$TMP/facts" 2>&1; }
# fact NAME LABEL: the check for one of its lines (missing: failed)
fact() {
	local line
	line=$(grep -F -m1 "$1	" "$TMP/facts")
	DETAIL="${line#*	}" check "$2" "[ '$(cut -f2 <<<"$line")' = ok ]"
}

# --- the target, profiled to every format; --convert; the fuzz inputs -------------
if start_target hostile "$TMP/libs"; then
	pid=$TARGET_PID
	comms=$(cat /proc/"$pid"/task/*/comm | od -An -c | tr -s ' \n' ' ')
	DETAIL="$comms" check "target: the kernel cut 'éééééééé' inside a character" \
		"cat /proc/$pid/task/*/comm | grep -qaxF \"\$(printf 'ééééééé\\303')\""
	for out in out.svg out.json out.folded out.pprof; do
		args=()
		case $out in *.svg | *.folded) args=(--threads) ;; esac
		prof "$TMP/$out" "$pid" --duration 0.5 "${args[@]}" -o "$TMP/$out"
		check_ran "${out#out.}" "$TMP/$out" "$TMP/$out"
	done
	# Issue 27, item 8: the text dump reaches a terminal: the thread named
	# "<b>&\"'\e[1m\t" must not send its ESC and TAB there (nor anything
	# else of a name: only newlines are control characters in a dump).
	prof "$TMP/dump" "$pid" --dump
	DETAIL="exit $PROF_RC: $(head -c 200 "$TMP/dump.err")" check "dump: exits 0" "[ '$PROF_RC' = 0 ]"
	check "dump: the hostile thread is in it, its name cleaned" "grep -qF '<b>&\"'\''?[1m?' '$TMP/dump.out'"
	ctl=$(LC_ALL=C tr -d '\n' <"$TMP/dump.out" | LC_ALL=C tr -dc '\000-\037\177' | wc -c)
	DETAIL="$ctl control bytes; $(LC_ALL=C grep -n "$(printf '\033')" "$TMP/dump.out" | head -2 | od -c | head -3 | tr '\n' ' ')" \
		check "dump: no raw control character (ESC, TAB, CR...) in the text dump" "[ '$ctl' = 0 ]"
	stop_target "$pid"
fi
if have_pprof && [ -s "$TMP/out.pprof" ]; then
	pprof_raw "$TMP/out.pprof" >"$TMP/raw.txt"
	DETAIL="$(head -c 300 "$TMP/raw.txt")" check "pprof: go tool pprof -raw reads it" \
		"grep -q '^Samples:' '$TMP/raw.txt' && grep -q '^Mappings' '$TMP/raw.txt'"
fi
{
	printf 'main;bad\377frame;leaf 3\n'
	printf 'main;<image href=x onerror=alert(1)>;&amp;\001\033[1m 2\n'
	printf 'main;%s;\342\200\256 1\n' "$(printf '名%.0s' $(seq 100))"
	printf 'main;\355\240\200surrogate;\300\257overlong;\360\237\224 4\n'
	printf 'main;ok;leaf2 5\n'
} >"$TMP/in.folded"
for fmt in svg json; do
	prof "$TMP/conv-$fmt" --convert "$TMP/in.folded" -o "$TMP/conv.$fmt"
	DETAIL="exit $PROF_RC: $(head -c 300 "$TMP/conv-$fmt.err")" \
		check "--convert to $fmt: exits 0" "[ '$PROF_RC' = 0 ] && [ -s '$TMP/conv.$fmt' ]"
done

facts svg:svg:"$TMP/out.svg" json:json:"$TMP/out.json" folded:folded:"$TMP/out.folded" \
	pprof:raw:"$TMP/raw.txt" conv:svg:"$TMP/conv.svg" conv:convjson:"$TMP/conv.json" \
	svg:control:"$TMP/out.svg" svg:probe:"$TMP/out.svg" fuzz:fuzzgen:"$TMP/fuzz"

if [ -s "$TMP/out.svg" ]; then
	fact "svg svg utf8" "svg: valid UTF-8"
	fact "svg svg xml" "svg: well-formed XML (python3 xml.dom.minidom)"
	fact "svg svg elements" "svg: only svg, style, rect, text, desc, g, title, script elements"
	fact "svg svg no image" "svg: no <image> element"
	fact "svg svg titles clean" "svg: titles without control characters"
	fact "svg svg labels" "svg: each label is its frame's name or a prefix of it and '..'"
	fact "svg svg labels clean" "svg: labels without control characters"
	fact "svg svg stripped frame" "svg: the stripped library's function named after its CJK file name"
	for th in 'hostile (' 'ééééééé? (' 'a线程名字? (' "<b>&\"'?[1m? ("; do
		fact "svg svg thread $th" "svg: thread '$th...' (cleaned)"
	done
	for lib in '<image href=x onerror=alert(1)>.so' "${PWN:0:40}" 'lib&<x>.so' "it's a \"lib\".so" \
		'lib???x.so' "${CJK84:0:40}"; do
		fact "svg svg module ${lib:0:40}" "svg: module [${lib:0:40}] in a title, as text"
	done
	for fn in '<svg onload=alert(2)>' 'bad??name' 'tab?here?[1m?' "$(printf '名%.0s' $(seq 24))" \
		'计算非常长的函数名字测试用例' "$(printf '🔥%.0s' $(seq 20))" anonymous_work; do
		fact "svg svg function ${fn:0:24}" "svg: function '${fn:0:24}' (cleaned)"
	done
	if xmllint --version >/dev/null 2>&1; then
		check "svg: xmllint --noout accepts it" xmllint --noout --nonet "$TMP/out.svg"
	fi
fi
if [ -s "$TMP/out.json" ]; then
	fact "json json utf8" "speedscope: valid UTF-8"
	fact "json json parses" "speedscope: JSON parses"
	for th in 'hostile (' 'ééééééé? (' 'a线程名字? (' "<b>&\"'?[1m? ("; do
		fact "json json thread $th" "speedscope: a profile for thread '$th...'"
	done
	fact "json json indices" "speedscope: every frame index in range"
	fact "json json stacks" "speedscope: every worker stack is worker, hostile_entry, a function of the library"
	fact "json json clean" "speedscope: names and files without control characters"
	for fn in '<svg onload=alert(2)>' 'bad??name' 'tab?here?[1m?' '计算非常长的函数名字测试用例'; do
		fact "json json function ${fn:0:24}" "speedscope: frame '$fn'"
	done
	fact "json json file" "speedscope: source file '<src&\"'>?.c'"
fi
if [ -s "$TMP/out.folded" ]; then
	fact "folded folded utf8" "folded: valid UTF-8"
	fact "folded folded ends with newline" "folded: ends with a newline"
	fact "folded folded lines" "folded: every line 'frame;...;frame COUNT'"
	fact "folded folded clean" "folded: no control characters"
	for th in 'hostile (' 'ééééééé? (' 'a线程名字? (' "<b>&\"'?[1m? ("; do
		fact "folded folded thread $th" "folded: root frame '$th...'"
	done
fi
if [ -s "$TMP/raw.txt" ]; then
	fact "pprof pprof raw utf8" "pprof: its strings are valid UTF-8"
	fact "pprof pprof raw clean" "pprof: its strings have no control characters"
	for th in 'ééééééé? (' 'a线程名字? (' "<b>&\"'?[1m? ("; do
		fact "pprof pprof thread $th" "pprof: thread label '${th% (}'"
	done
	for lib in '<image href=x onerror=alert(1)>.so' "${PWN:0:40}" 'lib&<x>.so' \
		"it's a \"lib\".so" 'lib???x.so' "${CJK84:0:40}"; do
		fact "pprof pprof mapping ${lib:0:40}" "pprof: mapping file .../${lib:0:40}"
	done
elif ! have_pprof; then
	skip "pprof: go tool pprof reads it" "no $GO"
fi
fact "conv svg xml" "--convert svg: well-formed XML"
fact "conv svg no image" "--convert svg: no <image> element"
fact "conv svg labels" "--convert svg: each label is its frame's name or a prefix of it and '..'"
fact "conv svg labels clean" "--convert svg: labels without control characters"
fact "conv svg cut labels" "--convert svg: the 100-character CJK label is cut (at a character)"
fact "conv stacks" "--convert speedscope: every sample's frames are its line's, cleaned (no shifted index)"

# --- in headless Chromium: no script of a name runs ---------------------------------
# open_page SVG: sets PAGE to "parsererror=N pwned=yes|no console=yes|no
# frames=N", what the page did once loaded.
open_page() {
	: >"$TMP/browser.log"
	browser --virtual-time-budget=2000 --dump-dom "file://$1" >"$TMP/page.dom"
	local perr pwned=no cons=no
	perr=$(grep -c parsererror "$TMP/page.dom")
	grep -q 'data-pwned="yes"' "$TMP/page.dom" && pwned=yes
	grep -qa 'PWNED' "$TMP/browser.log" && cons=yes
	PAGE="parsererror=$perr pwned=$pwned console=$cons frames=$(grep -c '<g class="f"' "$TMP/page.dom")"
}
if [ ! -s "$TMP/out.svg" ]; then
	skip "svg in headless Chromium" "no SVG written"
elif ! need_chromium; then
	skip "svg in headless Chromium" "chromium is not installed (Debian package chromium: make deps installs it)"
else
	n=$(grep -c '<g class="f"' "$TMP/out.svg")
	open_page "$TMP/out.svg"
	DETAIL="$PAGE" check "Chromium: the SVG loads without a parser error, all $n frames" \
		"grep -qE '^parsererror=0 .* frames=$n\$' <<<'$PAGE'"
	DETAIL="$PAGE" check "Chromium: no onerror handler of a library name ran (no mark, no console line)" \
		"grep -q 'pwned=no console=no' <<<'$PAGE'"
	errs=$(grep -E 'CONSOLE.*(Uncaught|Error)' "$TMP/browser.log" | head -3)
	DETAIL="$errs" check "Chromium: the embedded script raised no error" "[ -z \"\$errs\" ]"
	# The control: the same payload left raw in a title runs, and is seen.
	open_page "$TMP/out-control.svg"
	DETAIL="$PAGE" check "Chromium control: the payload left raw runs, and this test sees it" \
		"grep -q 'pwned=yes console=yes' <<<'$PAGE'"
	# Every frame clicked (zoom: the script cuts the labels, by code
	# points: no half of an emoji), without an error.
	: >"$TMP/browser.log"
	browser --dump-dom "file://$TMP/out-probe.svg" >"$TMP/probe.dom"
	res=$(grep -o 'data-probe="[^"]*"' "$TMP/probe.dom")
	DETAIL="$res $(grep -a 'probe error' "$TMP/browser.log" | head -1)" \
		check "Chromium: a click on each of the $n frames zooms, no error, no label with half a character" \
		"[ '$res' = 'data-probe=\"zooms=$n errors=0 lone=0\"' ]"
fi

# --- endless input (issue 27, item 4): refused early, with bounded memory ------------------
# /dev/zero is one line without end; a 2 MiB frame name is no function's.
# Under a 1 GiB address-space limit: b1f3e94 read /dev/zero at ~360 MB/s
# until it ran out of memory.
# (Not under the sanitizers: ASan reserves terabytes of address space for
# its shadow memory, which the limit forbids.)
(if [ "${CPROF_SANITIZED:-}" != 1 ]; then ulimit -v 1048576; fi
 exec timeout 30 "$CPROF" --convert /dev/zero -o "$TMP/zero.svg") >"$TMP/zero.out" 2>"$TMP/zero.err"
rc=$?
DETAIL="exit $rc: $(head -c 200 "$TMP/zero.err")" \
	check "--convert /dev/zero: refused at once, the line too long, in one line" \
	"[ $rc = 1 ] && [ \"\$(wc -l <'$TMP/zero.err')\" = 1 ] && grep -q 'a line longer than 64 MiB' '$TMP/zero.err'"
{ printf 'main;'; head -c 2097152 /dev/zero | tr '\0' x; printf ' 3\n'; } >"$TMP/bigname.folded"
prof "$TMP/bigname" --convert "$TMP/bigname.folded" -o "$TMP/bigname.svg"
DETAIL="exit $PROF_RC: $(head -c 200 "$TMP/bigname.err")" \
	check "--convert: a 2 MiB frame name refused, by its line number" \
	"[ '$PROF_RC' = 1 ] && grep -q 'bigname.folded:1: a frame name longer than 1 MiB' '$TMP/bigname.err'"

# --- fuzz: random byte names through --convert and every writer ----------------------
fuzz_bad=()
for in in "$TMP"/fuzz/*.folded; do
	for fmt in svg json; do
		timeout 20 "$CPROF" --convert "$in" -o "${in%.folded}.$fmt" >/dev/null 2>"$TMP/fuzz.err" ||
			fuzz_bad+=("$(basename "$in") $fmt: exit $?: $(head -c 100 "$TMP/fuzz.err")")
	done
done
facts fuzz:fuzzcheck:"$TMP/fuzz"
line=$(grep -F -m1 "fuzz outputs	" "$TMP/facts")
DETAIL="${fuzz_bad[*]:0:3} ${line#*	}" \
	check "fuzz: 24 random-byte folded files (seed 17): every SVG well-formed, every speedscope JSON valid, indices in range" \
	"[ \${#fuzz_bad[@]} = 0 ] && [ '$(cut -f2 <<<"$line")' = ok ] && [ \$(ls '$TMP'/fuzz/*.svg | wc -l) = 24 ]"

done_testing
