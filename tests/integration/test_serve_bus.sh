# madf serve on the NATS bus: a conversation's agents are agents on the bus
# (their inbox streams in madf status, their heartbeats, each turn a task
# claimed and acked), an operator_control sent over NATS cancels it and is
# answered, and its events are on the bus: a serve on "another host" (its
# own data directory, sharing only the NATS URL) replays a conversation
# the first one recorded, event for event, and only to its owner.
. tests/integration/lib.sh
. tests/integration/nats.sh

unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL ANTHROPIC_BASE_URL OPENAI_BASE_URL MADF_SERVE_ORIGINS 2>/dev/null || true
export MADF_SERVE_CONV_PER_HOUR=1000 MADF_SERVE_ROUNDS_PER_DAY=100000 MADF_SERVE_PING_MS=200
nats_start
export MADF_BUS=$NATS_URL
PIDS=
# (each waited for by its pid: a bare wait would wait for nats-server too)
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; for p in $PIDS; do wait "$p" 2>/dev/null; done; for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
KEY=sk-madf-servebus-test-0123456789

# events FILE: "SEQ TYPE" of each data block of an SSE body (id: = seq)
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
# recorded FILE: "SEQ TYPE" of each line of a session's events file
recorded() { python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    print(e["data"]["seq"], e["type"])' "$1"; }

"$MADF" serve token add alice >"$T/ta" 2>/dev/null; TA=$(cat "$T/ta")
"$MADF" serve token add bob >"$T/tb" 2>/dev/null; TB=$(cat "$T/tb")
AUTH="Authorization: Bearer $TA"
R1='{"agents":["data-steward"],"rounds":1,"messages":[{"role":"user","content":"find prospects"}]}'

bg_port gate python3 "$TOP/tests/integration/serve_gate_model.py" --gate "$T/gate"
gport=$bport
# host A
bg_port a env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$gport \
	CLAUDE_MODEL_EXECUTION=claude-test MADF_SERVE_GRACE_S=120 "$MADF" serve --listen 127.0.0.1:0
apid=$bpid UA=http://127.0.0.1:$bport/api/chat/multi
ok "madf serve on NATS and the gated model run"

# A live conversation: its agent's turn waits on the gate.
curl -s -N -o "$T/p1.txt" -X POST "$UA" -H "$AUTH" -H 'Content-Type: application/json' \
	--data-binary "$R1" &
c1=$!
PIDS="$PIDS $c1"
wait_for "the conversation waits on the model mid-turn" 60 grep -q 'part one' "$T/p1.txt"
SID=$(sid_of "$T/p1.txt")
SA=conv-$SID-data-steward
st=$("$MADF" status)
has "madf status on NATS lists the agent's inbox stream" "$st" "$SA"
has "and the initiator's" "$st" "conv-$SID-initiator"
eq "the agent's heartbeat: busy on its session's round 1" \
	"$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["heartbeat"]; print(h["status"], h["current_task"])' "$D/state/$SA-state.json")" \
	"busy $SID round 1"
eq "its log line of the task: its assignment claimed from its inbox stream" \
	"$(cat "$LOG_DIR/agents/$SA/events/"*.jsonl | python3 -c '
import json, sys
for l in sys.stdin:
    j = json.loads(l)
    if j["event"] == "task_start":
        print(j["message"])')" "$SID round 1: assignment claimed"

# The operator's cancel over NATS: an operator_control to the controller.
"$MADF" send --to serve_controller --type task_assignment --content \
	'{"task_type":"operator_control","focus_area":"","target_pairs":[],"timeframe":"","data_sources":[],"deadline":"2030-01-01T00:00:00Z","output_format":"none","action":"cancel","run_id":"'"$SID"'"}' >"$T/sent" 2>&1
eq "madf send over NATS to serve's controller" "$?" 0
wait_for "the cancel ends the client's stream" 60 sh -c "! kill -0 $c1"
eq "its last event: error CANCELLED by the operator" "$(events "$T/p1.txt" | tail -1 | awk '{print $2}') $(tail -c 300 "$T/p1.txt" | grep -o '"code":"CANCELLED"')" \
	'error "code":"CANCELLED"'
answer() { "$MADF" ls inbox operator --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e.get("from") == "serve_controller":
        print(e["message_id"])'; }
has_answer() { [ -n "$(answer)" ]; }
wait_for "the controller answers over NATS" 60 has_answer
eq "its task_acceptance: applied" "$("$MADF" show "$(answer | head -1)" --json | python3 -c '
import json, sys
m = json.load(sys.stdin)["message"]
print(m.get("message_type", m.get("type")), m["content"]["outcome"], m["reply_to"] is not None)')" \
	"task_acceptance applied True"
gone() { ! "$MADF" status | grep -q "$SID"; }
wait_for "the conversation's agents leave the bus (their inbox streams deleted)" 60 gone

# A whole conversation, then host A stops.
touch "$T/gate"
curl -s -N -o "$T/p2.txt" -X POST "$UA" -H "$AUTH" -H 'Content-Type: application/json' \
	--data-binary "$R1"
SID2=$(sid_of "$T/p2.txt")
eq "the second conversation completes" "$(events "$T/p2.txt" | tail -1 | awk '{print $2}')" conversation_complete
done_meta() { python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get("state") != "ended")' "$D/serve-sessions/$SID2.json"; }
wait_for "its meta says ended" 60 done_meta
kill -TERM "$apid"; wait "$apid"
eq "host A stops cleanly" "$?" 0
nst=$(nats_stream_state "$NATS_URL" madf_conv)
eq "the stream madf_conv holds both conversations' events and metas" \
	"$(echo "$nst" | awk '{print $2}')" \
	"$(( $(wc -l <"$D/serve-sessions/$SID.jsonl") + $(wc -l <"$D/serve-sessions/$SID2.jsonl") + 4 ))"

# Host B: its own data directory (the tokens copied), the same NATS.
mkdir -p "$T/b/data"
cp -p "$D/serve-tokens" "$T/b/data/serve-tokens"
bg_port b env MADF_DATA_DIR=$T/b/data LOG_DIR=$T/b/logs ANTHROPIC_API_KEY=$KEY \
	ANTHROPIC_BASE_URL=http://127.0.0.1:$gport CLAUDE_MODEL_EXECUTION=claude-test \
	"$MADF" serve --listen 127.0.0.1:0
UB=http://127.0.0.1:$bport/api/chat/multi
eq "host B has no copy of it yet" "$(ls "$T/b/data/serve-sessions" 2>/dev/null | grep -c "$SID2")" 0
curl -s -N -o "$T/r1.txt" "$UB/$SID2/events" -H "$AUTH"
eq "host B replays host A's conversation from the bus: every event, in order, as recorded" \
	"$(events "$T/r1.txt")" "$(recorded "$D/serve-sessions/$SID2.jsonl")"
eq "and as A's client got them" "$(events "$T/r1.txt")" "$(events "$T/p2.txt")"
check "host B's copy is host A's file byte for byte" cmp "$D/serve-sessions/$SID2.jsonl" "$T/b/data/serve-sessions/$SID2.jsonl"
curl -s -N -o "$T/r2.txt" "$UB/$SID2/events" -H "$AUTH" -H "Last-Event-ID: 5"
eq "Last-Event-ID 5 on host B: from event 6 to the end" "$(events "$T/r2.txt")" \
	"$(recorded "$D/serve-sessions/$SID2.jsonl" | awk '$1 > 5')"
st=$(curl -s -o /dev/null -w '%{http_code}' "$UB/$SID2/events" -H "Authorization: Bearer $TB")
eq "another user on host B: 404" "$st" 404
curl -s -N -o "$T/r3.txt" "$UB/$SID/events" -H "$AUTH"
eq "the cancelled one replays on host B too, to its error" "$(events "$T/r3.txt")" \
	"$(recorded "$D/serve-sessions/$SID.jsonl")"
st=$(curl -s -o /dev/null -w '%{http_code}' "$UB/0123456789abcdef01234567/events" -H "$AUTH")
eq "a session neither host recorded: 404" "$st" 404
done_testing
