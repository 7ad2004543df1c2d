# Capacity is backpressure, never failure: more tasks than the researchers
# can hold wait with the product_manager (queued) and all get done, one
# attempt each; a rejection for capacity puts a task back in the queue
# without spending an attempt; the window of a role is the sum of its live
# processes' advertised capacity; a pair the data cannot price fails once,
# with its reason, and is named in the report.
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
SRC="--market csv:$FX --news jsonl:$NEWS"
EIGHT=USD/JPY,GBP/USD,AUD/USD,NZD/USD,USD/CHF,USD/CAD,USD/SGD,USD/HKD
TAGS=""

# start TAG CMD...: CMD in the background, its pid in $T/TAG.pid, its exit
# status in $T/TAG.rc, stderr in $T/TAG.err (as test_agents.sh).
start() {
	tag=$1; shift
	TAGS="$TAGS $tag"
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

# py FILE... -- EXPR: EXPR in Python over s (the product_manager's state in
# $D), run (its one run), dec (its decisions log lines), printed.
py() {
	python3 -c 'import glob, json, sys
d, l = sys.argv[1], sys.argv[2]
s = json.load(open(d + "/state/product_manager-state.json"))
runs = list(s["runs"].values())
run = runs[0] if len(runs) == 1 else None
dec = [json.loads(x) for f in sorted(glob.glob(l + "/agents/product_manager/decisions/*.jsonl"))
       for x in open(f) if x.strip()]
r = eval(sys.argv[3])
print(r if isinstance(r, str) else json.dumps(r))' "$D" "$LOG_DIR" "$1" 2>&1
}
use_dir() {
	D=$T/$1/data LOG_DIR=$T/$1/logs
	export MADF_DATA_DIR=$D LOG_DIR
	mkdir -p "$T/$1"
}

check "the FRED CSV is there" test -s "$FX"
check "the Reuters JSONL is there" test -s "$NEWS"

# --- 1. 8 pairs, capacity 2: 16 tasks through windows of 2 --------------------------
use_dir c1
out=$(MADF_AGENT_CAPACITY=2 $MADF run weekly --as-of 1987-03-27 --pairs $EIGHT $SRC \
	--report-dir "$T/c1/rep" 2>"$T/c1.err"); rc=$?
eq "capacity 2, 8 pairs: the run exits 0" "$rc" 0
eq "16 tasks, all done" "$(py '[len(run["tasks"]), sorted(set(t["status"] for t in run["tasks"]))]')" \
	'[16, ["done"]]'
eq "every task took one attempt" "$(py 'sorted(set(t["attempts"] for t in run["tasks"]))')" '[1]'
eq "no failure and no reassignment" "$(py 'run["failures"]')" '[]'
eq "tasks waited queued with the product_manager (12 at the start)" \
	"$(py '[d["queued"] for d in dec if d["event"] == "dispatch"][0]')" 12
eq "the window was 2 per researcher" \
	"$(py 'sorted(set(d[r]["window"] for d in dec if d["event"] == "dispatch" for r in ("research_agent_1", "research_agent_2")))')" \
	'[2]'
eq "never more than 2 tasks in flight per researcher" \
	"$(py 'max(d[r]["in_flight"] for d in dec if d["event"] == "dispatch" for r in ("research_agent_1", "research_agent_2"))')" 2
eq "nothing rejected for capacity" \
	"$(cat "$LOG_DIR"/agents/research_agent_*/decisions/*.jsonl | grep -c '"task_rejected"')" 0
check "every pair has its figures" python3 tests/integration/report_check.py \
	"$T/c1/rep/1987-W13-asia-g10-fx.json" all_pairs_have_figures $EIGHT
eq "the state says nothing waits any more" "$(py 's["dispatch"]["queued"]')" 0
has "the progress lines count the queued tasks" "$(cat "$T/c1.err")" "queued"
eq "the researchers keep their done tasks compact (no window, pair or deadline)" \
	"$(python3 -c 'import json, sys
ts = [t for f in sys.argv[1:] for t in json.load(open(f))["tasks"].values()]
print(len(ts), all(t["status"] == "done" and t.get("result") and not {"window", "pair", "deadline_ns"} & set(t) for t in ts))' \
	"$D/state/research_agent_1-state.json" "$D/state/research_agent_2-state.json")" "16 True"

# --- 2. USD/DEM in 1987: no data, a permanent error -------------------------------------
use_dir c2
out=$($MADF run weekly --as-of 1987-03-27 --pairs USD/JPY,USD/DEM $SRC \
	--report-dir "$T/c2/rep" 2>"$T/c2.err"); rc=$?
eq "USD/DEM: the run exits 1 (a task failed, for missing data)" "$rc" 1
has "... and says which on stderr" "$(cat "$T/c2.err")" "USDDEM-market"
REASON="no data for USD/DEM in fred-daily-1971-2017.csv between 1987-03-20 and 1987-03-27"
eq "USDDEM-market failed after one attempt" \
	"$(py '[(t["status"], t["attempts"]) for t in run["tasks"] if t["task_id"] == "USDDEM-market"]')" \
	'[["failed", 1]]'
eq "one failure, with the reason, from research_agent_1, not reassigned" \
	"$(py '[(f["task_id"], f["what"], f["from"], f["reason"]) for f in run["failures"]]')" \
	"[[\"USDDEM-market\", \"failed\", \"research_agent_1\", \"$REASON\"]]"
eq "the other tasks are done" \
	"$(py 'sorted(t["task_id"] for t in run["tasks"] if t["status"] == "done")')" \
	'["USDDEM-news", "USDJPY-market", "USDJPY-news"]'
MD=$(cat "$T/c2/rep/1987-W13-asia-g10-fx.md")
has "the report's failures table names the task and the reason" "$MD" \
	"| USDDEM-market | market | USD/DEM | failed | research_agent_1 | $REASON |"
check "USD/JPY still has its figures" python3 tests/integration/report_check.py \
	"$T/c2/rep/1987-W13-asia-g10-fx.json" all_pairs_have_figures USD/JPY
# The done run's bulk left the state file (written at every step) for its
# archive; the state keeps its tasks and failures, the archive has it all.
RID=$(py 'run["run_id"]')
eq "the done run in the state names its archive and has no findings" \
	"$(py '[run["archived"], "findings" in run, "messages" in run, len(run["tasks"])]')" \
	"[\"state/runs/$RID.json\", false, false, 4]"
eq "the index keeps no message of the done run" \
	"$(py 'sum(1 for v in s.get("index", {}).values() if v["run"] == run["run_id"])')" 0
eq "the archive has the whole run: its findings and USD/JPY's figures" \
	"$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["status"], len(r["findings"]) > 0, r["market"]["USD/JPY"]["end"]["close"])' "$D/state/runs/$RID.json")" \
	"done True 147.72"
out2=$($MADF run weekly --as-of 1987-03-27 --pairs USD/JPY,USD/DEM $SRC \
	--report-dir "$T/c2/rep" 2>/dev/null)
eq "the same request again answers with the report, from the archive" \
	"$(echo "$out2" | tail -1)" "$T/c2/rep/1987-W13-asia-g10-fx.md"
check "the researcher logged it as no data, not as its own error" \
	grep -q '"event":"task_no_data"' "$LOG_DIR"/agents/research_agent_1/decisions/*.jsonl
eq "the learning system does not count it against research_agent_1" \
	"$(cat "$LOG_DIR"/agents/research_agent_1/errors/*.jsonl 2>/dev/null | grep -c 'no data for')" 0

# --- 3. a rejection for capacity is backpressure: no attempt spent ---------------------------
# research_agent_1 is slow (answers a second after each deadline) and holds
# 1 task, but the product_manager's window for it is 2: it counts a second
# research_agent_1 process, killed without a word after its heartbeat, until
# that heartbeat is stale (20 s). So research_agent_1 gets a second market
# task while it holds its first, before any deadline, and rejects it for
# capacity. (At a deadline the late researcher is told to drop its task,
# which frees its capacity at once: a missed deadline alone makes no
# rejection.)
use_dir c3
start k3 env MADF_AGENT_CAPACITY=1 $MADF agent research_agent_1 $SRC
hb_sent() { $MADF ls inbox product_manager --json | python3 -c 'import json, sys
sys.exit(not any(m["from"] == "research_agent_1" and m["type"] == "heartbeat" for m in json.load(sys.stdin)))'; }
wait_for "a second research_agent_1 process sent its heartbeat" 30 hb_sent
kill -KILL "$(pid_of k3)"
wait_for "... and is killed" 10 ended k3
out=$(MADF_AGENT_CAPACITY=1 $MADF run weekly --as-of 1987-03-27 --pairs USD/JPY,GBP/USD,USD/CHF $SRC \
	--report-dir "$T/c3/rep" --inject-fault research_agent_1:slow --task-timeout 3 \
	2>"$T/c3.err"); rc=$?
eq "slow research_agent_1, capacity 1: the run exits 0" "$rc" 0
eq "every task done" "$(py 'sorted(set(t["status"] for t in run["tasks"]))')" '["done"]'
n=$(py 'sum(t.get("requeued", 0) for t in run["tasks"])')
[ "$n" -ge 1 ] 2>/dev/null && ok "rejections for capacity put tasks back in the queue ($n)" ||
	fail "rejections for capacity put tasks back in the queue" "requeued: $n"
eq "each requeue is in the decisions log" "$(py 'len([d for d in dec if d["event"] == "requeued"])')" "$n"
eq "the window of research_agent_1 counted the killed process: 2, from 2 processes" \
	"$(py "max((d['research_agent_1']['window'], d['research_agent_1']['processes']) for d in dec if d['event'] == 'dispatch')")" \
	'[2, 2]'
eq "every requeue was research_agent_1's rejection at its capacity of 1" \
	"$(py 'sorted(set(d["message"].split(": ", 1)[1] for d in dec if d["event"] == "requeued"))')" \
	'["rejected by research_agent_1: at capacity: 1 tasks queued (capacity 1)"]'
eq "a rejection for capacity is never a failure or a reassignment" \
	"$(py '[f for f in run["failures"] if "capacity" in f["reason"]]')" '[]'
eq "attempts count only deadlines missed, not rejections" \
	"$(py 'all(t["attempts"] == 1 + sum(1 for f in run["failures"] if f["task_id"] == t["task_id"]) for t in run["tasks"])')" \
	true

# --- 4. two `madf agent research_agent_1` processes: the window is the sum ----------------------
use_dir c4
start a1 env MADF_AGENT_CAPACITY=3 $MADF agent research_agent_1 $SRC
start a2 env MADF_AGENT_CAPACITY=3 $MADF agent research_agent_1 $SRC
wait_for "research_agent_1 process A starts" 30 running a1
wait_for "research_agent_1 process B starts" 30 running a2
out=$(MADF_AGENT_CAPACITY=1 $MADF run weekly --as-of 1987-03-27 --pairs $EIGHT $SRC \
	--report-dir "$T/c4/rep" 2>"$T/c4.err"); rc=$?
eq "with two more research_agent_1 processes the run exits 0" "$rc" 0
W="[(d['research_agent_1']['window'], d['research_agent_1']['processes']) for d in dec if d['event'] == 'dispatch']"
eq "the window of research_agent_1 was 1 + 3 + 3 = 7, from 3 live processes" \
	"$(py "max($W)")" '[7, 3]'
eq "research_agent_2 kept its window of 1 (1 process)" \
	"$(py "max((d['research_agent_2']['window'], d['research_agent_2']['processes']) for d in dec if d['event'] == 'dispatch' and d['research_agent_2']['processes'])")" '[1, 1]'
eq "more than one market task was in flight at once" \
	"$(py "max(d['research_agent_1']['in_flight'] for d in dec if d['event'] == 'dispatch') > 1")" true
eq "16 tasks, all done, one attempt each" \
	"$(py '[len(run["tasks"]), sorted(set((t["status"], t["attempts"]) for t in run["tasks"]))]')" \
	'[16, [["done", 1]]]'
eq "no failure and no reassignment" "$(py 'run["failures"]')" '[]'
echo "# market tasks by process: $(py 'sorted(__import__("collections").Counter(t["result_message_id"][-16:-8] for t in run["tasks"] if t["kind"] == "market").values())')"
kill -TERM "$(pid_of a1)" "$(pid_of a2)"
both_ended() { ended a1 && ended a2; }
wait_for "both processes exit on SIGTERM" 15 both_ended

# --- 5. the console: a queued task in the Tasks view, the count in the overview ------------------
use_dir c5
mkdir -p "$D/state"
cat >"$D/state/product_manager-state.json" <<'JSON'
{"runs":{"weekly-q":{"run_id":"weekly-q","status":"researching","started_at":"2026-01-01T00:00:00Z",
 "window":{"start":"1987-03-20","end":"1987-03-27"},"sources":{"market":"sim","news":"sim"},
 "tasks":[{"task_id":"USDJPY-market","kind":"market","pair":"USD/JPY","assignee":"research_agent_1",
  "status":"assigned","attempts":1,"deadline_ns":0,"progress":0,"current":"x"},
  {"task_id":"GBPUSD-market","kind":"market","pair":"GBP/USD","assignee":"research_agent_1",
  "status":"queued","attempts":0,"deadline_ns":0,"progress":0,"current":""}]}},
 "dispatch":{"queued":3,"research_agent_1":{"window":1,"processes":1,"in_flight":1,"queued":3}},
 "heartbeat":{"status":"idle","uptime_seconds":1,"active_tasks":0,"current_task":null,"at":"2099-01-01T00:00:00Z"}}
JSON
con() { printf '%s\n' "$1" >"$T/script"; "$MADF" --log-dir "$LOG_DIR" console --attach \
	--script "$T/script" --dump-screen "$T/screen" 2>>"$T/c5.err"; }
con '2
wait-for GBPUSD-market'
row=$(grep 'GBPUSD-market' "$T/screen")
eq "Tasks view: the waiting task is queued, for research_agent_1, 0 attempts" \
	"$(echo "$row" | awk '{ print $4, $5, $7 }')" "research_agent_1 queued 0"
has "Tasks view: its header counts the tasks queued for capacity" \
	"$(grep ' run weekly-q ' "$T/screen")" "2 tasks   1 queued for capacity"
con 'wait-for queued for capacity'
has "overview: the product_manager's row says how many tasks wait" \
	"$(grep '^ *product_manager' "$T/screen")" "3 tasks queued for capacity"

# --- 6. madf bench workflow counts what the runs did with their tasks ---------------------------
use_dir c6
j=$($MADF bench workflow --runs 1 --weeks 1 --json 2>"$T/c6.err"); rc=$?
eq "bench workflow (1 run, 1 week) exits 0" "$rc" 0
# The ten default pairs include EUR/USD, which has no data in 1987; of the
# 50 pairs, 21 have none (the euro-legacy columns, EUR/USD, USD/LKR).
eq "the week: 19 done, 1 failed for missing data, nothing reassigned or requeued" \
	"$(echo "$j" | python3 -c 'import json, sys; w = json.load(sys.stdin)["week"]
print(w["done"], w["failed"], w["failed_no_data"], w["reassigned"], w["requeued"])')" "19 1 1 0 0"
eq "50 pairs: 79 done, 21 failed for missing data, none for capacity" \
	"$(echo "$j" | python3 -c 'import json, sys; w = json.load(sys.stdin)["scale"]
print(w["done"], w["failed"], w["failed_no_data"], w["reassigned"], w["requeued"])')" "79 21 21 0 0"
# A market file with no USD/JPY rows but a malformed line: every fx_rates call
# fails (not "no data"), the tasks are retried and fail: the bench says so.
printf 'Data,Japan\n1987-03-20,abc\n' >"$T/bad.csv"
out=$($MADF bench workflow --runs 1 --weeks 1 --fx "$T/bad.csv" 2>&1); rc=$?
eq "bench workflow exits 1 when a task failed for another reason" "$rc" 1
has "... and says which" "$out" "failed for a reason other than missing data or did not finish (first: USDJPY-market"

errs=$(cat "$T"/*.err | grep -E 'Sanitizer|runtime error' | head -5)
eq "no process reported a sanitizer error" "$errs" ""
done_testing
