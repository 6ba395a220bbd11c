"""pytimeouts.py LIB READY: tests/targets/timeouts.c's server and its
client loop (LIB, tests/bin/libtimeouts.so, run by timeouts_main()) inside
a CPython process, beside a Python thread that computes (py_compute ->
py_step): a native extension's calls with a timeout, in a process whose
Python frames cprof-attach reads.  The library writes READY and its
reports (READY.report on SIGUSR1) as tests/bin/timeouts does; SIGUSR1 is
blocked first, in every thread, so that only the library's sigwaitinfo()
takes it.
"""
import ctypes
import signal
import sys
import threading


def py_step(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def py_compute():
    while True:
        py_step(5000)


def main():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    threading.Thread(target=py_compute, name="py_compute", daemon=True).start()
    lib = ctypes.CDLL(sys.argv[1])
    argv = (ctypes.c_char_p * 3)(b"pytimeouts", sys.argv[2].encode(), None)
    lib.timeouts_main(2, argv)      # never returns


main()
