# The validator's LLM review with a slow model: the model takes 26 s to
# answer the review, longer than the validation's deadline (20 s, the
# least the product_manager gives with --task-timeout 5). The review says
# it works on (task_progress in_progress before the call and every 5 s
# while it waits), each moving the deadline on, so the validation is done
# with the model's review instead of failing "missed the deadline" (as it
# did when the review sent no progress).
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
CHK="python3 $TOP/tests/integration/report_check.py"
KEY=sk-madf-llm-slow-0123456789abcdef
LOG=$T/requests.jsonl
mkdir -p "$T/cwd"
cat >"$T/recorded.json" <<'JSON'
{"rules": [{"name": "slow-review", "system": "the validator of madf",
  "responses": [{"text": "Slow review: the verdicts stand.", "delay": 26}]}]}
JSON
serve "the replay server" python3 tests/integration/llm_replay.py --key "$KEY" --log "$LOG" \
	--recorded "$T/recorded.json"
cd "$T/cwd" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL OPENAI_MODEL_EXECUTION OPENAI_MODEL_ORCHESTRATOR ANTHROPIC_BASE_URL \
	OPENAI_BASE_URL MADF_LLM MADF_TASK_TOKEN_BUDGET MADF_TASK_COST_BUDGET MADF_LLM_MAX_STEPS \
	MADF_LLM_PRICE_IN MADF_LLM_PRICE_OUT 2>/dev/null || true
D1=$T/data
env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$port \
	CLAUDE_MODEL_EXECUTION=claude-sonnet-4-5 CLAUDE_MODEL_ORCHESTRATOR=claude-opus-4-1 \
	MADF_DATA_DIR=$D1 LOG_DIR=$T/logs "$MADF" run weekly --as-of 1987-03-27 --pairs USD/JPY \
	--market "csv:$FX" --news "jsonl:$NEWS" --task-timeout 5 >"$T/a.out" 2>"$T/a.err"
eq "the run with a slow review exits 0" "$?" 0
MD=$(tail -1 "$T/a.out")
J=${MD%.md}.json
check "the validation is done, not failed at its deadline" $CHK "$J" validation done
eq "the slow model was asked for the review once" \
	"$(grep -c '"rule": "slow-review"' "$LOG")" 1
out=$(python3 -c '
import json, os, sys
n = 0
for d, _, fs in os.walk(os.path.join(sys.argv[1], "messages", "processed")):
    for f in fs:
        if not f.endswith(".json") or f.endswith(".reason.json"):
            continue
        m = json.load(open(os.path.join(d, f)))
        c = m.get("content") or {}
        if m.get("type") == "validation_result":
            print("review:", (c.get("llm_review") or {}).get("outcome"),
                  (c.get("llm_review") or {}).get("notes"))
        if m.get("type") == "task_progress" and m.get("from") == "validator_agent" and \
           "reviewing the verdicts with the model (call 1)" in c.get("current_step", ""):
            n += 1
print("progress while reviewing:", "at least 5" if n >= 5 else n)' "$D1" | sort)
eq "the review was done and said it worked on every 5 s of its 26 s" "$out" \
"progress while reviewing: at least 5
review: done Slow review: the verdicts stand."
done_testing
