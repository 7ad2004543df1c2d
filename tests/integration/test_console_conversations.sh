# The console's Conversations view (7) on a real `madf serve`: a live
# conversation (its model, serve_gate_model.py, holds the agent's turn
# open) is listed with its user, round and state; C and y in the console
# (its scripted mode, another process than serve) write the cancel request
# SESSION.cancel, which serve notices: the client's stream ends with an
# error CANCELLED, the meta says so, the request file is gone and the
# journal has the action. A finished conversation exports to Markdown.
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

# bg_port NAME CMD...: CMD in the background, its port on stdout's first
# line: $bport, $bpid.
bg_port() {
	_n=$1; shift
	"$@" >"$T/$_n.port" 2>"$T/$_n.err" &
	bpid=$!
	PIDS="$PIDS $bpid"
	bport=
	for _ in $(seq 1 400); do bport=$(head -1 "$T/$_n.port" 2>/dev/null); [ -n "$bport" ] && break; sleep 0.05; done
	[ -n "$bport" ] || fail "$_n starts" "$(cat "$T/$_n.err")"
}
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

# C, answered n: nothing requested.
con "7
wait-for $SID alice
C
wait-for Cancel conversation $SID of alice? y/n
n"
eq "C asks which conversation, of whom" "$?" 0
eq "n writes no cancel request" "$(ls "$D/serve-sessions" | grep -c '\.cancel$')" 0

# C, y: the request; serve ends the conversation; the client's stream ends.
con "7
wait-for $SID alice
C
y
wait-for cancel: requested"
eq "C y in the console" "$?" 0
wait_for "serve ends the conversation: the client's stream closes" 30 sh -c "! kill -0 $c1"
wait "$c1"
eq "curl exits 0" "$?" 0
eq "its last event: error CANCELLED by the operator" "$(last_event "$T/p1.txt")" \
	"error CANCELLED cancelled by the operator (madf console)"
eq "no part two after the cancel" "$(grep -c 'part two' "$T/p1.txt")" 0
# the meta is rewritten once the conversation's thread has ended, after
# the stream's last event: waited for, then checked
wait_for "the meta says ended" 30 python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get("state") != "ended")' "$D/serve-sessions/$SID.json"
eq "the meta: ended, outcome CANCELLED" \
	"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["state"], j["outcome"])' "$D/serve-sessions/$SID.json")" \
	"ended CANCELLED"
wait_for "serve removed the request file" 30 sh -c "! test -e '$D/serve-sessions/$SID.cancel'"
has "serve logged who cancelled" "$(cat "$T/s1.err")" "cancelled by the operator"
eq "the journal has the cancel of that session" \
	"$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["action"] == "conversation-cancel":
        print(j["ids"][0] == sys.argv[2], j["result"].startswith("requested"))' "$D/journal/actions.jsonl" "$SID")" "True True"

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
has "the export ends with the cancellation" "$(tail -1 "$md")" "Error CANCELLED: cancelled by the operator (madf console)"

# A request for a conversation that is not running is refused by the view.
con "7
wait-for $SID alice
C"
has "C on an ended conversation: refused" "$(cat "$T/screen")" "cancel: this conversation is not running"

touch "$T/gate"
kill -TERM "$spid"; wait "$spid"
eq "serve stops cleanly" "$?" 0
done_testing
