"""A Python program with a known split, for cprof-attach's Python frames.

Six threads, each in one place for the whole run: a computing chain
(compute_outer -> compute_middle -> compute_inner), a sleeper, a lock
holder (sleeping with the lock held) and a waiter (blocked on that lock),
a C-extension call (zlib.compress, which releases the GIL), and the main
thread joining.  Writes the file named by its first argument once every
thread is where it stays (its PID, then a line "NAME TID" per thread,
NAME the function it runs), then runs until killed.
"""
import os
import sys
import threading
import time
import zlib

lock = threading.Lock()
holding = threading.Event()
started = []


def compute_inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def compute_middle():
    return compute_inner(20000)


def compute_outer():
    started.append("compute")
    while True:
        compute_middle()


def sleeper():
    started.append("sleeper")
    while True:
        time.sleep(3600)


def lock_holder():
    with lock:
        holding.set()
        started.append("holder")
        while True:
            time.sleep(3600)


def lock_waiter():
    holding.wait()
    started.append("waiter")
    with lock:
        pass


def cext_call():
    data = os.urandom(1 << 16) * 16
    started.append("cext")
    while True:
        zlib.compress(data, 9)


def main():
    threads = [threading.Thread(target=f, name=f.__name__, daemon=True)
               for f in (compute_outer, sleeper, lock_holder, lock_waiter, cext_call)]
    for t in threads:
        t.start()
    while len(started) < len(threads):
        time.sleep(0.01)
    time.sleep(0.2)     # the waiter reaches its acquire
    if len(sys.argv) > 1:
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
            # then each thread's OS thread: "NAME TID"
            # (3.8+: before, 0)
            for t in threads:
                f.write("%s %d\n" % (t.name, getattr(t, "native_id", 0)))
            f.write("main %d\n" % getattr(threading, "get_native_id", int)())
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
