#!/usr/bin/env python3
"""A replay server for the LLM clients' tests, on 127.0.0.1 only.

Serves Anthropic Messages (POST /v1/messages) and OpenAI Chat Completions
(POST /chat/completions, also under /v1) streams in the style the real
APIs send, chosen by a marker in the last user message:

  case:normal   a complete answer
  case:error    part of an answer, then an error in the stream
  case:429      429 with retry-after: 1, then the normal answer
  case:529      529 overloaded (Anthropic) / 503 (OpenAI), then the answer
  case:echo     an error message that quotes the key it was sent

The first two retry cases fail once per case and provider, then succeed.
Every request is appended as a JSON line to --log (time, path, headers,
body). The port (0 = any free one) is printed on stdout's first line.

usage: llm_replay.py --key KEY --log FILE [--port N]
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = ["Hello", ", world", "! \u00e9t\u00e9 \u2014 ", "done.\nSecond line."]
ERROR_MESSAGE = "Overloaded while streaming"


def sse(event, data):
    head = "event: %s\n" % event if event else ""
    return (head + "data: " + json.dumps(data) + "\n\n").encode()


def anthropic_stream(parts, error=False):
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_replay", "type": "message", "role": "assistant", "content": [],
        "model": "replay", "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1}}}),
        sse("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "text", "text": ""}}),
        b"event: ping\ndata: {\"type\": \"ping\"}\n\n",
        b": a comment line\n\n"]
    for p in parts:
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": p}}))
    if error:
        out.append(sse("error", {"type": "error", "error": {
            "type": "overloaded_error", "message": ERROR_MESSAGE}}))
        return out
    out += [sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 7}}),
            sse("message_stop", {"type": "message_stop"})]
    return out


def openai_stream(parts, error=False):
    def chunk(delta, finish=None):
        return sse(None, {"id": "chatcmpl-replay", "object": "chat.completion.chunk",
                          "created": 1, "model": "replay", "choices": [
                              {"index": 0, "delta": delta, "finish_reason": finish}],
                          "usage": None})
    out = [chunk({"role": "assistant", "content": ""})]
    for p in parts:
        out.append(chunk({"content": p}))
    if error:
        out.append(sse(None, {"error": {"message": ERROR_MESSAGE, "type": "server_error",
                                        "param": None, "code": None}}))
        return out
    out.append(chunk({}, "stop"))
    out.append(sse(None, {"id": "chatcmpl-replay", "object": "chat.completion.chunk",
                          "created": 1, "model": "replay", "choices": [],
                          "usage": {"prompt_tokens": 12, "completion_tokens": 7,
                                    "total_tokens": 19}}))
    out.append(b"data: [DONE]\n\n")
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = "llm-replay"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, obj, extra=()):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def send_stream(self, chunks):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for c in chunks:
            # Split each event in two writes so lines cross reads.
            half = len(c) // 2
            for piece in (c[:half], c[half:]):
                self.wfile.write(piece)
                self.wfile.flush()
                time.sleep(0.002)

    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(n)
        srv = self.server
        with srv.lock:
            with open(srv.log_path, "a") as f:
                f.write(json.dumps({"t": time.time(), "path": self.path,
                                    "headers": {k.lower(): v for k, v in self.headers.items()},
                                    "body": raw.decode("utf-8", "replace")}) + "\n")
        if self.path == "/v1/messages":
            provider = "anthropic"
        elif self.path in ("/chat/completions", "/v1/chat/completions"):
            provider = "openai"
        else:
            return self.send_json(404, {"error": {"type": "not_found_error",
                                                  "message": "no route " + self.path}})
        if provider == "anthropic":
            ok = self.headers.get("x-api-key") == srv.key
            ok = ok and self.headers.get("anthropic-version") == "2023-06-01"
        else:
            ok = self.headers.get("authorization") == "Bearer " + srv.key
        if not ok:
            err = {"type": "authentication_error", "message": "invalid x-api-key"}
            return self.send_json(401, {"type": "error", "error": err} if provider == "anthropic"
                                  else {"error": err})
        try:
            req = json.loads(raw)
            prompt = req["messages"][-1]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return self.send_json(400, {"error": {"type": "invalid_request_error",
                                                  "message": "bad body"}})
        case = "normal"
        for c in ("error", "429", "529", "echo"):
            if "case:" + c in prompt:
                case = c
        stream = anthropic_stream if provider == "anthropic" else openai_stream
        if case in ("429", "529"):
            with srv.lock:
                k = (provider, case)
                srv.seen[k] = srv.seen.get(k, 0) + 1
                first = srv.seen[k] == 1
            if first and case == "429":
                err = {"type": "rate_limit_error", "message": "Rate limited"}
                return self.send_json(429, {"type": "error", "error": err}
                                      if provider == "anthropic" else {"error": err},
                                      [("retry-after", "1")])
            if first:
                err = {"type": "overloaded_error", "message": "Overloaded"}
                if provider == "anthropic":
                    return self.send_json(529, {"type": "error", "error": err},
                                          [("retry-after", "1")])
                return self.send_json(503, {"error": err}, [("retry-after", "1")])
        if case == "echo":
            return self.send_json(400, {"error": {"type": "invalid_request_error",
                                                  "message": "bad key " + srv.key}})
        self.send_stream(stream(ANSWER, error=(case == "error")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--key", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.key, srv.log_path, srv.lock, srv.seen = a.key, a.log, threading.Lock(), {}
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
