"""Python threads that come and go, each with a name of its own: 20 at a
time, each adding a little and sleeping 10 ms, then the next 20 (about a
thousand threads a second).  Writes "ready" to the file named by its
first argument, then runs until killed.
"""
import sys
import threading
import time


def work():
    s = 0
    for i in range(2000):
        s += i
    time.sleep(0.01)


with open(sys.argv[1], "w") as f:
    f.write("ready\n")
n = 0
while True:
    batch = []
    for _ in range(20):
        t = threading.Thread(target=work, name="job-%d" % n)
        n += 1
        t.start()
        batch.append(t)
    for t in batch:
        t.join()
