# `madf agent NAME` as real processes on one bus: a researcher answers a
# task_assignment with acceptance, progress and a result on real data; its
# capacity (MADF_AGENT_CAPACITY) makes it reject work; two processes of one
# agent share its inbox without doing a task twice; SIGTERM stops an agent
# cleanly; an injected crash is resumed by the next process, once.
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
SRC="--market csv:$FX --news jsonl:$NEWS"
TAGS=""

# start TAG CMD...: runs CMD (which execs madf) in the background: its pid
# in $T/TAG.pid, its exit status in $T/TAG.rc once it ends, stderr in
# $T/TAG.err.
start() {
	tag=$1; shift
	TAGS="$TAGS $tag"
	( sh -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$T/$tag.pid" "$@" \
		>"$T/$tag.out" 2>"$T/$tag.err"
	  echo $? >"$T/$tag.rc" ) &
}
pid_of() { cat "$T/$1.pid" 2>/dev/null; }
running() { [ -s "$T/$1.pid" ] && [ ! -e "$T/$1.rc" ] && grep -q ' running (pid ' "$T/$1.err"; }
alive() { [ ! -e "$T/$1.rc" ] && kill -0 "$(pid_of "$1")" 2>/dev/null; }
ended() { [ -s "$T/$1.rc" ]; }
# On any exit: stop what is still running (TERM, then KILL), then clean up.
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

# use_dir NAME: a fresh data and log directory for one case.
use_dir() {
	C=$T/$1 D=$T/$1/data
	export MADF_DATA_DIR=$D LOG_DIR=$T/$1/logs
	mkdir -p "$C"
	PM=$C/pm.jsonl
	: >"$PM"
}
# pull: what reached product_manager, appended to $PM (madf recv acks it).
pull() { $MADF recv product_manager >>"$PM"; }
# q EXPR: EXPR in Python over msgs (every message pulled so far), printed.
q() {
	python3 -c 'import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def of(t, task=None):
    return [m for m in msgs if m["type"] == t and (task is None or m["content"].get("task_id") == task)]
r = eval(sys.argv[2])
print(r if isinstance(r, str) else json.dumps(r))' "$PM" "$1"
}
# pm_has EXPR: pulls, then succeeds when EXPR is true.
pm_has() { pull && [ "$(q "$1")" = true ]; }
# sj FILE EXPR: EXPR in Python over s, the JSON in FILE, printed.
sj() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
r = eval(sys.argv[2])
print(r if isinstance(r, str) else json.dumps(r))' "$1" "$2" 2>&1
}
# iso_in S: the UTC time S seconds from now, ISO 8601.
iso_in() {
	python3 -c 'import datetime, sys
t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=float(sys.argv[1]))
print(t.strftime("%Y-%m-%dT%H:%M:%SZ"))' "$1"
}
# assign AGENT TASK_TYPE PAIR DEADLINE: sends a task_assignment from
# product_manager for the week 1987-03-20..27; prints its message_id.
assign() {
	$MADF send --to "$1" --type task_assignment --from product_manager --content \
		"{\"task_type\":\"$2\",\"focus_area\":\"Asia/G10\",\"target_pairs\":[\"$3\"],
		  \"timeframe\":\"1987-03-20/1987-03-27\",\"data_sources\":[\"csv\"],
		  \"deadline\":\"$4\",\"output_format\":\"structured_json\",
		  \"window\":{\"start\":\"1987-03-20\",\"end\":\"1987-03-27\"}}"
}
is_id() { case "$2" in product_manager_*) ok "$1" ;; *) fail "$1" "printed: $2" ;; esac; }
nfiles() { ls -A "$1" 2>/dev/null | wc -l | tr -d ' '; }
# stopped TAG AGENT: after SIGTERM, the process exits 0 within a few
# seconds, holds no claim, and its state says it stopped.
stopped() {
	wait_for "$1: exits within 10 s of SIGTERM" 10 ended "$1"
	eq "$1: exit status 0 after SIGTERM" "$(cat "$T/$1.rc" 2>/dev/null)" 0
	eq "$1: nothing left in processing/$2/" "$(nfiles "$D/messages/processing/$2")" 0
	eq "$1: the state file records heartbeat status stopping" \
		"$(sj "$D/state/$2-state.json" 's["heartbeat"]["status"]')" stopping
}

check "the FRED CSV is there" test -s "$FX"
check "the Reuters JSONL is there" test -s "$NEWS"

# --- 1. one researcher answers a market_data task on real data --------------------
use_dir c1
start c1 $MADF agent research_agent_1 $SRC
wait_for "research_agent_1 starts" 20 running c1
id=$(assign research_agent_1 market_data USD/JPY "$(iso_in 3600)")
is_id "madf send prints the assignment's message_id" "$id"
wait_for "a research_result for it reaches product_manager" 30 \
	pm_has "len(of('research_result', '$id')) == 1"
acc=$(q "','.join(m['content']['status'] for m in of('task_acceptance', '$id'))")
case "$acc" in queued|accepted) ok "one task_acceptance, status $acc" ;;
	*) fail "one task_acceptance, status queued or accepted" "statuses: $acc" ;; esac
eq "the acceptance replies to the assignment" \
	"$(q "[m.get('reply_to') for m in of('task_acceptance', '$id')]")" "[\"$id\"]"
eq "task_progress messages name the task" \
	"$(q "len(of('task_progress', '$id')) >= 1 and len(of('task_progress', '$id')) == len(of('task_progress'))")" true
R="of('research_result', '$id')[0]['content']"
eq "the result is completed" "$(q "$R['status']")" completed
eq "stats.start.close is the CSV's 151.70 (1987-03-20)" "$(q "$R['raw_data']['stats']['start']['close']")" 151.7
eq "stats.start.date" "$(q "$R['raw_data']['stats']['start']['date']")" 1987-03-20
eq "stats.end.close is the CSV's 147.72 (1987-03-27)" "$(q "$R['raw_data']['stats']['end']['close']")" 147.72
eq "stats.end.date" "$(q "$R['raw_data']['stats']['end']['date']")" 1987-03-27
eq "stats are of USD/JPY, not simulated" "$(q "[$R['raw_data']['stats']['pair'], $R['raw_data']['stats']['simulated']]")" '["USD/JPY", false]'
wait_for "a heartbeat from research_agent_1 reaches product_manager" 20 \
	pm_has "any(m['from'] == 'research_agent_1' for m in of('heartbeat'))"
wait_for "a system_status from research_agent_1 reaches product_manager" 20 \
	pm_has "any(m['from'] == 'research_agent_1' for m in of('system_status'))"
eq "the heartbeat carries the agent's pid" \
	"$(q "[m['content']['pid'] for m in of('heartbeat')][0]")" "$(pid_of c1)"
ST=$D/state/research_agent_1-state.json
check "the state file exists" test -s "$ST"
eq "the state file has a heartbeat of this process" \
	"$(sj "$ST" '[s["heartbeat"]["status"] in ("idle", "busy"), s["heartbeat"]["pid"]]')" "[true, $(pid_of c1)]"
eq "the state file has the task done" "$(sj "$ST" "s['tasks']['$id']['status']")" done
check "research_agent_1 is still running" alive c1

# --- 2. capacity: MADF_AGENT_CAPACITY=1 and a slow agent --------------------------------
use_dir c2
start c2 env MADF_AGENT_CAPACITY=1 $MADF agent research_agent_1 $SRC \
	--inject-fault research_agent_1:slow
wait_for "a slow research_agent_1 with capacity 1 starts" 20 running c2
dl1=$(iso_in 6)
id1=$(assign research_agent_1 market_data USD/JPY "$dl1")
is_id "first assignment sent" "$id1"
wait_for "the first is accepted" 20 pm_has "len(of('task_acceptance', '$id1')) == 1"
eq "the first is queued" "$(q "of('task_acceptance', '$id1')[0]['content']['status']")" queued
hb_is() { [ "$(sj "$D/state/research_agent_1-state.json" "s['heartbeat']['status']" 2>/dev/null)" = "$1" ]; }
wait_for "its only task deferred, the agent's heartbeat says waiting" 10 hb_is waiting
id2=$(assign research_agent_1 market_data GBP/USD "$(iso_in 3600)")
is_id "second assignment sent" "$id2"
wait_for "the second is answered" 20 pm_has "len(of('task_acceptance', '$id2')) == 1"
eq "the second is rejected" "$(q "of('task_acceptance', '$id2')[0]['content']['status']")" rejected
reason=$(q "of('task_acceptance', '$id2')[0]['content'].get('rejection_reason', '')")
has "the rejection_reason names the capacity" "$reason" "capacity 1"
eq "the first is still queued (no result before its deadline)" \
	"$(q "len(of('research_result', '$id1'))")" 0
wait_for "the first is done after its deadline" 30 pm_has "len(of('research_result', '$id1')) == 1"
eq "its result is later than the deadline" "$(q "__import__('datetime').datetime.fromisoformat(of('research_result', '$id1')[0]['timestamp'].replace('Z', '+00:00')) > __import__('datetime').datetime.fromisoformat('$dl1'.replace('Z', '+00:00'))")" true
eq "the rejected task is never worked" "$(q "len(of('research_result', '$id2')) + len(of('task_progress', '$id2'))")" 0
id3=$(assign research_agent_1 market_data USD/CHF "$(iso_in 3600)")
wait_for "with the queue free again, a third is answered" 20 pm_has "len(of('task_acceptance', '$id3')) == 1"
eq "the third is queued" "$(q "of('task_acceptance', '$id3')[0]['content']['status']")" queued

# --- 3. two processes of research_agent_2 share one inbox ---------------------------------
use_dir c3
start c3a $MADF agent research_agent_2 $SRC
start c3b $MADF agent research_agent_2 $SRC
wait_for "research_agent_2 process A starts" 20 running c3a
wait_for "research_agent_2 process B starts" 20 running c3b
dl=$(iso_in 3600)
: >"$C/sent.ids"
for pair in USD/JPY EUR/USD GBP/USD AUD/USD USD/CHF USD/CAD; do
	assign research_agent_2 news_analysis $pair "$dl" >>"$C/sent.ids"
done
eq "6 news_analysis assignments sent" "$(sort -u "$C/sent.ids" | grep -c '^product_manager_')" 6
wait_for "6 research_results come back" 50 pm_has "len(of('research_result')) >= 6"
eq "exactly 6 research_results" "$(q "len(of('research_result'))")" 6
eq "each task answered exactly once" \
	"$(q "sorted(m['content']['task_id'] for m in of('research_result'))" | tr -d '[]", ' )" \
	"$(sort "$C/sent.ids" | tr -d '\n')"
eq "each task accepted exactly once" \
	"$(q "sorted(m['content']['task_id'] for m in of('task_acceptance'))" | tr -d '[]", ' )" \
	"$(sort "$C/sent.ids" | tr -d '\n')"
eq "no error_report" "$(q "len(of('error_report'))")" 0
check "process A is alive" alive c3a
check "process B is alive" alive c3b
eq "the inbox of research_agent_2 is drained" "$(njson "$D/messages/inbox/research_agent_2")" 0
# Which process did what (message ids carry a per-process nonce; heartbeats
# carry the pid): information only, either may win every claim.
pull
pids="{h['message_id'][-16:-8]: h['content']['pid'] for h in of('heartbeat')}"
echo "# research_results by pid: $(q "dict(__import__('collections').Counter(str($pids.get(r['message_id'][-16:-8], '?')) for r in of('research_result')))")"

# --- 4. SIGTERM: every agent process exits 0, cleanly -----------------------------------------
D=$T/c1/data; kill -TERM "$(pid_of c1)"; stopped c1 research_agent_1
D=$T/c2/data; kill -TERM "$(pid_of c2)"; stopped c2 research_agent_1
eq "c2: the queued task stays queued in the state file" \
	"$(sj "$D/state/research_agent_1-state.json" "s['tasks']['$id3']['status']")" queued
D=$T/c3/data; kill -TERM "$(pid_of c3a)" "$(pid_of c3b)"
both_ended() { ended c3a && ended c3b; }
wait_for "c3: both processes of research_agent_2 exit within 10 s" 10 both_ended
stopped c3a research_agent_2
stopped c3b research_agent_2
# The two processes shared one state file: each save merged the other's
# tasks, so it lists all six, each done once.
eq "c3: the shared state file lists all six tasks as done" \
	"$(sj "$D/state/research_agent_2-state.json" "sum(1 for t in s['tasks'].values() if t['status'] == 'done')")" 6

# --- 5. an injected crash, then a new process resumes the task once ------------------------------
use_dir c5
start c5a $MADF agent research_agent_1 $SRC --inject-fault research_agent_1:crash
wait_for "research_agent_1 with the crash fault starts" 20 running c5a
id=$(assign research_agent_1 market_data USD/JPY "$(iso_in 3600)")
is_id "assignment sent" "$id"
wait_for "the process dies" 20 ended c5a
eq "it dies with status 137" "$(cat "$T/c5a.rc")" 137
pull
eq "it sent its task_acceptance first" "$(q "[m['content']['status'] for m in of('task_acceptance', '$id')]")" '["queued"]'
eq "and no result" "$(q "len(of('research_result', '$id'))")" 0
ST=$D/state/research_agent_1-state.json
eq "the state file has the task queued" "$(sj "$ST" "s['tasks']['$id']['status']")" queued
eq "the assignment is still claimed by the dead process" "$(nfiles "$D/messages/processing/research_agent_1")" 1
start c5b $MADF agent research_agent_1 $SRC
wait_for "a new research_agent_1 starts" 20 running c5b
wait_for "the new process works the task" 30 pm_has "len(of('research_result', '$id')) >= 1"
wait_for "the dead process's claim is recovered and handled" 20 \
	sh -c "[ \$(ls -A '$D/messages/processing/research_agent_1' '$D/messages/inbox/research_agent_1' | grep -c json) -eq 0 ]"
check "the redelivered assignment is recognised as seen" \
	grep -rq '"event":"duplicate_task"' "$LOG_DIR/agents/research_agent_1/decisions"
kill -TERM "$(pid_of c5b)"
stopped c5b research_agent_1
pull
eq "exactly one research_result for the task" "$(q "len(of('research_result', '$id'))")" 1
eq "exactly one research_result in all" "$(q "len(of('research_result'))")" 1
eq "exactly one task_acceptance (not accepted again)" "$(q "len(of('task_acceptance'))")" 1
eq "the state file has the task done" "$(sj "$ST" "s['tasks']['$id']['status']")" done

# --- no sanitizer or runtime error from any agent process ---------------------------------------
errs=$(cat "$T"/*.err | grep -E 'Sanitizer|runtime error' | head -5)
eq "no agent process reported an error" "$errs" ""
done_testing
