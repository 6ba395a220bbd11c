"""pydeep.py READY DEPTH: the main thread DEPTH calls deep in rec(), then
computing at the bottom (a generator summed: a second eval loop entered
from C).  Writes its PID to READY once at the bottom."""
import os
import sys

sys.setrecursionlimit(100000)


def rec(n):
    if n == 0:
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        while True:
            sum(i for i in range(1000))
    return rec(n - 1)


rec(int(sys.argv[2]))
