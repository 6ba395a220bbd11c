"""A Python function called from C over and over: sorted() calls key()
for every item, each call a new C call into the eval loop, so that a
sample often catches one starting or ending (_PyEval_EvalFrameDefault on
the native stack before its frame is linked, or after it is unlinked).
Writes "ready" to the file named by its first argument, then runs until
killed.
"""
import sys


def key(x):
    return -x


def churn():
    while True:
        sorted(range(2000), key=key)


with open(sys.argv[1], "w") as f:
    f.write("ready\n")
churn()
