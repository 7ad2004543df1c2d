#!/usr/bin/env python3
"""A small MCP server for madf's tests (python3 stdlib only).

  --stdio                newline-delimited JSON-RPC on stdin/stdout
  --http                 Streamable HTTP on 127.0.0.1, port 0; the port is
                         the first line on stdout
  --log FILE             every message received, one JSON line each
  --version V            answer initialize with protocol version V
  --page-size N          tools per tools/list page (3)
  --require-header H:V   (http) refuse requests without this header (401)
  --print-env NAME       write NAME's value to stderr at start
  --deaf                 (stdio) close stdin before answering initialize; linger
  --no-get               (http) answer GET with 405 (no stream of its own)
  --no-delete            (http) answer DELETE with 405 (sessions cannot be ended)
  --priming              (http) begin every event stream with a priming event:
                         an id and an empty data field (the spec's SHOULD);
                         on the GET stream its id ("prime-G-P") resumes at
                         the position it was sent at
  --poll                 (http) close each GET stream at once, after its
                         priming event and what was queued ("retry: 100"
                         last): the client polls, resuming by Last-Event-ID
  --empty-get            (http) answer GET with an event stream that closes
                         at once with no event ("retry: 100" only)

Tools: echo, add, fail, slow, crash, notify, expire, getenv, stderr, upper,
background.
HTTP: Mcp-Session-Id from initialize, required afterwards (400 without,
404 for an unknown, expired or ended one), MCP-Protocol-Version checked
(400), tools/call of notify answered as an SSE stream, everything else as
JSON. GET opens the session's own event stream (events with ids 1, 2, ...;
Last-Event-ID resumes after the one named, else the events not yet sent
are sent; a new GET retires the session's stream before, and a stream the
server closes gets a "retry: 100" first); the background tool sends a
notifications/message and a ping on it and waits for the pong; with
{"drop": true} it closes the stream once the notification is written and
queues the ping after, which only a client opening the stream again (with
Last-Event-ID) receives; {"delay": S} waits S seconds (at most 5) before
it sends anything. DELETE ends the session. Besides the messages,
the log has {"http": "session", "session": ID} for each session made,
{"http": "GET", "session": ID, "last_event_id": ID-or-null},
{"http": "prime", "session": ID, "id": ID} for each priming event of a
GET stream, and {"http": "DELETE", "session": ID}.
"""
import argparse
import json
import os
import select
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26"]

TOOLS = [
    {"name": "echo", "description": "Echoes its text",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "add", "description": "Adds two numbers",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "number"},
                                                       "b": {"type": "number"}},
                     "required": ["a", "b"]},
     "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}}},
    {"name": "fail", "description": "Always fails (isError)",
     "inputSchema": {"type": "object"}},
    {"name": "slow", "description": "Waits until cancelled, or 60 s",
     "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Ends the server at once",
     "inputSchema": {"type": "object"}},
    {"name": "notify", "description": "Logs, reports progress and pings before answering",
     "inputSchema": {"type": "object"}},
    {"name": "expire", "description": "Expires the HTTP session once (404)",
     "inputSchema": {"type": "object"}},
    {"name": "getenv", "description": "The value of an environment variable",
     "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}},
    {"name": "stderr", "description": "Writes its text to stderr",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "Upper Case", "description": "Upper-cases its text (a name to map)",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "background", "description": "Logs and pings on the GET stream before answering",
     "inputSchema": {"type": "object"}},
]

args = None
log_lock = threading.Lock()
cancel_events = {}      # request id -> Event
pong_events = {}        # ping id -> Event
state_lock = threading.Lock()
expired_once = [False]


def log(msg):
    if not args.log:
        return
    with log_lock:
        with open(args.log, "a") as f:
            f.write(json.dumps(msg) + "\n")
            f.flush()


def text_result(text, is_error=False, structured=None):
    r = {"content": [{"type": "text", "text": text}]}
    if is_error:
        r["isError"] = True
    if structured is not None:
        r["structuredContent"] = structured
    return r


def error(mid, code, message):
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}


def result(mid, res):
    return {"jsonrpc": "2.0", "id": mid, "result": res}


def call_tool(mid, params, send, session=None):
    """Runs a tool; send(msg) emits a message before the answer. Returns
    the response, or None when the request was cancelled."""
    name = params.get("name")
    a = params.get("arguments") or {}
    if name == "echo":
        return result(mid, text_result(str(a.get("text", ""))))
    if name == "add":
        s = a.get("a", 0) + a.get("b", 0)
        if isinstance(s, float) and s.is_integer():
            s = int(s)
        return result(mid, text_result("%s" % s, structured={"sum": s}))
    if name == "fail":
        return result(mid, text_result("the fail tool failed, as asked", True))
    if name == "slow":
        ev = threading.Event()
        with state_lock:
            cancel_events[mid] = ev
        ev.wait(60)
        with state_lock:
            cancel_events.pop(mid, None)
        if ev.is_set():
            return None
        return result(mid, text_result("slow finished"))
    if name == "crash":
        sys.stderr.write("mcp_test_server: crashing as asked\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "notify":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "logger": "test", "data": "notify tool running"}})
        token = (params.get("_meta") or {}).get("progressToken", "none")
        send({"jsonrpc": "2.0", "method": "notifications/progress",
              "params": {"progressToken": token, "progress": 1, "total": 2,
                         "message": "half way"}})
        ev = threading.Event()
        pid = "ping-%s" % mid
        with state_lock:
            pong_events[pid] = ev
        send({"jsonrpc": "2.0", "id": pid, "method": "ping"})
        got = ev.wait(10)
        return result(mid, text_result("notified; pong %s" % ("received" if got else "missing")))
    if name == "expire":
        return result(mid, text_result("session renewed"))
    if name == "getenv":
        return result(mid, text_result(os.environ.get(str(a.get("name", "")), "(unset)")))
    if name == "stderr":
        sys.stderr.write(str(a.get("text", "")) + "\n")
        sys.stderr.flush()
        return result(mid, text_result("written"))
    if name == "Upper Case":
        return result(mid, text_result(str(a.get("text", "")).upper()))
    if name == "background":
        if session is not None:
            if args.no_get:
                return result(mid, text_result("no GET stream here", True))
            send = lambda m: stream_put(session, m)  # noqa: E731
        elif a.get("drop"):
            return result(mid, text_result("no GET stream to drop", True))
        if send is None:
            return result(mid, text_result("nowhere to send", True))
        time.sleep(min(float(a.get("delay", 0)), 5))
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "logger": "test",
                         "data": "background work started"}})
        if a.get("drop"):
            stream_drop(session)
        ev = threading.Event()
        pid = "bgping-%s" % mid
        with state_lock:
            pong_events[pid] = ev
        send({"jsonrpc": "2.0", "id": pid, "method": "ping"})
        got = ev.wait(10)
        return result(mid, text_result("background; pong %s" %
                                       ("received" if got else "missing")))
    return error(mid, -32602, "Unknown tool: %s" % name)


def handle(msg, send, session=None):
    """One message; returns the response or None (notifications)."""
    method = msg.get("method")
    mid = msg.get("id")
    if method is None:  # a response of the client's
        if mid is not None:
            with state_lock:
                ev = pong_events.pop(mid, None)
            if ev:
                ev.set()
        return None
    if mid is None:
        if method == "notifications/cancelled":
            rid = (msg.get("params") or {}).get("requestId")
            with state_lock:
                ev = cancel_events.get(rid)
            if ev:
                ev.set()
        return None
    if method == "initialize":
        v = args.version or (msg.get("params") or {}).get("protocolVersion")
        if v not in SUPPORTED and not args.version:
            v = SUPPORTED[0]
        return result(mid, {"protocolVersion": v,
                            "capabilities": {"tools": {}, "logging": {}},
                            "serverInfo": {"name": "mcp-test-server", "version": "1.0"}})
    if method == "ping":
        return result(mid, {})
    if method == "tools/list":
        cur = (msg.get("params") or {}).get("cursor")
        start = int(cur) if cur else 0
        page = TOOLS[start:start + args.page_size]
        r = {"tools": page}
        if start + args.page_size < len(TOOLS):
            r["nextCursor"] = str(start + args.page_size)
        return result(mid, r)
    if method == "tools/call":
        return call_tool(mid, msg.get("params") or {}, send, session)
    return error(mid, -32601, "Method not found: %s" % method)


# ---- stdio -----------------------------------------------------------------

def run_stdio():
    out_lock = threading.Lock()

    def send(m):
        with out_lock:
            sys.stdout.write(json.dumps(m) + "\n")
            sys.stdout.flush()

    def work(m):
        try:
            r = handle(m, send)
        except BrokenPipeError:
            os._exit(0)
        if r is not None:
            try:
                send(r)
            except BrokenPipeError:
                os._exit(0)

    sys.stderr.write("mcp_test_server: listening on stdio\n")
    sys.stderr.flush()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            m = json.loads(line)
        except ValueError:
            sys.stderr.write("mcp_test_server: not JSON: %r\n" % line[:80])
            continue
        log(m)
        if args.deaf and m.get("method") == "initialize":
            os.close(0)  # before answering: the client's next write fails
            send(handle(m, send))
            time.sleep(30)
            os._exit(0)
        if m.get("method") == "tools/call":
            threading.Thread(target=work, args=(m,), daemon=True).start()
        else:
            work(m)
    sys.stderr.write("mcp_test_server: stdin closed, exiting\n")
    sys.stderr.flush()
    os._exit(0)


# ---- http ------------------------------------------------------------------

sessions = {}  # id -> protocol version
streams = {}   # id -> {"events": [(event id, message)], "sent": n, "cond": Condition}


def stream_put(sid, m):
    """Queues m on the session's GET stream."""
    with state_lock:
        st = streams.get(sid)
    if st is None:
        return
    with st["cond"]:
        st["events"].append((str(len(st["events"]) + 1), m))
        st["cond"].notify_all()


def stream_drop(sid):
    """Waits (at most 10 s) until every queued event was written on the
    session's GET stream, then closes that stream."""
    with state_lock:
        st = streams.get(sid)
    if st is None:
        return
    end = time.time() + 10
    with st["cond"]:
        while st["sent"] < len(st["events"]) and time.time() < end:
            st["cond"].wait(0.1)
        st["gen"] += 1  # as a new GET does: the stream's loop ends
        st["cond"].notify_all()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def reply(self, code, body=None, headers=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    def authorized(self):
        """False (after answering 401) without the required header."""
        if args.require_header:
            k, _, v = args.require_header.partition(":")
            got = self.headers.get(k.strip())
            if got != v.strip():
                # echoes what it got, as careless servers do: the client
                # must not show it
                self.reply(401, {"error": "unauthorized", "got": got})
                return False
        return True

    def session(self):
        """The request's session id, or None after answering 400/404."""
        sid = self.headers.get("Mcp-Session-Id")
        if not sid:
            self.reply(400, {"error": "Mcp-Session-Id is required"})
            return None
        with state_lock:
            ver = sessions.get(sid)
        if ver is None:
            self.reply(404, {"error": "unknown session"})
            return None
        if self.headers.get("MCP-Protocol-Version") != ver:
            self.reply(400, {"error": "MCP-Protocol-Version must be %s" % ver})
            return None
        return sid

    def client_gone(self):
        """True when the client closed the connection (EOF to read)."""
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            return bool(r) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def do_DELETE(self):
        log({"http": "DELETE", "session": self.headers.get("Mcp-Session-Id")})
        if not self.authorized():
            return
        if args.no_delete:
            return self.reply(405, headers={"Allow": "GET, POST"})
        sid = self.session()
        if sid is None:
            return
        with state_lock:
            sessions.pop(sid, None)
            st = streams.pop(sid, None)
        if st:
            with st["cond"]:
                st["cond"].notify_all()
        self.reply(200)

    def do_GET(self):
        last = self.headers.get("Last-Event-ID")
        log({"http": "GET", "session": self.headers.get("Mcp-Session-Id"),
             "last_event_id": last})
        if not self.authorized():
            return
        if args.no_get:
            return self.reply(405, headers={"Allow": "POST, DELETE"})
        if "text/event-stream" not in (self.headers.get("Accept") or ""):
            return self.reply(406, {"error": "Accept must list text/event-stream"})
        sid = self.session()
        if sid is None:
            return
        with state_lock:
            st = streams.get(sid)
        if st is None:
            return self.reply(404, {"error": "unknown session"})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if args.empty_get:  # nothing: not even a priming event
            try:
                self.wfile.write(b"retry: 100\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass
            return
        cond = st["cond"]
        with cond:
            # one stream a session: a new GET retires the one before
            st["gen"] += 1
            gen = st["gen"]
            cond.notify_all()
            ids = [e[0] for e in st["events"]]
            if last in ids:
                pos = ids.index(last) + 1
            elif last and last.startswith("prime-"):  # a priming event's: where it was sent
                pos = min(int(last.rsplit("-", 1)[1]), len(ids))
            else:
                pos = st["sent"]
        if args.priming:
            pid = "prime-%d-%d" % (gen, pos)
            log({"http": "prime", "session": sid, "id": pid})
            try:
                self.wfile.write(("id: %s\ndata: \n\n" % pid).encode())
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                return
        while True:
            with cond:
                if pos >= len(st["events"]) and not args.poll:
                    cond.wait(0.5)
                if st["gen"] != gen or self.client_gone():
                    try:  # SSE "retry": when to reconnect, in ms
                        self.wfile.write(b"retry: 100\n\n")
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError, OSError):
                        pass
                    break
                with state_lock:
                    if sid not in sessions:
                        break
                batch = st["events"][pos:]
                pos += len(batch)
                st["sent"] = max(st["sent"], pos)
            text = "".join("id: %s\nevent: message\ndata: %s\n\n" % (i, json.dumps(m))
                           for i, m in batch) or ": waiting\n\n"
            if args.poll:  # what was queued is sent: the connection closes
                text += "retry: 100\n\n"
            try:
                self.wfile.write(text.encode())
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                break
            if args.poll:
                break

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            msg = json.loads(raw)
        except ValueError:
            return self.reply(400, error(None, -32700, "Parse error"))
        log(msg)
        if not self.authorized():
            return
        accept = self.headers.get("Accept") or ""
        if "application/json" not in accept or "text/event-stream" not in accept:
            return self.reply(406, {"error": "Accept must list application/json and "
                                             "text/event-stream"})
        if msg.get("method") == "initialize":
            sid = uuid.uuid4().hex
            r = handle(msg, None)
            with state_lock:
                sessions[sid] = r["result"]["protocolVersion"]
                streams[sid] = {"events": [], "sent": 0, "gen": 0,
                                "cond": threading.Condition()}
            log({"http": "session", "session": sid})
            return self.reply(200, r, {"Mcp-Session-Id": sid})
        sid = self.session()
        if sid is None:
            return
        params = msg.get("params") or {}
        if msg.get("method") == "tools/call" and params.get("name") == "expire":
            with state_lock:
                first = not expired_once[0]
                expired_once[0] = True
                if first:
                    sessions.pop(sid, None)
            if first:
                return self.reply(404, {"error": "session expired"})
        if msg.get("method") is None or msg.get("id") is None:
            handle(msg, None)
            return self.reply(202)
        if msg.get("method") == "tools/call" and params.get("name") == "notify":
            return self.stream(msg)
        r = handle(msg, None, sid)
        if r is None:  # cancelled: the client is gone
            return
        try:
            self.reply(200, r)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def stream(self, msg):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        lock = threading.Lock()
        if args.priming:
            self.wfile.write(("id: prime-post-%s\ndata: \n\n" % msg.get("id")).encode())
            self.wfile.flush()

        def send(m):
            with lock:
                self.wfile.write(("event: message\ndata: %s\n\n" % json.dumps(m)).encode())
                self.wfile.flush()

        r = handle(msg, send)
        if r is not None:
            send(r)


def run_http():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    sys.stdout.write("%d\n" % srv.server_address[1])
    sys.stdout.flush()
    srv.serve_forever()


def main():
    global args
    p = argparse.ArgumentParser()
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--stdio", action="store_true")
    g.add_argument("--http", action="store_true")
    p.add_argument("--log")
    p.add_argument("--version")
    p.add_argument("--page-size", type=int, default=3)
    p.add_argument("--require-header")
    p.add_argument("--print-env")
    p.add_argument("--deaf", action="store_true")
    p.add_argument("--no-get", action="store_true")
    p.add_argument("--no-delete", action="store_true")
    p.add_argument("--priming", action="store_true")
    p.add_argument("--poll", action="store_true")
    p.add_argument("--empty-get", action="store_true")
    args = p.parse_args()
    if args.print_env:
        sys.stderr.write("mcp_test_server: %s=%s\n" % (args.print_env,
                                                      os.environ.get(args.print_env, "")))
        sys.stderr.flush()
    if args.stdio:
        run_stdio()
    else:
        run_http()


if __name__ == "__main__":
    main()
