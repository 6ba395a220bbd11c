"""pyforked.py READY N: a Python program that forks N workers through
libc's fork(), as an embedding server does (uwsgi's master loads the app,
then forks): CPython's own after-fork code does not run, so each worker's
thread state keeps its parent's native thread id.  Each worker runs
forked_work() -> forked_leaf() for ever; the parent sleeps.  READY gets
the parent's PID, then a line "worker PID" for each worker, once every
worker has written READY.PID (it runs)."""
import ctypes
import os
import sys
import time


def forked_leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def forked_work():
    while True:
        forked_leaf(3000)


def main():
    ready, n = sys.argv[1], int(sys.argv[2])
    libc = ctypes.CDLL(None, use_errno=True)
    workers = []
    for _ in range(n):
        pid = libc.fork()
        if pid == 0:
            with open("%s.%d" % (ready, os.getpid()), "w") as f:
                f.write("running\n")
            forked_work()
        workers.append(pid)
    while not all(os.path.exists("%s.%d" % (ready, w)) for w in workers):
        time.sleep(0.01)
    with open(ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
        for w in workers:
            f.write("worker %d\n" % w)
    os.rename(ready + ".tmp", ready)
    while True:
        time.sleep(3600)


main()
