# The console's Conversations view (7) on NATS lists the conversations a
# `madf serve` on another host recorded on the bus (stream <P>_conv): host
# A serves (its own data directory), the console runs on host B (its own
# data directory, sharing only the NATS URL) and shows host A's live
# conversation (user, round, state, the turn's text as it streams), then
# its end, reads nothing into host B's data directory, and exports the
# finished one from the bus.
. tests/integration/lib.sh
. tests/integration/nats.sh

unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL ANTHROPIC_BASE_URL OPENAI_BASE_URL MADF_SERVE_ORIGINS NO_COLOR 2>/dev/null || true
export MADF_SERVE_CONV_PER_HOUR=1000 MADF_SERVE_ROUNDS_PER_DAY=100000 MADF_SERVE_PING_MS=200
nats_start
export MADF_BUS=$NATS_URL
PIDS=
# (each waited for by its pid: a bare wait would wait for nats-server too)
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; for p in $PIDS; do wait "$p" 2>/dev/null; done; for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
KEY=sk-madf-convnats-test-0123456789
B=$T/b/data
mkdir -p "$B"

# con SCRIPT: the console on host B (scripted, attached), its screen in $T/screen
con() {
	printf '%s\n' "$1" >"$T/script"
	MADF_DATA_DIR=$B "$MADF" --log-dir "$T/b/logs" console --attach --script "$T/script" \
		--dump-screen "$T/screen" 2>"$T/con.err"
}
# row: "USER ROUND STATE" of the session's row on the screen
row() { awk -v s="$SID" '$1 == s && $2 != "of" { print $2, $3, $4 }' "$T/screen"; }

"$MADF" serve token add alice >"$T/ta" 2>/dev/null; TA=$(cat "$T/ta")
R2='{"agents":["data-steward"],"rounds":2,"messages":[{"role":"user","content":"find prospects"}]}'
bg_port gate python3 "$TOP/tests/integration/serve_gate_model.py" --gate "$T/gate"
gport=$bport
# host A: madf serve on NATS, its data directory $D
bg_port a env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$gport \
	CLAUDE_MODEL_EXECUTION=claude-test MADF_SERVE_GRACE_S=120 "$MADF" serve --listen 127.0.0.1:0
UA=http://127.0.0.1:$bport/api/chat/multi
ok "madf serve on NATS (host A) and the gated model run"

# A live conversation on host A: its agent's turn waits on the gate.
curl -s -N -o "$T/p1.txt" -X POST "$UA" -H "Authorization: Bearer $TA" \
	-H 'Content-Type: application/json' --data-binary "$R2" &
c1=$!
PIDS="$PIDS $c1"
wait_for "the conversation waits on the model mid-turn" 60 grep -q 'part one' "$T/p1.txt"
SID=$(sid_of "$T/p1.txt")

# Host B's console lists it from the bus, and follows its turn.
con "7
wait-for $SID alice
wait-for part one"
eq "host B's console ran" "$?" 0
eq "its row on host B: user, round 1 of 2, running" "$(row)" "alice 1/2 running"
has "the heading counts it, read from the bus" "$(cat "$T/screen")" \
	"Conversations of madf serve: 1 (1 running), 1 read from the bus (another host's)"
has "the detail names the agent's turn" "$(cat "$T/screen")" "### data-steward"
has "the detail has the streamed text" "$(cat "$T/screen")" "part one"
eq "nothing of it was copied into host B's data directory" \
	"$(ls "$B/serve-sessions" 2>/dev/null | grep -c "$SID")" 0

# The conversation ends; host B's console shows it complete, and e exports
# it from the bus.
touch "$T/gate"
wait_for "the client's stream ends" 60 sh -c "! kill -0 $c1"
done_meta() { python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get("state") != "ended")' "$D/serve-sessions/$SID.json"; }
wait_for "host A's meta says ended" 60 done_meta
con "7
wait-for $SID alice
wait-for Complete: 2 rounds.
e
wait-for export: wrote"
eq "host B's console ran again" "$?" 0
eq "its row on host B now: round 2 of 2, complete" "$(row)" "alice 2/2 complete"
has "the heading: none running" "$(cat "$T/screen")" \
	"Conversations of madf serve: 1 (0 running), 1 read from the bus (another host's)"
md=$B/reports/exports/conversation-$SID.md
eq "the export on host B: its user and state" "$(grep -E '^- (User|State):' "$md" | tr '\n' ' ')" \
	"- User: alice - State: complete "
has "... the turn's text, read from the bus" "$(cat "$md")" "part one"
has "... to its end" "$(cat "$md")" "Complete: 2 rounds."
eq "still nothing copied into host B's serve-sessions" \
	"$(ls "$B/serve-sessions" 2>/dev/null | grep -c "$SID")" 0

# On host A itself (its own file) the conversation is listed once, not
# again from the bus.
printf '%s\n' "7" "wait-for $SID alice" >"$T/script"
"$MADF" --log-dir "$T/logs" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/con.err"
eq "host A's console ran" "$?" 0
eq "host A lists it once, from its file" "$(awk -v s="$SID" '$1 == s && $2 != "of"' "$T/screen" | wc -l | tr -d ' ')" 1
hasnt "... not as read from the bus" "$(cat "$T/screen")" "read from the bus"
done_testing
