#!/usr/bin/env python3
"""A small MCP client over stdio for the tests (python3 stdlib only).

Run mode:  mcp_client.py [--timeout S] [--stderr FILE] -- CMD [ARGS...]
  Starts CMD (an MCP server on stdio), reads a script on standard input and
  prints every message the server sends, one compact JSON line each, in the
  order they arrive. It fails (exit 3) as soon as the server's standard
  output carries anything but JSON-RPC 2.0 messages, and (exit 4) when the
  server does not exit 0 after its input is closed at the end of the script.
  Script lines:
    init [VERSION]      initialize (default 2025-11-25), then
                        notifications/initialized
    list-all            tools/list, following nextCursor to the last page
    call NAME [JSON]    tools/call NAME with arguments JSON
    ping                ping
    {...}               send this message; a request waits for its answer
    nowait {...}        send this message without waiting
    raw TEXT            send TEXT as one line, wait for one answer
    wait METHOD         wait for a notification METHOD
    term                send SIGTERM to the server
  Blank lines and lines starting with # are skipped.

Pick mode: mcp_client.py pick [--count] SELECTOR [PATH]
  Reads the lines run mode printed and prints, for the first message that
  SELECTOR (id=VALUE or method=NAME) matches, the value at PATH (dots, with
  numbers for array indexes; strings printed raw, anything else as JSON).
  --count prints how many messages match. Exit 1 when nothing matches.
"""
import json
import queue
import signal
import subprocess
import sys
import threading

LATEST = "2025-11-25"


class ProtocolViolation(Exception):
    pass


def check_message(line):
    """The message on one stdout line, or ProtocolViolation."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolViolation("not UTF-8: %r" % line[:200])
    try:
        m = json.loads(text)
    except ValueError:
        raise ProtocolViolation("not JSON: %r" % text[:200])
    if not isinstance(m, dict) or m.get("jsonrpc") != "2.0":
        raise ProtocolViolation("not a JSON-RPC 2.0 message: %r" % text[:200])
    if "method" in m:
        if not isinstance(m["method"], str):
            raise ProtocolViolation("method is not a string: %r" % text[:200])
        if "id" in m:
            raise ProtocolViolation("the server sent a request: %r" % text[:200])
    else:
        if "id" not in m or (("result" in m) == ("error" in m)):
            raise ProtocolViolation("neither a response nor a notification: %r" % text[:200])
        if "error" in m:
            e = m["error"]
            if not isinstance(e, dict) or not isinstance(e.get("code"), int) \
                    or not isinstance(e.get("message"), str):
                raise ProtocolViolation("a malformed error: %r" % text[:200])
    return m


class Client:
    def __init__(self, cmd, stderr=None, timeout=600.0):
        self.timeout = timeout
        self.errf = open(stderr, "wb") if stderr else None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errf)
        self.inbox = queue.Queue()
        self.pending = []      # received, not yet consumed by a wait
        self.next_id = 1000
        self.violation = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            if not line.endswith(b"\n"):
                self.violation = "a message without its newline: %r" % line[:200]
                break
            try:
                m = check_message(line[:-1])
            except ProtocolViolation as e:
                self.violation = str(e)
                break
            self.inbox.put(m)
        self.inbox.put(None)

    def _next(self):
        try:
            m = self.inbox.get(timeout=self.timeout)
        except queue.Empty:
            raise SystemExit("mcp_client: nothing from the server in %gs" % self.timeout)
        if self.violation:
            raise ProtocolViolation(self.violation)
        if m is not None:
            print(json.dumps(m, separators=(",", ":")), flush=True)
        return m

    def wait_for(self, pred, what):
        for i, m in enumerate(self.pending):
            if pred(m):
                del self.pending[i]
                return m
        while True:
            m = self._next()
            if m is None:
                raise SystemExit("mcp_client: the server closed its output while waiting for %s"
                                 % what)
            if pred(m):
                return m
            self.pending.append(m)

    def send(self, obj_or_text):
        text = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)
        self.proc.stdin.write(text.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params=None, id_=None):
        if id_ is None:
            id_ = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.answer(id_)

    def answer(self, id_):
        return self.wait_for(lambda m: "method" not in m and m.get("id") == id_,
                             "the answer to %r" % (id_,))

    def any_answer(self):
        return self.wait_for(lambda m: "method" not in m, "an answer")

    def notification(self, method):
        return self.wait_for(lambda m: m.get("method") == method and "id" not in m, method)

    def finish(self):
        """Closes the server's input, prints what is left, returns its exit code."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        while True:
            m = self._next()
            if m is None:
                break
        if self.violation:
            raise ProtocolViolation(self.violation)
        try:
            return self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise SystemExit("mcp_client: the server did not exit after its input closed")


def run_script(c, lines):
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        if word == "init":
            c.request("initialize", {"protocolVersion": rest or LATEST, "capabilities": {},
                                     "clientInfo": {"name": "mcp_client.py", "version": "1"}})
            c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        elif word == "list-all":
            params = {}
            while True:
                r = c.request("tools/list", params)
                cur = r.get("result", {}).get("nextCursor")
                if not cur:
                    break
                params = {"cursor": cur}
        elif word == "call":
            name, _, args = rest.partition(" ")
            c.request("tools/call", {"name": name, "arguments": json.loads(args or "{}")})
        elif word == "ping":
            c.request("ping")
        elif word == "nowait":
            c.send(json.loads(rest))
        elif word == "raw":
            c.send(rest)
            c.any_answer()
        elif word == "wait":
            c.notification(rest)
        elif word == "term":
            c.proc.send_signal(signal.SIGTERM)
        elif line.startswith("{"):
            msg = json.loads(line)
            c.send(msg)
            if "id" in msg and "method" in msg:
                c.answer(msg["id"])
        else:
            raise SystemExit("mcp_client: unknown script line: %s" % line)


def get_path(v, path):
    for part in [p for p in path.split(".") if p]:
        if isinstance(v, list):
            v = v[int(part)]
        elif isinstance(v, dict):
            v = v[part]
        else:
            raise KeyError(part)
    return v


def pick(argv):
    count = False
    if argv and argv[0] == "--count":
        count, argv = True, argv[1:]
    if not argv:
        raise SystemExit("usage: mcp_client.py pick [--count] SELECTOR [PATH]")
    key, _, want = argv[0].partition("=")
    try:
        want_v = json.loads(want)
    except ValueError:
        want_v = want
    path = argv[1] if len(argv) > 1 else ""
    found = []
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        m = json.loads(line)
        if key == "id" and "method" not in m and "id" in m and m["id"] == want_v \
                and type(m["id"]) == type(want_v):
            found.append(m)
        elif key == "method" and m.get("method") == want:
            found.append(m)
    if count:
        print(len(found))
        return 0
    if not found:
        print("mcp_client: no message with %s" % argv[0], file=sys.stderr)
        return 1
    try:
        v = get_path(found[0], path)
    except (KeyError, IndexError, ValueError):
        print("mcp_client: no %s in the message with %s" % (path, argv[0]), file=sys.stderr)
        return 1
    print(v if isinstance(v, str) else json.dumps(v, separators=(",", ":")))
    return 0


def main(argv):
    if argv and argv[0] == "pick":
        return pick(argv[1:])
    timeout, errfile = 600.0, None
    while argv and argv[0] != "--":
        if argv[0] == "--timeout" and len(argv) > 1:
            timeout, argv = float(argv[1]), argv[2:]
        elif argv[0] == "--stderr" and len(argv) > 1:
            errfile, argv = argv[1], argv[2:]
        else:
            raise SystemExit(__doc__)
    if len(argv) < 2:
        raise SystemExit(__doc__)
    c = Client(argv[1:], stderr=errfile, timeout=timeout)
    try:
        run_script(c, sys.stdin.read().splitlines())
        rc = c.finish()
    except ProtocolViolation as e:
        print("mcp_client: %s" % e, file=sys.stderr)
        c.proc.kill()
        return 3
    except BrokenPipeError:
        print("mcp_client: the server closed its input early", file=sys.stderr)
        return 4
    if rc != 0:
        print("mcp_client: the server exited %d" % rc, file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
