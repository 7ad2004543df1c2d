# madf serve's GET /api/metrics after known conversations on the replay
# server: two that complete (an agent's tool call that succeeds, one that
# fails) and one whose initiator fails; the completion rate, each agent's
# turns and average time, the tool calls' success rate, the errors by
# type, the resources in all and per conversation (the replay's fixed
# token counts); as JSON and in the Prometheus text format (by Accept or
# ?format=), authenticated, and the same after a restart. And a small
# `madf bench serve` (its checks, not its times).
. tests/integration/lib.sh

mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL ANTHROPIC_BASE_URL OPENAI_BASE_URL MADF_SERVE_ORIGINS 2>/dev/null || true
export MADF_SERVE_CONV_PER_HOUR=1000 MADF_SERVE_ROUNDS_PER_DAY=100000
KEY=sk-madf-metrics-test-0123456789
"$MADF" serve token add alice >"$T/ta" 2>/dev/null; TA=$(cat "$T/ta")
mkdir -p "$D"
cat >"$D/serve-agents.json" <<'JSON'
{"agents": [
 {"name": "fx-desk", "system": "You are the FX desk of madf.", "tools": ["fx_rates"], "maxSteps": 3},
 {"name": "fine", "system": "You answer."}
]}
JSON
python3 "$TOP/tests/integration/llm_replay.py" --key "$KEY" --log "$T/replay.jsonl" >"$T/replay.port" 2>"$T/replay.err" &
rpid=$!
for _ in $(seq 1 200); do rport=$(head -1 "$T/replay.port" 2>/dev/null); [ -n "$rport" ] && break; sleep 0.05; done
serve "madf serve" env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$rport \
	CLAUDE_MODEL_EXECUTION=claude-test "$MADF" serve --listen 127.0.0.1:0
trap 'kill "$server_pid" "$rpid" 2>/dev/null; wait 2>/dev/null; cleanup' EXIT
U=http://127.0.0.1:$port/api
conv() {
	curl -s -N -o "$T/$1.txt" -X POST "$U/chat/multi" -H "Authorization: Bearer $TA" \
		-H 'Content-Type: application/json' --data-binary "$2"
}
last() { python3 -c 'import json,sys; b=[x for x in open(sys.argv[1]).read().split("\n\n") if x.startswith("data: ")][-1]; print(json.loads(b[6:])["type"])' "$1"; }
conv a '{"agents":["fx-desk"],"rounds":1,"messages":[{"role":"user","content":"pair USD/JPY, window 2024-01-02 to 2024-01-31"}]}'
conv b '{"agents":["fx-desk"],"rounds":1,"messages":[{"role":"user","content":"pair ZZZ/QQQ, window 2024-01-02 to 2024-01-31"}]}'
conv c '{"agents":["fine"],"rounds":2,"messages":[{"role":"user","content":"case:error please"}]}'
eq "the three conversations end as planned" "$(last "$T/a.txt") $(last "$T/b.txt") $(last "$T/c.txt")" \
	"conversation_complete conversation_complete error"
eq "b's tool call failed (unknown pair), a's did not" \
	"$(for f in a b; do python3 -c '
import json, sys
ev = [json.loads(b[6:]) for b in open(sys.argv[1]).read().split("\n\n") if b.startswith("data: ")]
print("error" in [e for e in ev if e["type"] == "agent_tool_result"][0]["data"]["result"])' "$T/$f.txt"; done | tr '\n' ' ')" "False True "

st=$(curl -s -o "$T/m.json" -D "$T/m.h" -w '%{http_code}' "$U/metrics" -H "Authorization: Bearer $TA")
eq "GET /api/metrics: 200 JSON" "$st $(grep -i '^Content-Type:' "$T/m.h" | tr -d '\r')" "200 Content-Type: application/json"
# m EXPR: a Python expression over the metrics JSON (as j).
m() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$T/m.json"; }
eq "conversations: none running, 3 ended, 2 completed, completion rate 0.666667" \
	"$(m 'j["conversations"]')" "{'running': 0, 'ended': 3, 'completed': 2, 'completionRate': 0.666667}"
eq "tool calls: 2, 1 error, success rate 0.5" "$(m 'j["tools"]')" "{'calls': 2, 'errors': 1, 'successRate': 0.5}"
eq "errors by type: the initiator's failure" "$(m 'j["errors"]')" "{'AGENT_EXECUTION_FAILED': 1}"
eq "agents: fx-desk took 2 turns, its average time their mean (fine never ran)" \
	"$(m 'list(j["agents"]), j["agents"]["fx-desk"]["turns"], j["agents"]["fx-desk"]["averageSeconds"] > 0')" \
	"['fx-desk'] 2 True"
# The replay's usage: 12 in and 7 out for the initiator and summarizer,
# 321/45 for a turn that calls a tool, 654/87 for the answer after it;
# the failing initiator's stream said 12 in and 1 out before its error.
eq "per conversation (newest first): c, b, a with their outcomes, rounds and the replay's tokens" \
	"$(m '" ".join("%s/%s/%d/%d" % (r["outcome"], r["rounds"], r["inputTokens"], r["outputTokens"]) for r in j["recent"])')" \
	"AGENT_EXECUTION_FAILED/0/12/1 complete/1/999/146 complete/1/999/146"
eq "resources in all: tokens, rounds, and the average per conversation" \
	"$(m 'j["resources"]["inputTokens"], j["resources"]["outputTokens"], j["resources"]["rounds"], j["resources"]["perConversation"]["inputTokens"], j["resources"]["wallSeconds"] > 0')" \
	"2010 293 2 670 True"

"$MADF" serve token add bob >"$T/tb" 2>/dev/null
curl -s -o "$T/mb.json" "$U/metrics" -H "Authorization: Bearer $(cat "$T/tb")"
eq "another user: the same figures over every user, but none of alice's conversations one by one" \
	"$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(a["conversations"] == b["conversations"], a["tools"] == b["tools"], len(a["recent"]), b["recent"])' "$T/m.json" "$T/mb.json")" \
	"True True 3 []"

# Prometheus.
st=$(curl -s -o "$T/p.txt" -D "$T/p.h" -w '%{http_code}' "$U/metrics" -H "Authorization: Bearer $TA" \
	-H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1')
eq "a scraper's Accept gets the text format 0.0.4" "$st $(grep -i '^Content-Type:' "$T/p.h" | tr -d '\r')" \
	"200 Content-Type: text/plain; version=0.0.4; charset=utf-8"
curl -s -o "$T/p2.txt" "$U/metrics?format=prometheus" -H "Authorization: Bearer $TA"
eq "?format=prometheus gives the same" "$(grep -v '^madf_serve_conversation_resources' "$T/p2.txt" | md5sum)" \
	"$(grep -v '^madf_serve_conversation_resources' "$T/p.txt" | md5sum)"
eq "every sample is NAME{LABELS} VALUE with its HELP and TYPE" "$(python3 - "$T/p.txt" <<'PY'
import re, sys
helped, typed, bad, n = set(), set(), [], 0
for l in open(sys.argv[1]).read().splitlines():
    if l.startswith("# HELP "): helped.add(l.split()[2]); continue
    if l.startswith("# TYPE "): typed.add(l.split()[2]); continue
    m = re.fullmatch(r'([a-z_]+)(\{[a-z_]+="[^"\\]*"(,[a-z_]+="[^"\\]*")*\})? (-?[0-9.e+]+)', l)
    if not m or m.group(1) not in helped or m.group(1) not in typed: bad.append(l)
    n += 1
print(n > 20, bad)
PY
)" "True []"
p() { awk -v n="$1" '$1 == n {print $2}' "$T/p.txt"; }
eq "the text format's values: completion, tools, errors, agents, tokens" \
	"$(p 'madf_serve_completion_ratio') $(p 'madf_serve_tool_call_success_ratio') $(p 'madf_serve_tool_calls{result="error"}') $(p 'madf_serve_errors{type="AGENT_EXECUTION_FAILED"}') $(p 'madf_serve_agent_turns{agent="fx-desk"}') $(p 'madf_serve_resources{resource="input_tokens"}') $(p 'madf_serve_conversations{state="ended"}')" \
	"0.666667 0.500000 1 1 2 2010 3"
eq "one sample per conversation and resource" "$(grep -c '^madf_serve_conversation_resources{' "$T/p.txt")" 12
st=$(curl -s -o "$T/j2.json" -w '%{http_code}' "$U/metrics?format=json" -H "Authorization: Bearer $TA" -H 'Accept: text/plain')
eq "?format=json wins over Accept" "$st $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["conversations"]["ended"])' "$T/j2.json")" "200 3"
st=$(curl -s -o "$T/e.json" -w '%{http_code}' "$U/metrics?format=xml" -H "Authorization: Bearer $TA")
eq "?format=xml: 400 naming format" "$st $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["code"], j["details"]["field"])' "$T/e.json")" \
	"400 VALIDATION_ERROR format"
st=$(curl -s -o /dev/null -w '%{http_code}' "$U/metrics")
eq "no token: 401" "$st" 401
st=$(curl -s -o /dev/null -D "$T/pm.h" -w '%{http_code}' -X POST "$U/metrics" -H "Authorization: Bearer $TA")
eq "POST: 405 with Allow: GET" "$st $(grep -i '^Allow:' "$T/pm.h" | tr -d '\r')" "405 Allow: GET"

kill -TERM "$server_pid"; wait "$server_pid"
serve "madf serve again" env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$rport \
	CLAUDE_MODEL_EXECUTION=claude-test "$MADF" serve --listen 127.0.0.1:0
# serve sets its own EXIT trap: the replay server's kill again (it was left running)
trap 'kill "$server_pid" "$rpid" 2>/dev/null; wait 2>/dev/null; cleanup' EXIT
curl -s -o "$T/m2.json" "http://127.0.0.1:$port/api/metrics" -H "Authorization: Bearer $TA"
eq "after a restart the metrics are the same (derived from the recorded conversations)" \
	"$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); a.pop("timestamp"); b.pop("timestamp"); print(a == b)' "$T/m.json" "$T/m2.json")" True
kill -TERM "$server_pid"; wait "$server_pid"
hasnt "no sanitizer report" "$(cat "$T/serve.err")" "Sanitizer"

# madf bench serve, small: its checks and counts (its times are figures, not asserted).
out=$(cd "$TOP" && "$MADF" bench serve --streams 20 --rounds 1 --probes 5 --json 2>"$T/bench.err"); rc=$?
eq "bench serve --streams 20: exit 0, every stream completed with the same 19 events, 25 open at most (the 5 probes too), every one with a first event, the load average before and at the end" \
	"$rc $(printf %s "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["completed"], j["eventsPerStream"], j["sameEventCount"], 0 < j["openAtOnceMax"] <= 25, j["firstEventCount"], j["firstEventMsMedian"] > 0, j["serverPeakKb"] > 0, j["loadAverage"] >= 0, j["loadAverageAtEnd"] >= 0)' 2>&1)" \
	"0 20 19 True True 20 True True True True"
eq "bench serve --probes 5: 5 started one at a time once the 20 had their first event, each answered and completed, none failed, with their own first-event times" \
	"$(printf %s "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["probes"], j["probesStarted"], j["probesAnswered"], j["probesFailed"], j["probesCompleted"], 0 < j["probeOpenMin"] <= 20, 0 < j["probeFirstEventMsMedian"] <= j["probeFirstEventMsP95"] <= j["probeFirstEventMsMax"])' 2>&1)" \
	"5 5 5 0 5 True True"
out=$(cd "$TOP" && "$MADF" bench serve --streams 3 --rounds 1 --probes 0 2>"$T/bench0.err"); rc=$?
eq "bench serve --probes 0: exit 0, the burst's figures, no line for probes" \
	"$rc $(printf %s "$out" | grep -c 'first event, burst') $(printf %s "$out" | grep -c 'first event, one')" "0 1 0"
check_fails "bench serve --probes -1 is a usage error" 2 "$MADF" bench serve --probes -1
check_fails "bench serve --streams 0 is a usage error" 2 "$MADF" bench serve --streams 0
out=$("$MADF" bench serve --replay /nonexistent.py 2>&1); rc=$?
eq "bench serve without the replay server: exit 2 naming it" "$rc $(printf %s "$out" | grep -c 'nonexistent.py')" "2 1"
done_testing
