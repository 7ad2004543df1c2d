# A task whose researcher misses the deadline goes to the other researcher,
# and the late one is told to drop it: it stops (never works it), its
# capacity is free for the next task at once, and a late result from it
# for that task is ignored by the product_manager; the task's one result
# is the second researcher's. A cancel that overtakes its assignment (the
# cancel is urgent) drops the assignment when it comes.
#
# The agents are `madf agent NAME` processes (madf run weekly --attach),
# so that research_agent_2 can be away while the reassigned task waits for
# it: the late result is sent then, at a time the test chooses.
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
SRC="--market csv:$FX --news jsonl:$NEWS"
TIMEOUT=15
TAGS=""

# start TAG CMD...: CMD in the background, its pid in $T/TAG.pid, its exit
# status in $T/TAG.rc, stderr in $T/TAG.err (as test_agents.sh).
start() {
	tag=$1; shift
	TAGS="$TAGS $tag"
	rm -f "$T/$tag.rc" "$T/$tag.pid"
	( sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$T/$tag.pid" "$@" \
		>"$T/$tag.out" 2>"$T/$tag.err"
	  echo $? >"$T/$tag.rc" ) &
}
pid_of() { cat "$T/$1.pid" 2>/dev/null; }
running() { [ -s "$T/$1.pid" ] && [ ! -e "$T/$1.rc" ] && grep -q ' running (pid ' "$T/$1.err"; }
ended() { [ -s "$T/$1.rc" ]; }
stop_all() {
	for tag in $TAGS; do
		ended "$tag" || kill -TERM "$(pid_of "$tag")" 2>/dev/null
	done
	end=$(( $(date +%s) + 10 ))
	for tag in $TAGS; do
		while ! ended "$tag" && [ "$(date +%s)" -le "$end" ]; do sleep 0.05; done
		ended "$tag" || kill -KILL "$(pid_of "$tag")" 2>/dev/null
	done
	wait
}
trap 'stop_all; cleanup' EXIT
trap 'exit 130' INT TERM

D=$T/data LOG_DIR=$T/logs
export MADF_DATA_DIR=$D LOG_DIR
mkdir -p "$D"
# py EXPR: EXPR in Python over s (the product_manager's state), run (its
# one run), task(ID) (one of its tasks), dec (its decisions), dec_of(AGENT)
# (an agent's decisions), printed.
py() {
	python3 -c 'import glob, json, sys
d, l = sys.argv[1], sys.argv[2]
s = json.load(open(d + "/state/product_manager-state.json"))
runs = list(s.get("runs", {}).values())
run = runs[0] if len(runs) == 1 else None
def task(i):
    return [t for t in run["tasks"] if t["task_id"] == i][0]
def dec_of(agent, kind="decisions"):
    return [json.loads(x) for f in sorted(glob.glob(l + "/agents/" + agent + "/" + kind + "/*.jsonl"))
            for x in open(f) if x.strip()]
dec = dec_of("product_manager")
r = eval(sys.argv[3])
print(r if isinstance(r, str) else json.dumps(r))' "$D" "$LOG_DIR" "$1" 2>&1
}
pm_true() { [ "$(py "$1")" = true ]; }

check "the FRED CSV is there" test -s "$FX"
check "the Reuters JSONL is there" test -s "$NEWS"

# --- 1. the deadline missed: reassigned, cancelled at the late researcher --------------
# research_agent_1 is slow (it answers a second after each deadline) and
# holds 1 task: USDJPY-market goes to it, GBPUSD-market waits its turn.
start pm $MADF agent product_manager $SRC --task-timeout $TIMEOUT
start r1 env MADF_AGENT_CAPACITY=1 $MADF agent research_agent_1 $SRC \
	--inject-fault research_agent_1:slow
start r2 $MADF agent research_agent_2 $SRC
start va $MADF agent validator_agent $SRC
start rw $MADF agent report_writer $SRC
for tag in pm r1 r2 va rw; do
	wait_for "$tag: the agent runs" 60 running $tag
done
# The product_manager knows research_agent_1's capacity (its heartbeat)
# before the run starts: a window of 1.
wait_for "the product_manager has research_agent_1's heartbeat" 30 pm_true \
	'len(s["agents"]["research_agent_1"]["processes"]) == 1'
start run $MADF run weekly --attach --as-of 1987-03-27 --pairs USD/JPY,GBP/USD \
	--report-dir "$T/rep"
# research_agent_2 does the news tasks, then stops (SIGTERM: it says so,
# and the product_manager counts it out): the task it gets at the deadline
# waits for it.
wait_for "research_agent_2 did both news tasks" 60 pm_true \
	'sorted(t["status"] for t in run["tasks"] if t["kind"] == "news") == ["done", "done"]'
kill -TERM "$(pid_of r2)"
wait_for "research_agent_2 stops on SIGTERM" 15 ended r2
wait_for "USDJPY-market is reassigned at its deadline" $((TIMEOUT + 60)) pm_true \
	'any(d["event"] == "reassign" and d.get("task_id") == "USDJPY-market" for d in dec)'
ID1=$(py 'task("USDJPY-market")["assignments"][0]')
eq "the reassignment says research_agent_1 missed the deadline" \
	"$(py '[[f["what"], f["from"], f["to"], f["reason"]] for f in run["failures"] if f["task_id"] == "USDJPY-market"]')" \
	"[[\"reassigned\", \"research_agent_1\", \"research_agent_2\", \"research_agent_1 missed the deadline ($TIMEOUT s)\"]]"
eq "the product_manager told research_agent_1 to drop it (cancel_sent)" \
	"$(py '[d["message"] for d in dec if d["event"] == "cancel_sent" and d.get("task_id") == "USDJPY-market"]')" \
	"[\"USDJPY-market: research_agent_1 told to drop $ID1\"]"
r1_cancelled() { grep -q "\"$ID1 cancelled by product_manager (was queued)\"" \
	"$LOG_DIR"/agents/research_agent_1/decisions/*.jsonl; }
wait_for "research_agent_1's log: the task cancelled while it was queued" 30 r1_cancelled
eq "research_agent_1's state: the task is cancelled" \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tasks"][sys.argv[2]]["status"])' \
	"$D/state/research_agent_1-state.json" "$ID1")" cancelled

# Its capacity (1) is free again: GBPUSD-market, sent as the first went, is
# accepted, not rejected for capacity.
wait_for "GBPUSD-market goes to research_agent_1" 30 pm_true \
	'len(task("GBPUSD-market").get("assignments", [])) >= 1'
IDG=$(py 'task("GBPUSD-market")["assignments"][0]')
g_accepted() { grep -q "\"accepted market_data task $IDG for GBP/USD\"" \
	"$LOG_DIR"/agents/research_agent_1/decisions/*.jsonl; }
wait_for "research_agent_1 accepts GBPUSD-market, its next task" 30 g_accepted
eq "research_agent_1 rejected nothing for capacity" \
	"$(py 'len([d for d in dec_of("research_agent_1") if d["event"] == "task_rejected"])')" 0
eq "GBPUSD-market was never requeued" "$(py 'task("GBPUSD-market").get("requeued", 0)')" 0

# A late result from research_agent_1 for the task it was told to drop,
# while the task waits for research_agent_2: ignored.
LATE=$($MADF send --from research_agent_1 --to product_manager --type research_result \
	--reply-to "$ID1" --content "{\"task_id\":\"$ID1\",\"status\":\"completed\",
	\"execution_time_minutes\":0.5,\"data_points_collected\":2,\"sources_accessed\":[\"late\"],
	\"key_findings\":[\"a late result\"],\"raw_data\":{\"kind\":\"market\",\"pair\":\"USD/JPY\",
	\"stats\":{\"pair\":\"USD/JPY\",\"change_pct\":99,\"start\":{\"date\":\"1987-03-20\",\"close\":1},
	\"end\":{\"date\":\"1987-03-27\",\"close\":1.99}},\"findings\":[{\"id\":\"USDJPY-LATE1\",
	\"kind\":\"market\",\"pair\":\"USD/JPY\",\"text\":\"a late result\",\"sources\":[]}]},
	\"confidence_score\":0.5,\"data_freshness_hours\":0,\"warnings\":[]}")
wait_for "the product_manager ignores the late result (late_result)" 30 pm_true \
	"any(d['event'] == 'late_result' and '$LATE' in d['message'] and '$ID1' in d['message'] for d in dec)"
eq "... USDJPY-market still waits for research_agent_2, not done" \
	"$(py '[task("USDJPY-market")["assignee"], task("USDJPY-market")["status"], "done_by" in task("USDJPY-market")]')" \
	'["research_agent_2", "assigned", false]'

# research_agent_2 comes back and does it.
start r2b $MADF agent research_agent_2 $SRC
wait_for "the run ends" $((3 * TIMEOUT + 90)) ended run
eq "the run succeeds" "$(cat "$T/run.rc")" 0
RUN=$(py 'run["run_id"]')
eq "madf tasks: USDJPY-market once, done by research_agent_2 at its second attempt" \
	"$($MADF tasks "$RUN" --json | python3 -c 'import json, sys
ts = [t for t in json.load(sys.stdin)["tasks"] if t["task_id"] == "USDJPY-market"]
print(json.dumps([[t["status"], t.get("done_by"), t["attempts"]] for t in ts]))')" \
	'[["done", "research_agent_2", 2]]'
has "its result is research_agent_2's message" "$(py 'task("USDJPY-market")["result_message_id"]')" \
	research_agent_2_
eq "research_agent_1 never worked the task (no result in its log)" \
	"$(py 'len([d for d in dec_of("research_agent_1", "results") if d.get("task_id") == "'"$ID1"'"])')" 0
J=$(ls "$T"/rep/*.json 2>/dev/null | head -1)
eq "the report: USD/JPY's figures are research_agent_2's, one result, no late finding" \
	"$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
p = [p for p in r["pairs"] if p["pair"] == "USD/JPY"]
late = [f for f in r.get("findings", []) if "LATE" in f.get("id", "") or f.get("text") == "a late result"]
print(json.dumps([len(p), p[0]["provenance"]["agent"], late]))' "$J" 2>&1)" \
	'[1, "research_agent_2", []]'
hasnt "the Markdown has no trace of the late result" "$(cat "$T"/rep/*.md)" "a late result"

# --- 2. a cancel that overtakes its assignment --------------------------------------------
# research_agent_2 is away: an assignment waits in its inbox, then the
# product_manager's cancel of it (urgent, so claimed first).
dl=$(python3 -c 'import datetime; print((datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))')
kill -TERM "$(pid_of r2b)"
wait_for "research_agent_2 stops again" 15 ended r2b
ID2=$($MADF send --to research_agent_2 --type task_assignment --from product_manager --content \
	"{\"task_type\":\"market_data\",\"focus_area\":\"Asia/G10\",\"target_pairs\":[\"USD/CHF\"],
	  \"timeframe\":\"1987-03-20/1987-03-27\",\"data_sources\":[\"csv\"],\"deadline\":\"$dl\",
	  \"output_format\":\"structured_json\",\"window\":{\"start\":\"1987-03-20\",\"end\":\"1987-03-27\"}}")
$MADF send --to research_agent_2 --type task_assignment --from product_manager --priority urgent \
	--content "{\"task_type\":\"cancel_task\",\"focus_area\":\"Asia/G10\",\"target_pairs\":[],
	  \"timeframe\":\"\",\"data_sources\":[],\"deadline\":\"$dl\",\"output_format\":\"none\",
	  \"cancel_id\":\"$ID2\"}" >/dev/null
start r2c $MADF agent research_agent_2 $SRC
r2_dropped() { grep -q "\"$ID2 dropped: it arrived after its cancel\"" \
	"$LOG_DIR"/agents/research_agent_2/decisions/*.jsonl; }
wait_for "research_agent_2 drops the assignment that came after its cancel" 30 r2_dropped
eq "... it neither accepted nor worked it" \
	"$(cat "$LOG_DIR"/agents/research_agent_2/*/*.jsonl | grep "$ID2" | grep -c '"task_accepted"\|"task_done"')" 0

# --- 3. LLM mode: the deadline passes while the late researcher waits for the model ---
# research_agent_1's model answers 8 s late (the replay server's
# --agent-pause); the deadline is 5 s. Its first call is under way when the
# task goes to research_agent_2: it makes no second call (it sees the
# cancel on the bus before it), sends no result, and the task is cancelled
# in its state.
for tag in pm r1 va rw r2c; do
	ended $tag || kill -TERM "$(pid_of $tag)" 2>/dev/null
done
for tag in pm r1 va rw r2c; do
	wait_for "$tag stops" 15 ended $tag
done
KEY=sk-madf-deadline-cancel-0123456789abcdef
QLOG=$T/requests.jsonl
serve "the replay server" python3 tests/integration/llm_replay.py --key "$KEY" --log "$QLOG" \
	--agent-pause research_agent_1:8
# serve's own trap stops the server: the agents too
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; stop_all; cleanup' EXIT
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL OPENAI_MODEL_EXECUTION OPENAI_MODEL_ORCHESTRATOR ANTHROPIC_BASE_URL \
	OPENAI_BASE_URL MADF_LLM MADF_TASK_TOKEN_BUDGET MADF_TASK_COST_BUDGET MADF_LLM_MAX_STEPS \
	MADF_LLM_PRICE_IN MADF_LLM_PRICE_OUT 2>/dev/null || true
export ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$port \
	CLAUDE_MODEL_EXECUTION=claude-sonnet-4-5 CLAUDE_MODEL_ORCHESTRATOR=claude-opus-4-1
D=$T/llm/data LOG_DIR=$T/llm/logs
export MADF_DATA_DIR=$D LOG_DIR
mkdir -p "$D"
start pm3 $MADF agent product_manager $SRC --task-timeout 5
start r13 $MADF agent research_agent_1 $SRC
start r23 $MADF agent research_agent_2 $SRC
start va3 $MADF agent validator_agent $SRC
start rw3 $MADF agent report_writer $SRC
for tag in pm3 r13 r23 va3 rw3; do
	wait_for "LLM mode, $tag: the agent runs" 60 running $tag
done
start run3 $MADF run weekly --attach --as-of 1987-03-27 --pairs USD/JPY --report-dir "$T/rep3"
wait_for "LLM mode: the run ends" 120 ended run3
eq "LLM mode: the run succeeds" "$(cat "$T/run3.rc")" 0
ID3=$(py 'task("USDJPY-market")["assignments"][0]')
eq "LLM mode: USDJPY-market reassigned for the missed deadline, done by research_agent_2" \
	"$(py '[[f["what"], f["reason"]] for f in run["failures"] if f["task_id"] == "USDJPY-market"] + [task("USDJPY-market")["done_by"]]')" \
	'[["reassigned", "research_agent_1 missed the deadline (5 s)"], "research_agent_2"]'
r1_stopped() { grep -q "\"$ID3 cancelled by product_manager while in progress: stopped before its next model call\"" \
	"$LOG_DIR"/agents/research_agent_1/decisions/*.jsonl; }
wait_for "LLM mode: research_agent_1 stops the task before its next model call" 60 r1_stopped
eq "LLM mode: research_agent_1 made one model call for it, not two" \
	"$(grep -c "Task $ID3:" "$QLOG")" 1
eq "LLM mode: research_agent_1's state: the task is cancelled, no result" \
	"$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["tasks"][sys.argv[2]]; print(t["status"], "result" in t)' \
	"$D/state/research_agent_1-state.json" "$ID3")" "cancelled False"
eq "LLM mode: no result from research_agent_1 reached the product_manager" \
	"$(py 'len([d for d in dec if d["event"] in ("late_result", "duplicate_result")])')" 0

errs=$(cat "$T"/*.err | grep -E 'Sanitizer|runtime error' | head -5)
eq "no process reported a sanitizer error" "$errs" ""
done_testing
