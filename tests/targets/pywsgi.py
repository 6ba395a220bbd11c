"""A WSGI application for cprof-attach's tests (gunicorn's workers in
tests/t_python.sh): each request hashes for a while in app_handler, the
function the profile must show, with its file."""
import hashlib


def app_handler(environ, start_response):
    h = b"cprof"
    for _ in range(20000):
        h = hashlib.sha256(h).digest()
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [h.hex().encode() + b"\n"]


application = app_handler
