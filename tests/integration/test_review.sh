# madf review: the code review crew on a fixture codebase with planted
# defects; the exact findings by file and line, the error codes (400, 404,
# 413, 500), retries, the edge cases (binary, non-UTF-8, a link leaving
# the tree, huge files, an empty tree) and a missing analyzer.
. tests/integration/lib.sh

FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
export MADF_REVIEW_BACKOFF_MS=10

# field FILE PYTHON-EXPR: evaluates EXPR with d = the JSON document in FILE.
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# places FILE PART: "file:line:reference" of each finding of PART.
places() { field "$1" "' '.join('%s:%d:%s' % (f['file'], f['line'], f['reference']) for f in d['$2'])"; }

out=$($MADF review --help)
has "review --help shows the usage" "$out" "usage: madf review PATH|NAME [--json]"

# --- a full review ----------------------------------------------------------
$MADF review "$FIX" --json --out "$T/out" >"$T/r.json" 2>"$T/r.err"
eq "a review that completes exits 0" "$?" 0
eq "critical: exactly the planted defects" "$(places "$T/r.json" critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"
eq "critical: severities" "$(field "$T/r.json" "' '.join(f['severity'] for f in d['critical'])")" \
   "critical critical critical critical"
eq "debt: the TODO, the FIXME, the complex function" "$(places "$T/r.json" debt)" \
   "src/buffer.c:15:CWE-546 src/memory.c:10:CWE-546 src/parse.c:4:CWE-1121"
eq "improvement: shellcheck's unquoted variable and cppcheck's style" "$(places "$T/r.json" improvement)" \
   "scripts/deploy.sh:4:https://www.shellcheck.net/wiki/SC2086 src/server.c:6:CWE-563 src/server.c:6:CWE-563 src/server.c:7:CWE-563"
eq "every finding has exactly the seed's fields (remediation for critical)" \
   "$(field "$T/r.json" "all(sorted(f) == sorted(['type','severity','description','file','line','reference', 'remediation' if k == 'critical' else 'suggestion']) and f['type'] == k for k in ('debt','improvement','critical') for f in d[k])")" True
eq "the aggregate has the seed's four parts" \
   "$(field "$T/r.json" "[type(d[k]).__name__ for k in ('documentation','debt','improvement','critical')]")" \
   "['dict', 'list', 'list', 'list']"
eq "the double free: three tools agree (deduplicated into one finding) and it says so" \
   "$(field "$T/r.json" "[f['description'] for f in d['critical'] if f['line'] == 12][0].split('Kept: ')[1]")" \
   "3 tools agree on this line's double free."
has "the overflow is kept because four tools agree" "$(field "$T/r.json" "d['critical'][0]['description']")" \
   "(cppcheck bufferAccessOutOfBounds, gcc-analyzer -Warray-bounds, clang-analyzer alpha.unix.cstring.OutOfBounds, flawfinder buffer/strcpy) in copy_name(). Kept: 4 tools agree on this line's overflow."
eq "the format string: madf-flow, flawfinder and clang's taint checker agree; madf-flow says where the format comes from" \
   "$(field "$T/r.json" "d['critical'][1]['description']")" \
   "data from fgets() at line 14 reaches the format string of printf() (argument 1) at line 15 unchecked: its % directives are read from the input (madf-flow tainted-format, flawfinder format/printf, clang-analyzer alpha.security.taint.TaintPropagation) in log_message(). Kept: 3 tools agree on this line's format string."
has "findings are mapped to their function (ctags)" "$(field "$T/r.json" "d['critical'][3]['description']")" \
   "in release_twice()"
eq "flawfinder's lone level-2 hit (char array, line 8) is left out" \
   "$(field "$T/r.json" "[f['line'] for f in d['critical'] if f['file'] == 'src/buffer.c']")" "[9, 15]"
if grep -rq AKIAQ3EXAMPLEKEY7XYZ "$T/r.json" "$T/r.err" "$T/logs" "$T/out"; then
	fail "the hard-coded key never reaches the output or the logs"
else
	ok "the hard-coded key never reaches the output or the logs"
fi
notes=$(field "$T/r.json" "'\n'.join(d['review']['notes'])")
has "a binary file is skipped with a note" "$notes" "data.bin: a binary file (NUL bytes): skipped"
has "a link leaving the tree is noted, not followed" "$notes" "escape_link: a symbolic link leaving the tree: not followed"
has "a non-UTF-8 source is noted and kept from flawfinder" "$notes" "src/latin1.c: not valid UTF-8: flawfinder skipped it"
eq "the reviewed files (the binary and the link left out)" "$(field "$T/r.json" "d['review']['files']")" 9
eq "every analyzer ran" "$(field "$T/r.json" "sorted(k for k, v in d['review']['tools'].items() if v == 'ok')")" \
   "['clang_analyzer', 'cloc', 'cppcheck', 'ctags', 'dot', 'flawfinder', 'flow', 'gcc_analyzer', 'markers', 'pmccabe', 'secrets', 'shellcheck']"
eq "each agent completed at the first attempt" \
   "$(field "$T/r.json" "[(k, v['status'], v['attempts']) for k, v in sorted(d['review']['agents'].items())]")" \
   "[('critical', 'completed', 1), ('debt', 'completed', 1), ('documentation', 'completed', 1), ('improvement', 'completed', 1)]"
has "progress goes to stderr" "$(cat "$T/r.err")" "madf: review: review_critical: done, 4 findings"
# documentation
eq "documentation drafts written by --out" "$(cd "$T/out" && ls | tr '\n' ' ')" \
   "CONTRIBUTING.md README.md diagram.svg openapi.yaml review.json "
has "README lists the functions from ctags" "$(cat "$T/out/README.md")" '| `src/memory.c` | `release_twice()` | 5-13 |'
has "the include graph is SVG" "$(head -c 1000 "$T/out/diagram.svg")" "<svg"
eq "the include graph has an edge per local include" "$(grep -c 'class="edge"' "$T/out/diagram.svg")" 5
has "OpenAPI draft has the routes found" "$(cat "$T/out/openapi.yaml")" '"/items":
    get:
      summary: "found at src/server.c:22"'
# tool analytics
eq "tool usage counts the analyzers per agent" \
   "$(field "$D/tools/usage.json" "sorted(d['tools']['review.cppcheck']['by_agent'].items())")" \
   "[('review_critical', 1), ('review_improvement', 1)]"

# human summary
out=$($MADF review "$FIX" 2>/dev/null)
has "the summary counts the critical findings" "$out" "critical: 4"
has "the summary lists them by file and line" "$out" "src/memory.c:12 [critical] Memory pointed to by 'p' is freed twice."

# --- registered names ------------------------------------------------------
check "review add registers a name" $MADF review add fixture "$FIX"
$MADF review fixture --json --agents critical >"$T/n.json" 2>/dev/null
eq "a registered name is reviewed" "$(places "$T/n.json" critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"
eq "--agents runs only those agents" "$(field "$T/n.json" "sorted(d['review']['agents'])")" "['critical']"
check_fails "review add refuses a bad name" 2 $MADF review add "Bad Name" "$FIX"

# --- errors ----------------------------------------------------------------
$MADF review "$FIX" --json --agents bogus >"$T/e.json" 2>/dev/null
eq "400: an unknown agent exits 2" "$?" 2
eq "400 names the field and the rule" "$(field "$T/e.json" "(d['error']['status'], d['error']['field'], d['error']['rule'])")" \
   "(400, 'params.agents[0]', 'must be one of documentation, debt, improvement, critical')"
$MADF review --request '{"id":"'"$FIX"'","colour":"red"}' --json >"$T/e.json" 2>/dev/null
eq "400: an unknown request member" "$(field "$T/e.json" "(d['error']['status'], d['error']['field'], d['error']['rule'])")" \
   "(400, 'colour', 'not allowed')"
$MADF review "$FIX" --params '{"checklist":{"debt":["lint"]}}' --json >"$T/e.json" 2>/dev/null
eq "400: a checklist item the agent does not know" "$(field "$T/e.json" "(d['error']['status'], d['error']['field'], d['error']['rule'])")" \
   "(400, 'params.checklist.debt[0]', 'must be one of markers, complexity, size')"
$MADF review "$T/nope" --json >"$T/e.json" 2>/dev/null
eq "404: an unknown codebase exits 1" "$?" 1
eq "404 status" "$(field "$T/e.json" "d['error']['status']")" 404
$MADF review "$FIX" --max-files 3 --json >"$T/e.json" 2>/dev/null
eq "413: over the files limit exits 1" "$?" 1
eq "413 says which limit" "$(field "$T/e.json" "(d['error']['status'], d['error']['error'])")" \
   "(413, 'codebase too large: more than 3 files (the limit: params.max_files or MADF_REVIEW_MAX_FILES)')"
MADF_REVIEW_MAX_BYTES=500 $MADF review "$FIX" --json >"$T/e.json" 2>/dev/null
eq "413: over the bytes limit (environment)" "$(field "$T/e.json" "d['error']['status']")" 413

# --- retries and schema failures --------------------------------------------
$MADF review "$FIX" --json --inject-fault review_debt:error >"$T/f.json" 2>"$T/f.err"
eq "500: an agent failing every time exits 1" "$?" 1
eq "the failing agent was tried 3 times, the others once" \
   "$(field "$T/f.json" "[(k, v['status'], v['attempts']) for k, v in sorted(d['review']['agents'].items())]")" \
   "[('critical', 'completed', 1), ('debt', 'failed', 3), ('documentation', 'completed', 1), ('improvement', 'completed', 1)]"
eq "the other agents' findings are kept" "$(field "$T/f.json" "(len(d['critical']), d['error']['status'])")" "(4, 500)"
has "each retry is logged" "$(cat "$T"/logs/agents/review_master/errors/*.jsonl)" '"attempt":3'
$MADF review "$FIX" --json --inject-fault review_critical:malformed >"$T/f.json" 2>/dev/null
eq "output failing the finding schema is an error, not retried" \
   "$(field "$T/f.json" "(d['review']['agents']['critical']['status'], d['review']['agents']['critical']['attempts'], d['critical'])")" \
   "('failed', 1, [])"
has "the schema failure names the field" "$(field "$T/f.json" "d['review']['agents']['critical']['errors'][0]['error']")" \
   "critical[0].severity: required"

# --- edge cases ----------------------------------------------------------------
mkdir -p "$T/empty"
$MADF review "$T/empty" --json >"$T/x.json" 2>/dev/null
eq "an empty tree completes" "$?" 0
eq "an empty tree has no findings and says why" \
   "$(field "$T/x.json" "(len(d['critical']) + len(d['debt']) + len(d['improvement']), d['review']['notes'])")" \
   "(0, ['no files to review: the tree is empty (after the skipped files)'])"
mkdir -p "$T/huge"
printf 'int small(void) { return 0; }\n' >"$T/huge/small.c"
head -c 3000 /dev/zero | tr '\0' 'x' >"$T/huge/big.c"
MADF_REVIEW_MAX_FILE_BYTES=1000 $MADF review "$T/huge" --json >"$T/x.json" 2>/dev/null
eq "a huge file is skipped with a note" "$(field "$T/x.json" "(d['review']['files'], d['review']['notes'][0])")" \
   "(1, 'big.c: 3000 bytes, over the 1000-byte limit per file: skipped (huge file)')"

# --- SARIF 2.1.0 ---------------------------------------------------------------
# (no Debian package ships the OASIS schema, so the rules a validator would
# apply are checked here one by one)
$MADF review "$FIX" --sarif "$T/a.sarif" >/dev/null 2>&1
eq "--sarif: the review completes" "$?" 0
eq "SARIF: version and one run per finding agent" \
   "$(field "$T/a.sarif" "(d['version'], [r['tool']['driver']['name'] for r in d['runs']])")" \
   "('2.1.0', ['madf-review-critical', 'madf-review-debt', 'madf-review-improvement'])"
eq "SARIF: critical results are errors at the planted lines" \
   "$(field "$T/a.sarif" "[(x['ruleId'], x['level'], x['locations'][0]['physicalLocation']['artifactLocation']['uri'], x['locations'][0]['physicalLocation']['region']['startLine']) for x in d['runs'][0]['results']]")" \
   "[('CWE-788', 'error', 'src/buffer.c', 9), ('CWE-134', 'error', 'src/buffer.c', 15), ('CWE-798', 'error', 'src/config.c', 4), ('CWE-415', 'error', 'src/memory.c', 12)]"
eq "SARIF: debt and improvement are warning or note; every result complete" \
   "$(field "$T/a.sarif" "all(x['level'] in ('warning', 'note') for r in d['runs'][1:] for x in r['results']) and all(x['message']['text'] and x['ruleId'] and x['locations'][0]['physicalLocation']['region']['startLine'] >= 1 and not x['locations'][0]['physicalLocation']['artifactLocation']['uri'].startswith('/') and x['partialFingerprints']['primaryLocationLineHash'] for r in d['runs'] for x in r['results']) and all(x['ruleId'] in [u['id'] for u in r['tool']['driver']['rules']] for r in d['runs'] for x in r['results'])")" True
eq "SARIF: shellcheck's rule id" "$(field "$T/a.sarif" "d['runs'][2]['results'][0]['ruleId']")" SC2086
fp() { field "$1" "[x['partialFingerprints']['primaryLocationLineHash'] for x in d['runs'][0]['results'] if x['ruleId'] == 'CWE-415'][0]"; }
fp1=$(fp "$T/a.sarif")
$MADF review "$FIX" --agents critical --sarif "$T/b.sarif" >/dev/null 2>&1
eq "SARIF: fingerprints are stable across runs" "$(fp "$T/b.sarif")" "$fp1"
{ echo '/* a line added above */'; cat "$FIX/src/memory.c"; } >"$T/mem.c" && mv "$T/mem.c" "$FIX/src/memory.c"
$MADF review "$FIX" --agents critical --sarif "$T/c.sarif" >/dev/null 2>&1
eq "SARIF: the double free moved to line 13" \
   "$(field "$T/c.sarif" "[x['locations'][0]['physicalLocation']['region']['startLine'] for x in d['runs'][0]['results'] if x['ruleId'] == 'CWE-415']")" "[13]"
eq "SARIF: and keeps its fingerprint" "$(fp "$T/c.sarif")" "$fp1"

# a file name that is not UTF-8 (or has a control character) is skipped, named safely
mkdir -p "$T/names"
printf 'int ok(void) { return 0; }\n' >"$T/names/ok.c"
printf 'int x(void) { return 0; }\n' >"$T/names/$(printf 'caf\351.c')"
printf 'int y(void) { return 0; }\n' >"$T/names/$(printf 'esc\033[31m.c')"
$MADF review "$T/names" --json >"$T/x.json" 2>/dev/null
eq "odd file names: the review completes" "$?" 0
eq "odd file names are skipped with a note" "$(field "$T/x.json" "(d['review']['files'], len([n for n in d['review']['notes'] if 'not valid UTF-8 or has control characters: skipped' in n]))")" "(1, 2)"
hasnt "... and no escape sequence reaches the output" "$(cat "$T/x.json")" "$(printf '\033')"

# --- include, exclude, since, checklist ----------------------------------------
$MADF review "$TOP/tests/fixtures/review" --json --include 'src/mem*' >"$T/s.json" 2>/dev/null
eq "--include keeps the matching files only" "$(places "$T/s.json" critical)" "src/memory.c:12:CWE-415"
$MADF review "$TOP/tests/fixtures/review" --json --exclude 'src/*' --agents critical,improvement >"$T/s.json" 2>/dev/null
eq "--exclude leaves the matching files out" "$(field "$T/s.json" "(len(d['critical']), [f['file'] for f in d['improvement']])")" \
   "(0, ['scripts/deploy.sh'])"
G=$T/g
cp -a "$TOP/tests/fixtures/review" "$G"
git -C "$G" init -q && git -C "$G" add -A && \
	git -C "$G" -c user.name=t -c user.email=t@example.invalid commit -qm fixture
{ echo '/* a line added above */'; cat "$G/src/memory.c"; } >"$T/mem.c" && mv "$T/mem.c" "$G/src/memory.c"
printf '/* TODO: new work */\nint new_fn(void) { return 1; }\n' >"$G/src/new.c"
$MADF review "$G" --json --since HEAD --agents debt,critical >"$T/s.json" 2>/dev/null
eq "--since REV: only what changed (and the new files)" "$(places "$T/s.json" debt) | $(places "$T/s.json" critical)" \
   "src/memory.c:11:CWE-546 src/new.c:1:CWE-546 | src/memory.c:13:CWE-415"
has "--since says what it selected" "$(field "$T/s.json" "d['review']['notes']")" "2 of 10 files selected by since HEAD"
$MADF review "$G" --json --since no-such-rev >"$T/e.json" 2>/dev/null
eq "--since an unknown revision: 400 on params.since" "$(field "$T/e.json" "(d['error']['status'], d['error']['field'])")" \
   "(400, 'params.since')"
echo '{"debt": ["complexity"], "critical": ["secrets"]}' >"$T/checklist.json"
$MADF review "$TOP/tests/fixtures/review" --json --checklist "$T/checklist.json" --agents debt,critical >"$T/s.json" 2>/dev/null
eq "--checklist FILE: each agent runs only its listed checks" "$(places "$T/s.json" debt) | $(places "$T/s.json" critical)" \
   "src/parse.c:4:CWE-1121 | src/config.c:4:CWE-798"
echo '{"debt": ["lint"]}' >"$T/checklist.json"
check_fails "--checklist with an unknown check is invalid input (exit 2)" 2 \
	$MADF review "$TOP/tests/fixtures/review" --checklist "$T/checklist.json"

# --- a missing analyzer ----------------------------------------------------
mkdir -p "$T/bin"
for p in flawfinder shellcheck ctags cloc pmccabe dot python3 perl sh gcc clang as; do
	q=$(command -v $p) && ln -s "$q" "$T/bin/$p"
done
PATH=$T/bin $MADF review "$FIX" --json --agents critical >"$T/m.json" 2>/dev/null
eq "a missing analyzer: the review still completes" "$?" 0
eq "a missing analyzer is reported" "$(field "$T/m.json" "d['review']['tools']['cppcheck']")" missing
has "and what was skipped" "$(field "$T/m.json" "'\n'.join(d['review']['notes'])")" \
   "cppcheck is not installed (make deps installs it): skipped C defect checks (double free, bounds, null pointers)"
eq "without cppcheck the others still find the planted defects (the double free on line 13 now)" \
   "$(places "$T/m.json" critical)" \
   "src/buffer.c:9:CWE-787 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:13:CWE-415"

done_testing
