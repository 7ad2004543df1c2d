# madf review --sarif checked by real validators: python3-jsonschema
# against the SARIF 2.1.0 rtm.5 schema (SchemaStore's draft-04 copy, as
# @microsoft/jest-sarif ships it) and sarif-sdk's sarif-2.1.0.json (draft 2020-12),
# and Microsoft's SARIF Multitool `validate` (its output log is read: the
# Multitool exits 0 even when it finds errors). The validators come from
# npm into build/npm (make sarif-validators). A broken copy of the log
# shows each validator can fail.
. tests/integration/lib.sh

PY=${SEED_PEER_PYTHON:-/usr/bin/python3}
if ! make -C "$TOP" -s sarif-validators >"$T/npm.log" 2>&1; then
	fail "the SARIF validators install (make sarif-validators)" "$(tail -5 "$T/npm.log")"
	done_testing; exit
fi
NM=$TOP/build/npm/node_modules/@microsoft
RTM5=$NM/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json
SDK=$NM/sarif-multitool-linux/sarif-2.1.0.json
MT=$NM/sarif-multitool-linux/Sarif.Multitool

FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
$MADF review "$FIX" --sarif "$T/r.sarif" >/dev/null 2>"$T/r.err"
eq "the review with --sarif exits 0" "$?" 0

# jsonschema SCHEMA FILE: the schema's draft, then the number of errors and
# the first three (path: message).
jsonschema() {
	"$PY" -c '
import json, sys, jsonschema
s = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
C = jsonschema.validators.validator_for(s)
C.check_schema(s)
errs = sorted(C(s).iter_errors(d), key=lambda e: list(e.absolute_path))
print(C.__name__, len(errs), "; ".join("/".join(map(str, e.absolute_path)) + ": " + e.message[:80] for e in errs[:3]))
' "$1" "$2" 2>&1
}
# multitool FILE: "LEVEL RULE" of each result of the Multitool's log, sorted.
multitool() {
	rm -f "$T/mt.sarif"
	"$MT" validate "$1" -o "$T/mt.sarif" --log ForceOverwrite >"$T/mt.log" 2>&1 || { echo "exit $?: $(tail -3 "$T/mt.log")"; return; }
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(r.get("level", "warning") + ":" + r["ruleId"] for run in d["runs"] for r in run.get("results", []))) or "clean")
' "$T/mt.sarif" 2>&1
}

eq "the log has a run per finding agent with the review's findings" \
   "$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print([(r["tool"]["driver"]["name"], len(r["results"])) for r in d["runs"]])' "$T/r.sarif")" \
   "[('madf-review-critical', 4), ('madf-review-debt', 3), ('madf-review-improvement', 4)]"
eq "jsonschema: valid against the SARIF 2.1.0 rtm.5 schema (draft-04)" "$(jsonschema "$RTM5" "$T/r.sarif")" "Draft4Validator 0 "
eq "jsonschema: valid against sarif-sdk's 2.1.0 schema (draft 2020-12)" "$(jsonschema "$SDK" "$T/r.sarif")" "Draft202012Validator 0 "
eq "SARIF Multitool validate: no error, warning or note" "$(multitool "$T/r.sarif")" "clean"

# The broken copy: startLine 0 in the first result, no message in the second,
# and a level SARIF does not have in the third.
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1])); rs = d["runs"][0]["results"]
rs[0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
del rs[1]["message"]
rs[2]["level"] = "critical"
json.dump(d, open(sys.argv[2], "w"))
' "$T/r.sarif" "$T/bad.sarif"
for s in "$RTM5" "$SDK"; do
	out=$(jsonschema "$s" "$T/bad.sarif")
	eq "jsonschema rejects the broken copy, 3 errors ($(basename "$s"))" "$(echo "$out" | cut -d' ' -f2)" 3
	has "... startLine 0 is named" "$out" "runs/0/results/0/locations/0/physicalLocation/region/startLine: 0 is less than the minimum of 1"
done
eq "SARIF Multitool reports the missing message, startLine 0 and the bad level" \
   "$(multitool "$T/bad.sarif")" "error:JSON1002 error:JSON1008 error:JSON1019"

done_testing
