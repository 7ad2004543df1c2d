# madf mcp's review_codebase: the code review crew of seed 001 through the
# MCP tool, driven by tests/integration/mcp_client.py: the aggregate as
# structuredContent (checked against the tool's outputSchema with
# python3-jsonschema), the same findings as `madf review`, progress
# notifications for a progressToken, 404 and 413 as isError results with
# the code, 400 as -32602 (2025-06-18) or an isError result (2025-11-25);
# a review is kept as a run (madf runs, data/review/runs), as madf review's.
. tests/integration/lib.sh

CLIENT="python3 $TOP/tests/integration/mcp_client.py"
PY=${SEED_PEER_PYTHON:-/usr/bin/python3}
pick() { $CLIENT pick "$@"; }
FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
export MADF_REVIEW_BACKOFF_MS=10
call() { # call ID ARGS [META]: a tools/call line for review_codebase
	printf '{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"review_codebase","arguments":%s%s}}\n' \
		"$1" "$2" "${3:+,\"_meta\":$3}"
}
# places FILE ID PART: "file:line:reference" of each finding of PART in the answer ID.
places() {
	pick "id=$2" "result.structuredContent.$3" <"$1" | python3 -c '
import json, sys
print(" ".join("%s:%d:%s" % (f["file"], f["line"], f["reference"]) for f in json.load(sys.stdin)))'
}

{ echo 'init 2025-06-18'; echo list-all
  call rv "{\"id\":\"$FIX\",\"params\":{}}" '{"progressToken":"rv-progress"}'
  call nf "{\"id\":\"$T/no-such-dir\"}"
  call big "{\"id\":\"$FIX\",\"params\":{\"max_files\":1}}"
  call bad "{\"id\":\"$FIX\",\"params\":{\"max_findings\":\"x\"}}"
  call noid '{"params":{}}'
} | $CLIENT --stderr "$T/s.err" -- $MADF mcp >"$T/s.out" 2>"$T/s.cerr"
eq "the session exits 0 with only protocol on stdout" "$?" 0

eq "review_codebase is listed with an outputSchema" \
   "$(pick id=1001 result.tools <"$T/s.out" | python3 -c 'import json,sys; print([t["outputSchema"]["type"] for t in json.load(sys.stdin) if t["name"] == "review_codebase"])')" \
   "['object']"
eq "the review answers isError false" "$(pick id=rv result.isError <"$T/s.out")" false
eq "critical: exactly the planted defects (as madf review finds them)" "$(places "$T/s.out" rv critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"
eq "debt: the TODO, the FIXME, the complex function" "$(places "$T/s.out" rv debt)" \
   "src/buffer.c:15:CWE-546 src/memory.c:10:CWE-546 src/parse.c:4:CWE-1121"
eq "improvement: shellcheck and cppcheck" "$(places "$T/s.out" rv improvement)" \
   "scripts/deploy.sh:4:https://www.shellcheck.net/wiki/SC2086 src/server.c:6:CWE-563 src/server.c:6:CWE-563 src/server.c:7:CWE-563"
eq "the documentation drafts are in the aggregate" \
   "$(pick id=rv result.structuredContent.documentation <"$T/s.out" | python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)))')" \
   "['CONTRIBUTING.md', 'README.md', 'diagram.svg', 'openapi.yaml']"
eq "the text content counts the findings" "$(pick id=rv result.content.0.text <"$T/s.out" | sed 's/ in .*//')" \
   "review of $(cd "$FIX" && pwd -P): 4 critical, 3 debt, 4 improvement findings"
# The structuredContent against the tool's outputSchema, by a real validator.
schema_check() {
	pick id=1001 result.tools <"$T/s.out" >"$T/tools.json"
	pick "id=$1" result.structuredContent <"$T/s.out" >"$T/sc.json"
	"$PY" -c '
import json, sys, jsonschema
s = [t["outputSchema"] for t in json.load(open(sys.argv[1])) if t["name"] == "review_codebase"][0]
d = json.load(open(sys.argv[2]))
C = jsonschema.validators.validator_for(s); C.check_schema(s)
errs = list(C(s).iter_errors(d))
print(len(errs), "; ".join(e.message[:100] for e in errs[:3]))' "$T/tools.json" "$T/sc.json" 2>&1
}
eq "the aggregate conforms to the outputSchema (python3-jsonschema)" "$(schema_check rv)" "0 "
n=$(pick --count method=notifications/progress <"$T/s.out")
check "progress notifications while the agents work (got $n)" test "$n" -ge 8
eq "they carry the request's progressToken" "$(pick method=notifications/progress params.progressToken <"$T/s.out")" rv-progress
check "progress rises: each notification's progress above the last" python3 -c '
import json, sys
p = [m["params"]["progress"] for m in map(json.loads, open(sys.argv[1])) if m.get("method") == "notifications/progress"]
assert p == sorted(set(p)) and len(p) > 1, p' "$T/s.out"
has "a notification says an agent is done" "$(grep -o '"message":"review_critical: done[^"]*"' "$T/s.out")" \
   "review_critical: done, 4 findings"

# Kept as a run, as madf review keeps one (the refused requests keep none):
# madf runs lists it, its files are in data/review/runs and its report's
# findings are the tool's.
RUN=$(pick id=rv result.structuredContent.review.run_id <"$T/s.out")
case "$RUN" in review-*) ok "the answer names its run ($RUN)" ;; *) fail "the answer names its run" "got: $RUN" ;; esac
runs_of() { # runs_of: "run_id status tasks" of each review run, by madf runs --json
	$MADF runs --json | python3 -c '
import json, sys
for x in json.load(sys.stdin):
    if x["workflow"] == "review": print(x["run_id"], x["status"], x["tasks"])'
}
eq "madf runs lists that one review run, done, of 4 tasks" "$(runs_of)" "$RUN done 4"
check "... its run file is in data/review/runs" test -s "$D/review/runs/$RUN.json"
check "... and its aggregate beside it" test -s "$D/review/runs/$RUN.aggregate.json"
eq "madf tasks RUN lists its 4 tasks, each done" \
   "$($MADF tasks "$RUN" --json | python3 -c 'import json,sys; print(sorted((t["task_id"], t["status"]) for t in json.load(sys.stdin)["tasks"]))')" \
   "[('critical', 'done'), ('debt', 'done'), ('documentation', 'done'), ('improvement', 'done')]"
sc_count=$(pick id=rv result.structuredContent <"$T/s.out" | python3 -c '
import json, sys
d = json.load(sys.stdin); print(sum(len(d[k]) for k in ("critical", "debt", "improvement")))')
rep_count=$(sed -n 's/^## Findings by severity (\([0-9]*\))$/\1/p' "$D/reports/review/$RUN.md")
eq "its finished report counts as many findings as the tool's structuredContent (11)" "$rep_count $sc_count" "11 11"

eq "an unknown codebase: isError" "$(pick id=nf result.isError <"$T/s.out")" true
eq "... carrying 404" "$(pick id=nf result.structuredContent.error.status <"$T/s.out")" 404
has "... and saying why" "$(pick id=nf result.content.0.text <"$T/s.out")" "404: unknown codebase: $T/no-such-dir is not a directory"
eq "the error conforms to the outputSchema" "$(schema_check nf)" "0 "
eq "too large (max_files 1): isError carrying 413" \
   "$(pick id=big result.isError <"$T/s.out") $(pick id=big result.structuredContent.error.status <"$T/s.out")" "true 413"
eq "400 under 2025-06-18: a -32602 error" "$(pick id=bad error.code <"$T/s.out")" -32602
eq "... its data carries the status, the field and the rule" \
   "$(pick id=bad error.data <"$T/s.out")" \
   '{"status":400,"error":"params.max_findings: must be an integer","field":"params.max_findings","rule":"must be an integer"}'
eq "a missing id is a 400 naming the field" "$(pick id=noid error.code <"$T/s.out") $(pick id=noid error.data.field <"$T/s.out")" "-32602 id"

# 2025-11-25: input validation errors are tool execution errors.
{ echo 'init 2025-11-25'
  call bad "{\"id\":\"$FIX\",\"params\":{\"max_findings\":\"x\"}}"
} | $CLIENT --stderr "$T/n.err" -- $MADF mcp >"$T/n.out" 2>"$T/n.cerr"
eq "400 under 2025-11-25: isError carrying 400 and the field" \
   "$(pick id=bad result.isError <"$T/n.out") $(pick id=bad result.structuredContent.error.status <"$T/n.out") $(pick id=bad result.structuredContent.error.field <"$T/n.out")" \
   "true 400 params.max_findings"
eq "... and no notifications without a progressToken" "$(pick --count method=notifications/progress <"$T/n.out")" 0

# 500: the critical agent fails every attempt (madf mcp --inject-fault).
{ echo 'init 2025-06-18'
  call crash "{\"id\":\"$FIX\"}"
} | $CLIENT --stderr "$T/f.err" -- $MADF mcp --inject-fault review_critical:error >"$T/f.out" 2>"$T/f.cerr"
eq "an agent that fails: isError carrying 500" \
   "$(pick id=crash result.isError <"$T/f.out") $(pick id=crash result.structuredContent.error.status <"$T/f.out")" "true 500"
has "... the text starts with the code and names the agent" "$(pick id=crash result.content.0.text <"$T/f.out")" "500: failed: review_critical"
eq "... the other agents' findings are kept" "$(places "$T/f.out" crash debt)" \
   "src/buffer.c:15:CWE-546 src/memory.c:10:CWE-546 src/parse.c:4:CWE-1121"
eq "... the critical agent failed after 3 attempts (as madf review)" \
   "$(pick id=crash result.structuredContent.review.agents.critical.status <"$T/f.out") $(pick id=crash result.structuredContent.review.agents.critical.attempts <"$T/f.out")" "failed 3"
FRUN=$(pick id=crash result.structuredContent.review.run_id <"$T/f.out")
eq "... kept as a failed run too, beside the first" "$(runs_of | sort)" "$(printf '%s\n' "$RUN done 4" "$FRUN failed 4" | sort)"

done_testing
