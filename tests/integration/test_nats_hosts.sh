# Runs across hosts: every agent a `madf agent NAME` process with a data
# and log directory of its own (standing for a host of its own), sharing
# only the NATS URL; `madf run weekly --attach` from a sixth directory
# starts the run on the real week ending 1987-03-27, follows its progress
# and writes the final report there, from the message that carried it.
# Its figures equal those of a file-bus run of the same week.
. tests/integration/lib.sh
. tests/integration/nats.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
SRC="--market csv:$FX --news jsonl:$NEWS --task-timeout 300"
# the pairs the CSV has in 1987 (no euro yet)
PAIRS=USD/JPY,GBP/USD,AUD/USD,NZD/USD,USD/CHF,USD/CAD,USD/SGD,USD/HKD
AGENTS="product_manager research_agent_1 research_agent_2 validator_agent report_writer"
check "the FRED CSV is there" test -s "$FX"
check "the Reuters JSONL is there" test -s "$NEWS"

# --- the reference: the same week on the file bus, every agent embedded ------------
mkdir -p "$T/ref"
ref=$(cd "$T/ref" && MADF_BUS=file: MADF_DATA_DIR=$T/ref/data LOG_DIR=$T/ref/logs \
	$MADF run weekly --as-of 1987-03-27 --pairs $PAIRS $SRC 2>"$T/ref.err")
eq "file bus: run weekly succeeds" "$?" 0
check "file bus: its report is written" test -s "$ref"

# --- five hosts on one NATS ---------------------------------------------------------
nats_start
export MADF_BUS=$NATS_URL
pids=
for a in $AGENTS; do
	mkdir -p "$T/h-$a"
	(cd "$T/h-$a" && MADF_DATA_DIR=$T/h-$a/data LOG_DIR=$T/h-$a/logs \
		exec $MADF agent "$a" $SRC) >"$T/h-$a.out" 2>"$T/h-$a.err" &
	pids="$pids $!"
done
trap 'for _p in $pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
for a in $AGENTS; do
	wait_for "host of $a: the agent runs" 60 grep -q " running (pid " "$T/h-$a.err"
done

# --- the operator's host: no agent, only the request ----------------------------------
mkdir -p "$T/op"
rep=$(cd "$T/op" && MADF_DATA_DIR=$T/op/data LOG_DIR=$T/op/logs \
	$MADF run weekly --attach --as-of 1987-03-27 --pairs $PAIRS $SRC 2>"$T/op.err")
rc=$?
eq "run weekly --attach succeeds" "$rc" 0
[ "$rc" -eq 0 ] || cat "$T/op.err" "$T"/h-*.err | tail -40 | sed 's/^/# /'
eq "it writes the report on the operator's host" "$(dirname "$rep")" "$T/op/data/reports/weekly"
check "... the Markdown" test -s "$rep"
check "... and its JSON twin" test -s "${rep%.md}.json"
has "it follows the run's progress to the end" "$(cat "$T/op.err")" "done: 16/16 tasks done, 0 failed"
has "... through every phase on the way" "$(cat "$T/op.err")" "researching: "
eq "the report has the reference's name" "$(basename "$rep")" "$(basename "$ref")"
check "the report writer's host has its own copy" test -s "$T/h-report_writer/data/reports/weekly/$(basename "$ref")"
check "no agent ran on the operator's host (no agent state there)" test ! -e "$T/op/data/state/product_manager-state.json"

# the figures: the window, every pair's numbers and the findings in the JSON
# twin, and the Markdown's table of figures, equal the file-bus run's (message
# ids and times aside)
figures() {
	python3 - "$1" <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()
                if k not in ("message_id", "run_id", "timestamp", "messages")
                and not k.endswith("_at")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
out = {k: strip(r.get(k)) for k in ("window", "pairs", "findings", "complete")}
# findings come in the order the results arrived: compared by id
out["findings"] = sorted(out["findings"] or [], key=lambda f: f.get("id", ""))
print(json.dumps(out, sort_keys=True))
EOP
}
# the Markdown's table of figures (one row per pair)
table() { sed -n '/^| Pair |/,/^$/p' "$1"; }
f_ref=$(figures "${ref%.md}.json")
f_op=$(figures "${rep%.md}.json")
check "the reference has figures for pairs" test "${#f_ref}" -gt 100
eq "the window, every pair's figures and the findings equal the file-bus run's" "$f_op" "$f_ref"
eq "the report's table of figures equals the file-bus run's" "$(table "$rep")" "$(table "$ref")"
eq "... a row per pair" "$(table "$rep" | grep -c '^| USD\|^| [A-Z]*/USD')" 8

# learning on the product_manager's host read the researchers' logs from the bus
met=$T/h-product_manager/logs/learning/improvement-metrics.json
check "learning ran on the product_manager's host" test -s "$met"
tasks_of() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); a=j["by_agent"][sys.argv[2]]; print(a["tasks"], sorted(a["by_kind"]))' "$1" "$2" 2>&1; }
ref_t=$(tasks_of "$T/ref/logs/learning/improvement-metrics.json" research_agent_1)
case $ref_t in 0*|*rror*) fail "the reference's learning counts research_agent_1's tasks" "$ref_t" ;; *) ok "the reference's learning counts research_agent_1's tasks" ;; esac
eq "... and so does the product_manager's host, from the lines logged on another host" \
	"$(tasks_of "$met" research_agent_1)" "$ref_t"
check "research_agent_1 logged them on its own host only" \
	test ! -e "$T/h-product_manager/logs/agents/research_agent_1"

# the same request again: done before, said so, nothing run twice
out2=$(cd "$T/op" && MADF_DATA_DIR=$T/op/data LOG_DIR=$T/op/logs \
	$MADF run weekly --attach --as-of 1987-03-27 --pairs $PAIRS $SRC 2>"$T/op2.err")
eq "the same request again exits 0" "$?" 0
has "... saying the run was done before" "$(cat "$T/op2.err")" "was done before"

# an agent nobody runs: the attach says so instead of waiting for ever
kill $pids 2>/dev/null
for _p in $pids; do wait "$_p" 2>/dev/null; done
pids=
out=$(cd "$T/op" && MADF_DATA_DIR=$T/op/data LOG_DIR=$T/op/logs \
	$MADF run weekly --attach --fresh --as-of 1987-03-27 --pairs $PAIRS $SRC --task-timeout 1 2>&1)
eq "with no product_manager running, --attach fails" "$?" 1
has "... saying nothing was heard" "$out" "no word from the product_manager"
done_testing
