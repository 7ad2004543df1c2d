#!/usr/bin/env python3
"""HTTP fixtures for madf's live data sources, on 127.0.0.1 only.

  GET /service/data/EXR/D.<CCY>[+<CCY>...].EUR.SP00.A
      ?startPeriod=YYYY-MM-DD&endPeriod=YYYY-MM-DD&format=csvdata
      the ECB Data Portal's shape: the rows of fixtures/ecb/<series>.csv
      inside the period, as text/csv; 404 "No results found." when there
      are none (as the ECB does, also for a series it does not have)
  GET /feeds/<name>   a feed: --feed NAME=PATH, else fixtures/rss/<name>
  GET /_mode/<mode>   switches the failure mode (not logged):
      ok             normal answers
      503            every request answers 503
      429-once:N     the next request answers 429 with Retry-After: N
      429:N          every request answers 429 with Retry-After: N
      slow:N         wait N seconds before answering
      garbage        200 with a body that is neither CSV nor XML

Every other request is appended to --log as a JSON line: time (ISO 8601
UTC), t (seconds since the epoch), method, path, headers, status, mode.
The port (0 = any free one) is printed on stdout's first line.

usage: fixture_server.py --log FILE [--port N] [--mode MODE] [--feed NAME=PATH]...
"""
import argparse
import csv
import datetime
import io
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
LOCK = threading.Lock()
STATE = {"mode": "ok"}
FEEDS = {}
LOG = None
SERIES = re.compile(r"^D\.([A-Z]{3}(?:\+[A-Z]{3})*)\.EUR\.SP00\.A$")


def log(entry):
    with LOCK:
        with open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")


def ecb_rows(codes, start, end):
    header, rows = None, []
    for code in codes:
        path = os.path.join(FIXTURES, "ecb", "D.%s.EUR.SP00.A.csv" % code)
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            lines = f.read().splitlines()
        header = lines[0]
        for line in lines[1:]:
            period = next(csv.reader(io.StringIO(line)))[6]
            if (not start or period >= start) and (not end or period <= end):
                rows.append(line)
    return header, rows


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, ctype="text/plain; charset=utf-8", extra=()):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        return status

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path.startswith("/_mode/"):
            with LOCK:
                STATE["mode"] = url.path[len("/_mode/"):]
            self.send(200, "mode %s\n" % STATE["mode"])
            return
        with LOCK:
            mode = STATE["mode"]
            if mode.startswith("429-once:"):
                STATE["mode"] = "ok"
        now = time.time()
        status = self.answer(url, mode)
        log({"time": datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
             .strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "t": now, "method": "GET",
             "path": self.path, "headers": dict(self.headers.items()), "status": status,
             "mode": mode})

    def answer(self, url, mode):
        if mode == "503":
            return self.send(503, "Service Unavailable\n")
        if mode.startswith("429"):
            return self.send(429, "Too Many Requests\n", extra=[("Retry-After", mode.split(":")[1])])
        if mode.startswith("slow:"):
            time.sleep(float(mode.split(":")[1]))
        if mode == "garbage":
            return self.send(200, "<html><body>maintenance</body></html>\n", "text/html")
        if url.path.startswith("/service/data/EXR/"):
            m = SERIES.match(url.path[len("/service/data/EXR/"):])
            q = parse_qs(url.query)
            if q.get("format", ["csvdata"])[0] != "csvdata":
                return self.send(400, "only format=csvdata here\n")
            if not m:
                return self.send(404, "No results found.\n")
            header, rows = ecb_rows(m.group(1).split("+"), q.get("startPeriod", [""])[0],
                                    q.get("endPeriod", [""])[0])
            if not rows:
                return self.send(404, "No results found.\n")
            return self.send(200, "\r\n".join([header] + rows) + "\r\n", "text/csv")
        if url.path.startswith("/feeds/"):
            name = url.path[len("/feeds/"):]
            path = FEEDS.get(name) or os.path.join(FIXTURES, "rss", os.path.basename(name))
            if not os.path.isfile(path):
                return self.send(404, "no such feed\n")
            with open(path, "rb") as f:
                body = f.read()
            ctype = "application/atom+xml" if body.find(b"<feed") >= 0 else "application/rss+xml"
            return self.send(200, body, ctype)
        return self.send(404, "not found\n")


def main():
    global LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--feed", action="append", default=[])
    a = ap.parse_args()
    LOG = a.log
    STATE["mode"] = a.mode
    for f in a.feed:
        name, _, path = f.partition("=")
        FEEDS[name] = path
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


main()
