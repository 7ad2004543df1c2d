# madf run NAME dispatches through the registered workflows
# (cli/workflows.c): an unknown name is a usage error naming the registered
# ones, and `madf run review` is `madf review` (same output, same status).
. tests/integration/lib.sh

FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
export MADF_REVIEW_BACKOFF_MS=10

# --- unknown or missing NAME ------------------------------------------------
$MADF run nosuch >"$T/o" 2>"$T/e"; rc=$?
eq "madf run nosuch exits 2 (usage)" "$rc" 2
eq "it names the registered workflows" "$(cat "$T/e")" \
   'madf: run: unknown workflow "nosuch": one of weekly, review'
eq "and prints nothing on stdout" "$(cat "$T/o")" ""
$MADF run >/dev/null 2>"$T/e"; rc=$?
eq "madf run without NAME exits 2" "$rc" 2
eq "it says what can be run" "$(cat "$T/e")" "madf: run: what to run: one of weekly, review"
help=$($MADF run --help)
has "run --help shows the weekly workflow's options" "$help" "weekly [--as-of TIME]"
has "run --help shows the review crew's" "$help" "review PATH|NAME [--json]"

# --- madf run review is madf review ------------------------------------------
$MADF review "$FIX" >"$T/a.out" 2>"$T/a.err"; rca=$?
$MADF run review "$FIX" >"$T/b.out" 2>"$T/b.err"; rcb=$?
eq "madf review exits 0" "$rca" 0
eq "madf run review exits as madf review does" "$rcb" "$rca"
check "madf review found the planted defects" grep -q "^critical: 4$" "$T/a.out"
check "madf run review prints exactly what madf review prints" cmp "$T/a.out" "$T/b.out"
has "madf run review reports progress as madf review does" "$(cat "$T/b.err")" "madf: review: "
$MADF review "$T/nonexistent" >"$T/a.out" 2>"$T/a.err"; rca=$?
$MADF run review "$T/nonexistent" >"$T/b.out" 2>"$T/b.err"; rcb=$?
eq "a missing codebase: the same status" "$rcb" "$rca"
check "a missing codebase: the same error" cmp "$T/a.err" "$T/b.err"
has "and the error names it" "$(cat "$T/b.err")" "nonexistent"
$MADF run review >/dev/null 2>"$T/e"; rc=$?
eq "madf run review without PATH is a usage error" "$rc" 2
has "it says madf review's usage" "$(cat "$T/e")" "usage: madf review PATH|NAME"

# --- runs and tasks of the registered workflows --------------------------------
D=$T/data
mkdir -p "$D/state"
cat >"$D/state/product_manager-state.json" <<'JSON'
{"runs": {"weekly-2026-w01-aa": {"run_id": "weekly-2026-w01-aa", "status": "researching",
  "started_at": "2026-01-01T00:00:00Z", "status_since": "2026-01-01T00:00:00Z",
  "tasks": [{"task_id": "USDJPY-market", "kind": "market", "pair": "USD/JPY",
             "assignee": "research_agent_1", "status": "assigned", "attempts": 1}]}}}
JSON
out=$($MADF --data-dir "$D" runs --json)
runs=$out
check "madf runs --json names the run's workflow" python3 -c "
import json, sys
r = json.loads(sys.argv[1])
sys.exit(0 if [(x['run_id'], x['workflow'], x['tasks']) for x in r if x['workflow'] == 'weekly'] == [('weekly-2026-w01-aa', 'weekly', 1)] else 1)" "$out"
# the two reviews above are kept as runs of the review crew (the refused
# ones are not)
check "madf runs --json lists the two reviews as done review runs of 4 tasks" python3 -c "
import json, sys
r = json.loads(sys.argv[1])
sys.exit(0 if [(x['workflow'], x['status'], x['tasks']) for x in r if x['run_id'].startswith('review-')] == [('review', 'done', 4)] * 2 else 1)" "$runs"
out=$($MADF --data-dir "$D" tasks weekly-2026-w01-aa)
has "madf tasks names the subject's column from the workflow (PAIR)" "$out" "TASK                   KIND    PAIR     ASSIGNEE"
has "madf tasks lists the task with its pair and the default priority" "$out" \
   "USDJPY-market          market  USD/JPY  research_agent_1   assigned           high        1"

done_testing
