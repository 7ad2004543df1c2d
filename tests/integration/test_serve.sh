# madf serve on 127.0.0.1 (a random port) against the project's LLM replay
# server: HTTPS, tokens (shown once, stored hashed, 0600, refused when readable
# by others, revoked), 401 with its header and the seed's body, the Host
# and Origin allow-list, every validation error with its code and field,
# 503 without a model, whole streams read by curl -N and by the seed's own
# JavaScript client under node (the event sequence, seq, sessionId,
# exactly one terminal event), an agent's failure, keep-alives, and
# SIGTERM draining an open stream with a recoverable error; the limits per
# user (RateLimit-Policy and RateLimit, 429 with Retry-After at the 6th
# conversation, the 3rd at once, the rounds of the day, kept across a
# restart, refunded at an early end); cancel by the owner only. Resume,
# the grace period and slow clients: test_serve_resume.sh.
. tests/integration/lib.sh

mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL ANTHROPIC_BASE_URL OPENAI_BASE_URL MADF_SERVE_ORIGINS 2>/dev/null || true
# The limits per user are tested in their own section with their own
# users; the other servers here get room for every conversation they run.
export MADF_SERVE_CONV_PER_HOUR=1000 MADF_SERVE_CONCURRENT=100 MADF_SERVE_ROUNDS_PER_DAY=100000
# jf FILE EXPR: a Python expression over the JSON in FILE (as j).
jf() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1" 2>&1; }

# --- help -----------------------------------------------------------------
has "madf --help lists serve" "$("$MADF" --help)" "serve"
has "madf serve --help shows its usage" "$("$MADF" serve --help)" \
	"usage: madf serve [--listen ADDR:PORT] [--tls-cert FILE] [--tls-key FILE] [--behind-tls-proxy]"
has "... and its token subcommands" "$("$MADF" serve --help)" "       madf serve token add USER"
check_fails "an unknown option of serve is a usage error" 2 "$MADF" serve --bogus

# --- tokens ---------------------------------------------------------------
"$MADF" serve token add alice >"$T/tok" 2>"$T/tok.err"; rc=$?
eq "token add exits 0" "$rc" 0
TOK=$(cat "$T/tok")
eq "token add prints one line, the token" "$(wc -l <"$T/tok" | tr -d ' ')" 1
has "the token has madf_ and 43 base64url characters" \
	"$(printf %s "$TOK" | grep -cE '^madf_[A-Za-z0-9_-]{43}$')" 1
has "token add says where the hash went" "$(cat "$T/tok.err")" "serve-tokens"
eq "the token file is mode 600" "$(stat -c %a "$D/serve-tokens")" 600
HASH=$(printf %s "$TOK" | sha256sum | cut -d' ' -f1)
eq "the file holds the token's SHA-256 for alice" \
	"$(grep -c "^alice $HASH " "$D/serve-tokens")" 1
eq "the token itself is not in the file" "$(grep -cF -e "${TOK#madf_}" "$D/serve-tokens")" 0
"$MADF" serve token add bob >"$T/tok2" 2>/dev/null
TOK2=$(cat "$T/tok2")
list=$("$MADF" serve token list)
has "token list shows alice" "$list" "alice"
has "token list shows the hash prefix" "$list" "$(echo "$HASH" | cut -c1-16)"
hasnt "token list never shows a token" "$list" "$TOK"
eq "token list --json: two users" \
	"$("$MADF" serve token list --json | python3 -c 'import json,sys; print(",".join(t["user"] for t in json.load(sys.stdin)))')" \
	"alice,bob"
check_fails "token add refuses a bad user name" 1 "$MADF" serve token add "a b"
check_fails "token revoke of an unknown user fails" 1 "$MADF" serve token revoke nobody
check_fails "serve token with no subcommand is a usage error" 2 "$MADF" serve token
chmod 644 "$D/serve-tokens"
out=$("$MADF" serve --listen 127.0.0.1:0 2>&1); rc=$?
eq "serve refuses to start on a world-readable token file" "$rc" 1
has "and says the mode and what to do" "$out" "mode 0644): run chmod 600"
check_fails "token list refuses it too" 1 "$MADF" serve token list
chmod 600 "$D/serve-tokens"
out=$("$MADF" serve --listen 0.0.0.0:0 2>&1); rc=$?
eq "listening beyond loopback without TLS is refused" "$rc" 1
has "naming --tls-cert and --behind-tls-proxy" "$out" "Give --tls-cert and --tls-key, or --behind-tls-proxy"

# --- a model: the replay server -----------------------------------------------
KEY=sk-madf-serve-test-0123456789
LOG=$T/requests.jsonl
python3 "$TOP/tests/integration/llm_replay.py" --key "$KEY" --log "$LOG" >"$T/replay.port" 2>"$T/replay.err" &
replay_pid=$!
for _ in $(seq 1 200); do rport=$(head -1 "$T/replay.port" 2>/dev/null); [ -n "$rport" ] && break; sleep 0.05; done
serve "madf serve" env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$rport \
	CLAUDE_MODEL_EXECUTION=claude-test "$MADF" serve --listen 127.0.0.1:0
trap 'kill "$server_pid" "$replay_pid" ${hang_pid:-} 2>/dev/null; wait 2>/dev/null; cleanup' EXIT
ok "madf serve listens on 127.0.0.1:$port"
URL=http://127.0.0.1:$port/api/chat/multi
eq "the agents file the operator edits was written with the seed's three and madf's researchers" \
	"$(jf "$D/serve-agents.json" '",".join(a["name"] + ":" + "+".join(a["tools"]) for a in j["agents"])')" \
	"data-steward:,prospect-finder:,contract-reader:,fx-researcher:fx_rates,news-researcher:news_search+news_get"

# post NAME BODY [CURL ARGS...]: POSTs BODY (a file with @) with alice's
# token; the status in $st, the body in $T/NAME.json, headers in $T/NAME.h.
# The content type is $CT (application/json unless set).
post() {
	_n=$1 _b=$2; shift 2
	st=$(curl -s -o "$T/$_n.json" -D "$T/$_n.h" -w '%{http_code}' -X POST "$URL" \
		-H "Authorization: Bearer $TOK" -H "Content-Type: ${CT:-application/json}" "$@" \
		--data-binary "$_b")
}
GOOD='{"agents":["data-steward","prospect-finder"],"rounds":1,"messages":[{"role":"user","content":"find prospects"}]}'

# --- authentication -------------------------------------------------------------
st=$(curl -s -o "$T/a.json" -D "$T/a.h" -w '%{http_code}' -X POST "$URL" \
	-H 'Content-Type: application/json' --data-binary "$GOOD")
eq "no token: 401" "$st" 401
has "no token: WWW-Authenticate: Bearer" "$(cat "$T/a.h")" 'WWW-Authenticate: Bearer realm="madf"'
eq "no token: the seed's body" "$(jf "$T/a.json" 'j["code"], j["details"]["field"], bool(j["error"]), bool(j["timestamp"])')" \
	"UNAUTHORIZED Authorization True True"
st=$(curl -s -o "$T/a.json" -D "$T/a.h" -w '%{http_code}' -X POST "$URL" \
	-H "Authorization: Bearer ${TOK}x" -H 'Content-Type: application/json' --data-binary "$GOOD")
eq "a wrong token: 401" "$st" 401
has "a wrong token: error=\"invalid_token\"" "$(cat "$T/a.h")" 'error="invalid_token"'
st=$(curl -s -o "$T/a.json" -w '%{http_code}' -X POST "$URL?token=$TOK" \
	-H 'Content-Type: application/json' --data-binary "$GOOD")
eq "a token in the query string is not accepted" "$st" 401
st=$(curl -s -o "$T/a.json" -w '%{http_code}' -X POST "$URL" \
	-H "Authorization: Basic $TOK" -H 'Content-Type: application/json' --data-binary "$GOOD")
eq "another scheme: 401" "$st" 401
"$MADF" serve token revoke bob >/dev/null
st=$(curl -s -o "$T/a.json" -w '%{http_code}' -X POST "$URL" \
	-H "Authorization: Bearer $TOK2" -H 'Content-Type: application/json' --data-binary "$GOOD")
eq "a revoked token is refused at once (no restart)" "$st" 401
# The server keeps the token file as last read, reread when its stat
# changes: one made now is accepted at once, a chmod is seen at once.
MURL=http://127.0.0.1:$port/api/metrics
TOK5=$("$MADF" serve token add erin 2>/dev/null)
st=$(curl -s -o /dev/null -w '%{http_code}' "$MURL" -H "Authorization: Bearer $TOK5")
eq "a token added while the server runs is accepted at once" "$st" 200
st=$(curl -s -o /dev/null -w '%{http_code}' "$MURL" -H "Authorization: Bearer $TOK2")
eq "and the revoked one still refused" "$st" 401
chmod 644 "$D/serve-tokens"
st=$(curl -s -o "$T/a.json" -w '%{http_code}' "$MURL" -H "Authorization: Bearer $TOK5")
eq "the token file made readable by others while the server runs: 500 at the next request" \
	"$st $(jf "$T/a.json" 'j["code"]')" "500 INTERNAL_ERROR"
has "with the mode and what to do in the server's log" "$(cat "$T/serve.err")" "mode 0644): run chmod 600"
chmod 600 "$D/serve-tokens"
st=$(curl -s -o /dev/null -w '%{http_code}' "$MURL" -H "Authorization: Bearer $TOK5")
eq "and accepted again once it is 0600" "$st" 200
"$MADF" serve token revoke erin >/dev/null
st=$(curl -s -o /dev/null -w '%{http_code}' "$MURL" -H "Authorization: Bearer $TOK5")
eq "revoked again: refused at once" "$st" 401
hasnt "the server's log never shows a token" "$(cat "$T/serve.err")" "$TOK"

# --- Host, Origin, routes ---------------------------------------------------------
post host "$GOOD" -H "Host: evil.example:$port"
eq "a foreign Host: 403 (DNS rebinding)" "$st $(jf "$T/host.json" 'j["details"]["field"]')" "403 Host"
post origin "$GOOD" -H "Origin: http://evil.example"
eq "a foreign Origin: 403" "$st $(jf "$T/origin.json" 'j["details"]["field"]')" "403 Origin"
post origin2 '{}' -H "Origin: http://localhost:$port"
eq "the server's own Origin passes (to validation)" "$st" 400
st=$(curl -s -o /dev/null -w '%{http_code}' "$URL" -H "Authorization: Bearer $TOK")
eq "GET: 405" "$st" 405
st=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/other" -H "Authorization: Bearer $TOK")
eq "another path: 404" "$st" 404

# --- validation: every code with its field -------------------------------------------
# v DESC BODY CODE FIELD [CURL ARGS]
v() {
	_d=$1 _b=$2 _c=$3 _f=$4; shift 4
	post val "$_b" "$@"
	eq "$_d: 400 $_c $_f" "$st $(jf "$T/val.json" 'j["code"], j["details"]["field"]')" "400 $_c $_f"
}
M='"messages":[{"role":"user","content":"hi"}]'
v "no agents" "{\"agents\":[],\"rounds\":1,$M}" VALIDATION_ERROR agents
v "six agents" "{\"agents\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\"],\"rounds\":1,$M}" VALIDATION_ERROR agents
v "an unknown agent" "{\"agents\":[\"nobody\"],\"rounds\":1,$M}" AGENT_NOT_FOUND agents
has "the unknown agent is named with the known ones" "$(jf "$T/val.json" 'j["details"]["message"]')" \
	'unknown agent "nobody" (known: data-steward, prospect-finder, contract-reader, fx-researcher, news-researcher)'
v "rounds 0" "{\"agents\":[\"data-steward\"],\"rounds\":0,$M}" VALIDATION_ERROR rounds
v "rounds 1.5" "{\"agents\":[\"data-steward\"],\"rounds\":1.5,$M}" VALIDATION_ERROR rounds
v "rounds as a string" "{\"agents\":[\"data-steward\"],\"rounds\":\"2\",$M}" VALIDATION_ERROR rounds
v "rounds 11" "{\"agents\":[\"data-steward\"],\"rounds\":11,$M}" MAX_ROUNDS_EXCEEDED rounds
v "no messages" '{"agents":["data-steward"],"rounds":1,"messages":[]}' VALIDATION_ERROR messages
v "no user message" '{"agents":["data-steward"],"rounds":1,"messages":[{"role":"system","content":"x"}]}' \
	VALIDATION_ERROR messages
v "a bad role" '{"agents":["data-steward"],"rounds":1,"messages":[{"role":"bot","content":"x"}]}' \
	VALIDATION_ERROR messages
v "content not a string" '{"agents":["data-steward"],"rounds":1,"messages":[{"role":"user","content":["x"]}]}' \
	VALIDATION_ERROR messages
v "bad JSON" '{"agents":["data-steward"],' VALIDATION_ERROR body
v "duplicate keys" "{\"agents\":[\"data-steward\"],\"rounds\":1,\"rounds\":1,$M}" VALIDATION_ERROR body
CT=text/plain
v "a wrong content type" "$GOOD" VALIDATION_ERROR Content-Type
CT=application/jsonx
v "a content type that only starts like JSON" "$GOOD" VALIDATION_ERROR Content-Type
CT='application/json; charset=utf-8'
v "JSON with a charset is JSON (to the body's check)" '{"agents":' VALIDATION_ERROR body
CT=
python3 -c "import sys; sys.stdout.write('{\"agents\":[\"data-steward\"],\"rounds\":1,$M,\"pad\":\"' + 'x' * (1 << 20) + '\"}')" >"$T/big.json"
v "a body over 1 MB" "@$T/big.json" VALIDATION_ERROR body
has "which says so" "$(jf "$T/val.json" 'j["details"]["message"]')" "over 1048576 bytes"

# --- a whole stream ------------------------------------------------------------------
# check_stream FILE: the events' types (one line), after checking the
# framing: every block one "data: " line of JSON with data.timestamp,
# data.seq 1, 2, ... and one data.sessionId.
check_stream() {
	python3 - "$1" <<'PY'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
blocks = [b for b in raw.split("\n\n") if b]
types, seqs, sess = [], [], set()
for b in blocks:
    if b.startswith(":"):
        continue
    assert b.startswith("data: ") and "\n" not in b, "bad block: %r" % b[:80]
    e = json.loads(b[6:])
    d = e["data"]
    assert d["timestamp"], b
    seqs.append(d["seq"]); sess.add(d["sessionId"]); types.append(e["type"])
assert seqs == list(range(1, len(seqs) + 1)), seqs
assert len(sess) == 1, sess
print(" ".join(types))
PY
}
curl -s -N -X POST "$URL" -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
	--data-binary "$GOOD" -D "$T/s.h" -o "$T/s1.txt"
has "the stream is text/event-stream" "$(cat "$T/s.h")" "Content-Type: text/event-stream"
has "the stream is not cached" "$(cat "$T/s.h")" "Cache-Control: no-cache"
hasnt "the stream has no Content-Length" "$(cat "$T/s.h")" "Content-Length"
seq1=$(check_stream "$T/s1.txt")
C="agent_response_chunk agent_response_chunk agent_response_chunk agent_response_chunk"
S="summarizer_chunk summarizer_chunk summarizer_chunk summarizer_chunk"
eq "the seed's event sequence, framed whole, seq 1..n, one sessionId" "$seq1" \
	"conversation_start initiator_start initiator_complete round_start agent_start $C agent_complete agent_start $C agent_complete round_complete summarizer_start $S conversation_complete"
fields=$(python3 - "$T/s1.txt" <<'PY'
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1], encoding="utf-8").read().split("\n\n") if b.startswith("data: ")]
by = lambda t: [e["data"] for e in ev if e["type"] == t]
start = by("conversation_start")[0]
ini = by("initiator_complete")[0]
ac = by("agent_complete")
chunks = "".join(d["chunk"] for d in by("agent_response_chunk") if d["agent"] == "data-steward")
done = by("conversation_complete")[0]
rc = by("round_complete")[0]
print(start["agents"], start["rounds"], by("agent_start")[0]["maxSteps"],
      ini["goal"] == "Hello, world! \u00e9t\u00e9 \u2014 done.\nSecond line.", ini["successCriteria"],
      ac[0]["agent"], ac[0]["response"] == chunks, ac[0]["finishReason"],
      [r["agent"] for r in rc["results"]], done["totalRounds"], done["totalAgents"],
      done["summary"] == "".join(d["chunk"] for d in by("summarizer_chunk")),
      isinstance(done["executionTime"], (int, float)))
PY
)
eq "the events' fields: agents, rounds, maxSteps, the goal (the initiator's text, not JSON), responses equal to their chunks, results, totals, summary" \
	"$fields" \
	"['data-steward', 'prospect-finder'] 1 4 True [] data-steward True completed ['data-steward', 'prospect-finder'] 1 2 True True"
has "the initiator's answer that is not JSON is logged as a warning" "$(cat "$T/serve.err")" \
	"did not answer with the goal as JSON"
nmodel=$(grep -c '"path": "/v1/messages"' "$LOG")
eq "one model call each: initiator, 2 agents, summarizer" "$nmodel" 4
has "the agents' model calls carry their system prompt" "$(cat "$LOG")" "You are prospect-finder"

# The model failing: the initiator's error ends the stream with one error.
BAD='{"agents":["contract-reader"],"rounds":2,"messages":[{"role":"user","content":"case:error please"}]}'
curl -s -N -X POST "$URL" -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
	--data-binary "$BAD" -o "$T/s2.txt"
eq "a failing model: start, initiator, then one error" "$(check_stream "$T/s2.txt")" \
	"conversation_start initiator_start error"
eq "the error is AGENT_EXECUTION_FAILED, not recoverable" \
	"$(python3 -c 'import json,sys; b=[x for x in open(sys.argv[1]).read().split("\n\n") if x][-1]; d=json.loads(b[6:])["data"]; print(d["code"], d["recoverable"])' "$T/s2.txt")" \
	"AGENT_EXECUTION_FAILED False"

# --- the seed's own JavaScript client under node --------------------------------------
if command -v node >/dev/null 2>&1; then
	# The seed's "JavaScript/TypeScript Example", types dropped, with the
	# URL and the Authorization header added; handleMultiAgentEvent records.
	cat >"$T/seed_client.mjs" <<'JS'
const [url, token, body] = process.argv.slice(2);
const seen = [];
function handleMultiAgentEvent(event) { seen.push(event.type); }
async function startMultiAgentConversation(request) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Authorization': 'Bearer ' + token },
    body: JSON.stringify(request)
  });

  const reader = response.body?.getReader();
  const decoder = new TextDecoder();

  while (true) {
    const { done, value } = await reader?.read() || {};
    if (done) break;

    const chunk = decoder.decode(value);
    const lines = chunk.split('\n\n');

    for (const line of lines) {
      if (line.startsWith('data: ')) {
        const event = JSON.parse(line.substring(6));
        handleMultiAgentEvent(event);
      }
    }
  }
}
await startMultiAgentConversation(JSON.parse(body));
console.log(seen.join(' '));
JS
	js=$(node "$T/seed_client.mjs" "$URL" "$TOK" "$GOOD" 2>&1)
	eq "the seed's JavaScript client reads every event of the stream" "$js" "$seq1"
else
	fail "node is installed (the seed's client runs under it)"
fi

# --- agents with tools, maxSteps, and onError -----------------------------------------
# Another data directory (the same tokens) whose agents file the operator
# wrote: agents "of madf" get the replay's scripted tool-calling agent.
D2=$T/d2
mkdir -p "$D2"
cp -p "$D/serve-tokens" "$D2/serve-tokens"
cat >"$D2/serve-agents.json" <<'JSON'
{"agents": [
 {"name": "fx-desk", "system": "You are the FX desk of madf.", "tools": ["fx_rates"], "maxSteps": 3},
 {"name": "tired", "system": "You are the tired desk of madf.", "tools": ["fx_rates"], "maxSteps": 1},
 {"name": "fine", "system": "You answer."},
 {"name": "skipper", "system": "FAIL-ME", "onError": "skip"},
 {"name": "retrier", "system": "FAIL-ME", "onError": "retry"},
 {"name": "aborter", "system": "FAIL-ME", "onError": "abort"}
]}
JSON
MADF_DATA_DIR=$D2 ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$rport \
	CLAUDE_MODEL_EXECUTION=claude-test "$MADF" serve --listen 127.0.0.1:0 >"$T/t.port" 2>"$T/t.err" &
t_pid=$!
for _ in $(seq 1 200); do tport=$(head -1 "$T/t.port" 2>/dev/null); [ -n "$tport" ] && break; sleep 0.05; done
curl -s -N -X POST "http://127.0.0.1:$tport/api/chat/multi" -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' -o "$T/s4.txt" --data-binary \
	'{"agents":["fx-desk","tired"],"rounds":1,"messages":[{"role":"user","content":"pair USD/JPY, window 2024-01-02 to 2024-01-31"}]}'
kill -TERM "$t_pid"; wait "$t_pid"
eq "an agent with a tool: tool call and result between its chunks; one at maxSteps 1 stops" \
	"$(check_stream "$T/s4.txt" | sed 's/ *agent_response_chunk//g; s/ *summarizer_chunk//g')" \
	"conversation_start initiator_start initiator_complete round_start agent_start agent_tool_call agent_tool_result agent_complete agent_start agent_complete round_complete summarizer_start conversation_complete"
tools=$(python3 - "$T/s4.txt" <<'PY'
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1], encoding="utf-8").read().split("\n\n") if b.startswith("data: ")]
call = [e["data"] for e in ev if e["type"] == "agent_tool_call"][0]
res = [e["data"] for e in ev if e["type"] == "agent_tool_result"][0]
ac = [e["data"] for e in ev if e["type"] == "agent_complete"]
pts = res["result"]["points"]
print(call["agent"], call["step"], call["toolCall"]["name"], call["toolCall"]["args"]["pair"],
      res["toolCallId"] == call["toolCall"]["id"], len(pts), pts[0][0], pts[-1][0],
      ac[0]["steps"], ac[0]["finishReason"], ac[0]["toolCalls"][0]["name"],
      ("%s on %s" % (pts[-1][1], pts[-1][0])) in ac[0]["response"],
      ac[1]["agent"], ac[1]["steps"], ac[1]["finishReason"], ac[1]["toolCalls"])
PY
)
eq "the tool call's fields, its result (the registry's fx_rates), the answer quoting it, maxSteps" "$tools" \
	"fx-desk 1 fx_rates USD/JPY True 22 2024-01-02 2024-01-31 2 completed fx_rates True tired 1 max_steps []"

# A model that refuses agents whose system prompt says FAIL-ME (400),
# answers the initiator with its JSON (in a Markdown fence) and the others
# with "fine.".
cat >"$T/failmodel.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
def sse(ev, d): return ("event: %s\ndata: %s\n\n" % (ev, json.dumps(d))).encode()
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if "FAIL-ME" in (req.get("system") or ""):
            b = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                     "message": "refused for FAIL-ME"}}).encode()
            self.send_response(400); self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(b))); self.end_headers(); self.wfile.write(b)
            return
        text = "fine."
        if "initiator" in (req.get("system") or ""):
            text = ('Here is the plan:\n```json\n{"goal": "Rank healthcare prospects", '
                    '"strategy": "Data first, then scoring", '
                    '"successCriteria": ["10 prospects", "next steps"]}\n```')
        out = [sse("message_start", {"type": "message_start", "message": {"id": "m", "type": "message",
               "role": "assistant", "content": [], "model": "f", "stop_reason": None,
               "usage": {"input_tokens": 1, "output_tokens": 1}}}),
               sse("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}}),
               sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": text}}),
               sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
               sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                     "usage": {"output_tokens": 1}}),
               sse("message_stop", {"type": "message_stop"})]
        b = b"".join(out)
        self.send_response(200); self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(b))); self.end_headers(); self.wfile.write(b)
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$T/failmodel.py" >"$T/fm.port" 2>/dev/null &
fm_pid=$!
for _ in $(seq 1 200); do fport=$(head -1 "$T/fm.port" 2>/dev/null); [ -n "$fport" ] && break; sleep 0.05; done
MADF_DATA_DIR=$D2 ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$fport \
	CLAUDE_MODEL_EXECUTION=claude-test "$MADF" serve --listen 127.0.0.1:0 >"$T/f.port" 2>"$T/f.err" &
f_pid=$!
for _ in $(seq 1 200); do f2port=$(head -1 "$T/f.port" 2>/dev/null); [ -n "$f2port" ] && break; sleep 0.05; done
FURL=http://127.0.0.1:$f2port/api/chat/multi
curl -s -N -X POST "$FURL" -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
	-o "$T/s5.txt" --data-binary \
	'{"agents":["retrier","fine","skipper"],"rounds":1,"messages":[{"role":"user","content":"go"}]}'
eq "retry, then skip; skip: the others go on and the conversation completes" \
	"$(check_stream "$T/s5.txt" | sed 's/ *agent_response_chunk//g; s/ *summarizer_chunk//g')" \
	"conversation_start initiator_start initiator_complete round_start agent_start agent_error agent_error agent_start agent_complete agent_start agent_error round_complete summarizer_start conversation_complete"
eq "the agent_error events: agent, round, action, the model's error" \
	"$(python3 -c '
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
print(" ".join("%s/%s/%s/%s" % (d["agent"], d["round"], d["action"], "FAIL-ME" in d["error"]) for d in
      [e["data"] for e in ev if e["type"] == "agent_error"]),
      [r["agent"] for e in ev if e["type"] == "round_complete" for r in e["data"]["results"]])' "$T/s5.txt")" \
	"retrier/1/retry/True retrier/1/skip/True skipper/1/skip/True ['fine']"
eq "an initiator answering JSON: goal, strategy and criteria from it, the goal in round_start" \
	"$(python3 -c '
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
i = [e["data"] for e in ev if e["type"] == "initiator_complete"][0]
r = [e["data"] for e in ev if e["type"] == "round_start"][0]
print(i["goal"], "|", i["strategy"], "|", i["successCriteria"], "|", r["goal"])' "$T/s5.txt")" \
	"Rank healthcare prospects | Data first, then scoring | ['10 prospects', 'next steps'] | Rank healthcare prospects"
curl -s -N -X POST "$FURL" -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' \
	-o "$T/s6.txt" --data-binary \
	'{"agents":["aborter","fine"],"rounds":2,"messages":[{"role":"user","content":"go"}]}'
eq "abort: agent_error, then one error ends the stream" "$(check_stream "$T/s6.txt")" \
	"conversation_start initiator_start initiator_complete round_start agent_start agent_error error"
eq "the abort's error names the agent and round, AGENT_EXECUTION_FAILED, not recoverable" \
	"$(python3 -c 'import json,sys; b=[x for x in open(sys.argv[1]).read().split("\n\n") if x][-1]; d=json.loads(b[6:])["data"]; print(d["code"], d["agent"], d["round"], d["recoverable"])' "$T/s6.txt")" \
	"AGENT_EXECUTION_FAILED aborter 1 False"
kill -TERM "$f_pid"; wait "$f_pid"
kill "$fm_pid" 2>/dev/null

# An agents file naming a tool the registry lacks stops the server.
mkdir -p "$T/d3"
echo '{"agents":[{"name":"x","system":"s","tools":["no_such_tool"]}]}' >"$T/d3/serve-agents.json"
out=$(MADF_DATA_DIR=$T/d3 "$MADF" serve --listen 127.0.0.1:0 2>&1); rc=$?
eq "an agent's unknown tool: serve refuses to start" "$rc" 1
has "naming the agent and the tool" "$out" 'agent "x": no tool "no_such_tool"'

# An initiator with tools (the agents file's "initiator"): its tool calls
# are initiator_tool_call events, its last text the plan.
D4=$T/d4
mkdir -p "$D4"
cp -p "$D/serve-tokens" "$D4/serve-tokens"
cat >"$D4/serve-agents.json" <<'JSON'
{"initiator": {"system": "You are the planner of madf.", "tools": ["fx_rates"], "maxSteps": 2},
 "agents": [{"name": "fine", "system": "You answer."}]}
JSON
MADF_DATA_DIR=$D4 ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$rport \
	CLAUDE_MODEL_EXECUTION=claude-test "$MADF" serve --listen 127.0.0.1:0 >"$T/i.port" 2>"$T/i.err" &
i_pid=$!
for _ in $(seq 1 200); do iport=$(head -1 "$T/i.port" 2>/dev/null); [ -n "$iport" ] && break; sleep 0.05; done
curl -s -N -X POST "http://127.0.0.1:$iport/api/chat/multi" -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' -o "$T/s10.txt" --data-binary \
	'{"agents":["fine"],"rounds":1,"messages":[{"role":"user","content":"pair USD/JPY, window 2024-01-02 to 2024-01-31"}]}'
kill -TERM "$i_pid"; wait "$i_pid"
eq "an initiator with a tool: initiator_tool_call between initiator_start and initiator_complete" \
	"$(check_stream "$T/s10.txt" | sed 's/ *agent_response_chunk//g; s/ *summarizer_chunk//g')" \
	"conversation_start initiator_start initiator_tool_call initiator_complete round_start agent_start agent_complete round_complete summarizer_start conversation_complete"
eq "its fields: toolCall {name, args, id} (no agent, round or step), and the plan quoting the tool's last close" \
	"$(python3 - "$T/s10.txt" <<'PY'
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1], encoding="utf-8").read().split("\n\n") if b.startswith("data: ")]
tc = [e["data"] for e in ev if e["type"] == "initiator_tool_call"][0]
ini = [e["data"] for e in ev if e["type"] == "initiator_complete"][0]
print(sorted(tc), tc["toolCall"]["name"], tc["toolCall"]["args"]["pair"], bool(tc["toolCall"]["id"]),
      "on 2024-01-31" in ini["goal"])
PY
)" "['seq', 'sessionId', 'timestamp', 'toolCall'] fx_rates USD/JPY True True"
mkdir -p "$T/d5"
echo '{"initiator":{"tools":["fx_rates"],"maxSteps":11},"agents":[{"name":"x","system":"s"}]}' >"$T/d5/serve-agents.json"
out=$(MADF_DATA_DIR=$T/d5 "$MADF" serve --listen 127.0.0.1:0 2>&1); rc=$?
eq "an initiator's maxSteps over the cap: serve refuses to start, naming it" "$rc $(printf %s "$out" | grep -c 'initiator: "maxSteps" must be an integer from 1 to 10')" "1 1"
echo '{"initiator":{"tools":["no_such_tool"]},"agents":[{"name":"x","system":"s"}]}' >"$T/d5/serve-agents.json"
out=$(MADF_DATA_DIR=$T/d5 "$MADF" serve --listen 127.0.0.1:0 2>&1); rc=$?
eq "an initiator's unknown tool: serve refuses to start, naming it" "$rc $(printf %s "$out" | grep -c 'agent "initiator": no tool "no_such_tool"')" "1 1"

# --- TLS ------------------------------------------------------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -days 2 \
	-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1
chmod 644 "$T/key.pem"
out=$("$MADF" serve --listen 127.0.0.1:0 --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" 2>&1); rc=$?
eq "a TLS key others can read is refused" "$rc" 1
has "naming the key and its mode" "$out" "key.pem is accessible by group or others (mode 0644)"
chmod 600 "$T/key.pem"
check_fails "--tls-cert without --tls-key is a usage error" 2 "$MADF" serve --tls-cert "$T/cert.pem"
out=$("$MADF" serve --listen 127.0.0.1:0 --tls-cert "$T/cert.pem" --tls-key "$T/cert.pem" 2>&1); rc=$?
eq "a certificate given as the key: serve does not start" "$rc" 1
MADF_SERVE_HOSTS=madf.example ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$rport \
	CLAUDE_MODEL_EXECUTION=claude-test "$MADF" serve --listen 127.0.0.1:0 \
	--tls-cert "$T/cert.pem" --tls-key "$T/key.pem" >"$T/tls.port" 2>"$T/tls.err" &
tls_pid=$!
for _ in $(seq 1 200); do sport=$(head -1 "$T/tls.port" 2>/dev/null); [ -n "$sport" ] && break; sleep 0.05; done
SURL=https://127.0.0.1:$sport/api/chat/multi
curl -s -N --cacert "$T/cert.pem" -X POST "$SURL" -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' --data-binary "$GOOD" -o "$T/s9.txt"
eq "over HTTPS: the whole stream" "$(check_stream "$T/s9.txt" | awk '{print $1, $NF}')" \
	"conversation_start conversation_complete"
st=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$sport/api/chat/multi" \
	-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' --data-binary '{}')
eq "plain HTTP to the TLS server gets no answer" "$st" 000
st=$(curl -s --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' -X POST "$SURL" \
	-H "Authorization: Bearer $TOK" -H "Origin: https://localhost:$sport" \
	-H 'Content-Type: application/json' --data-binary '{}')
eq "over HTTPS the server's own https:// Origin passes" "$st" 400
st=$(curl -s --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' -X POST "$SURL" \
	-H "Authorization: Bearer $TOK" -H "Host: madf.example:$sport" \
	-H 'Content-Type: application/json' --data-binary '{}')
eq "a Host listed in MADF_SERVE_HOSTS passes" "$st" 400
st=$(curl -s --cacert "$T/cert.pem" -o /dev/null -w '%{http_code}' -X POST "$SURL" \
	-H "Authorization: Bearer $TOK" -H "Host: other.example:$sport" \
	-H 'Content-Type: application/json' --data-binary '{}')
eq "one not listed does not" "$st" 403
kill -TERM "$tls_pid"; wait "$tls_pid"
"$MADF" serve --listen 0.0.0.0:0 --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" \
	>"$T/any.port" 2>"$T/any.err" &
any_pid=$!
wait_for "with TLS, serve may listen beyond loopback" 30 test -s "$T/any.port"
kill -TERM "$any_pid"; wait "$any_pid"

# --- no model: 503 --------------------------------------------------------------------------
"$MADF" serve --listen 127.0.0.1:0 >"$T/nm.port" 2>"$T/nm.err" &
nm_pid=$!
for _ in $(seq 1 200); do nport=$(head -1 "$T/nm.port" 2>/dev/null); [ -n "$nport" ] && break; sleep 0.05; done
st=$(curl -s -o "$T/nm.json" -w '%{http_code}' -X POST "http://127.0.0.1:$nport/api/chat/multi" \
	-H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' --data-binary "$GOOD")
eq "no model configured: 503 MODEL_NOT_CONFIGURED" "$st $(jf "$T/nm.json" 'j["code"]')" "503 MODEL_NOT_CONFIGURED"
has "which names what to set" "$(jf "$T/nm.json" 'j["details"]["message"]')" "CLAUDE_MODEL_EXECUTION"
kill -TERM "$nm_pid"; wait "$nm_pid"; rc=$?
eq "SIGTERM stops an idle server with exit 0" "$rc" 0

# --- keep-alives and SIGTERM draining an open stream ----------------------------------------
# A model that accepts and never answers: the conversation waits on it.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' >"$T/hang.port" 2>/dev/null &
hang_pid=$!
for _ in $(seq 1 200); do hport=$(head -1 "$T/hang.port" 2>/dev/null); [ -n "$hport" ] && break; sleep 0.05; done
# The conversation's wall-clock limit.
env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$hport CLAUDE_MODEL_EXECUTION=claude-test \
	MADF_SERVE_TIMEOUT_S=1 MADF_SERVE_PING_MS=100 MADF_SERVE_GRACE_S=0 "$MADF" serve --listen 127.0.0.1:0 >"$T/to.port" 2>"$T/to.err" &
to_pid=$!
for _ in $(seq 1 200); do toport=$(head -1 "$T/to.port" 2>/dev/null); [ -n "$toport" ] && break; sleep 0.05; done
curl -s -N -X POST "http://127.0.0.1:$toport/api/chat/multi" -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' --data-binary "$GOOD" -o "$T/s7.txt"
eq "over MADF_SERVE_TIMEOUT_S: one error ends the stream" "$(check_stream "$T/s7.txt")" \
	"conversation_start initiator_start error"
eq "the error is CONVERSATION_TIMEOUT, not recoverable" \
	"$(python3 -c 'import json,sys; b=[x for x in open(sys.argv[1]).read().split("\n\n") if x.startswith("data: ")][-1]; d=json.loads(b[6:])["data"]; print(d["code"], d["recoverable"])' "$T/s7.txt")" \
	"CONVERSATION_TIMEOUT False"
# A client that goes away, with no grace period, cancels its
# conversation (seen at the next write: a keep-alive at the latest).
curl -s -N -X POST "http://127.0.0.1:$toport/api/chat/multi" -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' --data-binary "$GOOD" -o "$T/s8.txt" &
c8=$!
wait_for "a second stream starts" 30 grep -q initiator_start "$T/s8.txt"
kill "$c8"; wait "$c8" 2>/dev/null
wait_for "a client that disconnects with MADF_SERVE_GRACE_S=0: its conversation is cancelled (logged)" 30 \
	grep -q "no client came back within the grace period (0 s): cancelled" "$T/to.err"
kill -TERM "$to_pid"; wait "$to_pid"; rc=$?
eq "and the server still stops cleanly" "$rc" 0

env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$hport CLAUDE_MODEL_EXECUTION=claude-test \
	MADF_SERVE_PING_MS=100 "$MADF" serve --listen 127.0.0.1:0 >"$T/d.port" 2>"$T/d.err" &
d_pid=$!
for _ in $(seq 1 200); do dport=$(head -1 "$T/d.port" 2>/dev/null); [ -n "$dport" ] && break; sleep 0.05; done
curl -s -N -X POST "http://127.0.0.1:$dport/api/chat/multi" -H "Authorization: Bearer $TOK" \
	-H 'Content-Type: application/json' --data-binary "$GOOD" -o "$T/s3.txt" &
curl_pid=$!
wait_for "a waiting stream gets \": ping\" keep-alives" 30 grep -q '^: ping$' "$T/s3.txt"
kill -TERM "$d_pid"
wait "$curl_pid"; crc=$?
wait "$d_pid"; rc=$?
eq "SIGTERM: the server exits 0 after draining" "$rc" 0
eq "SIGTERM: the client's stream ended cleanly" "$crc" 0
eq "SIGTERM: the open stream ends with one error" "$(check_stream "$T/s3.txt")" \
	"conversation_start initiator_start error"
eq "SIGTERM: the error is recoverable (SERVER_SHUTDOWN)" \
	"$(python3 -c 'import json,sys; b=[x for x in open(sys.argv[1]).read().split("\n\n") if x.startswith("data: ")][-1]; d=json.loads(b[6:])["data"]; print(d["code"], d["recoverable"])' "$T/s3.txt")" \
	"SERVER_SHUTDOWN True"
has "SIGTERM: the log says it drained" "$(cat "$T/d.err")" "draining"
# --- limits per user: 5 conversations an hour, 2 at once, 100 rounds a day ---------------------
# lim PORT TOKEN NAME BODY [CURL ARGS]: a POST; status in $st, headers in $T/NAME.h.
lim() {
	_p=$1 _k=$2 _n=$3 _b=$4; shift 4
	st=$(curl -s -o "$T/$_n.json" -D "$T/$_n.h" -w '%{http_code}' -X POST \
		"http://127.0.0.1:$_p/api/chat/multi" -H "Authorization: Bearer $_k" \
		-H 'Content-Type: application/json' "$@" --data-binary "$_b")
}
# hdr NAME FIELD: a header's value in $T/NAME.h.
hdr() { grep -i "^$2:" "$T/$1.h" | head -1 | cut -d' ' -f2- | tr -d '\r'; }
# rl NAME: the RateLimit field's r values, and whether each t is within
# its window.
rl() {
	python3 -c '
import re, sys
items = dict((m.group(1), dict(kv.split("=") for kv in m.group(2).split(";") if kv))
             for m in re.finditer(r"\"([a-z-]+)\";([^,]*)", sys.argv[1]))
out = []
for name, w in (("conv-hour", 3600), ("concurrent", None), ("rounds-day", 86400)):
    p = items.get(name, {})
    t = "" if w is None else (" t-ok" if "t" in p and 0 < int(p["t"]) <= w else " t-bad")
    out.append("%s=%s%s" % (name, p.get("r", "?"), t))
print(" ".join(out))' "$(hdr "$1" RateLimit)"
}
last_event() { check_stream "$1" | awk '{print $NF}'; }
"$MADF" serve token add carol >"$T/tok3" 2>/dev/null; TOK3=$(cat "$T/tok3")
"$MADF" serve token add dave >"$T/tok4" 2>/dev/null; TOK4=$(cat "$T/tok4")
"$MADF" serve token add erin >"$T/tok5" 2>/dev/null; TOK5=$(cat "$T/tok5")
"$MADF" serve token add frank >"$T/tok6" 2>/dev/null; TOK6=$(cat "$T/tok6")
# lserve NAME MODEL-PORT ENV...: a server with the limits' defaults (plus
# ENV); its port in $lport, its pid in $lpid.
lserve() {
	_n=$1 _m=$2; shift 2
	env -u MADF_SERVE_CONV_PER_HOUR -u MADF_SERVE_CONCURRENT -u MADF_SERVE_ROUNDS_PER_DAY \
		ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$_m \
		CLAUDE_MODEL_EXECUTION=claude-test "$@" "$MADF" serve --listen 127.0.0.1:0 \
		>"$T/$_n.port" 2>"$T/$_n.err" &
	lpid=$!
	lport=
	for _ in $(seq 1 200); do lport=$(head -1 "$T/$_n.port" 2>/dev/null); [ -n "$lport" ] && break; sleep 0.05; done
}
lserve l1 "$rport"
eq "every response has RateLimit-Policy with the seed's three limits (defaults; a 401 here)" \
	"$(curl -s -D - -o /dev/null -X POST "http://127.0.0.1:$lport/api/chat/multi" | grep -i '^RateLimit-Policy:' | tr -d '\r')" \
	'RateLimit-Policy: "conv-hour";q=5;w=3600, "concurrent";q=2;qu="concurrent-requests", "rounds-day";q=100;w=86400;madf-unit="rounds"'
lim "$lport" "$TOK3" lv '{}'
eq "a refused request (400) carries the user's RateLimit, nothing used yet" "$st $(rl lv)" \
	"400 conv-hour=5 t-ok concurrent=2 rounds-day=100 t-ok"
for i in 1 2 3 4 5; do
	lim "$lport" "$TOK3" "l$i" "$GOOD"
	eq "conversation $i of the hour: 200, to conversation_complete" "$st $(last_event "$T/l$i.json")" \
		"200 conversation_complete"
done
eq "the 1st stream's RateLimit counts it (4 left this hour, 1 round reserved, 1 running)" \
	"$(rl l1)" "conv-hour=4 t-ok concurrent=1 rounds-day=99 t-ok"
eq "the 5th stream's RateLimit: none left this hour" "$(rl l5)" \
	"conv-hour=0 t-ok concurrent=1 rounds-day=95 t-ok"
lim "$lport" "$TOK3" l6 "$GOOD"
eq "the 6th conversation of the hour: 429 RATE_LIMIT_EXCEEDED naming conv-hour" \
	"$st $(jf "$T/l6.json" 'j["code"], j["details"]["field"]')" "429 RATE_LIMIT_EXCEEDED conv-hour"
eq "its Retry-After is when the hour's oldest conversation leaves the window (1..3600 s)" \
	"$(python3 -c 'import sys; print(0 < int(sys.argv[1]) <= 3600)' "$(hdr l6 Retry-After)")" True
eq "its RateLimit: conv-hour r=0, none running" "$(rl l6)" \
	"conv-hour=0 t-ok concurrent=2 rounds-day=95 t-ok"
lim "$lport" "$TOK6" l6b "$GOOD"
eq "another user is not limited by carol's hour" "$st $(rl l6b)" "200 conv-hour=4 t-ok concurrent=1 rounds-day=99 t-ok"
# A crash loses no count: each change is a line of serve-limits.journal at
# once (serve-limits.json, the whole state, is written about every second).
kill -KILL "$lpid"; wait "$lpid" 2>/dev/null
lserve l2 "$rport"
lim "$lport" "$TOK3" l7 "$GOOD"
eq "after a crash (SIGKILL) and a restart: still 429 for carol's hour" "$st $(jf "$T/l7.json" 'j["details"]["field"]')" "429 conv-hour"
eq "after a crash and a restart: the counts are kept" "$(rl l7)" "conv-hour=0 t-ok concurrent=2 rounds-day=95 t-ok"
lim "$lport" "$TOK6" l7b "$GOOD"
eq "frank's 2nd conversation counts (3 left this hour)" "$st $(rl l7b)" "200 conv-hour=3 t-ok concurrent=1 rounds-day=98 t-ok"
kill -TERM "$lpid"; wait "$lpid"
eq "after SIGTERM serve-limits.json has carol's 5 conversations and 5 rounds, and frank's 2" \
	"$(jf "$D/serve-limits.json" 'len(j["users"]["carol"]["conversations"]), sum(r["n"] for r in j["users"]["carol"]["rounds"]), len(j["users"]["frank"]["conversations"])')" \
	"5 5 2"
eq "and the journal is empty (all of it is in serve-limits.json)" "$(wc -c <"$D/serve-limits.journal")" 0
# The same data with 7 rounds a day: carol has 2 left.
lserve l3 "$rport" MADF_SERVE_CONV_PER_HOUR=100 MADF_SERVE_ROUNDS_PER_DAY=7
R2='{"agents":["data-steward"],"rounds":2,"messages":[{"role":"user","content":"find prospects"}]}'
R3='{"agents":["data-steward"],"rounds":3,"messages":[{"role":"user","content":"find prospects"}]}'
R4='{"agents":["data-steward"],"rounds":4,"messages":[{"role":"user","content":"find prospects"}]}'
lim "$lport" "$TOK3" l8 "$R3"
eq "rounds past the day's quota: 429 naming rounds-day" \
	"$st $(jf "$T/l8.json" 'j["code"], j["details"]["field"]')" "429 RATE_LIMIT_EXCEEDED rounds-day"
eq "its Retry-After is when the day's first rounds leave the window" \
	"$(python3 -c 'import sys; print(86000 < int(sys.argv[1]) <= 86400)' "$(hdr l8 Retry-After)")" True
eq "its RateLimit: 2 rounds left of 7 (the policy from the environment)" \
	"$(rl l8) $(hdr l8 RateLimit-Policy | grep -o '"rounds-day";q=7')" \
	"conv-hour=95 t-ok concurrent=2 rounds-day=2 t-ok \"rounds-day\";q=7"
lim "$lport" "$TOK3" l9 "$R2"
eq "the 2 rounds left are admitted" "$st $(rl l9)" "200 conv-hour=94 t-ok concurrent=1 rounds-day=0 t-ok"
kill -TERM "$lpid"; wait "$lpid"
# A conversation that ends early (its wall-clock limit, in the initiator)
# gets its rounds back.
lserve l4 "$hport" MADF_SERVE_TIMEOUT_S=1 MADF_SERVE_ROUNDS_PER_DAY=4
lim "$lport" "$TOK4" r1 "$R3" -N
eq "dave's 3 rounds are reserved at admission" "$st $(rl r1)" "200 conv-hour=4 t-ok concurrent=1 rounds-day=1 t-ok"
eq "and the conversation ends early (timeout in the initiator)" "$(last_event "$T/r1.json")" error
wait_for "the rounds it did not start are refunded (serve-limits.json)" 30 \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(sum(r["n"] for r in j["users"]["dave"]["rounds"]) != 0)' "$D/serve-limits.json"
lim "$lport" "$TOK4" r2 "$R4" -N
eq "so 4 rounds fit in the day's 4 again" "$st $(rl r2)" "200 conv-hour=3 t-ok concurrent=1 rounds-day=0 t-ok"
kill -TERM "$lpid"; wait "$lpid"
# 2 at once: two conversations waiting on a model that never answers.
lserve l5 "$hport" MADF_SERVE_PING_MS=100 MADF_SERVE_GRACE_S=0
curl -s -N -o "$T/c1.json" -X POST "http://127.0.0.1:$lport/api/chat/multi" -H "Authorization: Bearer $TOK5" \
	-H 'Content-Type: application/json' --data-binary "$GOOD" &
cc1=$!
curl -s -N -o "$T/c2.json" -X POST "http://127.0.0.1:$lport/api/chat/multi" -H "Authorization: Bearer $TOK5" \
	-H 'Content-Type: application/json' --data-binary "$GOOD" &
cc2=$!
wait_for "two of erin's conversations run" 30 sh -c "grep -q initiator_start '$T/c1.json' && grep -q initiator_start '$T/c2.json'"
lim "$lport" "$TOK5" c3 "$GOOD"
eq "the 3rd at once: 429 naming concurrent" "$st $(jf "$T/c3.json" 'j["code"], j["details"]["field"]')" \
	"429 RATE_LIMIT_EXCEEDED concurrent"
eq "its Retry-After and RateLimit" "$(hdr c3 Retry-After) $(rl c3)" \
	"30 conv-hour=3 t-ok concurrent=0 rounds-day=98 t-ok"
kill "$cc1"; wait "$cc1" 2>/dev/null
# The next keep-alive finds the client gone; its conversation ends.
c4() {
	st=$(curl -s -m 2 -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$lport/api/chat/multi" \
		-H "Authorization: Bearer $TOK5" -H 'Content-Type: application/json' --data-binary "$GOOD")
	[ "$st" = 200 ]
}
wait_for "once one ends, another is admitted" 30 c4
kill -TERM "$lpid"; wait "$lpid"
kill "$cc2" 2>/dev/null; wait "$cc2" 2>/dev/null

eq "the limits' servers logged no sanitizer report" \
	"$(cat "$T"/l?.err | grep -c 'Sanitizer\|runtime error')" 0

# --- cancel: POST /api/chat/multi/{sessionId}/cancel by its owner ---------------------------------
"$MADF" serve token add gina >"$T/tok7" 2>/dev/null; TOK7=$(cat "$T/tok7")
lserve k1 "$hport" MADF_SERVE_PING_MS=100
curl -s -N -o "$T/k1.txt" -X POST "http://127.0.0.1:$lport/api/chat/multi" -H "Authorization: Bearer $TOK7" \
	-H 'Content-Type: application/json' --data-binary "$R3" &
kc=$!
wait_for "gina's conversation runs (waiting on the model)" 30 grep -q initiator_start "$T/k1.txt"
SID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n\n")[0][6:])["data"]["sessionId"])' "$T/k1.txt")
KURL=http://127.0.0.1:$lport/api/chat/multi/$SID/cancel
st=$(curl -s -o "$T/k.json" -w '%{http_code}' -X POST "$KURL")
eq "cancel without a token: 401" "$st" 401
st=$(curl -s -o "$T/k.json" -w '%{http_code}' -X POST "$KURL" -H "Authorization: Bearer $TOK6")
eq "cancel of another user's conversation: 404 naming sessionId" \
	"$st $(jf "$T/k.json" 'j["code"], j["details"]["field"]')" "404 NOT_FOUND sessionId"
st=$(curl -s -o "$T/k.json" -w '%{http_code}' -X POST \
	"http://127.0.0.1:$lport/api/chat/multi/000000000000000000000000/cancel" -H "Authorization: Bearer $TOK7")
eq "cancel of an unknown session: 404" "$st" 404
st=$(curl -s -o /dev/null -w '%{http_code}' "$KURL" -H "Authorization: Bearer $TOK7")
eq "cancel with GET: 405" "$st" 405
has "the other user's attempt left the stream running" "$(check_stream "$T/k1.txt")" "conversation_start initiator_start"
hasnt "(no error in it)" "$(check_stream "$T/k1.txt")" "error"
st=$(curl -s -o "$T/k.json" -D "$T/k.h" -w '%{http_code}' -X POST "$KURL" -H "Authorization: Bearer $TOK7")
eq "cancel by its owner: 200 {sessionId, cancelled}" "$st $(jf "$T/k.json" 'j["sessionId"] == "'"$SID"'", j["cancelled"]')" \
	"200 True True"
wait "$kc"; crc=$?
eq "the stream then closes cleanly" "$crc" 0
eq "with exactly one final error" "$(check_stream "$T/k1.txt")" "conversation_start initiator_start error"
eq "the error is CANCELLED (\"cancelled\"), not recoverable" \
	"$(python3 -c 'import json,sys; b=[x for x in open(sys.argv[1]).read().split("\n\n") if x.startswith("data: ")][-1]; d=json.loads(b[6:])["data"]; print(d["code"], d["error"], d["recoverable"])' "$T/k1.txt")" \
	"CANCELLED cancelled False"
wait_for "its 3 reserved rounds are refunded" 30 \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(sum(r["n"] for r in j["users"]["gina"]["rounds"]) != 0)' "$D/serve-limits.json"
st=$(curl -s -o "$T/k.json" -w '%{http_code}' -X POST "$KURL" -H "Authorization: Bearer $TOK7")
eq "cancelling it again: 404 (it has ended)" "$st" 404
kill -TERM "$lpid"; wait "$lpid"; rc=$?
eq "the server stops cleanly after a cancel" "$rc" 0
hasnt "no sanitizer report" "$(cat "$T/k1.err")" "Sanitizer"

# --- MADF_SERVE_TRACE: a line per conversation, its marks in order --------------------------------
# Its files are made by the conversation's own thread, after the set-up
# started it (made by the set-up before, the 1,000 of a burst queued
# behind each other there, and the last conversations started seconds
# late: bench serve's events per second fell).
"$MADF" serve token add hank >"$T/tok8" 2>/dev/null; TOK8=$(cat "$T/tok8")
lserve tr "$rport" MADF_SERVE_TRACE="$T/trace.txt"
curl -s -N -o "$T/tr1.txt" -X POST "http://127.0.0.1:$lport/api/chat/multi" -H "Authorization: Bearer $TOK8" \
	-H 'Content-Type: application/json' --data-binary "$GOOD"
eq "the traced conversation runs to conversation_complete" "$(last_event "$T/tr1.txt")" conversation_complete
wait_for "its trace line is written" 30 grep -q . "$T/trace.txt"
eq "one line, for its session" "$(awk '{print $1}' "$T/trace.txt")" "$(sid_of "$T/tr1.txt")"
eq "every mark reached, in order: the admission's steps, its first event sent; its thread started after its admission, then its files made (by that thread)" \
	"$(python3 -c '
import sys
f = sys.stdin.read().split()
m = dict(x.split("=") for x in f[2:])
m = {k: int(v) for k, v in m.items()}
print(all(v >= 0 for v in m.values()),
      m["accept"] <= m["headers"] <= m["body"] <= m["auth"] <= m["valid"] <= m["admit"] <= m["emit"] <= m["start"] <= m["queued"] <= m["sent"],
      m["admit"] <= m["bus"] < m["files"])' <"$T/trace.txt")" "True True True"
kill -TERM "$lpid"; wait "$lpid"; rc=$?
eq "the traced server stops cleanly" "$rc" 0
hasnt "no sanitizer report" "$(cat "$T/tr.err")" "Sanitizer"

# --- a stream waiting for its conversation holds no thread (epoll, suspended) --------------------
lserve w0 "$hport" MADF_SERVE_CONCURRENT=4 MADF_SERVE_CONV_PER_HOUR=100 MADF_SERVE_PING_MS=100
# threads by name (pthread_setname_np): serve-conv one per conversation,
# serve-timer the keep-alives, serve-setup and bus-lease the server's own;
# any other thread is one of libmicrohttpd's pool or the agents'
thr() { awk '/^Threads:/ {print $2}' "/proc/$lpid/status"; }
named() { cat /proc/$lpid/task/*/comm 2>/dev/null | grep -c "^$1\$"; }
others() { cat /proc/$lpid/task/*/comm 2>/dev/null | grep -vcE '^(serve-conv|serve-timer|serve-setup|bus-lease)$'; }
t0=$(thr) o0=$(others)
wpids=
for i in 1 2 3 4; do
	curl -s -N -o "$T/w$i.txt" -X POST "http://127.0.0.1:$lport/api/chat/multi" -H "Authorization: Bearer $TOK7" \
		-H 'Content-Type: application/json' --data-binary "$GOOD" &
	wpids="$wpids $!"
done
wait_for "4 streams wait on a model that never answers" 30 sh -c \
	"for i in 1 2 3 4; do grep -q initiator_start $T/w\$i.txt || exit 1; done"
wait_for "each gets keep-alives (its suspended connection resumed by the timer)" 30 sh -c \
	"for i in 1 2 3 4; do grep -q '^: ping\$' $T/w\$i.txt || exit 1; done"
t4=$(thr) o4=$(others)
eq "4 waiting streams: 4 conversation threads and one keep-alive timer ($t0 -> $t4 threads in all)" \
	"$(named serve-conv) $(named serve-timer)" "4 1"
eq "no thread per connection: the pool's and the agents' threads unchanged ($o0 -> $o4)" "$o4" "$o0"
kill -TERM "$lpid"; wait "$lpid"; rc=$?
for p in $wpids; do wait "$p"; done
eq "SIGTERM with 4 streams waiting: a clean exit, each stream ending with an error" \
	"$rc $(for i in 1 2 3 4; do last_event "$T/w$i.txt"; done | tr '\n' ' ')" "0 error error error error "
hasnt "no sanitizer report" "$(cat "$T/w0.err")" "Sanitizer"

# --- SIGTERM with many streams open while the bus lags behind them -----------------------------
# The controller puts each conversation's turns on the bus after them, one
# job at a time; with many conversations it lags behind (here slowed to
# 2 s a turn by MADF_SERVE_BUS_DELAY_MS). A stop must not replay the turns
# of conversations it has just ended: before, the server waited on that
# backlog until its bounds ran out and exited with the conversations still
# "finishing" and their agents left on the bus. Its own data directory.
GN=12
mkdir -p "$T/sg/data"
cp -p "$D/serve-tokens" "$T/sg/data/serve-tokens"
lserve sg "$hport" MADF_DATA_DIR="$T/sg/data" LOG_DIR="$T/sg/logs" MADF_SERVE_CONCURRENT=$GN \
	MADF_SERVE_CONV_PER_HOUR=100 MADF_SERVE_PING_MS=100 MADF_SERVE_BUS_DELAY_MS=2000
gpids=
for i in $(seq 1 $GN); do
	curl -s -N -o "$T/g$i.txt" -X POST "http://127.0.0.1:$lport/api/chat/multi" -H "Authorization: Bearer $TOK7" \
		-H 'Content-Type: application/json' --data-binary "$R3" &
	gpids="$gpids $!"
done
wait_for "$GN streams open, each conversation waiting on the model" 60 sh -c \
	"for i in \$(seq 1 $GN); do grep -q initiator_start $T/g\$i.txt || exit 1; done"
kill -TERM "$lpid"; wait "$lpid"; rc=$?
crcs=
for p in $gpids; do wait "$p"; crcs="$crcs$?"; done
eq "SIGTERM with $GN streams open: exit 0, every client's stream closed cleanly" \
	"$rc $crcs" "0 $(printf '0%.0s' $(seq 1 $GN))"
eq "each stream got its end: exactly one terminal event, a recoverable SERVER_SHUTDOWN" \
	"$(for i in $(seq 1 $GN); do python3 -c '
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
term = [e for e in ev if e["type"] in ("error", "conversation_complete")]
print(len(term), term[-1]["data"]["code"], term[-1]["data"]["recoverable"], ev[-1] is term[-1])' "$T/g$i.txt"; done | sort | uniq -c | sed 's/^ *//')" \
	"$GN 1 SERVER_SHUTDOWN True True"
eq "the server stopped whole: its last log line is \"stopped\" (no conversation left finishing)" \
	"$(tail -1 "$T/sg.err")" "madf: serve: stopped"
GS=$(for i in $(seq 1 $GN); do sid_of "$T/g$i.txt"; done)
eq "each session's file ends with that error, its meta ended with outcome SERVER_SHUTDOWN" \
	"$(for s in $GS; do python3 -c '
import json, sys
d = sys.argv[1] + "/serve-sessions/" + sys.argv[2]
last = json.loads(open(d + ".jsonl").read().splitlines()[-1])
m = json.load(open(d + ".json"))
print(last["type"], last["data"]["code"], m["state"], m["outcome"])' "$T/sg/data" "$s"; done | sort | uniq -c | sed 's/^ *//')" \
	"$GN error SERVER_SHUTDOWN ended SERVER_SHUTDOWN"
eq "the admissions' journal and the limits' journal are empty (all in their files)" \
	"$(wc -c <"$T/sg/data/serve-sessions/admissions.journal") $(wc -c <"$T/sg/data/serve-limits.journal")" "0 0"
eq "serve-limits.json: gina's $GN conversations counted, their 3 rounds each refunded (none started)" \
	"$(jf "$T/sg/data/serve-limits.json" 'len(j["users"]["gina"]["conversations"]), sum(r["n"] for r in j["users"]["gina"]["rounds"])')" \
	"$GN 0"
eq "no agent of these conversations left on the bus: no state file, no inbox" \
	"$(for s in $GS; do ls "$T/sg/data/state" "$T/sg/data/messages/inbox" 2>/dev/null | grep -c "conv-$s"; done | sort -u)" 0
eq "every agent of theirs that came on the bus logged its stop (the conversation ended)" \
	"$(for f in "$T"/sg/logs/agents/conv-*/events/*.jsonl; do python3 -c '
import json, sys
ev = [json.loads(l)["event"] for l in open(sys.argv[1])]
print("start" in ev, ev[-1])' "$f"; done | sort -u)" "True stop"
hasnt "no sanitizer report" "$(cat "$T/sg.err")" "Sanitizer"

kill "$hang_pid" 2>/dev/null

done_testing
