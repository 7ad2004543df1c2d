# The console's Conversations view (7) on a real `madf serve`: a live
# conversation (its model, serve_gate_model.py, holds the agent's turn
# open) is listed with its user, round and state; its initiator, agent and
# summarizer are agents on the bus (madf status, madf ls, their heartbeats
# in the console's Agents view, their log lines in its Logs view, each
# turn a task_assignment claimed from the agent's inbox); C and y in the
# console (its scripted mode, another process than serve) send an
# operator_control (cancel) to serve's controller over the bus: the
# client's stream ends with an error CANCELLED, the controller's
# task_acceptance is shown and journalled, the meta says so and the
# conversation's agents leave the bus. A finished conversation exports to
# Markdown.
. tests/integration/lib.sh

mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL ANTHROPIC_BASE_URL OPENAI_BASE_URL MADF_SERVE_ORIGINS NO_COLOR 2>/dev/null || true
export MADF_SERVE_CONV_PER_HOUR=1000 MADF_SERVE_ROUNDS_PER_DAY=100000 MADF_SERVE_PING_MS=200
PIDS=
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; cleanup' EXIT
KEY=sk-madf-convview-test-0123456789
L=$T/logs

con() { printf '%s\n' "$1" >"$T/script"; "$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/con.err"; }
# last TYPE CODE of an SSE body
last_event() {
	python3 -c '
import json, sys
ev = [json.loads(l[6:]) for l in open(sys.argv[1]).read().split("\n") if l.startswith("data: ")]
print(ev[-1]["type"], ev[-1]["data"].get("code", "-"), ev[-1]["data"].get("error", "-"))' "$1"
}

"$MADF" serve token add alice >"$T/ta" 2>/dev/null; TA=$(cat "$T/ta")
AUTH="Authorization: Bearer $TA"
R1='{"agents":["data-steward"],"rounds":2,"messages":[{"role":"user","content":"find prospects"}]}'

# a cancel request left from before (no such conversation running)
mkdir -p "$D/serve-sessions"
: >"$D/serve-sessions/000000000000000000000000.cancel"
bg_port gate python3 "$TOP/tests/integration/serve_gate_model.py" --gate "$T/gate"
gport=$bport
bg_port s1 env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$gport \
	CLAUDE_MODEL_EXECUTION=claude-test MADF_SERVE_GRACE_S=120 "$MADF" serve --listen 127.0.0.1:0
spid=$bpid U=http://127.0.0.1:$bport/api/chat/multi
ok "madf serve and the gated model run"
eq "serve's start removed the stale cancel request" "$(ls "$D/serve-sessions" | grep -c '\.cancel$')" 0

# A live conversation: the agent's turn waits on the gate.
curl -s -N -o "$T/p1.txt" -X POST "$U" -H "$AUTH" -H 'Content-Type: application/json' \
	-H 'Accept: text/event-stream' --data-binary "$R1" &
c1=$!
PIDS="$PIDS $c1"
wait_for "the conversation waits on the model mid-turn" 30 grep -q 'part one' "$T/p1.txt"
SID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0][6:])["data"]["sessionId"])' "$T/p1.txt")

# The view lists it: user, round 1 of 2, running; the detail has its turn.
con "7
wait-for $SID alice
wait-for part one"
eq "the console's script ran" "$?" 0
row=$(awk -v s="$SID" '$1 == s && $2 != "of" { print $2, $3, $4 }' "$T/screen")
eq "its row: user, round 1 of 2, running" "$row" "alice 1/2 running"
has "the detail names the agent's turn" "$(cat "$T/screen")" "### data-steward"
has "the detail has the streamed text joined" "$(cat "$T/screen")" "part one"

# Its agents on the bus: the initiator (its plan done), the agent (its
# turn claimed: the controller's task_assignment in its claims).
SA=conv-$SID-data-steward SI=conv-$SID-initiator
wait_for "the agent's assignment is claimed from its inbox" 30 \
	sh -c "'$MADF' ls processing '$SA' 2>/dev/null | grep -q task_assignment"
st=$("$MADF" status)
has "madf status lists the agent's inbox (session id in its name)" "$st" "$SA"
has "madf status lists the initiator's inbox" "$st" "$SI"
lsp=$("$MADF" ls processing --json 2>&1)
eq "madf ls processing: the agent's claimed turn, from serve's controller" \
	"$(printf '%s' "$lsp" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e.get("to") == sys.argv[1]:
        print(e.get("from"), e.get("type"), e.get("agent"))' "$SA")" \
	"serve_controller task_assignment $SA"
hb() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
h = j["heartbeat"]
print(h["status"], h.get("current_task") or "-", j["status"]["completed_tasks_today"], j["conversation"]["session"] == sys.argv[2])' "$D/state/$1-state.json" "$SID"; }
eq "the agent's heartbeat: busy on its session's round 1" "$(hb "$SA")" "busy $SID round 1 0 True"
eq "the initiator's heartbeat: idle, its plan done" "$(hb "$SI")" "idle - 1 True"
elog() { cat "$L/agents/$1/events/"*.jsonl 2>/dev/null; }
eq "the agent's log: start, then its task (session, round 1)" \
	"$(elog "$SA" | python3 -c '
import json, sys
for l in sys.stdin:
    j = json.loads(l)
    print(j["event"], j["agent"], j.get("session") == sys.argv[1], j.get("round", 0))' "$SID" | tr '\n' ' ')" \
	"start $SA True 0 task_start $SA True 1 "
has "the initiator's log has its task done" "$(elog "$SI")" '"event":"task_done"'
has "the agent's assignment was claimed from its inbox" "$(elog "$SA")" "$SID round 1: assignment claimed"
lsd=$("$MADF" ls processed --json 2>&1)
eq "the initiator's turn: assignment acked, acceptance and result to the controller" \
	"$(printf '%s' "$lsd" | python3 -c '
import json, sys
seen = set()
for e in json.load(sys.stdin):
    if sys.argv[1] in (e.get("to"), e.get("from")):
        seen.add("%s>%s:%s" % (e.get("from"), e.get("to"), e.get("type")))
print(" ".join(sorted(seen)))' "$SI")" \
	"$SI>serve_controller:heartbeat $SI>serve_controller:task_acceptance $SI>serve_controller:task_progress serve_controller>$SI:task_assignment"
# the console's Agents view: the agent busy on its session's round
con "1
wait-for $SA"
eq "the Agents view lists the agent" "$?" 0
row=$(grep -F "$SA" "$T/screen" | head -1)
has "its row: busy" "$row" "busy"
# (the task column is cut to the screen's width)
has "its row: its session as its task" "$row" " $(printf %.20s "$SID")"
con ":
type logs $SA
<Enter>
wait-for task_start"
eq "the Logs view shows the agent's lines" "$?" 0
has "its task_start line" "$(cat "$T/screen")" "$SID round 1"

# C, answered n: nothing sent.
con "7
wait-for $SID alice
C
wait-for Cancel conversation $SID of alice? y/n
n"
eq "C asks which conversation, of whom" "$?" 0
from_operator() { for q in inbox processed; do "$MADF" ls $q --json; done | python3 -c '
import json, sys
print(sum(1 for e in json.loads("[" + sys.stdin.read().replace("]\n[", ",").strip()[1:-1] + "]") if e.get("from") == "operator"))'; }
eq "n sends nothing" "$(from_operator)" 0

# C, y: an operator_control to serve's controller; its answer on the
# status line; serve ends the conversation; the client's stream ends.
con "7
wait-for $SID alice
C
y
wait-for applied:"
eq "C y in the console: the controller's answer is shown" "$?" 0
has "the answer says what was cancelled" "$(cat "$T/screen")" "cancel $SID: applied: conversation $SID of alice cancelled"
wait_for "serve ends the conversation: the client's stream closes" 30 sh -c "! kill -0 $c1"
wait "$c1"
eq "curl exits 0" "$?" 0
eq "its last event: error CANCELLED by the operator" "$(last_event "$T/p1.txt")" \
	"error CANCELLED cancelled by the operator"
eq "no part two after the cancel" "$(grep -c 'part two' "$T/p1.txt")" 0
# the meta is rewritten once the conversation's thread has ended, after
# the stream's last event: waited for, then checked
wait_for "the meta says ended" 30 python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get("state") != "ended")' "$D/serve-sessions/$SID.json"
eq "the meta: ended, outcome CANCELLED" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["state"], j["outcome"])' "$D/serve-sessions/$SID.json")" \
	"ended CANCELLED"
has "serve logged who cancelled" "$(cat "$T/s1.err")" "cancelled by the operator (operator, over the bus)"
eq "the journal: the cancel sent, then the controller's answer, of that session" \
	"$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["action"] == "conversation-cancel":
        print(j["ids"][0] == sys.argv[2], j["result"].split(" ")[0])' "$D/journal/actions.jsonl" "$SID" | tr '\n' ' ')" \
	"True asked True applied: "
eq "the controller logged its decision" \
	"$(cat "$L/agents/serve_controller/decisions/"*.jsonl | python3 -c '
import json, sys
for l in sys.stdin:
    j = json.loads(l)
    print(j["event"], j["outcome"], j["session"] == sys.argv[1])' "$SID")" "operator_control applied True"
# the conversation's agents leave the bus with it
wait_for "the agent's inbox is gone from madf status" 30 sh -c "! '$MADF' status | grep -q '$SID'"
eq "their state files are gone" "$(ls "$D/state" | grep -c "$SID")" 0
has "the agent's log ends with its stop" "$(elog "$SA" | tail -1)" '"event":"stop"'

# The list shows it cancelled; e exports it to Markdown.
con ":
type conversations
<Enter>
wait-for $SID alice
e
wait-for export: wrote"
row=$(awk -v s="$SID" '$1 == s && $2 != "of" { print $2, $4 }' "$T/screen")
eq "its row now: cancelled" "$row" "alice cancelled"
md="$D/reports/exports/conversation-$SID.md"
eq "the export's user and state" "$(grep -E '^- (User|State):' "$md" | tr '\n' ' ')" "- User: alice - State: cancelled "
has "the export has the turn's text" "$(cat "$md")" "part one"
has "the export ends with the cancellation" "$(tail -1 "$md")" "Error CANCELLED: cancelled by the operator"

# A request for a conversation that is not running is refused by the view.
con "7
wait-for $SID alice
C"
has "C on an ended conversation: refused" "$(cat "$T/screen")" "cancel: this conversation is not running"

# The controller refuses a cancel of a conversation not running there.
"$MADF" send --to serve_controller --type task_assignment --content \
	'{"task_type":"operator_control","focus_area":"","target_pairs":[],"timeframe":"","data_sources":[],"deadline":"2030-01-01T00:00:00Z","output_format":"none","action":"cancel","run_id":"'"$SID"'"}' >"$T/sent" 2>&1
eq "madf send to the controller" "$?" 0
ctl_answer() { "$MADF" ls inbox operator --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e.get("from") == "serve_controller":
        print(e["message_id"])'; }
has_answer() { [ -n "$(ctl_answer)" ]; }
wait_for "the controller answers the operator" 30 has_answer
eq "its answer: a task_acceptance, refused: not running there" \
	"$("$MADF" show "$(ctl_answer | head -1)" --json | python3 -c '
import json, sys
m = json.load(sys.stdin)
m = m.get("message", m)
c = m["content"]
print(m.get("message_type", m.get("type")), c["outcome"], c["detail"].startswith("no conversation %s is running" % sys.argv[1]))' "$SID")" \
	"task_acceptance refused True"

touch "$T/gate"
kill -TERM "$spid"; wait "$spid"
eq "serve stops cleanly" "$?" 0
done_testing
