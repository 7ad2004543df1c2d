# madf and a peer written from seed 002 (tests/integration/seed_peer.py: the
# seed's BaseMessage, content models, MessageFactory and MessageHandler on
# pydantic 1.10 and aiofiles) on one bus, every message type both ways:
# 1. the peer sends the 9 types; madf validate and madf recv accept them,
#    normalised (from/to, timestamp with Z, the assumed_utc notes), no dead
#    letters;
# 2. madf send sends the 9 types; the peer's MessageHandler parses each, and
#    the seed's content model of the type parses its content;
# 3. a madf agent (research_agent_1) does a task the peer assigned with the
#    seed's factory; the peer parses its replies.
. tests/integration/lib.sh
# Debian's python, where python3-pydantic and python3-aiofiles install (the
# python3 on PATH may be another one).
PY=${SEED_PEER_PYTHON:-/usr/bin/python3}
PEER="$PY tests/integration/seed_peer.py"
M=$D/messages
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
TYPES="task_assignment task_acceptance task_progress research_result validation_request validation_result error_report heartbeat system_status"

# jq_ FILE EXPR [ARG]: EXPR in Python over ms, the JSON lines of FILE
# (ARG is sys.argv[3]), printed; an error is printed naming FILE, so that
# two failing queries over different files never compare equal.
jq_() {
	python3 -c 'import json, sys
ms = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def of(t): return [m for m in ms if m["type"] == t]
try:
    r = eval(sys.argv[2])
except Exception as e:
    r = "query failed over %s: %r" % (sys.argv[1], e)
print(r if isinstance(r, str) else json.dumps(r))' "$@" 2>&1
}

if ! out=$($PY -c 'import pydantic, aiofiles; print(pydantic.VERSION)' 2>&1); then
	fail "pydantic and aiofiles import in $PY (make deps installs python3-pydantic and python3-aiofiles)" "$out"
	done_testing
	exit 1
fi
case "$out" in 1.10.*) ok "$PY has pydantic $out" ;;
	*) fail "$PY has pydantic 1.10 (the seed's API)" "found $out" ;; esac

# --- 1. the peer sends every type; madf accepts and normalises ---------------
$PEER send "$M" >"$T/sent.jsonl" 2>"$T/peer.err"
eq "the peer sent the 9 types" "$(jq_ "$T/sent.jsonl" '" ".join(m["type"] for m in ms)')" "$TYPES"
F=$M/inbox/$(jq_ "$T/sent.jsonl" 'of("task_assignment")[0]["file"]')
eq "the peer's file is the seed's message.json(): from_agent, to_agent, reply_to and timeout null, a naive timestamp" \
	"$(python3 -c 'import json, sys, re
m = json.load(open(sys.argv[1]))
print([sorted(m), m["reply_to"], m["timeout"], bool(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", m["timestamp"]))])' "$F")" \
	"[['content', 'from_agent', 'message_id', 'priority', 'reply_to', 'timeout', 'timestamp', 'to_agent', 'type'], None, None, True]"
files=$(python3 -c 'import json, sys
print(" ".join(sys.argv[2] + "/inbox/" + json.loads(l)["file"] for l in open(sys.argv[1])))' "$T/sent.jsonl" "$M")
# shellcheck disable=SC2086
vout=$($MADF validate $files 2>&1); vrc=$?
eq "madf validate accepts all 9 (exit 0)" "$vrc" 0
eq "madf validate says ok for each" "$(echo "$vout" | grep -c ': ok (')" 9
for a in research_agent_1 validator_agent product_manager; do
	$MADF recv "$a" >>"$T/got.jsonl" 2>>"$T/recv.err"
done
eq "madf recv delivered 9 messages" "$(grep -c . "$T/got.jsonl")" 9
eq "no dead letters" "$(njson "$M/dead-letter")" 0
eq "nothing dead-lettered, per recv's stderr" "$(cat "$T/recv.err")" ""
# Per type: from, to and id as sent, the timestamp with a Z (the peer's
# UTC), the notes: timestamp_assumed_utc and one per naive content time.
for t in $TYPES; do
	want=$(jq_ "$T/sent.jsonl" '(lambda s: [s["message_id"], s["from"], s["to"], s["timestamp"] + "Z"])(of(sys.argv[3])[0])' "$t")
	got=$(jq_ "$T/got.jsonl" '(lambda g: [g["message_id"], g["from"], g["to"], g["timestamp"]])(of(sys.argv[3])[0])' "$t")
	eq "$t from the peer: id, from, to, timestamp+Z" "$got" "$want"
	case $t in
	task_assignment|validation_request) notes='["timestamp_assumed_utc", "content.deadline_assumed_utc"]' ;;
	task_acceptance|task_progress) notes='["timestamp_assumed_utc", "content.estimated_completion_assumed_utc"]' ;;
	system_status) notes='["timestamp_assumed_utc", "content.last_successful_operation_assumed_utc"]' ;;
	*) notes='["timestamp_assumed_utc"]' ;;
	esac
	eq "$t from the peer: notes" "$(jq_ "$T/got.jsonl" 'of(sys.argv[3])[0].get("notes")' "$t")" "$notes"
done
eq "task_assignment's deadline normalised with a Z, special_instructions null kept" \
	"$(jq_ "$T/got.jsonl" '(lambda c: [c["deadline"].endswith("Z"), c["special_instructions"]])(of("task_assignment")[0]["content"])')" \
	"[true, null]"
eq "the canonical messages carry neither from_agent nor reply_to/timeout nulls" \
	"$(jq_ "$T/got.jsonl" 'sorted(set(k for m in ms for k in m))')" \
	'["content", "from", "message_id", "notes", "priority", "timestamp", "to", "type"]'

# --- 2. madf sends every type; the peer's MessageHandler parses each ---------
use_send() { $MADF send --to research_agent_2 "$@"; }
ids=""
id=$(use_send --from product_manager --type task_assignment --priority high --timeout 3600 \
	--reply-to parent_1 --correlation-id run_1 --content '{"task_type":"forex_research",
	"focus_area":"Asia/G10","target_pairs":["USD/JPY"],"timeframe":"this_week",
	"data_sources":["csv"],"deadline":"2024-12-20T17:00:00Z","output_format":"structured_json"}')
ids="$ids $id"
id=$(use_send --from research_agent_1 --type task_acceptance --content '{"task_id":"t1",
	"status":"queued","estimated_completion":"2024-12-20T16:30:00+09:00","agent_capacity":0.5}')
ids="$ids $id"
id=$(use_send --from research_agent_1 --type task_progress --content '{"task_id":"t1",
	"percent_complete":50,"current_step":"loading data","items_done":5,"items_total":10}')
ids="$ids $id"
id=$(use_send --from research_agent_1 --type research_result --content '{"task_id":"t1",
	"status":"partial","execution_time_minutes":1.5,"data_points_collected":3,
	"sources_accessed":["csv"],"key_findings":["USD/JPY fell"],"raw_data":{"k":[1,2]},
	"confidence_score":0.5,"data_freshness_hours":0,"warnings":["w"]}')
ids="$ids $id"
id=$(use_send --from product_manager --type validation_request --content '{
	"research_results_to_validate":["r1"],"validation_type":"timing_check",
	"validation_sources":["reuters"],"priority_areas":["USD/JPY"],"deadline":"2024-12-20T18:00:00Z"}')
ids="$ids $id"
id=$(use_send --from validator_agent --type validation_result --content '{"validation_id":"v1",
	"research_results_validated":["r1"],"overall_confidence":0.9,"issues_found":[{
	"issue_type":"conflict","severity":"high","description":"d","affected_data":{"a":1},
	"recommendation":"r","confidence":0.7}],"validated_findings":["f"],
	"execution_time_minutes":2,"sources_consulted":["reuters"]}')
ids="$ids $id"
id=$(use_send --from validator_agent --type error_report --content '{"error_type":"timeout",
	"error_message":"slow","context":{},"impact_level":"critical","related_task_id":"t1"}')
ids="$ids $id"
id=$(use_send --from research_agent_1 --type heartbeat --content '{"status":"idle",
	"uptime_seconds":3,"active_tasks":0,"pid":42,"sequence":1}')
ids="$ids $id"
id=$(use_send --from validator_agent --type system_status --content '{"agent_status":"degraded",
	"cpu_usage_percent":50,"memory_usage_mb":100,"active_tasks":1,"completed_tasks_today":2,
	"error_count_today":1,"last_successful_operation":"2024-12-20T15:00:00Z",
	"performance_metrics":{"latency_ms":5}}')
ids="$ids $id"
eq "madf send printed 9 ids" "$(echo $ids | wc -w | tr -d ' ')" 9
$PEER recv "$M" research_agent_2 >"$T/peer.jsonl" 2>"$T/peer.err"
eq "the peer's handler failed on nothing" "$(grep -c '^Failed to process' "$T/peer.jsonl")" 0
eq "the peer parsed 9 messages" "$(grep -c '^{' "$T/peer.jsonl")" 9
eq "the peer moved 9 to its processed/, none to failed/" \
	"$(njson "$M/processed") $(njson "$M/failed")" "9 0"
set -- $ids
for t in $TYPES; do
	case $t in
	task_assignment|validation_request) from=product_manager ;;
	validation_result|error_report|system_status) from=validator_agent ;;
	*) from=research_agent_1 ;;
	esac
	case $t in
	task_progress|heartbeat) model=None ;; # no model in the seed
	*) model="'$(python3 -c 'import sys; print("".join(w.title() for w in sys.argv[1].split("_")) + "Content")' "$t")'" ;;
	esac
	eq "$t from madf: the peer's BaseMessage has its id, from, to, a UTC timestamp" \
		"$(jq_ "$T/peer.jsonl" '(lambda m: [m["message_id"], m["from"], m["to"], m["utc"]])(of(sys.argv[3])[0])' "$t")" \
		"[\"$1\", \"$from\", \"research_agent_2\", true]"
	eq "$t from madf: the seed's content model ($model) parses the content" \
		"$(jq_ "$T/peer.jsonl" '(lambda m: str([m["model"], m["content_ok"], m.get("content_error")]))(of(sys.argv[3])[0])' "$t")" \
		"[$model, True, None]"
	shift
done
eq "priority, timeout and reply_to reach the peer" \
	"$(jq_ "$T/peer.jsonl" '(lambda m: [m["priority"], m["timeout"], m["reply_to"]])(of("task_assignment")[0])')" \
	'["high", 3600, "parent_1"]'

# --- 3. a madf agent does the peer's task; the peer parses its replies -------
export MADF_DATA_DIR=$T/c3/data LOG_DIR=$T/c3/logs
M=$T/c3/data/messages
A_PID=
trap 'if [ -n "$A_PID" ]; then kill -TERM "$A_PID" 2>/dev/null; wait "$A_PID"; fi; cleanup' EXIT
$MADF agent research_agent_1 --market "csv:$FX" --news "jsonl:$NEWS" >"$T/agent.out" 2>"$T/agent.err" &
A_PID=$!
wait_for "madf agent research_agent_1 starts" 30 grep -q ' running (pid ' "$T/agent.err"
task=$($PEER assign "$M" 1987-03-20 1987-03-27 2>"$T/peer.err")
case "$task" in product_manager_*) ok "the peer assigned a task with the seed's create_task_assignment" ;;
	*) fail "the peer assigned a task" "printed: $task" "$(cat "$T/peer.err")" ;; esac
: >"$T/pm.jsonl"
# pm_has EXPR: the peer (as product_manager) receives, then EXPR holds.
pm_has() {
	$PEER recv "$M" product_manager >>"$T/pm.jsonl" 2>>"$T/peer.err" &&
		[ "$(jq_ "$T/pm.jsonl" "$1")" = true ]
}
wait_for "the agent's research_result reaches the peer, parsed" 60 \
	pm_has "any(m['task_id'] == '$task' for m in of('research_result'))"
eq "the peer's handler failed on nothing from the agent" "$(grep -c '^Failed to process' "$T/pm.jsonl")" 0
eq "the agent accepted the task: a task_acceptance from research_agent_1, parsed by TaskAcceptanceContent" \
	"$(jq_ "$T/pm.jsonl" '[[m["from"], m["reply_to"], m["model"], m["content_ok"]] for m in of("task_acceptance")]')" \
	"[[\"research_agent_1\", \"$task\", \"TaskAcceptanceContent\", true]]"
eq "its research_result parses as ResearchResultContent" \
	"$(jq_ "$T/pm.jsonl" '[[m["from"], m["task_id"], m["model"], m["content_ok"]] for m in of("research_result")]')" \
	"[[\"research_agent_1\", \"$task\", \"ResearchResultContent\", true]]"
eq "task_progress from the agent parses" \
	"$(jq_ "$T/pm.jsonl" 'len(of("task_progress")) >= 1 and all(m["utc"] for m in ms)')" true
eq "the agent dead-lettered nothing" "$(njson "$M/dead-letter")" 0
kill -TERM "$A_PID"
wait "$A_PID"
eq "the agent exits 0 on SIGTERM" "$?" 0
A_PID=
done_testing
