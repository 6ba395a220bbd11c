# pyfib.py READY: recursive Python under a named chain, run by python3.12
# -X perf (tests/t_runtimes.sh): every Python call goes through a small
# trampoline of JIT code, named "py::FUNC:FILE" in /tmp/perf-PID.map, which
# pushes RBP and sets it.  Writes READY (its PID) once running.
import os
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def py_middle(n):
    return fib(n) + fib(n - 1)


def py_outer():
    return sum(py_middle(16 + (i & 1)) for i in range(4))


def main():
    ready = sys.argv[1]
    rounds = 0
    while True:
        py_outer()
        rounds += 1
        if rounds == 20:
            with open(ready + ".tmp", "w") as f:
                f.write("%d\n" % os.getpid())
            os.rename(ready + ".tmp", ready)


main()
