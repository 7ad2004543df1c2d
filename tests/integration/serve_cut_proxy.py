#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 for madf serve's resume tests: forwards every
connection to 127.0.0.1:TARGET, and when the file CUT appears closes every
connection open then (once; the file is removed), as a network drop would.
The Host header is rewritten to the target's (as a reverse proxy's is).
Each request's first line (requests come whole in one read here) and its Last-Event-ID header (or "-") are
appended to LOG. The port is printed on stdout's first line.

usage: serve_cut_proxy.py TARGET CUT LOG
"""
import os
import re
import socket
import sys
import threading
import time

target, cut, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = threading.Lock()
live = []


def pump(a, b, upstream):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            if upstream and re.match(rb"(GET|POST) ", d):
                head = d.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
                lei = [h.split(":", 1)[1].strip() for h in head[1:]
                       if h.lower().startswith("last-event-id:")]
                with open(log, "a") as f:
                    f.write("%s %s\n" % (head[0], lei[0] if lei else "-"))
                d = re.sub(rb"(?im)^host: 127\.0\.0\.1:%d\r$" % port,
                           b"Host: 127.0.0.1:%d\r" % target, d, count=1)
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def cutter():
    while True:
        if os.path.exists(cut):
            with lock:
                for c, u in live:
                    for s in (c, u):
                        try:
                            s.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                live.clear()
            os.unlink(cut)
        time.sleep(0.02)


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(64)
port = srv.getsockname()[1]
print(port, flush=True)
threading.Thread(target=cutter, daemon=True).start()
while True:
    c, _ = srv.accept()
    u = socket.create_connection(("127.0.0.1", target))
    with lock:
        live.append((c, u))
    threading.Thread(target=pump, args=(c, u, True), daemon=True).start()
    threading.Thread(target=pump, args=(u, c, False), daemon=True).start()
