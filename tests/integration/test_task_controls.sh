# The product_manager's task controls as an operator finds them: hold then
# release under the sanitizers, the answer to every control (applied,
# refused, no answer, product_manager offline), :assign checked before it
# is sent, the priority prompt and PRIO column, madf runs / madf tasks, and
# the exit status of a run with failed tasks.
. tests/integration/lib.sh
unset NO_COLOR
L=$T/logs
export MADF_LOG_DIR=$L
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
screen() { cat "$T/screen" 2>/dev/null; }
journal() { cat "$D/journal/actions.jsonl" 2>/dev/null; }
PM=$D/state/product_manager-state.json

# --- embedded, research_agent_1 slow: hold, release, a priority, a refused
# retry, then a reassign that lets the run finish. Under ASan a release that
# read the assignee it had freed aborts the console. -------------------------
cat >"$T/script" <<'EOF'
2
wait-for USDJPY-market
o
wait-for hold USDJPY-market: applied
u
wait-for release USDJPY-market: applied
p
wait-for u)rgent h)igh n)ormal l)ow
<Esc>
wait-for priority: cancelled
p
wait-for u)rgent h)igh n)ormal l)ow
l
wait-for priority USDJPY-market: applied
t
wait-for retry USDJPY-market: refused: the task is a
r
wait-for reassign USDJPY-market: applied
wait-for status done
EOF
MADF_SCRIPT_TIMEOUT=240 "$MADF" --log-dir "$L" console --inject-fault research_agent_1:slow \
	--task-timeout 30 --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
rc=$?
eq "hold, release, priority, retry, reassign: the console exits 0" "$rc" 0
[ "$rc" -eq 0 ] || fail "... its stderr" "$(cat "$T/err")" "$(grep -A12 Sanitizer "$L/console-stderr.log" 2>/dev/null | head -40)"
hasnt "no sanitizer report" "$(cat "$L/console-stderr.log" 2>/dev/null)" "Sanitizer"
check "the product_manager's state is valid UTF-8 JSON" python3 -c "
import json, sys
json.loads(open(sys.argv[1], 'rb').read().decode('utf-8', errors='strict'))" "$PM"
check "the release gave the task back to research_agent_1" python3 -c "
import json, sys
r = list(json.load(open(sys.argv[1]))['runs'].values())[0]
t = [t for t in r['tasks'] if t['task_id'] == 'USDJPY-market'][0]
rel = [f for f in r['failures'] if f['task_id'] == 'USDJPY-market' and f['what'] == 'released']
assert len(rel) == 1 and rel[0]['from'] == 'research_agent_1' and rel[0]['to'] == 'research_agent_1', rel
assert t['assignee'] == 'research_agent_2' and t['status'] == 'done' and t['attempts'] == 3, t" "$PM"
has "the decision log names the original researcher" \
	"$(cat "$L"/agents/product_manager/decisions/*.jsonl 2>/dev/null)" \
	"release by operator: USDJPY-market from research_agent_1 to research_agent_1"
eq "the run finished with its report" "$(ls "$D"/reports/weekly/*.md 2>/dev/null | wc -l | tr -d ' ')" 1
eq "PRIO shows the chosen priority" "$(screen | awk '$1 == "USDJPY-market" { print $6 }')" low
eq "... and high for the tasks left as they were" "$(screen | awk '$1 == "USDJPY-news" { print $6 }')" high
has "the status line has the answer" "$(screen | tail -1)" \
	"reassign USDJPY-market: applied: reassign by operator: USDJPY-market from research_agent_1 to research_agent_2"
has "the journal has the hold applied" "$(journal)" '"action":"hold","ids":["USDJPY-market"'
has "... with its outcome" "$(journal)" '"result":"applied: hold by operator: USDJPY-market"'
has "the journal has the refused retry and why" "$(journal)" '"action":"retry","ids":["USDJPY-market","operator_'
# assigned or accepted, as research_agent_1's acceptance came or not yet
check "... refused: the task is assigned (or accepted), not failed" sh -c \
	"grep -Eq '\"action\":\"retry\".*\"result\":\"refused: the task is (assigned|accepted)\"' '$D/journal/actions.jsonl'"
eq "Esc on the priority prompt sent nothing (one priority control: asked, answered)" \
	"$(journal | grep -c '"action":"priority"')" 2
check "the answers were taken from the operator inbox" sh -c "[ \$(find '$D/messages/inbox/operator' -name '*.json' 2>/dev/null | wc -l) -eq 0 ]"

# --- madf runs / madf tasks on that data directory ---------------------------
runs=$($MADF runs --json); rc=$?
eq "madf runs --json exits 0" "$rc" 0
check "madf runs --json: the run is done, 20 tasks, none failed, not stuck" python3 -c "
import json, sys
v = json.loads(sys.argv[1])
assert len(v) == 1, v
r = v[0]
assert r['status'] == 'done' and r['tasks'] == 20 and r['done'] == 20 and r['failed'] == 0, r
assert r['stuck'] is False and r['report'].endswith('.md'), r" "$runs"
tasks=$($MADF tasks --json); rc=$?
eq "madf tasks --json exits 0" "$rc" 0
check "madf tasks --json: USDJPY-market low, research_agent_2, 3 attempts" python3 -c "
import json, sys
v = json.loads(sys.argv[1])
t = [t for t in v['tasks'] if t['task_id'] == 'USDJPY-market'][0]
assert (t['priority'], t['assignee'], t['status'], t['attempts']) == ('low', 'research_agent_2', 'done', 3), t
assert len(v['tasks']) == 20" "$tasks"
run_id=$(echo "$runs" | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['run_id'])")
eq "madf tasks RUN names the run" "$($MADF tasks "$run_id" | head -1)" "run $run_id: done"
has "madf tasks shows PRIO" "$($MADF tasks "$run_id" | grep '^USDJPY-market')" " low "
check_fails "madf tasks on an unknown run exits 1" 1 $MADF tasks weekly-nope
check_fails "madf runs with an argument is a usage error" 2 $MADF runs extra
has "madf --help lists runs" "$($MADF --help)" "runs "
eq "madf runs in an empty data directory exits 0" "$($MADF --data-dir "$T/none" runs 2>/dev/null; echo $?)" 0

# --- attach mode after the run: the product_manager has stopped ------------
cat >"$T/script" <<'EOF'
2
wait-for USDJPY-market
r
wait-for reassign USDJPY-market:
EOF
"$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has "offline: said at once" "$(screen | tail -1)" "product_manager is offline (it has stopped): the control waits in its inbox"
has "... and journalled" "$(journal | tail -1)" "product_manager is offline (it has stopped)"

# --- :assign is checked before anything is sent -----------------------------
n0=$(njson "$D/messages/inbox/product_manager")
cat >"$T/script" <<'EOF'
2
wait-for USDJPY-market
:
type assign news XXX/YYY research_agent_1
<Enter>
wait-for assign: refused
EOF
"$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has ":assign of an unknown currency is refused" "$(screen | tail -1)" "assign: refused: pair XXX/YYY: unknown currency XXX"
cat >"$T/script" <<'EOF'
2
wait-for USDJPY-market
:
type assign market USD/JPY validator_agent
<Enter>
wait-for assign: refused
EOF
"$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has ":assign to an agent that is not a researcher is refused" "$(screen | tail -1)" "validator_agent is not a researcher"
has "... journalled" "$(journal | tail -1)" '"action":"assign","ids":[],"result":"refused: validator_agent is not a researcher'
eq "... and nothing was sent" "$(njson "$D/messages/inbox/product_manager")" "$n0"

# --- a product_manager that is alive but does not answer ----------------------
D2=$T/quiet
mkdir -p "$D2/state"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cat >"$D2/state/product_manager-state.json" <<JSON
{"heartbeat":{"status":"idle","uptime_seconds":1,"active_tasks":0,"pid":$$,"at":"$now"},
 "runs":{"weekly-test":{"run_id":"weekly-test","status":"researching","started_at":"2026-01-01T00:00:00Z",
 "tasks":[{"task_id":"USDJPY-market","kind":"market","pair":"USD/JPY","assignee":"research_agent_1",
  "status":"assigned","attempts":1,"deadline_ns":0,"progress":0,"current":"x"}]}}}
JSON
cat >"$T/script" <<'EOF'
2
wait-for USDJPY-market
o
wait-for waiting for its answer
wait-for no answer from product_manager after 5 s
EOF
MADF_SCRIPT_TIMEOUT=60 "$MADF" --data-dir "$D2" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "no answer: the script saw both notices" "$?" 0
has "... the status line says so" "$(screen | tail -1)" "hold USDJPY-market: no answer from product_manager after 5 s"
has "... journalled" "$(tail -1 "$D2/journal/actions.jsonl")" '"result":"no answer from product_manager after 5 s"'
# the health line of the overview flags the run stuck in researching
printf '1\nwait-for run weekly-test\n' >"$T/script"
MADF_RUN_STUCK_S=60 "$MADF" --data-dir "$D2" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has "overview: the run-health line flags a stuck run" "$(screen | sed -n 4p)" "run weekly-test: researching for"
has "... STUCK" "$(screen | sed -n 4p)" "STUCK: over 60s in one phase"
check "madf runs --json: stuck" sh -c "MADF_RUN_STUCK_S=60 '$MADF' --data-dir '$D2' runs --json | grep -q '\"stuck\": true'"

# --- the answer on the bus: a product_manager of its own process refuses
# a reassign to an agent that is not a researcher, applies a hold ---------
D3=$T/pmproc
mkdir -p "$D3/state"
cat >"$D3/state/product_manager-state.json" <<'JSON'
{"runs":{"weekly-test":{"run_id":"weekly-test","status":"researching","started_at":"2026-01-01T00:00:00Z",
 "window":{"start":"1987-03-20","end":"1987-03-27"},"sources":{"market":"sim","news":"sim"},
 "tasks":[{"task_id":"USDJPY-market","kind":"market","pair":"USD/JPY","assignee":"research_agent_1",
  "status":"assigned","attempts":1,"deadline_ns":0,"progress":0,"current":"x"}]}}}
JSON
MADF_DATA_DIR=$D3 "$MADF" --log-dir "$T/pmlogs" agent product_manager 2>"$T/pm.err" &
pmpid=$!
dl=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
ctl() { MADF_DATA_DIR=$D3 $MADF send --from operator --to product_manager --type task_assignment \
	--priority urgent --correlation-id weekly-test --content \
	"{\"task_type\":\"operator_control\",\"focus_area\":\"Asia/G10\",\"target_pairs\":[],\"timeframe\":\"\",\"data_sources\":[],\"deadline\":\"$dl\",\"output_format\":\"none\",\"run_id\":\"weekly-test\",\"task_id\":\"USDJPY-market\",$1}"; }
answer_of() { python3 -c "
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get('reply_to') == sys.argv[2]:
        print(json.dumps(m)); break" "$T/answers" "$1"; }
has_answer() { MADF_DATA_DIR=$D3 $MADF recv operator >>"$T/answers" 2>/dev/null; [ -n "$(answer_of "$1")" ]; }
id1=$(ctl '"action":"reassign","to":"validator_agent"')
wait_for "the product_manager answers the refused reassign" 60 has_answer "$id1"
check "... refused: validator_agent is not a researcher, correlated" python3 -c "
import json, sys
m = json.loads(sys.argv[1])
c = m['content']
assert m['type'] == 'task_acceptance' and m['from'] == 'product_manager' and m['to'] == 'operator', m
assert m['correlation_id'] == 'weekly-test' and c['task_id'] == sys.argv[2], m
assert c['status'] == 'rejected' and c['outcome'] == 'refused', c
assert c['rejection_reason'] == 'validator_agent is not a researcher' == c['detail'], c
assert c['control_action'] == 'reassign' and c['control_task_id'] == 'USDJPY-market', c" "$(answer_of "$id1")" "$id1"
id2=$(ctl '"action":"hold"')
wait_for "the product_manager answers the hold" 60 has_answer "$id2"
check "... applied, and the task is held" python3 -c "
import json, sys
c = json.loads(sys.argv[1])['content']
assert c['status'] == 'accepted' and c['outcome'] == 'applied', c
assert c['detail'] == 'hold by operator: USDJPY-market', c
s = json.load(open(sys.argv[2]))
assert s['runs']['weekly-test']['tasks'][0]['status'] == 'held'" "$(answer_of "$id2")" "$D3/state/product_manager-state.json"
kill "$pmpid"; wait "$pmpid" 2>/dev/null

# --- a run with a failed task (FOO/BAR has no market data) exits 1 ---------
out=$($MADF --data-dir "$T/foo" run weekly --as-of 1987-03-27 --pairs FOO/BAR --market "csv:$FX" \
	--news "jsonl:$NEWS" --report-dir "$T/foorep" 2>"$T/foo.err"); rc=$?
eq "run --pairs FOO/BAR exits 1" "$rc" 1
has "... and names the failed tasks" "$(cat "$T/foo.err")" "finished with 1 of 2 tasks failed: FOOBAR-market (the report names them)"
check "... the report is still written and names them" sh -c "grep -q FOOBAR-market '$T'/foorep/*.md"
done_testing
