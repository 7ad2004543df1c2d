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

Requests from madf's agents (a system prompt naming "of madf") get a
scripted agent instead, the same for both providers:

  tools offered, no tool result yet   one text block and a tool call:
                                      fx_rates with the pair and window
                                      named in the prompt ("pair X/Y,
                                      window START to END")
  a tool result in the conversation   a text answer that quotes what the
                                      tool returned (closes and dates)
  no tools (the narrative)            a narrative streamed in several
                                      chunks, NARRATIVE_PAUSE s apart

with fixed usage per kind of turn (AGENT_USAGE), which is also written
into the request's log line as "usage" (input, output).

With --recorded FILE, recorded answers come first: FILE is
{"rules": [{"name", "system": SUBSTRING, "prompt"?: SUBSTRING,
"responses": [R, ...]}]}; a request whose system prompt (and last user
message) holds the substrings gets the rule's next response (the last one
once they are used up): {"text": T, "usage"?: [IN, OUT], "delay"?: S}
streamed as a complete answer (S seconds after the request: a slow
model), or {"status": N, "retry_after"?: S} as an API error. The
log line names the rule ("rule") and the response's index ("response").

With --agent-pause NAME:S, the scripted answers to the agent NAME (its
system prompt says "You are NAME,") come S seconds late: a slow model,
for the tests of a task cancelled while its researcher waits for one.

The first two retry cases fail once per case and provider, then succeed.
Every request is appended as a JSON line to --log (time, path, headers,
body). The port (0 = any free one) is printed on stdout's first line.

usage: llm_replay.py --key KEY --log FILE [--port N] [--recorded FILE]
                     [--agent-pause NAME:S]
"""
import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = ["Hello", ", world", "! \u00e9t\u00e9 \u2014 ", "done.\nSecond line."]
ERROR_MESSAGE = "Overloaded while streaming"


def sse(event, data):
    head = "event: %s\n" % event if event else ""
    return (head + "data: " + json.dumps(data) + "\n\n").encode()


def anthropic_stream(parts, error=False, usage=(12, 7)):
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_replay", "type": "message", "role": "assistant", "content": [],
        "model": "replay", "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": 1}}}),
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
                "usage": {"output_tokens": usage[1]}}),
            sse("message_stop", {"type": "message_stop"})]
    return out


def openai_stream(parts, error=False, usage=(12, 7)):
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
                          "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                    "total_tokens": usage[0] + usage[1]}}))
    out.append(b"data: [DONE]\n\n")
    return out


# Scripted agent turns: (input_tokens, output_tokens) per kind.
AGENT_USAGE = {"tool_call": (321, 45), "answer": (654, 87), "narrative": (1000, 200)}
NARRATIVE = ["Executive summary (replay narrative). ", "The dollar and the yen ",
             "dominated the week; ", "see the validated figures below.\n",
             "Second paragraph: ", "every number comes from the data."]
NARRATIVE_PAUSE = 0.3


def text_of(content):
    if isinstance(content, str):
        return content
    return json.dumps(content)


def tool_results(provider, messages):
    """The tool results sent back so far, as (content text, is_error)."""
    out = []
    for m in messages:
        if provider == "openai" and m.get("role") == "tool":
            out.append((m.get("content") or "", False))
        elif provider == "anthropic" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    c = b.get("content")
                    out.append((c if isinstance(c, str) else json.dumps(c),
                                bool(b.get("is_error"))))
    return out


def agent_plan(provider, req):
    """What the scripted agent answers: (kind, text parts, tool call or None)."""
    tools = req.get("tools") or []
    names = [t.get("name") if provider == "anthropic" else t.get("function", {}).get("name")
             for t in tools]
    msgs = req.get("messages") or []
    first = text_of(next((m.get("content") for m in msgs if m.get("role") == "user"), ""))
    results = tool_results(provider, msgs)
    if not tools:
        return "narrative", NARRATIVE, None
    if not results:
        m = re.search(r"pair ([A-Z]{3}/[A-Z]{3}), window (\d{4}-\d\d-\d\d) to (\d{4}-\d\d-\d\d)",
                      first)
        if m and "fx_rates" in names:
            args = {"pair": m.group(1), "start": m.group(2), "end": m.group(3)}
            return "tool_call", ["Let me look at the rates."], ("fx_rates", args)
    text, is_error = results[-1] if results else ("", False)
    if is_error:
        return "answer", ["Replay analysis: the tool failed (", text[:80], ")."], None
    try:
        pts = json.loads(text).get("points") or []
    except (ValueError, AttributeError):
        pts = []
    if len(pts) >= 2:
        return "answer", ["Replay analysis: fx_rates returned %d closes, " % len(pts),
                          "from %s on %s to %s on %s." % (pts[0][1], pts[0][0],
                                                          pts[-1][1], pts[-1][0])], None
    return "answer", ["Replay analysis: no rates to look at."], None


def anthropic_agent(kind, parts, call):
    tin, tout = AGENT_USAGE[kind]
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_agent", "type": "message", "role": "assistant", "content": [],
        "model": "replay", "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": tin, "output_tokens": 1}}}),
        sse("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "text", "text": ""}})]
    for p in parts:
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": p}}))
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    if call:
        name, args = call
        out.append(sse("content_block_start", {"type": "content_block_start", "index": 1,
                                               "content_block": {"type": "tool_use",
                                                                 "id": "toolu_replay_1",
                                                                 "name": name, "input": {}}}))
        a = json.dumps(args)
        for piece in (a[:7], a[7:20], a[20:]):
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 1,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": piece}}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 1}))
    out += [sse("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": tout}}),
        sse("message_stop", {"type": "message_stop"})]
    return out


def openai_agent(kind, parts, call):
    tin, tout = AGENT_USAGE[kind]

    def chunk(delta, finish=None):
        return sse(None, {"id": "chatcmpl-agent", "object": "chat.completion.chunk",
                          "created": 1, "model": "replay", "choices": [
                              {"index": 0, "delta": delta, "finish_reason": finish}]})
    out = [chunk({"role": "assistant", "content": ""})]
    for p in parts:
        out.append(chunk({"content": p}))
    if call:
        name, args = call
        a = json.dumps(args)
        out.append(chunk({"tool_calls": [{"index": 0, "id": "call_replay_1", "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        for piece in (a[:7], a[7:20], a[20:]):
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    out.append(chunk({}, "tool_calls" if call else "stop"))
    out.append(sse(None, {"id": "chatcmpl-agent", "object": "chat.completion.chunk",
                          "created": 1, "model": "replay", "choices": [],
                          "usage": {"prompt_tokens": tin, "completion_tokens": tout,
                                    "total_tokens": tin + tout}}))
    out.append(b"data: [DONE]\n\n")
    return out


def recorded_pick(srv, req, path):
    """(rule name, index, response) of the --recorded rule req matches, or None."""
    if not srv.rules:
        return None
    msgs = req.get("messages") or []
    if path == "/v1/messages":
        system = text_of(req.get("system") or "")
    else:
        system = next((m.get("content") or "" for m in msgs if m.get("role") == "system"), "")
    prompt = text_of(msgs[-1].get("content")) if msgs else ""
    for rule in srv.rules:
        if rule["system"] in system and rule.get("prompt", "") in prompt:
            with srv.lock:
                k = srv.seen.get(("rule", rule["name"]), 0)
                srv.seen[("rule", rule["name"])] = k + 1
            i = min(k, len(rule["responses"]) - 1)
            return rule["name"], i, rule["responses"][i]
    return None


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

    def send_stream(self, chunks, pause=0.0):
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
            if pause and b"text_delta" in c or pause and b'"content": "' in c:
                time.sleep(pause)

    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(n)
        srv = self.server
        t = time.time()
        plan = None
        system = ""
        try:
            req = json.loads(raw)
            system = req.get("system") or ""
            if self.path != "/v1/messages":
                system = next((m.get("content") or "" for m in req.get("messages", [])
                               if m.get("role") == "system"), "")
            if " of madf" in text_of(system):
                plan = agent_plan("anthropic" if self.path == "/v1/messages" else "openai",
                                  req)
        except (ValueError, AttributeError, TypeError):
            pass
        rec = None
        try:
            rec = recorded_pick(srv, req, self.path)
        except (NameError, ValueError, AttributeError, TypeError, KeyError, IndexError):
            rec = None
        line = {"t": t, "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": raw.decode("utf-8", "replace")}
        if rec:
            line["rule"], line["response"] = rec[0], rec[1]
        if plan:
            line["usage"] = list(AGENT_USAGE[plan[0]])
            line["kind"] = plan[0]
        with srv.lock:
            with open(srv.log_path, "a") as f:
                f.write(json.dumps(line) + "\n")
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
            prompt = text_of(req["messages"][-1]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            return self.send_json(400, {"error": {"type": "invalid_request_error",
                                                  "message": "bad body"}})
        if rec:
            r = rec[2]
            if "status" in r:
                err = {"type": "rate_limit_error" if r["status"] == 429 else "api_error",
                       "message": "recorded status %d" % r["status"]}
                extra = [("retry-after", str(r["retry_after"]))] if "retry_after" in r else []
                return self.send_json(r["status"], {"type": "error", "error": err}
                                      if provider == "anthropic" else {"error": err}, extra)
            time.sleep(float(r.get("delay", 0)))
            stream = anthropic_stream if provider == "anthropic" else openai_stream
            text = r["text"]
            parts = [text[i:i + 40] for i in range(0, len(text), 40)] or [""]
            return self.send_stream(stream(parts, usage=tuple(r.get("usage", (100, 20)))))
        if plan:
            name, pause = srv.agent_pause
            if name and ("You are %s," % name) in text_of(system):
                time.sleep(pause)
            make = anthropic_agent if provider == "anthropic" else openai_agent
            return self.send_stream(make(*plan),
                                    NARRATIVE_PAUSE if plan[0] == "narrative" else 0.0)
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
    ap.add_argument("--recorded")
    ap.add_argument("--agent-pause", default="")
    a = ap.parse_args()
    # A listen backlog for many clients at once (madf bench serve), not 5.
    ThreadingHTTPServer.request_queue_size = 1024
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.key, srv.log_path, srv.lock, srv.seen = a.key, a.log, threading.Lock(), {}
    srv.rules = json.load(open(a.recorded))["rules"] if a.recorded else []
    name, _, pause = a.agent_pause.partition(":")
    srv.agent_pause = (name, float(pause)) if name else ("", 0.0)
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
