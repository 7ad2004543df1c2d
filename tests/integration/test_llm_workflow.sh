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
# Reading the news around the acts is the validation's longest step: the
# validator says so as it begins (then every 5 s while it lasts), a
# task_progress in_progress that moves the validation's deadline on, so a
# slow machine does not fail a validation that works on.
out=$(messages "$D1" task_progress | py '
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    c = m["content"]
    if m["from"] == "validator_agent" and c.get("status") == "in_progress" \
       and "reading the news" in c.get("current_step", ""):
        n = c.get("items_total")
        # The market findings (5) checked first; n the findings of the run
        # (5 market, the news acts of the week, the tone), said alike;
        print(c["current_step"].replace("of %d findings" % n, "of N findings"),
              c.get("items_done"), n >= 15)
        break')
eq "anthropic: the validator said it was reading the news of the acts (task_progress in_progress)" \
	"$out" "checked 5 of N findings; reading the news of 1987-03-12..1987-03-27 5 True"
# The model's review of the verdicts says it works on too, before each
# model call: a slow model moves the validation's deadline on instead of
# missing it (before, the review sent no progress at all).
out=$(messages "$D1" task_progress | py '
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    c = m["content"]
    if m["from"] == "validator_agent" and c.get("status") == "in_progress" \
       and "reviewing the verdicts" in c.get("current_step", ""):
        n = c.get("items_total")
        print(c["current_step"].replace("%d of %d" % (n, n), "N of N"),
              c.get("items_done") == n)
        break')
eq "anthropic: the validator said it was reviewing the verdicts with the model (task_progress in_progress)" \
	"$out" "checked N of N findings; reviewing the verdicts with the model (call 1) True"
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
# The task timeout: a task must reach its pause before it (a deadline is for
# work in progress: a task still loading the news archive on a loaded
# machine past it is reassigned, as it should be); the waits below go past
# it for real.
TT=30
D3=$T/budget
L3=$T/logs-budget
$A MADF_TASK_TOKEN_BUDGET=100 MADF_DATA_DIR=$D3 LOG_DIR=$L3 "$MADF" $RUN --task-timeout $TT \
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
wait_for "budget: both USD/JPY tasks pause for approval once they reach 100 tokens" 300 paused 2
wait_for "budget: madf run shows the tasks awaiting approval" 30 \
	grep -q "awaiting approval: USDJPY-market USDJPY-news" "$T/b.err"
RID=$(py '
import json, sys
print(next(iter(json.load(open(sys.argv[1]))["runs"])))' "$D3/state/product_manager-state.json")
# past EPOCH: the clock is 2 s past EPOCH (the product_manager checks its
# deadlines four times a second).
past() { py 'import sys, time; sys.exit(0 if time.time() > float(sys.argv[1]) + 2 else 1)' "$1"; }
# The latest deadline the product_manager gave a research assignment.
task_deadline=$(messages "$D3" task_assignment | py '
import json, sys
from datetime import datetime
print(max(datetime.fromisoformat(c["deadline"].replace("Z", "+00:00")).timestamp()
          for c in (json.loads(l)["content"] for l in sys.stdin)
          if c.get("task_type") in ("market_data", "news_analysis")))')
wait_for "budget: the tasks' deadlines pass while they are paused" $((TT + 30)) past "$task_deadline"
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
# stage_is DATA_DIR ID STATUS: the run's validation or narrative has STATUS.
stage_is() {
	[ "$(py '
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception:
    sys.exit()
print(" ".join((r.get(sys.argv[2]) or {}).get("status", "-") for r in s.get("runs", {}).values()))' \
	"$1/state/product_manager-state.json" "$2")" = "$3" ]
}
# no_report DATA_DIR: no finished report yet, and the run is not done.
no_report() {
	[ -z "$(find "$1/reports/weekly" -name '*.md' 2>/dev/null)" ] && stage_status_not_done "$1"
}
stage_status_not_done() {
	[ "$(py '
import json, sys
s = json.load(open(sys.argv[1]))
print(" ".join(r.get("status", "-") for r in s.get("runs", {}).values()))' \
	"$1/state/product_manager-state.json")" != done ]
}
# The validator's LLM review reaches its budget after one call: the
# validation waits for the operator, and so does the report.
wait_for "budget: the validation pauses for approval at its budget" 300 \
	stage_is "$D3" validation awaiting_approval
wait_for "budget: madf run shows the validation awaiting approval" 30 \
	grep -q "awaiting approval: validation" "$T/b.err"
# decided LOG_DIR EVENT TASK: the product_manager logged that decision.
decided() { grep -q "\"event\":\"$2\".*\"task_id\":\"$3\"" "$1"/agents/product_manager/decisions/*.jsonl; }
# Every deadline the validation had was set (on its request, on each
# progress) before it paused, to then + max(TT, 20) s: past that, a paused
# validation must still wait for the operator.
validation_deadline=$(py '
import glob, json, sys
from datetime import datetime
for f in sorted(glob.glob(sys.argv[1] + "/agents/product_manager/decisions/*.jsonl")):
    for l in open(f):
        j = json.loads(l)
        if j.get("event") == "awaiting_approval" and j.get("task_id") == "validation":
            print(datetime.fromisoformat(j["ts"].replace("Z", "+00:00")).timestamp() +
                  max(int(sys.argv[2]), 20))
            sys.exit()' "$L3" "$TT")
wait_for "budget: the validation's deadline passes while it is paused" $((TT + 60)) \
	past "$validation_deadline"
check "budget: the validation is still paused after its deadline" \
	stage_is "$D3" validation awaiting_approval
check "budget: no report is finalized while the validation is paused" no_report "$D3"
check "budget: the pause is in the product_manager's decisions" decided "$L3" awaiting_approval validation
MADF_DATA_DIR=$D3 "$MADF" send --from operator --to product_manager --type task_assignment \
	--content "$(control skip_llm "$RID" narrative)" >/dev/null 2>&1
wait_for "budget: skip_llm of a narrative not yet started is refused" 30 \
	grep -q "skip_llm from operator refused: the narrative is not started, not awaiting approval" \
	"$L3"/agents/product_manager/decisions/*.jsonl
out=$(messages "$D3" task_progress | py '
import json, sys
for l in sys.stdin:
    m = json.loads(l)
    c = m["content"]
    if m["from"] == "validator_agent" and c.get("status") == "awaiting_approval":
        print(c["llm_usage"]["input_tokens"], c["llm_usage"]["output_tokens"])')
eq "budget: the validator reported task_progress awaiting_approval with its usage" "$out" "321 45"
MADF_DATA_DIR=$D3 "$MADF" send --from operator --to product_manager --type task_assignment \
	--content "$(control approve_budget "$RID" validation)" >/dev/null 2>&1
# The narrative's one call would pass the cap on its input alone: it is
# not made, and the report waits again.
wait_for "budget: after approve_budget the narrative pauses for approval" 300 \
	stage_is "$D3" narrative awaiting_approval
check "budget: the validation finished with the resumed review" stage_is "$D3" validation done
check "budget: no report is finalized while the narrative is paused" no_report "$D3"
wait_for "budget: the draft says the narrative waits for the operator" 30 \
	grep -q "paused: its LLM budget is spent" "$D3"/reports/drafts/*.md
MADF_DATA_DIR=$D3 "$MADF" send --from operator --to product_manager --type task_assignment \
	--content "$(control approve_budget "$RID" narrative)" >/dev/null 2>&1
wait "$run_pid"; rc=$?
eq "budget: after approve_budget of the market task, the validation and the narrative the run completes" "$rc" 0
J3=$(tail -1 "$T/b.out"); J3=${J3%.md}.json
out=$(py '
import json, sys
j = json.load(open(sys.argv[1]))
r = (j.get("validation") or {}).get("llm_review") or {}
n = j.get("narrative") or {}
print(r.get("outcome"), r.get("steps"), r.get("notes", "")[:15], n.get("status"),
      n.get("text", "").startswith("Executive summary (replay narrative)"),
      any("skipped" in w for w in j.get("warnings", [])))' "$J3")
eq "budget: the report has the resumed review's notes and the narrative, no skip warning" "$out" \
	"done 2 Replay analysis done True False"
has "budget: the report's Markdown has the narrative" "$(cat "${J3%.json}.md")" "replay narrative"
out=$(py '
import json, sys
u = json.load(open(sys.argv[1]))["tasks"]
print(sorted((t["label"], t["calls"], t["status"]) for t in u.values() if t.get("label") in ("validation", "narrative")))' \
	"$D3/llm/usage.json")
eq "budget: usage.json: the review resumed its conversation (2 calls), the narrative made its one call" \
	"$out" "[('narrative', 1, 'done'), ('validation', 2, 'done')]"
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

# --- the budget cap: the LLM parts skipped (skip_llm) or cancelled ----------------------
D4=$T/skip
L4=$T/logs-skip
$A MADF_TASK_TOKEN_BUDGET=100 MADF_DATA_DIR=$D4 LOG_DIR=$L4 "$MADF" $RUN --task-timeout $TT \
	>"$T/k.out" 2>"$T/k.err" &
run_pid=$!
D3_SAVE=$D3
D3=$D4 # paused() reads $D3
wait_for "skip: both USD/JPY tasks pause for approval" 300 paused 2
D3=$D3_SAVE
RID4=$(py '
import json, sys
print(next(iter(json.load(open(sys.argv[1]))["runs"])))' "$D4/state/product_manager-state.json")
send4() {
	MADF_DATA_DIR=$D4 "$MADF" send --from operator --to product_manager --type task_assignment \
		--content "$(control "$1" "$RID4" "$2")" >/dev/null 2>&1
}
send4 skip_llm USDJPY-market
send4 skip_llm USDJPY-news
wait_for "skip: the validation pauses for approval" 300 stage_is "$D4" validation awaiting_approval
check "skip: no report while the validation is paused" no_report "$D4"
send4 cancel validation
wait_for "skip: then the narrative pauses for approval" 300 stage_is "$D4" narrative awaiting_approval
check "skip: no report while the narrative is paused" no_report "$D4"
send4 skip_llm narrative
wait "$run_pid"; rc=$?
eq "skip: after skip_llm (research, narrative) and cancel (validation) the run completes" "$rc" 0
J4=$(tail -1 "$T/k.out"); J4=${J4%.md}.json
check "skip: USD/JPY figures are exactly the CSV's" \
	$CHK "$J4" pair USD/JPY 1987-03-20 151.70 1987-03-27 147.72 -2.6236
check "skip: validation done (the deterministic verdicts)" $CHK "$J4" validation done
out=$(py '
import json, sys
j = json.load(open(sys.argv[1]))
st = json.load(open(sys.argv[2]))["runs"][sys.argv[3]]
r = (j.get("validation") or {}).get("llm_review") or {}
n = j.get("narrative") or {}
w = j.get("warnings", [])
print(sorted(t["status"] for t in st["tasks"]), r.get("outcome"), r.get("notes"), n.get("status"),
      n.get("text"), len(j.get("findings", [])) > 0,
      any(x.startswith("the validator\x27s LLM review is skipped") for x in w),
      any(x.startswith("the narrative is skipped: skip_llm by operator") for x in w),
      sum("the model\x27s analysis is skipped" in x for x in w))' "$J4" \
	"$D4/state/product_manager-state.json" "$RID4")
eq "skip: research tasks done, review and narrative skipped, the findings kept, a warning for each" "$out" \
	"['done', 'done'] skipped_by_operator  skipped  True True True 2"
hasnt "skip: no narrative text in the report" "$(cat "${J4%.json}.md")" "replay narrative"
has "skip: the report's Markdown names the skipped narrative" "$(cat "${J4%.json}.md")" \
	"the narrative is skipped"
out=$(messages "$D4" research_result | py '
import json, sys
for l in sys.stdin:
    c = json.loads(l)["content"]
    if c.get("raw_data", {}).get("kind") != "report":
        print(c["llm"]["outcome"], c.get("analysis") == "")' | sort -u)
eq "skip: the research results say the analysis was skipped by the operator" "$out" \
	"skipped_by_operator True"
check "skip: the cancel of the validation's review is a decision" decided "$L4" cancel validation
check "skip: the skip of the narrative is a decision" decided "$L4" skip_llm narrative

# --- MADF_LLM_CONTINUE_AT_LIMIT=1: at the cap the LLM part is skipped -----------------
D5=$T/cont
$A MADF_TASK_TOKEN_BUDGET=100 MADF_LLM_CONTINUE_AT_LIMIT=1 MADF_DATA_DIR=$D5 LOG_DIR=$T/logs-cont \
	"$MADF" $RUN --task-timeout $TT >"$T/c.out" 2>"$T/c.err"; rc=$?
eq "continue at limit: the run completes without the operator" "$rc" 0
has "continue at limit: madf run says so" "$(cat "$T/c.err")" "MADF_LLM_CONTINUE_AT_LIMIT"
J5=$(tail -1 "$T/c.out"); J5=${J5%.md}.json
out=$(py '
import json, sys
j = json.load(open(sys.argv[1]))
r = (j.get("validation") or {}).get("llm_review") or {}
print(r.get("outcome"), (j.get("narrative") or {}).get("status"),
      sum("skipped" in w for w in j.get("warnings", [])), j["manifest"].get("continue_at_limit"))' "$J5")
eq "continue at limit: review and narrative skipped at the budget, warned (and the 2 analyses)" "$out" \
	"skipped_budget skipped_budget 4 True"
check_fails "continue at limit: a bad value is refused" 1 \
	env MADF_LLM_CONTINUE_AT_LIMIT=yes $A MADF_DATA_DIR=$T/bad2 "$MADF" $RUN

cd "$TOP" || exit 1
done_testing
