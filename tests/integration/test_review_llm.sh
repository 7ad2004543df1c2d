# madf review in LLM mode against the replay server, with recorded
# answers (tests/integration/fixtures/review_llm/recorded.json): the
# critical agent's findings pass the schema and the scoring pass drops the
# one the model scores 2; the debt agent's schema-invalid answer is an
# error of that agent, asked once (not retried); the improvement agent's
# 429 is retried; the documentation agent's unusable first answer is
# followed by one retry with a simplified prompt; at the token budget an
# agent pauses until the operator approves, or skips to the analyzers with
# MADF_LLM_CONTINUE_AT_LIMIT=1.
. tests/integration/lib.sh

KEY=sk-madf-review-llm-0123456789abcdef
LOG=$T/requests.jsonl
serve "the replay server" python3 tests/integration/llm_replay.py --key "$KEY" --log "$LOG" \
	--recorded "$TOP/tests/integration/fixtures/review_llm/recorded.json"
FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
export MADF_REVIEW_BACKOFF_MS=10
unset MADF_TASK_TOKEN_BUDGET MADF_TASK_COST_BUDGET MADF_LLM_CONTINUE_AT_LIMIT MADF_REVIEW_MIN_SCORE 2>/dev/null || true
A="env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$port CLAUDE_MODEL_EXECUTION=claude-sonnet-4-5"

field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
places() { field "$1" "' '.join('%s:%d:%s' % (f['file'], f['line'], f['reference']) for f in d['$2'])"; }
# requests RULE: how many requests the replay server answered with RULE.
requests() { python3 -c "
import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get('rule') == sys.argv[2]))" "$LOG" "$1"; }

$A "$MADF" review "$FIX" --json >"$T/r.json" 2>"$T/r.err"
eq "an agent's schema-invalid answer fails the review: exit 1" "$?" 1
has "madf review says it runs in LLM mode" "$(cat "$T/r.err")" "LLM mode: anthropic"
# critical: findings, then the scoring pass
eq "critical: the findings the model scored 5 or more" "$(places "$T/r.json" critical)" \
   "src/memory.c:12:CWE-415 src/buffer.c:9:CWE-121"
has "a kept finding carries its score and the model's reason" \
   "$(field "$T/r.json" "d['critical'][0]['description']")" \
   "Score 9/10: two free() calls on the same pointer with nothing between them"
eq "the dropped finding is counted" \
   "$(field "$T/r.json" "(d['review']['agents']['critical']['llm']['scored'], d['review']['agents']['critical']['llm']['dropped'], d['review']['agents']['critical']['llm']['min_score'])")" \
   "(3, 1, 5)"
has "... and noted" "$(field "$T/r.json" "'|'.join(d['review']['notes'])")" \
   "critical: 1 of 3 findings scored under 5 by the model's second pass and dropped"
eq "critical: the tokens of both calls are counted" \
   "$(field "$T/r.json" "(lambda u: (u['calls'], u['input_tokens'], u['output_tokens']))(d['review']['agents']['critical']['llm']['usage'])")" \
   "(2, 1300, 360)"
eq "every finding has exactly the seed's fields" \
   "$(field "$T/r.json" "all(sorted(f) == sorted(['type','severity','description','file','line','reference', 'remediation' if k == 'critical' else 'suggestion']) for k in ('improvement','critical') for f in d[k])")" True
check "the model got line-numbered code" python3 -c "
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j.get('rule') == 'critical-findings':
        b = json.loads(j['body'])['messages'][0]['content']
        sys.exit(0 if '12| \tfree(p);' in b and '=== src/memory.c (13 lines) ===' in b else 1)
sys.exit(1)" "$LOG"
# debt: the schema failure
eq "debt: failed after one attempt" \
   "$(field "$T/r.json" "(d['review']['agents']['debt']['status'], d['review']['agents']['debt']['attempts'])")" \
   "('failed', 1)"
has "... naming the schema rule the answer broke" \
   "$(field "$T/r.json" "d['review']['agents']['debt']['errors'][0]['error']")" \
   "the model's findings failed the schema (not retried): findings[0].line: must be >= 1"
eq "... and the model was asked once" "$(requests debt-findings)" 1
eq "the review's error is 500 naming the agent" "$(field "$T/r.json" "(d['error']['status'], d['error']['error'])")" \
   "(500, 'failed: review_debt')"
# improvement: a 429 retried
eq "improvement: the 429 was retried (two requests)" "$(requests improvement-findings)" 2
eq "improvement: completed at the agent's first attempt" \
   "$(field "$T/r.json" "(d['review']['agents']['improvement']['status'], d['review']['agents']['improvement']['attempts'])")" \
   "('completed', 1)"
eq "improvement: the recorded finding" "$(places "$T/r.json" improvement)" \
   "scripts/deploy.sh:4:https://www.shellcheck.net/wiki/SC2086"
# documentation: one retry with a simplified prompt
eq "documentation: the first answer, then one simplified retry" \
   "$(requests docs-full) $(requests docs-simplified)" "1 1"
eq "the README is the model's" "$(field "$T/r.json" "d['documentation']['README.md'].splitlines()[0]")" "# review fixture"
has "CONTRIBUTING.md stays the analyzers' draft" "$(field "$T/r.json" "d['documentation']['CONTRIBUTING.md']")" "# Contributing"
has "the first failure is noted" "$(field "$T/r.json" "'|'.join(d['review']['notes'])")" \
   "documentation: the model's drafts failed the schema (the answer is not JSON"
if grep -rq "$KEY" "$T/r.json" "$T/r.err" "$T/logs" "$D" 2>/dev/null; then
	fail "the key never reaches the output, the logs or the data"
else
	ok "the key never reaches the output, the logs or the data"
fi
check "usage.json counts the review agents' calls" python3 -c "
import json, sys
u = json.load(open(sys.argv[1]))['agents']
sys.exit(0 if u['review_critical']['calls'] == 2 and u['review_critical']['input_tokens'] == 1300 else 1)" "$D/llm/usage.json"

# a finding on a line the file does not have, scores for a finding that is
# not there: each is that agent's error, the model asked once
echo '{"critical": ["case:bad-line"], "improvement": ["case:bad-scores"]}' >"$T/cl.json"
$A "$MADF" review "$FIX" --agents critical,improvement --checklist "$T/cl.json" --json >"$T/v.json" 2>/dev/null
eq "both agents failed: exit 1" "$?" 1
has "critical: the line must exist in the file" \
   "$(field "$T/v.json" "d['review']['agents']['critical']['errors'][0]['error']")" \
   "the model's findings failed the schema (not retried): findings[0].line: src/memory.c has 13 lines"
has "improvement: every score must be for a finding sent" \
   "$(field "$T/v.json" "d['review']['agents']['improvement']['errors'][0]['error']")" \
   "the model's scores failed the schema (not retried): scores[0].index: must be under 1"
eq "... each asked once" "$(requests critical-bad-line) $(requests improvement-bad-scores) $(field "$T/v.json" "[d['review']['agents'][k]['attempts'] for k in ('critical', 'improvement')]")" \
   "1 1 [1, 1]"
check "the checklist reached the model as free text" python3 -c "
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j.get('rule') == 'critical-bad-line':
        sys.exit(0 if 'Checklist:\n- case:bad-line\n' in json.loads(j['body'])['messages'][0]['content'] else 1)
sys.exit(1)" "$LOG"

# --- the token budget: continue at the limit, or pause for approval ------
$A MADF_TASK_TOKEN_BUDGET=50 MADF_LLM_CONTINUE_AT_LIMIT=1 "$MADF" review "$FIX" --agents critical --json \
	>"$T/c.json" 2>"$T/c.err"
eq "at the budget with MADF_LLM_CONTINUE_AT_LIMIT=1 the review completes" "$?" 0
eq "... with the analyzers' findings" "$(places "$T/c.json" critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"
has "... and a note saying why" "$(field "$T/c.json" "'|'.join(d['review']['notes'])")" \
   "critical: the LLM part was skipped (budget reached"
eq "... without a call over the budget" "$(requests critical-findings)" 1

$A MADF_TASK_TOKEN_BUDGET=50 "$MADF" review "$FIX" --agents critical --json >"$T/p.json" 2>"$T/p.err" &
rpid=$!
wait_for "at the budget the agent pauses for the operator" 60 grep -q "review_critical: paused" "$T/p.err"
task=$(sed -n 's/.*review_critical: paused.*(task \([^:]*\): .*/\1/p' "$T/p.err" | head -1)
check "the operator approves more budget with madf send" "$MADF" send --from operator --to review_critical \
	--type task_assignment --content "{\"task_type\":\"budget_approval\",\"approve_id\":\"$task\",
	\"focus_area\":\"review\",\"target_pairs\":[],\"timeframe\":\"\",\"data_sources\":[],
	\"deadline\":\"2099-01-01T00:00:00Z\",\"output_format\":\"none\",\"extra_tokens\":100000}"
wait "$rpid"
eq "the approved review completes" "$?" 0
eq "... with the model's scored findings" "$(places "$T/p.json" critical)" \
   "src/memory.c:12:CWE-415 src/buffer.c:9:CWE-121"
eq "... after the findings and the scoring calls" "$(requests critical-findings) $(requests critical-scores)" "2 2"

# llm_skip: the paused agent answers with the analyzers' findings
$A MADF_TASK_TOKEN_BUDGET=50 "$MADF" review "$FIX" --agents critical --json >"$T/k.json" 2>"$T/k.err" &
rpid=$!
wait_for "paused again" 60 grep -q "review_critical: paused" "$T/k.err"
task=$(sed -n 's/.*review_critical: paused.*(task \([^:]*\): .*/\1/p' "$T/k.err" | head -1)
check "the operator skips its LLM part" "$MADF" send --from operator --to review_critical \
	--type task_assignment --content "{\"task_type\":\"llm_skip\",\"approve_id\":\"$task\",
	\"focus_area\":\"review\",\"target_pairs\":[],\"timeframe\":\"\",\"data_sources\":[],
	\"deadline\":\"2099-01-01T00:00:00Z\",\"output_format\":\"none\"}"
wait "$rpid"
eq "the skipped review completes" "$?" 0
eq "... with the analyzers' findings" "$(places "$T/k.json" critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"
has "... and says the operator skipped the model" "$(field "$T/k.json" "'|'.join(d['review']['notes'])")" \
   "critical: the LLM part was skipped (skipped by operator at its budget)"
eq "... without another model call" "$(requests critical-findings)" 2
done_testing
