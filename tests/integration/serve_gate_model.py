#!/usr/bin/env python3
"""A model server (Anthropic Messages, streaming) for madf serve's tests
whose agents' answers wait on a gate: the initiator answers with its JSON
plan at once; an agent's turn sends "part one " at once, then waits until
the file GATE exists (checked every 20 ms), then sends "part two" and
ends; the summarizer answers "the summary" at once. With --big N an
agent's answer is N KiB of text in 256-byte deltas instead (no gate).
The port is printed on stdout's first line; every request's system
prompt is appended to --log.

usage: serve_gate_model.py --gate FILE [--log FILE] [--big KIB]
"""
import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--gate", required=True)
ap.add_argument("--log")
ap.add_argument("--big", type=int, default=0)
args = ap.parse_args()


def sse(ev, d):
    return ("event: %s\ndata: %s\n\n" % (ev, json.dumps(d))).encode()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, b):
        self.wfile.write(b)
        self.wfile.flush()

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["content-length"])))
        system = req.get("system") or ""
        if not isinstance(system, str):
            system = " ".join(b.get("text", "") for b in system)
        if args.log:
            with open(args.log, "a") as f:
                f.write(json.dumps({"system": system[:80]}) + "\n")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        self.send(sse("message_start", {"type": "message_start", "message": {
            "id": "m", "type": "message", "role": "assistant", "content": [], "model": "gate",
            "stop_reason": None, "usage": {"input_tokens": 7, "output_tokens": 1}}}))
        self.send(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                              "content_block": {"type": "text", "text": ""}}))

        def delta(t):
            self.send(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                  "delta": {"type": "text_delta", "text": t}}))
        try:
            if "initiator" in system:
                delta('{"goal": "the gated goal", "strategy": "wait", "successCriteria": ["done"]}')
            elif "summarizer" in system:
                delta("the summary")
            elif args.big:
                for _ in range(args.big * 4):
                    delta("x" * 256)
            else:
                delta("part one ")
                while not os.path.exists(args.gate):
                    time.sleep(0.02)
                delta("part two")
            self.send(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
            self.send(sse("message_delta", {"type": "message_delta",
                                            "delta": {"stop_reason": "end_turn"},
                                            "usage": {"output_tokens": 5}}))
            self.send(sse("message_stop", {"type": "message_stop"}))
        except OSError:
            pass


s = ThreadingHTTPServer(("127.0.0.1", 0), H)
s.daemon_threads = True
print(s.server_address[1], flush=True)
s.serve_forever()
