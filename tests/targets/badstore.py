"""badstore.py READY MODE: a push store that misbehaves, on 127.0.0.1
(t_push.sh).  MODE "silent": reads each request and never answers.
MODE "endless": answers 200, then a body that never ends; for each
connection, once the client has gone, appends the bytes it could write
to READY.bytes.  Writes its URL to READY once listening; runs until
killed."""
import socket
import sys
import threading

ready, mode = sys.argv[1], sys.argv[2]


def serve(conn):
    with conn:
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            if mode == "silent":
                while conn.recv(65536):
                    pass
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
            sent, block = 0, b"x" * 65536
            while True:
                sent += conn.send(block)
        except OSError:
            pass
        if mode == "endless":
            with open(ready + ".bytes", "a") as f:
                f.write("%d\n" % sent)


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(ready + ".tmp", "w") as f:
    f.write("http://127.0.0.1:%d\n" % s.getsockname()[1])
import os
os.rename(ready + ".tmp", ready)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
