"""Python workers forked by a Python parent, for cprof-attach --subprocesses.

The parent forks two workers (os.fork), one computing (worker_spin) and
one sleeping (worker_sleep), then writes the file named by its first
argument: its PID, then "NAME PID" per worker.  It waits in parent_wait
for the file named by its second argument; when that appears, it forks one
more computing worker (late_worker) and writes "late PID" to that name
plus ".ready".  Runs until killed; the workers end with their parent.
"""
import os
import sys
import time

parent = os.getpid()


def spin_work():
    s = 0
    for i in range(10000):
        s += i * i
    return s


def worker_spin():
    while os.getppid() == parent:
        spin_work()


def worker_sleep():
    while os.getppid() == parent:
        time.sleep(0.2)


def late_worker():
    while os.getppid() == parent:
        spin_work()


def fork(fn):
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(0)
    return pid


def publish(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def parent_wait(trigger):
    while not os.path.exists(trigger):
        time.sleep(0.01)


def main():
    ready, trigger = sys.argv[1], sys.argv[2]
    spin = fork(worker_spin)
    sleep = fork(worker_sleep)
    publish(ready, "%d\nworker_spin %d\nworker_sleep %d\n" % (parent, spin, sleep))
    parent_wait(trigger)
    late = fork(late_worker)
    publish(trigger + ".ready", "late %d\n" % late)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
