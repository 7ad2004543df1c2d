# madf bench review on a tiny suite in the Juliet C/C++ 1.3 layout
# (tests/fixtures/juliet: two double frees (flow 01, and flow 02 whose type
# comes from testcasesupport/std_testcase.h, which the compilers need), a
# format string flawfinder finds in the bad function and, with a constant
# source, in the good one (clang's taint checker only in the bad one), an
# overflow across two files nobody finds, a w32 and a C++ file left out):
# the crew and each analyzer alone (cppcheck, flawfinder, gcc -fanalyzer,
# clang --analyze) and their union, scored line by line.
. tests/integration/lib.sh
SUITE=$TOP/tests/fixtures/juliet
unset MADF_JULIET 2>/dev/null || true

# get FILE EXPR: EXPR with d = the bench's JSON.
get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# row FILE RUN: recall, precision, cases hit, hits, false alarms, off line.
row() { get "$1" "(lambda r: '%.3f %s %d %d %d %d' % (r['recall'], 'none' if r['precision'] is None else '%.3f' % r['precision'], r['cases_hit'], r['hits'], r['false_alarms'], r['off_line']))(d['runs']['$2'])"; }

"$MADF" bench review "$SUITE" --json >"$T/b.json" 2>"$T/b.err"
eq "the bench exits 0" "$?" 0
eq "4 test cases in 5 C files (the w32 and the C++ file left out), 20 defect lines" \
   "$(get "$T/b.json" "(d['cases'], d['files'], d['defect_lines'], d['cwes'], d['split'], d['tuned_on'])")" \
   "(4, 5, 20, [121, 134, 415], 'all', 'odd')"
eq "crew: the double frees and the format string (two tools agree), not the good function's printf" \
   "$(row "$T/b.json" crew)" "0.750 1.000 3 3 0 0"
eq "cppcheck alone: the double frees only" "$(row "$T/b.json" cppcheck)" "0.500 1.000 2 2 0 0"
eq "flawfinder alone: the format string, a false alarm, the array off the line" \
   "$(row "$T/b.json" flawfinder)" "0.250 0.500 1 1 1 1"
eq "gcc-analyzer alone: both double frees (flow 02 compiles with the suite's header)" \
   "$(row "$T/b.json" gcc_analyzer)" "0.500 1.000 2 2 0 0"
eq "clang-analyzer alone: flow 02's double free and the tainted format string" \
   "$(row "$T/b.json" clang_analyzer)" "0.500 1.000 2 2 0 0"
eq "madf-flow alone: the format string from getenv, not the good function's constant" \
   "$(row "$T/b.json" flow)" "0.250 1.000 1 1 0 0"
eq "the union of the four (madf-flow not in it)" "$(row "$T/b.json" union)" "0.750 0.750 3 3 1 1"
eq "the union of the five" "$(row "$T/b.json" union5)" "0.750 0.750 3 3 1 1"
eq "cases hit by CWE (crew, cppcheck, flawfinder, gcc, clang, union)" \
   "$(get "$T/b.json" "[(k, v['cases'], v['crew'], v['cppcheck'], v['flawfinder'], v['gcc_analyzer'], v['clang_analyzer'], v['flow'], v['union']) for k, v in sorted(d['by_cwe'].items())]")" \
   "[('121', 1, 0, 0, 0, 0, 0, 0, 0), ('134', 1, 1, 0, 1, 0, 1, 1, 1), ('415', 2, 2, 2, 0, 2, 1, 0, 2)]"
tmp=$(sed -n 's/.*C files copied to //p' "$T/b.err")
check "the copy of the suite is removed" test -n "$tmp" -a ! -e "$tmp"

out=$("$MADF" bench review "$SUITE" --cwe CWE-415 2>/dev/null)
has "the table prints recall and precision side by side" "$out" \
   "crew (critical)       1.000     1.000         2/2"
has "... for each analyzer alone in the same run" "$out" "flawfinder alone      0.000         -         0/2"
has "... gcc's analyzer" "$out" "gcc-analyzer alone    1.000     1.000         2/2"
has "... clang's analyzer" "$out" "clang-analyzer alone  0.500     1.000         1/2"
has "... and the union of the four" "$out" "union of the four     1.000     1.000         2/2"
has "... madf's own finder" "$out" "madf-flow alone       0.000         -         0/2"
has "--cwe chooses the CWEs" "$out" "CWE 415: 2 test cases in 2 C files, 10 defect lines"
has "the table says what the keep-policy was tuned on" "$out" \
   "test cases: all (the critical agent's keep-policy was tuned on the odd-numbered cases only; --split even for the held-out half)"

# --split: the halves by flow variant number
"$MADF" bench review "$SUITE" --json --split even --findings "$T/f.jsonl" >"$T/e.json" 2>/dev/null
eq "--split even: only the flow 02 case" "$(get "$T/e.json" "(d['split'], d['cases'], d['files'])")" "('even', 1, 1)"
eq "--split even: the crew finds it" "$(row "$T/e.json" crew)" "1.000 1.000 1 1 0 0"
has "--split even says none of it was tuned on" "$("$MADF" bench review "$SUITE" --split even 2>/dev/null)" \
   "the even-numbered half (flow variants 02, 04, ...) (the critical agent's keep-policy was tuned on the odd-numbered cases only: none of these)"
eq "--findings: each scored finding as a JSON line (run, tool, rule, verdict)" \
   "$(python3 -c "import json,sys; print(sorted({(r['run'], r['tool'], r['rule'], r['line'], r['verdict']) for r in map(json.loads, open(sys.argv[1])) if r['run'] in ('gcc_analyzer', 'clang_analyzer')}))" "$T/f.jsonl")" \
   "[('clang_analyzer', 'clang-analyzer', 'unix.Malloc', 22, 'hit'), ('gcc_analyzer', 'gcc-analyzer', '-Wanalyzer-double-free', 22, 'hit')]"
"$MADF" bench review "$SUITE" --json --split odd >"$T/o.json" 2>/dev/null
eq "--split odd: the three odd cases" "$(get "$T/o.json" "(d['split'], d['cases'])")" "('odd', 3)"
check_fails "a bad --split is a usage error" 2 "$MADF" bench review "$SUITE" --split half

check_fails "no suite is a usage error" 2 "$MADF" bench review
check_fails "a directory without testcases/ is a usage error" 2 "$MADF" bench review "$T"
check_fails "a bad --cwe is a usage error" 2 "$MADF" bench review "$SUITE" --cwe 41x
check_fails "no case of the chosen CWEs is a usage error" 2 "$MADF" bench review "$SUITE" --cwe 78
has "... saying so" "$("$MADF" bench review "$SUITE" --cwe 78 2>&1)" "no C test cases of the chosen CWEs"

# --runs: only some runs (a union brings its analyzers)
out=$("$MADF" bench review "$SUITE" --cwe 134 --runs flow 2>/dev/null)
has "--runs flow: madf's finder alone" "$out" "madf-flow alone       1.000     1.000         1/1"
has "--runs flow: the crew not run" "$out" "crew (critical)      not run"
has "--runs flow: the union not run" "$out" "union of the four    not run"
"$MADF" bench review "$SUITE" --cwe 134 --runs union --json >"$T/u.json" 2>/dev/null
eq "--runs union runs the four analyzers, not the crew nor madf-flow" \
   "$(get "$T/u.json" "sorted(d['runs'])")" "['clang_analyzer', 'cppcheck', 'flawfinder', 'gcc_analyzer', 'union']"
out=$("$MADF" bench review "$SUITE" --runs nope 2>&1)
eq "--runs with an unknown run is a usage error" "$?" 2
has "... that names the runs" "$out" "--runs: a comma-separated list of crew, cppcheck"

done_testing
