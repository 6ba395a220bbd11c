"""Generated code, new uniquely named functions per call (what notebooks,
template engines and code generators make): each round compiles, from a
"file" of its own, a chain of DEPTH functions with long names of their own,
each calling the next, the innermost adding a while (about 1 ms); then
runs it.  Names, files and code objects are never the same twice.  Writes
"ready" to the file named by its first argument, then runs until killed.
    python3 pygen.py READY [DEPTH [LONG]]   (default 8 functions, names of
                                            about 100 + LONG characters)
"""
import sys

depth = int(sys.argv[2]) if len(sys.argv) > 2 else 8
stem = "render_block_" + "x" * (80 + (int(sys.argv[3]) if len(sys.argv) > 3 else 0))
path = "/srv/app/templates/" + "section/" * 30
with open(sys.argv[1], "w") as f:
    f.write("ready\n")
n = 0
while True:
    src = []
    for k in range(depth):
        src.append("def %s_%d_%d(m):" % (stem, n, k))
        if k + 1 < depth:
            src.append("    return %s_%d_%d(m) + 1" % (stem, n, k + 1))
        else:
            src.append("    s = 0\n    for i in range(m):\n        s += i\n    return s")
    ns = {}
    exec(compile("\n".join(src) + "\n", "%spage_%d.html" % (path, n), "exec"), ns)
    ns["%s_%d_0" % (stem, n)](20000)
    n += 1
