# The weekly workflow end to end in LLM mode against the project's replay
# server on 127.0.0.1, on the real data: the researchers and the validator
# call tools through the model, the product_manager streams the narrative
# into the draft, tokens and cost are counted per agent and per task, a
# budget cap pauses a task until the operator approves (or cancels) it,
# both providers work, and with no key the run is deterministic as before.
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
CHK="python3 $TOP/tests/integration/report_check.py"
KEY=sk-madf-llm-workflow-0123456789abcdef
LOG=$T/requests.jsonl
serve "the replay server" python3 tests/integration/llm_replay.py --key "$KEY" --log "$LOG"
ok "the replay server listens on 127.0.0.1:$port"

mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL OPENAI_MODEL_EXECUTION OPENAI_MODEL_ORCHESTRATOR ANTHROPIC_BASE_URL \
	OPENAI_BASE_URL MADF_LLM MADF_TASK_TOKEN_BUDGET MADF_TASK_COST_BUDGET MADF_LLM_MAX_STEPS \
	MADF_LLM_PRICE_IN MADF_LLM_PRICE_OUT 2>/dev/null || true
A="env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$port CLAUDE_MODEL_EXECUTION=claude-sonnet-4-5 CLAUDE_MODEL_ORCHESTRATOR=claude-opus-4-1"
O="env OPENAI_API_KEY=$KEY OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_MODEL=gpt-4o"
RUN="run weekly --as-of 1987-03-27 --pairs USD/JPY --market csv:$FX --news jsonl:$NEWS"

# py SCRIPT ARGS...: a small Python check; prints what it finds.
py() { s=$1; shift; python3 -c "$s" "$@"; }
# every_message_valid DATA_DIR: count of processed messages and of invalid ones.
every_message_valid() {
	n=0 bad=0
	for f in $(find "$1/messages/processed" -name '*.json' ! -name '*.reason.json'); do
		n=$((n + 1))
		"$MADF" validate "$f" >/dev/null 2>&1 || bad=$((bad + 1))
	done
	echo "$n $bad"
}
# messages DATA_DIR TYPE: the processed messages of one type, one JSON per line.
messages() {
	py '
import json, os, sys
root, want = sys.argv[1], sys.argv[2]
for d, _, fs in os.walk(os.path.join(root, "messages", "processed")):
    for f in sorted(fs):
        if f.endswith(".json") and not f.endswith(".reason.json"):
            m = json.load(open(os.path.join(d, f)))
            if m.get("type") == want:
                print(json.dumps(m))' "$1" "$2"
}

# --- Anthropic: the whole run in LLM mode -----------------------------------------
D1=$T/anth
L1=$T/logs-anth
$A MADF_DATA_DIR=$D1 LOG_DIR=$L1 "$MADF" $RUN >"$T/a.out" 2>"$T/a.err"; rc=$?
eq "anthropic: the LLM-mode run exits 0" "$rc" 0
has "anthropic: madf run says it runs in LLM mode" "$(cat "$T/a.err")" \
	"LLM mode: anthropic, orchestrator claude-opus-4-1, execution claude-sonnet-4-5"
MD=$(tail -1 "$T/a.out")
J1=${MD%.md}.json
check "anthropic: the report and its JSON twin exist" test -s "$MD" -a -s "$J1"
set -- $(every_message_valid "$D1")
eq "anthropic: every processed message validates ($1 messages)" "$2" 0
check "anthropic: USD/JPY figures are exactly the CSV's" \
	$CHK "$J1" pair USD/JPY 1987-03-20 151.70 1987-03-27 147.72 -2.6236
check "anthropic: validation done" $CHK "$J1" validation done
r=$(cat "$MD")
has "anthropic: the report has a Narrative section" "$r" "## Narrative"
has "anthropic: ... with the replayed stream's text" "$r" \
	"Executive summary (replay narrative). The dollar and the yen dominated the week; see the validated figures below."
has "anthropic: ... its second paragraph" "$r" "Second paragraph: every number comes from the data."
has "anthropic: ... naming the orchestrator model" "$r" "orchestrator model claude-opus-4-1 (anthropic)"
has "anthropic: the deterministic summary is still there" "$r" "## Executive summary"
out=$(py '
import json, sys
j = json.load(open(sys.argv[1]))
n, m = j.get("narrative") or {}, j.get("manifest") or {}
print(n.get("status"), n.get("text", "").startswith("Executive summary (replay narrative)"),
      m.get("mode"), m.get("provider"), (m.get("models") or {}).get("orchestrator"),
      (m.get("models") or {}).get("execution"))' "$J1")
eq "anthropic: the JSON has the narrative and a manifest with mode and models" "$out" \
	"done True llm anthropic claude-opus-4-1 claude-sonnet-4-5"

# The researchers' results: the figures from the data, the model's
# analysis beside them, which quotes what the tool call returned.
out=$(messages "$D1" research_result | py '
import json, sys
for l in sys.stdin:
    c = json.loads(l)["content"]
    raw = c.get("raw_data", {})
    if raw.get("kind") == "report":
        continue
    u = (c.get("llm") or {}).get("usage") or {}
    print(raw.get("kind"), c.get("analysis"), u.get("calls"), u.get("input_tokens"), u.get("output_tokens"))' | sort)
eq "anthropic: each research result carries the model's analysis of the tool's data and its usage" "$out" \
"market_data Replay analysis: fx_rates returned 6 closes, from 151.7 on 1987-03-20 to 147.72 on 1987-03-27. 2 975 132
news_analysis Replay analysis: fx_rates returned 6 closes, from 151.7 on 1987-03-20 to 147.72 on 1987-03-27. 2 975 132"
out=$(messages "$D1" validation_result | py '
import json, sys
for l in sys.stdin:
    r = json.loads(l)["content"].get("llm_review") or {}
    print(r.get("outcome"), r.get("notes", "")[:32], len(json.loads(l)["content"]["verdicts"]) > 0)')
eq "anthropic: the validation result has the model's review notes, and the verdicts" "$out" \
	"done Replay analysis: fx_rates return True"
# Drafts as the narrative streams: a draft shows part of it while it is written.
out=$(messages "$D1" task_assignment | py '
import json, sys
n = 0
for l in sys.stdin:
    c = json.loads(l)["content"]
    nv = (c.get("run") or {}).get("narrative") or {}
    if c.get("task_type") == "report_draft" and nv.get("status") == "streaming" and nv.get("text"):
        n += 1
print("yes" if n else "no")')
eq "anthropic: a draft was sent with the narrative while it streamed" "$out" yes
check "anthropic: the draft file has the narrative" grep -q "replay narrative" "$D1"/reports/drafts/*.md

# The requests: tool definitions, the tool call and its result went back.
out=$(py '
import json, sys
tools = results = calls = 0
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["path"] != "/v1/messages" or "kind" not in j:
        continue
    b = json.loads(j["body"])
    if any(t.get("name") == "fx_rates" and "input_schema" in t for t in b.get("tools", [])):
        tools += 1
    for m in b["messages"]:
        if isinstance(m["content"], list):
            for blk in m["content"]:
                if blk.get("type") == "tool_result" and blk.get("tool_use_id") == "toolu_replay_1" \
                   and "\"points\"" in blk.get("content", "") and blk.get("is_error") is False:
                    results += 1
                if blk.get("type") == "tool_use" and blk.get("input", {}).get("pair") == "USD/JPY":
                    calls += 1
print(tools > 0, results, calls)' "$LOG")
eq "anthropic: requests carried the tool definitions, the tool_use turns and 3 tool_result blocks" \
	"$out" "True 3 3"

# usage.json: per agent and per task, the tokens the server reported.
usage_check() {
	py '
import json, re, sys
usage = json.load(open(sys.argv[1]))
want = {}
for l in open(sys.argv[2]):
    j = json.loads(l)
    if "usage" not in j or not j["path"].endswith(sys.argv[3]):
        continue
    b = json.loads(j["body"])
    sysp = b.get("system") or next((m["content"] for m in b["messages"] if m["role"] == "system"), "")
    agent = re.match(r"You are (\w+)", sysp).group(1)
    w = want.setdefault(agent, [0, 0, 0])
    w[0] += 1; w[1] += j["usage"][0]; w[2] += j["usage"][1]
got = {a: [u["calls"], u["input_tokens"], u["output_tokens"]] for a, u in usage["agents"].items()}
tasks = usage["tasks"].values()
tsum = [sum(t["calls"] for t in tasks), sum(t["input_tokens"] for t in tasks), sum(t["output_tokens"] for t in tasks)]
asum = [sum(v[i] for v in got.values()) for i in range(3)]
print(got == want, len(want), all(t["input_tokens"] > 0 and t["output_tokens"] > 0 for t in tasks),
      tsum == asum, sorted(set(t["status"] for t in tasks)), all(u["cost_usd"] > 0 for u in usage["agents"].values()))' "$@"
}
eq "anthropic: usage.json matches the replayed usage per agent (4 agents), every task non-zero, tasks sum to agents" \
	"$(usage_check "$D1/llm/usage.json" "$LOG" /v1/messages)" "True 4 True True ['done'] True"
out=$(py '
import json, sys
u = json.load(open(sys.argv[1]))["agents"]["product_manager"]
print(u["calls"], u["input_tokens"], u["output_tokens"], u["cost_usd"])' "$D1/llm/usage.json")
eq "anthropic: the narrative's cost from the price table (claude-opus-4: 15/75 USD per million)" \
	"$out" "1 1000 200 0.03"
n=$(grep -rh '"event":"llm_call"' "$L1/agents" | wc -l | tr -d ' ')
eq "anthropic: every LLM call is in the agents' logs" "$n" 7
leaks=$(grep -rl -- "$KEY" "$D1" "$L1" "$T/a.out" "$T/a.err" 2>/dev/null)
eq "anthropic: the API key is nowhere in the data, the logs or the output" "$leaks" ""

# --- the deterministic run, with no key: as before, the same figures -----------------
D0=$T/det
before=$(wc -l <"$LOG")
MADF_DATA_DIR=$D0 LOG_DIR=$T/logs-det "$MADF" $RUN >"$T/d.out" 2>"$T/d.err"; rc=$?
eq "no key: the run exits 0" "$rc" 0
hasnt "no key: no LLM mode on stderr" "$(cat "$T/d.err")" "LLM mode"
eq "no key: no request reached the model server" "$(wc -l <"$LOG")" "$before"
J0=$(tail -1 "$T/d.out"); J0=${J0%.md}.json
hasnt "no key: no narrative section" "$(cat "${J0%.json}.md")" "## Narrative"
check "no key: no LLM usage file" test ! -e "$D0/llm/usage.json"
out=$(py '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
strip = lambda j: [{k: v for k, v in p.items() if k != "provenance"} for p in j["pairs"]]
fid = lambda j: sorted(f["id"] for f in j["findings"])
print(strip(a) == strip(b), fid(a) == fid(b), b["manifest"]["mode"], "narrative" in b)' "$J1" "$J0")
eq "both modes give the same figures and findings; the manifest says deterministic" "$out" \
	"True True deterministic False"
out=$($A MADF_LLM=off MADF_DATA_DIR=$T/off LOG_DIR=$T/logs-off "$MADF" $RUN 2>&1 >/dev/null); rc=$?
eq "MADF_LLM=off forces the deterministic agents, even with a key" "$rc:$(echo "$out" | grep -c 'LLM mode')" "0:0"
out=$(env MADF_LLM=openai CLAUDE_MODEL_EXECUTION=m MADF_DATA_DIR=$T/bad "$MADF" $RUN 2>&1); rc=$?
eq "MADF_LLM=openai without OPENAI_API_KEY exits 1" "$rc" 1
has "... naming the missing variable" "$out" "OPENAI_API_KEY is not set"
out=$($A MADF_TASK_TOKEN_BUDGET=lots MADF_DATA_DIR=$T/bad "$MADF" $RUN 2>&1); rc=$?
eq "a bad MADF_TASK_TOKEN_BUDGET exits 1 naming it" "$rc:$(echo "$out" | grep -c MADF_TASK_TOKEN_BUDGET)" "1:1"

# --- OpenAI-compatible: the same run ------------------------------------------------
D2=$T/openai
$O MADF_DATA_DIR=$D2 LOG_DIR=$T/logs-openai "$MADF" $RUN >"$T/o.out" 2>"$T/o.err"; rc=$?
eq "openai: the LLM-mode run exits 0" "$rc" 0
has "openai: it says so" "$(cat "$T/o.err")" "LLM mode: openai, orchestrator gpt-4o, execution gpt-4o"
J2=$(tail -1 "$T/o.out"); J2=${J2%.md}.json
check "openai: USD/JPY figures are exactly the CSV's" \
	$CHK "$J2" pair USD/JPY 1987-03-20 151.70 1987-03-27 147.72 -2.6236
set -- $(every_message_valid "$D2")
eq "openai: every processed message validates ($1 messages)" "$2" 0
out=$(messages "$D2" research_result | py '
import json, sys
for l in sys.stdin:
    c = json.loads(l)["content"]
    if c.get("raw_data", {}).get("kind") == "market_data":
        print(c.get("analysis"))')
eq "openai: the market researcher's analysis quotes the tool's data" "$out" \
	"Replay analysis: fx_rates returned 6 closes, from 151.7 on 1987-03-20 to 147.72 on 1987-03-27."
out=$(py '
import json, sys
tools = calls = results = 0
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["path"] != "/v1/chat/completions" or "kind" not in j:
        continue
    b = json.loads(j["body"])
    if any(t.get("type") == "function" and t["function"].get("name") == "fx_rates"
           and "parameters" in t["function"] for t in b.get("tools", [])):
        tools += 1
    for m in b["messages"]:
        for tc in m.get("tool_calls") or []:
            if tc["id"] == "call_replay_1" and tc["type"] == "function" and \
               json.loads(tc["function"]["arguments"])["pair"] == "USD/JPY":
                calls += 1
        if m["role"] == "tool" and m.get("tool_call_id") == "call_replay_1" and "\"points\"" in m["content"]:
            results += 1
print(tools > 0, calls, results)' "$LOG")
eq "openai: requests carried function tools, assistant tool_calls and 3 role-tool results" "$out" "True 3 3"
eq "openai: usage.json matches the replayed usage per agent" \
	"$(usage_check "$D2/llm/usage.json" "$LOG" /chat/completions)" "True 4 True True ['done'] True"
leaks=$(grep -rl -- "$KEY" "$D2" "$T/logs-openai" "$T/o.out" "$T/o.err" 2>/dev/null)
eq "openai: the API key is nowhere in the data, the logs or the output" "$leaks" ""

# --- the step limit ------------------------------------------------------------------
$A MADF_LLM_MAX_STEPS=1 MADF_DATA_DIR=$T/steps LOG_DIR=$T/logs-steps "$MADF" $RUN >"$T/s.out" 2>&1; rc=$?
eq "a step limit of 1 still completes the run" "$rc" 0
out=$(messages "$T/steps" research_result | py '
import json, sys
for l in sys.stdin:
    c = json.loads(l)["content"]
    if c.get("raw_data", {}).get("kind") == "market_data":
        print(c["llm"]["outcome"], any("MADF_LLM_MAX_STEPS" in w for w in c["warnings"]))')
eq "... the result says the model stopped at the step limit, with a warning" "$out" "step_limit True"

# --- the budget cap: paused for approval, approved, cancelled ----------------------------
D3=$T/budget
L3=$T/logs-budget
$A MADF_TASK_TOKEN_BUDGET=300 MADF_DATA_DIR=$D3 LOG_DIR=$L3 "$MADF" $RUN --task-timeout 3 \
	>"$T/b.out" 2>"$T/b.err" &
run_pid=$!
# paused N: the product_manager's state has N tasks awaiting approval.
paused() {
	[ "$(py '
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    print(0); sys.exit()
n = sum(1 for r in s.get("runs", {}).values() for t in r.get("tasks", [])
        if t.get("status") == "awaiting_approval")
print(n)' "$D3/state/product_manager-state.json")" = "$1" ]
}
wait_for "budget: both USD/JPY tasks pause for approval once they reach 300 tokens" 60 paused 2
wait_for "budget: madf run shows the tasks awaiting approval" 30 \
	grep -q "awaiting approval: USDJPY-market USDJPY-news" "$T/b.err"
RID=$(py '
import json, sys
print(next(iter(json.load(open(sys.argv[1]))["runs"])))' "$D3/state/product_manager-state.json")
sleep 4 # past the 3 s task deadline: a paused task is neither reassigned nor failed
check "budget: still paused after its deadline" paused 2
out=$(py '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][sys.argv[2]]
print(len(r.get("failures", [])), sorted(t["assignee"] for t in r["tasks"]))' \
	"$D3/state/product_manager-state.json" "$RID")
eq "budget: no reassignment while paused" "$out" "0 ['research_agent_1', 'research_agent_2']"
out=$(messages "$D3" task_progress | py '
import json, sys
n = 0
for l in sys.stdin:
    c = json.loads(l)["content"]
    if c.get("status") == "awaiting_approval" and c["llm_usage"]["input_tokens"] == 321:
        n += 1
print(n)')
eq "budget: each researcher reported task_progress awaiting_approval with its usage" "$out" 2
control() {
	py '
import json, sys
print(json.dumps({"task_type": "operator_control", "focus_area": "Asia/G10", "target_pairs": [],
    "timeframe": "", "data_sources": [], "deadline": "2099-01-01T00:00:00Z", "output_format": "none",
    "action": sys.argv[1], "run_id": sys.argv[2], "task_id": sys.argv[3], "extra_tokens": 5000}))' "$@"
}
MADF_DATA_DIR=$D3 "$MADF" send --from operator --to product_manager --type task_assignment \
	--content "$(control approve_budget "$RID" USDJPY-market)" >/dev/null 2>&1
MADF_DATA_DIR=$D3 "$MADF" send --from operator --to product_manager --type task_assignment \
	--content "$(control cancel "$RID" USDJPY-news)" >/dev/null 2>&1
wait "$run_pid"; rc=$?
eq "budget: after approve_budget (market) and cancel (news) the run completes" "$rc" 0
J3=$(tail -1 "$T/b.out"); J3=${J3%.md}.json
check "budget: USD/JPY figures are exactly the CSV's" \
	$CHK "$J3" pair USD/JPY 1987-03-20 151.70 1987-03-27 147.72 -2.6236
out=$(py '
import json, sys
u = json.load(open(sys.argv[1]))
st = json.load(open(sys.argv[2]))["runs"][sys.argv[3]]
tasks = {t["task_id"]: t for t in st["tasks"]}
m, n = tasks["USDJPY-market"], tasks["USDJPY-news"]
mu = u["tasks"][m["current"]]
nu = u["tasks"][n["current"]]
print(m["status"], mu["status"], mu["calls"], mu["input_tokens"] + mu["output_tokens"], mu["label"],
      n["status"], nu["status"], nu["calls"])' "$D3/llm/usage.json" "$D3/state/product_manager-state.json" "$RID")
eq "budget: the approved task resumed its conversation to the end; the cancelled one stopped" "$out" \
	"done done 2 1107 USDJPY-market cancelled awaiting_approval 1"
has "budget: the approval is in the product_manager's decisions" \
	"$(cat "$L3"/agents/product_manager/decisions/*.jsonl)" '"event":"approve_budget"'
set -- $(every_message_valid "$D3")
eq "budget: every processed message validates ($1 messages)" "$2" 0
leaks=$(grep -rl -- "$KEY" "$D3" "$L3" "$T/b.out" "$T/b.err" 2>/dev/null)
eq "budget: the API key is nowhere in the data, the logs or the output" "$leaks" ""

cd "$TOP" || exit 1
done_testing
