"""Holds a process the way a debugger does (issue 40, item 6), bounded:
    python3 ptholder.py READY PID [SECONDS]
seizes every thread of PID (PTRACE_SEIZE: no signal) and interrupts each
(PTRACE_INTERRUPT: a ptrace stop, state 't', not 'T'), writes READY, then
holds them SECONDS (default 20) at most, or until PID is gone, and exits
(which detaches them).
"""
import ctypes
import os
import sys
import time

PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
ready, pid = sys.argv[1], int(sys.argv[2])
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
held = 0
for tid in os.listdir("/proc/%d/task" % pid):
    t = int(tid)
    if libc.ptrace(PTRACE_SEIZE, t, None, None) == 0 and libc.ptrace(PTRACE_INTERRUPT, t, None, None) == 0:
        held += 1
with open(ready + ".tmp", "w") as f:
    f.write("held %d\n" % held)
os.rename(ready + ".tmp", ready)
end = time.monotonic() + secs
while time.monotonic() < end and os.path.exists("/proc/%d" % pid):
    try:
        os.waitpid(-1, os.WNOHANG | 0x40000000)   # __WALL: reap the stops
    except ChildProcessError:
        pass
    time.sleep(0.05)    # a holder's pace, not a synchronization
