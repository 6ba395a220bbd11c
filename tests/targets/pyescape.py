"""pyescape.py READY: a Python function whose name, qualified name and
file name hold control characters (an escape sequence, a bell), set
through code.replace(), as generated code or a hostile program can.
Writes READY once that function runs (it sleeps, for ever)."""
import sys
import time


def spin():
    while True:
        time.sleep(0.01)


code = spin.__code__
names = dict(co_name="ev\x1b[31mil\x07", co_filename="/tmp/f\x1b]0;x\x07.py")
if sys.version_info >= (3, 11):
    names["co_qualname"] = names["co_name"]
spin.__code__ = code.replace(**names)
with open(sys.argv[1], "w") as f:
    f.write("ready\n")
spin()
