# madf serve: resume and the grace period, against peers written by
# others. Every event is recorded (data/serve-sessions/SESSION.jsonl) and
# has an id (its seq): `id:` lines on GET .../events and for a POST that
# asks for text/event-stream, none for the seed's fetch client (its parser
# breaks on any line after `data:` in a block). A client that goes away
# does not cancel: its conversation runs on, still counted against the
# concurrency limit, and is resumed with Last-Event-ID by curl -N and by
# the npm `eventsource` across a forced disconnect (a proxy cutting the
# connection), after the conversation ended (204 then), after SIGTERM and
# after SIGKILL and a restart; after the grace period with nobody there it
# is cancelled. The npm `eventsource-parser` fed byte by byte; the npm
# `@dwmkerr/mock-llm` as the model of one conversation; a client that
# reads nothing for a minute (the server's memory does not follow the
# backlog); 50 users at once.
. tests/integration/lib.sh

mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL ANTHROPIC_BASE_URL OPENAI_BASE_URL MADF_SERVE_ORIGINS 2>/dev/null || true
export MADF_SERVE_CONV_PER_HOUR=1000 MADF_SERVE_ROUNDS_PER_DAY=100000 MADF_SERVE_PING_MS=200
export SERVE_NPM=$TOP/build/npm
PIDS=
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; cleanup' EXIT
KEY=sk-madf-resume-test-0123456789

# srv NAME MODEL-PORT [ENV...]: madf serve on the Anthropic-style model at
# MODEL-PORT; $sp its port, $spid its pid, $U its API URL.
srv() {
	_n=$1 _m=$2; shift 2
	bg_port "$_n" env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$_m \
		CLAUDE_MODEL_EXECUTION=claude-test "$@" "$MADF" serve --listen 127.0.0.1:0
	sp=$bport spid=$bpid U=http://127.0.0.1:$bport/api/chat/multi
}
stop() { kill -TERM "$1"; wait "$1"; }
# events FILE: "SEQ TYPE" of each data block of an SSE body, checking that
# an `id:` line (when there is one) equals data.seq.
events() {
	python3 - "$1" <<'PY'
import json, sys
for b in open(sys.argv[1], encoding="utf-8").read().split("\n\n"):
    lines = b.split("\n")
    if not lines[0].startswith("data: "):
        continue
    e = json.loads(lines[0][6:])
    ids = [l[4:] for l in lines[1:] if l.startswith("id: ")]
    assert not ids or ids == [str(e["data"]["seq"])], (ids, e["data"]["seq"])
    print(e["data"]["seq"], e["type"])
PY
}
types() { events "$1" | awk '{print $2}' | tr '\n' ' ' | sed 's/ $//'; }
seqs() { events "$1" | awk '{print $1}' | tr '\n' ' ' | sed 's/ $//'; }
# hdr FILE FIELD
hdr() { grep -i "^$2:" "$1" | head -1 | cut -d' ' -f2- | tr -d '\r'; }
concurrent_left() { sed -n 's/.*"concurrent";r=\([0-9]*\).*/\1/p' "$1" | head -1; }

"$MADF" serve token add alice >"$T/ta" 2>/dev/null; TA=$(cat "$T/ta")
"$MADF" serve token add bob >"$T/tb" 2>/dev/null; TB=$(cat "$T/tb")
AUTH="Authorization: Bearer $TA"
R1='{"agents":["data-steward"],"rounds":1,"messages":[{"role":"user","content":"find prospects"}]}'

# --- the gated model: an agent's turn waits for $T/gate ---------------------------
bg_port gate python3 "$TOP/tests/integration/serve_gate_model.py" --gate "$T/gate"
gport=$bport
srv s1 "$gport" MADF_SERVE_GRACE_S=120 MADF_SERVE_CONCURRENT=2
ok "madf serve and the gated model run"

# A POST asking for text/event-stream gets an id: line after each data: line.
rm -f "$T/gate"
curl -s -N -o "$T/p1.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' \
	-H 'Accept: text/event-stream' --data-binary "$R1" &
c1=$!
wait_for "the conversation waits on the model mid-turn (part one sent)" 30 grep -q 'part one' "$T/p1.txt"
kill "$c1"; wait "$c1" 2>/dev/null
eq "what the SSE client got: data, then id equal to data.seq, in order" "$(seqs "$T/p1.txt")" "1 2 3 4 5 6"
eq "each block is exactly data: and id:" \
	"$(python3 -c 'import sys; bs=[b for b in open(sys.argv[1]).read().split("\n\n") if b]; print(all(b.split("\n")[0].startswith("data: {") and b.split("\n")[1] == "id: %d" % (i + 1) and len(b.split("\n")) == 2 for i, b in enumerate(bs)))' "$T/p1.txt")" True
SID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0][6:])["data"]["sessionId"])' "$T/p1.txt")
wait_for "the client went away: the conversation runs on (logged with the grace period)" 30 \
	grep -q "session $SID (alice): the client went away after 6 events: the conversation runs on; it is cancelled unless a client resumes it within 120 s" "$T/s1.err"
hasnt "and it was not cancelled" "$(cat "$T/s1.err")" "cancelled by"
st=$(curl -s -o /dev/null -D "$T/h1" -w '%{http_code}' -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' --data-binary '{}')
eq "it still counts against alice's 2 at once (RateLimit concurrent r=1)" "$st $(concurrent_left "$T/h1")" "400 1"

# Resume with curl -N from Last-Event-ID 6 while it runs; then the gate opens.
curl -s -N -o "$T/r1.txt" -D "$T/r1.h" "$U/$SID/events" -H "$AUTH" -H 'Last-Event-ID: 6' &
c2=$!
wait_for "the resumed stream is attached (retry: sent)" 30 grep -q '^retry: 3000' "$T/r1.txt"
touch "$T/gate"
wait "$c2"; rc=$?
eq "curl -N resume: exits 0 when the conversation ends" "$rc" 0
has "the resume is text/event-stream" "$(cat "$T/r1.h")" "Content-Type: text/event-stream"
eq "it starts after event 6 and runs to the end, ids unbroken" "$(seqs "$T/r1.txt" | cut -d' ' -f1-3)" "7 8 9"
eq "the events after 6: the rest of the turn, the round, the summary, one conversation_complete" \
	"$(types "$T/r1.txt")" \
	"agent_response_chunk agent_complete round_complete summarizer_start summarizer_chunk conversation_complete"
eq "the agent's response joins what both streams carried" \
	"$(cat "$T/p1.txt" "$T/r1.txt" | python3 -c '
import json, sys
ev = [json.loads(l[6:]) for l in sys.stdin.read().split("\n") if l.startswith("data: ")]
ch = "".join(e["data"]["chunk"] for e in ev if e["type"] == "agent_response_chunk")
ac = [e["data"]["response"] for e in ev if e["type"] == "agent_complete"][0]
print(ch == ac, repr(ac))')" "True 'part one part two'"
cp "$T/r1.txt" "$T/r1-first.txt"

# The same from the start, and who may read it.
curl -s -N -o "$T/r2.txt" "$U/$SID/events" -H "$AUTH"
eq "GET .../events with no Last-Event-ID replays all of it" "$(seqs "$T/r2.txt")" "$(seq 1 12 | tr '\n' ' ' | sed 's/ $//')"
eq "the replay matches the recorded file line for line" \
	"$(python3 -c '
import json, sys
blocks = [b.split("\n")[0][6:] for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
print(blocks == open(sys.argv[2]).read().splitlines())' "$T/r2.txt" "$D/serve-sessions/$SID.jsonl")" True
st=$(curl -s -o "$T/r3.txt" -w '%{http_code}' "$U/$SID/events" -H "$AUTH" -H 'Last-Event-ID: 12')
eq "Last-Event-ID at the last event of an ended conversation: 204 (EventSource stops)" "$st $(wc -c <"$T/r3.txt" | tr -d ' ')" "204 0"
st=$(curl -s -o "$T/r4.json" -w '%{http_code}' "$U/$SID/events" -H "Authorization: Bearer $TB")
eq "another user's token: 404 NOT_FOUND naming sessionId (the seed's error shape)" \
	"$st $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["code"], j["details"]["field"], bool(j["timestamp"]), bool(j["error"]))' "$T/r4.json")" \
	"404 NOT_FOUND sessionId True True"
st=$(curl -s -o /dev/null -w '%{http_code}' "$U/$SID/events")
eq "no token: 401" "$st" 401
st=$(curl -s -o "$T/r5.json" -w '%{http_code}' "$U/$SID/events" -H "$AUTH" -H 'Last-Event-ID: seven')
eq "a Last-Event-ID that is not a number: 400 naming it" \
	"$st $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["code"], j["details"]["field"])' "$T/r5.json")" \
	"400 VALIDATION_ERROR Last-Event-ID"
st=$(curl -s -o /dev/null -w '%{http_code}' "$U/000000000000000000000000/events" -H "$AUTH")
eq "an unknown session: 404" "$st" 404
st=$(curl -s -o /dev/null -D "$T/r6.h" -w '%{http_code}' -X POST "$U/$SID/events" -H "$AUTH")
eq "POST to .../events: 405 with Allow: GET" "$st $(hdr "$T/r6.h" Allow)" "405 GET"
eq "the meta file: alice's, ended complete, 12 events, 1 round" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["user"], j["state"], j["outcome"], j["events"], j["usage"]["rounds"])' "$D/serve-sessions/$SID.json")" \
	"alice ended complete 12 1"

# --- eventsource-parser, one byte at a time -------------------------------------------
if [ -d "$SERVE_NPM/node_modules/eventsource-parser" ] || make -C "$TOP" -s serve-peers >"$T/npm.log" 2>&1; then
	node "$TOP/tests/integration/serve_sse_bytes.mjs" "$T/r2.txt" >"$T/bp.txt" 2>&1
	eq "eventsource-parser fed byte by byte: 12 events, each id its seq, retry 3000" \
		"$(awk '$1 == $3 {n++} END {print n}' "$T/bp.txt") $(tail -1 "$T/bp.txt")" "12 retry 3000"
	eq "and the same types in the same order as the file" \
		"$(awk 'NF == 3 {print $2}' "$T/bp.txt" | tr '\n' ' ' | sed 's/ $//')" "$(types "$T/r2.txt")"
	node "$TOP/tests/integration/serve_sse_bytes.mjs" "$T/p1.txt" >"$T/bp2.txt" 2>&1
	eq "the POST stream's ids through eventsource-parser too" "$(awk '{print $1}' "$T/bp2.txt" | tr '\n' ' ')" "1 2 3 4 5 6 "
else
	fail "the npm peers install (make serve-peers)" "$(tail -5 "$T/npm.log")"
fi

# --- the npm eventsource: a forced disconnect mid-conversation, then resume ----------
rm -f "$T/gate"
curl -s -N -o "$T/p2.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$R1" &
c3=$!
wait_for "a second conversation waits mid-turn" 30 grep -q 'part one' "$T/p2.txt"
kill "$c3"; wait "$c3" 2>/dev/null
SID2=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0][6:])["data"]["sessionId"])' "$T/p2.txt")
bg_port proxy python3 "$TOP/tests/integration/serve_cut_proxy.py" "$sp" "$T/cut" "$T/proxy.log"
pport=$bport
node "$TOP/tests/integration/serve_es_client.mjs" "http://127.0.0.1:$pport/api/chat/multi/$SID2/events" \
	"$TA" "$T/es.progress" "$T/es.json" 2>"$T/es.err" &
esp=$!
PIDS="$PIDS $esp"
wait_for "EventSource reads the conversation so far (to part one)" 30 grep -q '^agent_response_chunk 6$' "$T/es.progress"
touch "$T/cut"
wait_for "the proxy cut the connection; EventSource reconnects" 30 sh -c "[ \$(grep -c '^GET' '$T/proxy.log') -ge 2 ]"
touch "$T/gate"
wait "$esp"; rc=$?
eq "EventSource ends on its own (exit 0)" "$rc" 0
eq "its reconnection sent Last-Event-ID 6 (the last it had); its last one the final id" \
	"$(awk '/^GET/ {print $NF}' "$T/proxy.log" | tr '\n' ' ')" "- 6 12 "
eq "it opened twice, then madf's 204 closed it for good" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["opens"], j["closedBy"])' "$T/es.json")" "2 204"
eq "it saw every event once, in order, each lastEventId its seq, to conversation_complete" \
	"$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
s = j["seen"]
print([e["seq"] for e in s] == list(range(1, len(s) + 1)), all(e["id"] == str(e["seq"]) for e in s), len(s), s[-1]["type"])' "$T/es.json")" \
	"True True 12 conversation_complete"

# --- the grace period runs out -----------------------------------------------------------
stop "$spid"
rm -f "$T/gate"
srv s2 "$gport" MADF_SERVE_GRACE_S=2 MADF_SERVE_CONCURRENT=2
curl -s -N -o "$T/p3.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$R1" &
c4=$!
wait_for "a third conversation waits mid-turn" 30 grep -q 'part one' "$T/p3.txt"
kill "$c4"; wait "$c4" 2>/dev/null
SID3=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0][6:])["data"]["sessionId"])' "$T/p3.txt")
wait_for "nobody came back within MADF_SERVE_GRACE_S=2: cancelled (logged)" 30 \
	grep -q "session $SID3 (alice): no client came back within the grace period (2 s): cancelled" "$T/s2.err"
wait_for "its place in the concurrency limit is free again" 30 sh -c \
	"curl -s -o /dev/null -D '$T/h2' -X POST '$U' -H '$AUTH' -H 'Content-Type: application/json' --data-binary '{}'; grep -q '\"concurrent\";r=2' '$T/h2'"
curl -s -N -o "$T/r7.txt" "$U/$SID3/events" -H "$AUTH" -H 'Last-Event-ID: 6'
eq "resuming it then: one non-recoverable error CANCELLED naming the grace period" \
	"$(python3 -c '
import json, sys
ev = [json.loads(b[6:].split("\n")[0]) for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
print(len(ev), ev[-1]["type"], ev[-1]["data"]["code"], ev[-1]["data"]["recoverable"], ev[-1]["data"]["error"])' "$T/r7.txt")" \
	"1 error CANCELLED False no client read the conversation for its grace period (2 s)"
eq "its meta says it ended CANCELLED" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["state"], j["outcome"])' "$D/serve-sessions/$SID3.json")" "ended CANCELLED"

# --- SIGTERM, then SIGKILL, and a restart: what was recorded is replayed ---------------
curl -s -N -o "$T/p4.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$R1" &
c5=$!
wait_for "a fourth conversation waits mid-turn" 30 grep -q 'part one' "$T/p4.txt"
SID4=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0][6:])["data"]["sessionId"])' "$T/p4.txt")
stop "$spid"; rc=$?
wait "$c5" 2>/dev/null
eq "SIGTERM drains (exit 0)" "$rc" 0
srv s3 "$gport" MADF_SERVE_GRACE_S=120
curl -s -N -o "$T/r8.txt" "$U/$SID4/events" -H "$AUTH"
eq "after a restart, the drained conversation replays from the file: what the client had, then SERVER_SHUTDOWN" \
	"$(types "$T/r8.txt")" "$(types "$T/p4.txt")"
eq "and exactly the recorded events: each id its seq, the seqs and types of the file's lines" \
	"$(events "$T/r8.txt")" "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    print(e["data"]["seq"], e["type"])' "$D/serve-sessions/$SID4.jsonl")"
eq "ending with a recoverable SERVER_SHUTDOWN" "$(python3 -c '
import json, sys
b = [x for x in open(sys.argv[1]).read().split("\n\n") if x.startswith("data: ")][-1]
d = json.loads(b.split("\n")[0][6:])["data"]; print(d["code"], d["recoverable"])' "$T/r8.txt")" "SERVER_SHUTDOWN True"
rm -f "$T/gate"
# Three rounds reserved; the server is killed in the first: the restart
# gives the two it never started back.
curl -s -o /dev/null -D "$T/h5" "http://127.0.0.1:$sp/api/metrics" -H "$AUTH"
before5=$(sed -n 's/.*"rounds-day";r=\([0-9]*\);t=.*/\1/p' "$T/h5" | head -1)
curl -s -N -o "$T/p5.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' \
	--data-binary '{"agents":["data-steward"],"rounds":3,"messages":[{"role":"user","content":"find prospects"}]}' &
c6=$!
wait_for "a fifth conversation waits mid-turn" 30 grep -q 'part one' "$T/p5.txt"
SID5=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0][6:])["data"]["sessionId"])' "$T/p5.txt")
kill -KILL "$spid"; wait "$spid" 2>/dev/null
wait "$c6" 2>/dev/null
n5=$(wc -l <"$D/serve-sessions/$SID5.jsonl" | tr -d ' ')
srv s4 "$gport"
has "the restart gives the killed server's conversation its final event (logged)" "$(cat "$T/s4.err")" \
	"session $SID5 had no final event (the server stopped under it): SERVER_SHUTDOWN recorded"
has "and gives back the two rounds it never started (logged)" "$(cat "$T/s4.err")" \
	"session $SID5: its unstarted rounds are refunded (1 started)"
curl -s -o /dev/null -D "$T/h5b" "http://127.0.0.1:$sp/api/metrics" -H "$AUTH"
eq "the day's quota is one round less than before its admission (3 reserved, 1 started)" \
	"$(sed -n 's/.*"rounds-day";r=\([0-9]*\);t=.*/\1/p' "$T/h5b" | head -1)" "$((before5 - 1))"
curl -s -N -o "$T/r9.txt" "$U/$SID5/events" -H "$AUTH" -H "Last-Event-ID: 2"
eq "resuming it after the restart: events 3 to the recorded end, then the SERVER_SHUTDOWN error" \
	"$(seqs "$T/r9.txt")" "$(seq 3 $((n5 + 1)) | tr '\n' ' ' | sed 's/ $//')"
eq "the last is the error" "$(types "$T/r9.txt" | awk '{print $NF}')" error
st=$(curl -s -o /dev/null -w '%{http_code}' "$U/$SID5/events" -H "Authorization: Bearer $TB")
eq "after the restart, still 404 for another user" "$st" 404
stop "$spid"

# --- admitted, then stopped before its files were made: the admissions' journal ---------
# A conversation's conversation_start goes to its client from memory at its
# admission, journalled in the same step (its meta and that event, in
# serve-sessions/admissions.journal); its files are made just after, off
# the request path. A server killed in between leaves only the journal's
# line: the next start makes the files from it. The line here is SID5's as
# its admission wrote it (meta running, first event), under a new session id.
SID6=0123456789abcdef01234567
python3 - "$D/serve-sessions" "$SID5" "$SID6" <<'PY'
import json, sys
d, old, new = sys.argv[1:]
meta = json.load(open(f"{d}/{old}.json"))
for k in ("ended", "outcome", "events", "usage", "reservation"):
    meta.pop(k, None)
meta.update(sessionId=new, state="running")
line = json.loads(open(f"{d}/{old}.jsonl").readline())
line["data"]["sessionId"] = new
c = (",", ":")
with open(f"{d}/admissions.journal", "a") as f:
    f.write("\n" + json.dumps({"session": new, "meta": json.dumps(meta, separators=c),
                                "line": json.dumps(line, separators=c)}, separators=c) + "\n")
    f.write('\n{"session":"a line cut sho')
PY
srv s5 "$gport"
has "the restart makes the files of the admission the journal holds (logged)" "$(cat "$T/s5.err")" \
	"session $SID6 was admitted but the server stopped before its files were made: made now"
has "and skips a line cut short, saying so" "$(cat "$T/s5.err")" \
	"a line that is not a whole admission (a write cut short): skipped"
curl -s -N -o "$T/r10.txt" "$U/$SID6/events" -H "$AUTH"
eq "resuming it: its conversation_start as the client had it, then a recoverable SERVER_SHUTDOWN" \
	"$(events "$T/r10.txt" | tr '\n' ' ')$(python3 -c '
import json, sys
ev = [json.loads(b.split("\n")[0][6:]) for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
first = json.loads(open(sys.argv[2]).readline())
print(ev[0]["data"]["timestamp"] == first["data"]["timestamp"], ev[0]["data"]["agents"], ev[1]["data"]["code"], ev[1]["data"]["recoverable"])' "$T/r10.txt" "$D/serve-sessions/$SID5.jsonl")" \
	"1 conversation_start 2 error True ['data-steward'] SERVER_SHUTDOWN True"
eq "its meta: alice's, ended SERVER_SHUTDOWN, 2 events" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["user"], j["state"], j["outcome"], j["events"])' "$D/serve-sessions/$SID6.json")" \
	"alice ended SERVER_SHUTDOWN 2"
eq "the journal is emptied at the start" "$(wc -c <"$D/serve-sessions/admissions.journal" | tr -d ' ')" 0
st=$(curl -s -o /dev/null -w '%{http_code}' "$U/$SID6/events" -H "Authorization: Bearer $TB")
eq "still another user's: 404" "$st" 404

# The set-up cannot make the events file (serve-sessions is not a directory
# now): the client has conversation_start already; its stream ends with one
# error, and the conversation's rounds are refunded. The POST's RateLimit
# is what its admission left, taken in the same step (the set-up may
# have failed and refunded it before the handler answers).
rounds_left() { sed -n 's/.*"rounds-day";r=\([0-9]*\);t=.*/\1/p' "$1" | head -1; }
curl -s -o /dev/null -D "$T/h6" "http://127.0.0.1:$sp/api/metrics" -H "$AUTH"
before=$(rounds_left "$T/h6") cbefore=$(concurrent_left "$T/h6")
mv "$D/serve-sessions" "$D/serve-sessions.moved"
: >"$D/serve-sessions"
curl -s -N -o "$T/p7.txt" -D "$T/p7.h" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' \
	--data-binary "$R1"
rm -f "$D/serve-sessions"
mv "$D/serve-sessions.moved" "$D/serve-sessions"
eq "no events file: 200, conversation_start, then one non-recoverable AGENT_EXECUTION_FAILED" \
	"$(head -1 "$T/p7.h" | awk '{print $2}') $(types "$T/p7.txt") $(python3 -c '
import json, sys
b = [x for x in open(sys.argv[1]).read().split("\n\n") if x.startswith("data: ")][-1]
d = json.loads(b[6:])["data"]; print(d["code"], d["recoverable"])' "$T/p7.txt")" \
	"200 conversation_start error AGENT_EXECUTION_FAILED False"
has "the server's log says why" "$(cat "$T/s5.err")" "cannot record its events:"
eq "its RateLimit is what its admission left: its round reserved, it running" \
	"$(rounds_left "$T/p7.h") $(concurrent_left "$T/p7.h")" "$((before - 1)) $((cbefore - 1))"
wait_for "its round is refunded: the day's quota exactly as before its admission" 30 sh -c \
	"curl -s -o /dev/null -D '$T/h7' 'http://127.0.0.1:$sp/api/metrics' -H '$AUTH'; grep -q '\"rounds-day\";r=$before;t=' '$T/h7'"
eq "and it no longer runs" "$(concurrent_left "$T/h7")" "$cbefore"
stop "$spid"; rc=$?
eq "and the server stops cleanly" "$rc" 0

# --- @dwmkerr/mock-llm, an OpenAI-compatible mock written by others, as the model ----------
if [ -f "$SERVE_NPM/node_modules/@dwmkerr/mock-llm/dist/main.js" ]; then
	mkdir -p "$T/mock"
	# Rules: the last that matches wins. Its default echo would paste the
	# prompt into JSON unescaped, so the answers are fixed texts.
	cat >"$T/mock/mock-llm.yaml" <<'YAML'
streaming:
  chunkSize: 16
  chunkIntervalMs: 1
rules:
  - path: "/v1/chat/completions"
    method: "POST"
    match: "@"
    response:
      status: 200
      content: |
        {"id": "chatcmpl-{{timestamp}}", "object": "chat.completion", "created": 1, "model": "{{jmes request body.model}}",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "The agents agree: three prospects qualify."}, "finish_reason": "stop"}]}
  - path: "/v1/chat/completions"
    method: "POST"
    match: "contains(body.messages[0].content, 'initiator')"
    response:
      status: 200
      content: |
        {"id": "chatcmpl-{{timestamp}}", "object": "chat.completion", "created": 1, "model": "{{jmes request body.model}}",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"goal\": \"Rank the prospects\", \"strategy\": \"mock first\", \"successCriteria\": [\"a ranked list\"]}"}, "finish_reason": "stop"}]}
YAML
	mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	(cd "$T/mock" && PORT=$mport HOST=127.0.0.1 exec node "$SERVE_NPM/node_modules/@dwmkerr/mock-llm/dist/main.js") \
		>"$T/mock.out" 2>&1 &
	mpid=$!
	PIDS="$PIDS $mpid"
	wait_for "mock-llm listens" 30 grep -q "server running on 127.0.0.1:$mport" "$T/mock.out"
	bg_port sm env OPENAI_API_KEY=$KEY OPENAI_BASE_URL=http://127.0.0.1:$mport/v1 OPENAI_MODEL=mock-model \
		"$MADF" serve --listen 127.0.0.1:0
	smpid=$bpid
	curl -s -N -o "$T/m1.txt" -X POST "http://127.0.0.1:$bport/api/chat/multi" -H "$AUTH" \
		-H 'Content-Type: application/json' \
		--data-binary '{"agents":["data-steward","prospect-finder"],"rounds":1,"messages":[{"role":"user","content":"rank prospects"}]}'
	eq "against mock-llm: the whole conversation to conversation_complete" \
		"$(types "$T/m1.txt" | sed 's/ *agent_response_chunk//g; s/ *summarizer_chunk//g')" \
		"conversation_start initiator_start initiator_complete round_start agent_start agent_complete agent_start agent_complete round_complete summarizer_start conversation_complete"
	eq "the initiator's plan from mock-llm's JSON; each agent's response and the summary are its text, joined from its 16-character chunks" \
		"$(python3 -c '
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
by = lambda t: [e["data"] for e in ev if e["type"] == t]
ini = by("initiator_complete")[0]
ac = by("agent_complete")
ch = [d["chunk"] for d in by("agent_response_chunk") if d["agent"] == "data-steward"]
print(ini["goal"], "|", ini["successCriteria"], "|", ac[0]["response"], "|", "".join(ch) == ac[0]["response"],
      len(ch), "|", by("conversation_complete")[0]["summary"])' "$T/m1.txt")" \
		"Rank the prospects | ['a ranked list'] | The agents agree: three prospects qualify. | True 3 | The agents agree: three prospects qualify."
	stop "$smpid"
	kill "$mpid" 2>/dev/null
else
	fail "@dwmkerr/mock-llm is installed (make serve-peers)"
fi

# --- a client that reads nothing for a minute ------------------------------------------------
# The model answers every agent with 4 MiB of text in 256-byte deltas. The
# same two conversations on two servers: on A both clients read at once;
# on B one client reads nothing for 60 s (a 2 KB receive buffer) while the
# other reads. B must finish both conversations meanwhile, and its peak
# memory must not follow the backlog: the unread events stay in the file.
bg_port big python3 "$TOP/tests/integration/serve_gate_model.py" --gate "$T/nogate" --big 4096
bigport=$bport
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }
srv bigA "$bigport"
curl -s -N -o "$T/ba1.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$R1"
curl -s -N -o "$T/ba2.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$R1"
hwm_a=$(hwm "$spid")
eq "server A: both conversations complete" "$(types "$T/ba1.txt" | awk '{print $NF}') $(types "$T/ba2.txt" | awk '{print $NF}')" \
	"conversation_complete conversation_complete"
stop "$spid"
srv bigB "$bigport"
python3 - "$sp" "$TA" "$R1" "$T/slow.txt" <<'PY' &
import socket, sys, time
port, tok, body, out = sys.argv[1:]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
s.connect(("127.0.0.1", int(port)))
s.sendall(("POST /api/chat/multi HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nAuthorization: Bearer %s\r\n"
           "Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
           % (port, tok, len(body), body)).encode())
time.sleep(60)
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
open(out, "wb").write(data)
PY
slow=$!
wait_for "B: the slow client's conversation completes while it reads nothing" 120 grep -q ' complete$' "$T/bigB.err"
curl -s -N -o "$T/bb2.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' --data-binary "$R1"
eq "B: meanwhile another client is served to the end" "$(types "$T/bb2.txt" | awk '{print $NF}')" conversation_complete
wait "$slow"
hwm_b=$(hwm "$spid")
SIDS=$(python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
print(raw.split("data: ", 1)[1].split("\"sessionId\":\"", 1)[1][:24])' "$T/slow.txt")
nslow=$(wc -l <"$D/serve-sessions/$SIDS.jsonl" | tr -d ' ')
fsize=$(wc -c <"$D/serve-sessions/$SIDS.jsonl" | tr -d ' ')
eq "the slow client, reading after a minute, gets every recorded event once, in order, to conversation_complete" \
	"$(python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
head, _, body = raw.partition(b"\r\n\r\n")
assert b"chunked" in head.lower(), head
out = b""
while True:  # the chunked body, de-chunked
    size, _, body = body.partition(b"\r\n")
    n = int(size, 16)
    if n == 0:
        break
    out += body[:n]
    body = body[n + 2:]
ev = [json.loads(l[6:]) for l in out.decode("utf-8").split("\n") if l.startswith("data: {")]
print(len(ev), [e["data"]["seq"] for e in ev] == list(range(1, len(ev) + 1)), ev[-1]["type"])' "$T/slow.txt")" \
	"$nslow True conversation_complete"
eq "B's peak memory (${hwm_b} kB) is within a quarter of the unread stream ($fsize bytes) of A's (${hwm_a} kB)" \
	"$(python3 -c 'import sys; a, b, f = map(int, sys.argv[1:]); print(f > 8 << 20, b - a < f / 4 / 1024)' "$hwm_a" "$hwm_b" "$fsize")" \
	"True True"
stop "$spid"
kill "$bpid" 2>/dev/null

# --- 50 users at once --------------------------------------------------------------------
python3 "$TOP/tests/integration/llm_replay.py" --key "$KEY" --log "$T/replay.jsonl" >"$T/replay.port" 2>"$T/replay.err" &
PIDS="$PIDS $!"
for _ in $(seq 1 200); do rport=$(head -1 "$T/replay.port" 2>/dev/null); [ -n "$rport" ] && break; sleep 0.05; done
for i in $(seq 1 50); do "$MADF" serve token add "user$i" >"$T/tok.$i" 2>/dev/null; done
srv s50 "$rport"
GOOD='{"agents":["data-steward","prospect-finder"],"rounds":1,"messages":[{"role":"user","content":"find prospects"}]}'
cpids=
for i in $(seq 1 50); do
	curl -s -N -o "$T/u$i.txt" -w '%{http_code}\n' -X POST "$U" -H "Authorization: Bearer $(cat "$T/tok.$i")" \
		-H 'Content-Type: application/json' --data-binary "$GOOD" >"$T/u$i.st" &
	cpids="$cpids $!"
done
for p in $cpids; do wait "$p"; done
eq "50 users at once: 50 answers 200" "$(cat "$T"/u*.st | grep -c '^200$')" 50
eq "every stream ends with conversation_complete, 23 events each" \
	"$(for i in $(seq 1 50); do echo "$(types "$T/u$i.txt" | wc -w) $(types "$T/u$i.txt" | awk '{print $NF}')"; done | sort | uniq -c | sed 's/^ *//')" \
	"50 23 conversation_complete"
eq "50 sessions, each recorded as its own user's" \
	"$(for i in $(seq 1 50); do python3 -c '
import json, sys
# the first event (a ": ping" keep-alive may come before it)
first = next(l for l in open(sys.argv[1]).read().split("\n") if l.startswith("data: {"))
sid = json.loads(first[6:])["data"]["sessionId"]
m = json.load(open(sys.argv[2] + "/" + sid + ".json"))
print(sid, m["user"] == sys.argv[3])' "$T/u$i.txt" "$D/serve-sessions" "user$i"; done | sort -u | awk '$2 == "True"' | wc -l | tr -d ' ')" 50
stop "$spid"
hasnt "no sanitizer report in any server's log" "$(cat "$T"/*.err)" "Sanitizer"

done_testing
