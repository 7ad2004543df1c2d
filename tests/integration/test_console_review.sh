# The console runs and steers a code review: :run review starts one on the
# review fixture (a bad path is refused first), the Tasks view lists its
# four tasks with their real statuses, r/t/C go to review_master and are
# answered (a refused retry, an applied reassign and cancel), the Reports
# view shows a planted defect at its file:line with its source line, and
# e exports Markdown, HTML, JSON and SARIF with the values a user checks.
# Embedded, under the sanitizer build the runner uses.
. tests/integration/lib.sh
unset NO_COLOR
L=$T/logs
export MADF_LOG_DIR=$L MADF_REVIEW_BACKOFF_MS=10
FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
screen() { cat "$T/screen" 2>/dev/null; }
py() { python3 -c "$@"; }
EXP=$D/reports/exports

# review_debt is slow (it accepts and never answers): its task stays
# running while the operator steers it; the three others finish.
cat >"$T/script" <<EOF2
:
type run review $T/no-such-dir
<Enter>
wait-for unknown codebase
:
type run review $FIX
<Enter>
wait-for started the review run
wait-for review_critical    done
wait-for review_improvement done
wait-for review_documentati done
wait-for review_debt        running
<Down>
t
wait-for retry debt: refused: the task is running
r
wait-for reassign debt: applied
C
wait-for Cancel 1 task? y/n
y
wait-for cancel debt: applied
wait-for status done
5
wait-for Findings by severity (8)
e
wait-for export: wrote
/
type withheld
<Enter>
wait-for [withheld: a hard-coded secret]
<Esc>
wait-for Critical (4)
q
wait-for embedded agents stop; run review-
wait-for is done y/n
n
EOF2
MADF_SCRIPT_TIMEOUT=240 "$MADF" --log-dir "$L" console --inject-fault review_debt:slow \
	--script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
rc=$?
eq "start, steer, report, export; q names the review run, done: the console exits 0" "$rc" 0
[ "$rc" -eq 0 ] || fail "... its stderr" "$(cat "$T/err")" "$(screen | tail -5)" \
	"$(grep -A12 Sanitizer "$L/console-stderr.log" 2>/dev/null | head -40)"
hasnt "no sanitizer report" "$(cat "$L/console-stderr.log" 2>/dev/null)" "Sanitizer"

RUN=$(ls "$D/review/runs" 2>/dev/null | grep -v '\.aggregate\.json$' | sed 's/\.json$//')
eq "one review run was kept (the bad path started none)" "$(echo "$RUN" | grep -c '^review-')" 1
R=$D/review/runs/$RUN.json
A=$D/review/runs/$RUN.aggregate.json   # the aggregate, beside the run
J=$(cat "$D/journal/actions.jsonl" 2>/dev/null)
has "the bad path is refused with why, journalled" "$J" "refused: unknown codebase \\\"$T/no-such-dir\\\": neither a registered name"

# --- the run as review_master kept it -----------------------------------
hasnt "the run's own file leaves the aggregate out (listing reads it)" "$(cat "$R")" '"aggregate"'
eq "the run: done, the debt task cancelled after 2 attempts (the reassign), the others done at the first" \
   "$(py 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], [(t["task_id"], t["status"], t["attempts"], t["assignee"]) for t in r["tasks"]])' "$R")" \
   "done [('documentation', 'done', 1, 'review_documentation'), ('debt', 'cancelled', 2, 'review_debt'), ('improvement', 'done', 1, 'review_improvement'), ('critical', 'done', 1, 'review_critical')]"
eq "the aggregate says the debt task was cancelled, and has no debt findings" \
   "$(py 'import json,sys; a=json.load(open(sys.argv[1])); print(a["review"]["agents"]["debt"]["status"], len(a["debt"]), [n for n in a["review"]["notes"] if n.startswith("debt:")])' "$A")" \
   "cancelled 0 ['debt: cancelled by the operator after 2 attempts: its findings are not in this review']"
eq "the critical findings are the planted defects" \
   "$(py 'import json,sys; a=json.load(open(sys.argv[1])); print(" ".join("%s:%d" % (f["file"], f["line"]) for f in a["critical"]))' "$A")" \
   "src/buffer.c:9 src/buffer.c:15 src/config.c:4 src/memory.c:12"
out=$("$MADF" runs --json)
eq "madf runs lists the review run as done" \
   "$(printf '%s' "$out" | py 'import json,sys; print([(r["workflow"], r["status"]) for r in json.load(sys.stdin) if r["run_id"] == sys.argv[1]])' "$RUN")" \
   "[('review', 'done')]"
out=$("$MADF" tasks "$RUN" --json)
eq "madf tasks RUN: the four tasks and their statuses" \
   "$(printf '%s' "$out" | py 'import json,sys; d=json.load(sys.stdin); print(d["workflow"], [(t["task_id"], t["status"]) for t in d["tasks"]])')" \
   "review [('documentation', 'done'), ('debt', 'cancelled'), ('improvement', 'done'), ('critical', 'done')]"

# --- the controller's answers ---------------------------------------------
# each control is answered by a task_acceptance from review_master that
# replies to it: the console journals the task, the control's id and the
# answer's id (then takes the answer out of the operator inbox)
replies=$(printf '%s\n' "$J" | py '
import json, sys
out = []
for l in sys.stdin:
    if not l.strip(): continue
    a = json.loads(l)
    if a["action"] in ("retry", "reassign", "cancel") and len(a["ids"]) == 3:  # the answers
        ids = a["ids"]
        out.append((a["action"], ids[0], len(ids) == 3 and ids[2].startswith("review_master_"), a["result"].split(":")[0]))
print(out)')
eq "review_master answered each control (the answer journalled with its id)" "$replies" \
   "[('retry', 'debt', True, 'refused'), ('reassign', 'debt', True, 'applied'), ('cancel', 'debt', True, 'applied')]"
has "the reassign's answer says what was done" "$(printf '%s' "$J" | grep '"action":"reassign"')" "applied: reassign by operator: debt sent again to review_debt (attempt 2)"
has "the decision log has the controls" "$(cat "$L"/agents/review_master/decisions/*.jsonl 2>/dev/null)" "retry of debt from operator refused: the task is running (r reassigns a task under way)"
has "the journal has the cancel's answer" "$(printf '%s' "$J" | grep '"action":"cancel"')" "applied: cancel by operator: debt cancelled after 2 attempts"

# --- the Reports view -----------------------------------------------------
S=$(screen)
has "the report lists the findings by severity, critical first" "$S" "Critical (4)"
has "the overflow's file:line and reference" "$S" "src/buffer.c:9 CWE-788 (critical)"
has "the overflow's source line, marked, with its number" "$S" '>    9 |     strcpy(name, "a name far longer than eight bytes");'
has "the line before it" "$S" '      8 |     char name[8];'
has "the cancelled task is named" "$S" "The debt task cancelled"
hasnt "the hard-coded key is never on the screen" "$S" "AKIAQ3EXAMPLEKEY7XYZ"
# (its line withheld instead: the script waited for "[withheld: a
# hard-coded secret]" under the filter "withheld", so the console's exit 0
# says it was shown)

# --- the exports -----------------------------------------------------------
for x in md html json sarif; do
	[ -s "$EXP/$RUN.$x" ] && ok "export wrote $RUN.$x" || fail "export wrote $RUN.$x" "$(ls "$EXP" 2>&1)"
done
MD=$(cat "$EXP/$RUN.md" 2>/dev/null)
eq "Markdown: the severities in order, critical first" \
   "$(printf '%s\n' "$MD" | sed -n 's/^### \([A-Z][a-z]*\) (\([0-9]*\))$/\1:\2/p' | tr '\n' ' ')" "Critical:4 Low:4 "
has "Markdown: the double free at its line, with its source" "$MD" "#### src/memory.c:12 CWE-415 (critical)"
has "Markdown: the double free's line marked" "$MD" ">   12 |     free(p);"
has "Markdown: the documentation agent's files" "$MD" "- README.md ("
has "Markdown: the operator's actions" "$MD" "## Operator actions"
HTML=$(cat "$EXP/$RUN.html" 2>/dev/null)
has "HTML: the severity heading" "$HTML" "<h3>Critical (4)</h3>"
has "HTML: the source line, escaped" "$HTML" '&gt;    9 |     strcpy(name, &quot;a name far longer than eight bytes&quot;);'
eq "JSON: the critical findings with their marked source line" \
   "$(py 'import json,sys; d=json.load(open(sys.argv[1])); print([(f["file"], f["line"], [c["text"] for c in f["context"] if c["line"] == f["line"]][0]) for f in d["findings_by_severity"]["critical"]])' "$EXP/$RUN.json")" \
   "[('src/buffer.c', 9, '    strcpy(name, \"a name far longer than eight bytes\");'), ('src/buffer.c', 15, '    printf(msg); /* FIXME: user text used as the format */'), ('src/config.c', 4, '[withheld: a hard-coded secret]'), ('src/memory.c', 12, '    free(p);')]"
eq "JSON: the documentation files" \
   "$(py 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["documentation"]))' "$EXP/$RUN.json")" \
   "['CONTRIBUTING.md', 'README.md', 'diagram.svg', 'openapi.yaml']"
eq "SARIF: 2.1.0, the double free as CWE-415 at src/memory.c:12, level error" \
   "$(py 'import json,sys; d=json.load(open(sys.argv[1])); print(d["version"], [(r["ruleId"], r["level"], l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"]["region"]["startLine"]) for run in d["runs"] for r in run["results"] for l in r["locations"] if r["ruleId"] == "CWE-415"])' "$EXP/$RUN.sarif")" \
   "2.1.0 [('CWE-415', 'error', 'src/memory.c', 12)]"
SDK=$TOP/build/npm/node_modules/@microsoft/sarif-multitool-linux/sarif-2.1.0.json
if [ -f "$SDK" ] && python3 -c 'import jsonschema' 2>/dev/null; then
	eq "SARIF: valid against sarif-sdk's 2.1.0 schema (python3-jsonschema)" \
	   "$(py 'import json,sys,jsonschema; s=json.load(open(sys.argv[1])); C=jsonschema.validators.validator_for(s); print(len(list(C(s).iter_errors(json.load(open(sys.argv[2]))))))' "$SDK" "$EXP/$RUN.sarif" 2>&1)" 0
fi
for x in md html json sarif; do
	if grep -q AKIAQ3EXAMPLEKEY7XYZ "$EXP/$RUN.$x" 2>/dev/null; then
		fail "the hard-coded key is not in the $x export"
	else
		ok "the hard-coded key is not in the $x export"
	fi
done

# --- attached: review_master running alone (madf agent) refuses to cancel
# a task of the done run, and retries its cancelled task: the debt agent
# (not slow there) reviews again and its findings join the run ----------
# the embedded console ran a weekly run too, which may have started after
# the review (the product_manager names its start): gone, so that the
# attached console's Tasks view shows the review, the run started last
rm -rf "$D/state/product_manager-state.json" "$D/state/runs"
"$MADF" --log-dir "$L" agent review_master >"$T/master.out" 2>&1 &
mpid=$!
trap 'kill "$mpid" 2>/dev/null; wait "$mpid" 2>/dev/null; cleanup' EXIT
cat >"$T/script2" <<EOF2
2
wait-for review_debt        cancelled
<Down>
C
wait-for Cancel 1 task? y/n
y
wait-for cancel debt: refused: run $RUN is done: its tasks can no longer change
t
wait-for retry debt: applied: retry by operator: debt of the ended run $RUN runs again
wait-for review_debt        done
EOF2
MADF_SCRIPT_TIMEOUT=120 "$MADF" --log-dir "$L" console --attach --script "$T/script2" \
	--dump-screen "$T/screen" 2>"$T/err"
eq "attached: a cancel of a done review refused, a retry of its cancelled task applied" "$?" 0
[ -s "$T/err" ] && fail "... its stderr" "$(cat "$T/err")" "$(screen | head -12)"
eq "the retried task is done at its third attempt, the run done again" \
   "$(py 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], [(t["task_id"], t["status"], t["attempts"]) for t in r["tasks"]])' "$R")" \
   "done [('documentation', 'done', 1), ('debt', 'done', 3), ('improvement', 'done', 1), ('critical', 'done', 1)]"
eq "its findings joined the aggregate; the others and the cancel's note are as they were / gone" \
   "$(py 'import json,sys; a=json.load(open(sys.argv[1])); print(" ".join("%s:%d" % (f["file"], f["line"]) for f in a["debt"]), a["review"]["agents"]["debt"]["status"], len(a["critical"]), len(a["improvement"]), [n for n in a["review"]["notes"] if n.startswith("debt:")])' "$A")" \
   "src/buffer.c:15 src/memory.c:10 src/parse.c:4 completed 4 4 []"
kill "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null

# --- a retry while the review runs: review_debt fails every attempt (3,
# with backoff), review_improvement is slow and keeps the review open; t
# sends the failed task again (attempt 4), C ends the slow one ----------
D2=$T/data2
cat >"$T/script3" <<EOF2
:
type run review $FIX
<Enter>
wait-for started the review run
wait-for review_debt        failed
wait-for review_improvement running
<Down>
t
wait-for retry debt: applied: retry by operator: debt sent again to review_debt (attempt 4)
<Down>
C
wait-for Cancel 1 task? y/n
y
wait-for cancel improvement: applied
wait-for status failed
EOF2
MADF_SCRIPT_TIMEOUT=240 "$MADF" --data-dir "$D2" --log-dir "$L" console --inject-fault review_debt:error \
	--inject-fault review_improvement:slow --script "$T/script3" --dump-screen "$T/screen" 2>"$T/err"
eq "a retry of a failed task while the review runs: the console exits 0" "$?" 0
[ -s "$T/err" ] && fail "... its stderr" "$(cat "$T/err")" "$(screen | head -12)"
R2=$(ls "$D2"/review/runs/review-*.json 2>/dev/null | grep -v aggregate)
eq "the retried task failed again at its fourth attempt; the run failed naming it" \
   "$(py 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], r["error"]["error"], [(t["task_id"], t["status"], t["attempts"]) for t in r["tasks"]])' "$R2")" \
   "failed failed: review_debt [('documentation', 'done', 1), ('debt', 'failed', 4), ('improvement', 'cancelled', 1), ('critical', 'done', 1)]"
hasnt "no sanitizer report" "$(cat "$L/console-stderr.log" 2>/dev/null)" "Sanitizer"
done_testing
