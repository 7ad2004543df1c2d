# madf bench review on a tiny suite in the Juliet C/C++ 1.3 layout
# (tests/fixtures/juliet: a double free cppcheck finds, a format string
# flawfinder finds in the bad function and, with a constant source, in the
# good one, an overflow across two files nobody finds, a w32 and a C++ file
# left out): the crew and each analyzer alone, scored line by line.
. tests/integration/lib.sh
SUITE=$TOP/tests/fixtures/juliet
unset MADF_JULIET 2>/dev/null || true

# get FILE EXPR: EXPR with d = the bench's JSON.
get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# row FILE RUN: recall, precision, cases hit, hits, false alarms, off line.
row() { get "$1" "(lambda r: '%.3f %s %d %d %d %d' % (r['recall'], 'none' if r['precision'] is None else '%.3f' % r['precision'], r['cases_hit'], r['hits'], r['false_alarms'], r['off_line']))(d['runs']['$2'])"; }

"$MADF" bench review "$SUITE" --json >"$T/b.json" 2>"$T/b.err"
eq "the bench exits 0" "$?" 0
eq "3 test cases in 4 C files (the w32 and the C++ file left out), 13 defect lines" \
   "$(get "$T/b.json" "(d['cases'], d['files'], d['defect_lines'], d['cwes'])")" "(3, 4, 13, [121, 134, 415])"
eq "crew: both found defects hit, the good function's printf a false alarm" "$(row "$T/b.json" crew)" \
   "0.667 0.667 2 2 1 0"
eq "cppcheck alone: the double free only" "$(row "$T/b.json" cppcheck)" "0.333 1.000 1 1 0 0"
eq "flawfinder alone: the format string, a false alarm, the array off the line" \
   "$(row "$T/b.json" flawfinder)" "0.333 0.500 1 1 1 1"
eq "the union of the two" "$(row "$T/b.json" union)" "0.667 0.667 2 2 1 1"
eq "cases hit by CWE (crew, cppcheck, flawfinder, union)" \
   "$(get "$T/b.json" "[(k, v['cases'], v['crew'], v['cppcheck'], v['flawfinder'], v['union']) for k, v in sorted(d['by_cwe'].items())]")" \
   "[('121', 1, 0, 0, 0, 0), ('134', 1, 1, 0, 1, 1), ('415', 1, 1, 1, 0, 1)]"
tmp=$(sed -n 's/.*C files copied to //p' "$T/b.err")
check "the copy of the suite is removed" test -n "$tmp" -a ! -e "$tmp"

out=$("$MADF" bench review "$SUITE" --cwe CWE-415 2>/dev/null)
has "the table prints recall and precision side by side" "$out" \
   "crew (critical)     1.000     1.000         1/1"
has "... for each analyzer alone in the same run" "$out" "flawfinder alone    0.000         -         0/1"
has "--cwe chooses the CWEs" "$out" "CWE 415: 1 test cases in 1 C files, 3 defect lines"

check_fails "no suite is a usage error" 2 "$MADF" bench review
check_fails "a directory without testcases/ is a usage error" 2 "$MADF" bench review "$T"
check_fails "a bad --cwe is a usage error" 2 "$MADF" bench review "$SUITE" --cwe 41x
check_fails "no case of the chosen CWEs is a usage error" 2 "$MADF" bench review "$SUITE" --cwe 78
has "... saying so" "$("$MADF" bench review "$SUITE" --cwe 78 2>&1)" "no C test cases of the chosen CWEs"
done_testing
