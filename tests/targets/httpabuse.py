"""An abusive HTTP client for t_serve (issue 40, item 7), bounded:
    python3 httpabuse.py READY PORT SLOW IDLE [SECONDS]
opens SLOW slowloris connections to 127.0.0.1:PORT from 127.0.0.2 (a
request's headers never finished: one more header line a second) and IDLE
connections from 127.0.0.3 that send nothing; writes READY (the
connections opened, and refused) once all are open and the slow ones have
sent their first lines, then holds them for SECONDS (default 30) at most
and exits.  A connection the server closes is not opened again.
"""
import socket
import sys
import time

ready, port, slow, idle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
secs = float(sys.argv[5]) if len(sys.argv) > 5 else 30.0


def conn(src):
    s = socket.socket()
    s.settimeout(2)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


opened, refused, slows = 0, 0, []
keep = []
for _ in range(slow):
    try:
        s = conn("127.0.0.2")
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        slows.append(s)
        opened += 1
    except OSError:
        refused += 1
for _ in range(idle):
    try:
        keep.append(conn("127.0.0.3"))
        opened += 1
    except OSError:
        refused += 1
with open(ready + ".tmp", "w") as f:
    f.write("opened %d refused %d\n" % (opened, refused))
import os
os.rename(ready + ".tmp", ready)
end = time.monotonic() + secs
while time.monotonic() < end and slows:
    time.sleep(1)   # a slowloris' pace, not a synchronization
    for s in list(slows):
        try:
            s.sendall(b"X-Slow: 1\r\n")
        except OSError:
            slows.remove(s)
