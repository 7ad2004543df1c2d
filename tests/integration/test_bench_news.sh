# madf bench news: the validator's verdicts on the extractor's acts. Every
# distinct act the extractor reports as done is judged once: right and
# wrong add up to the "by event" right and wrong counts; the dev table is
# the one measured when the verdict rules were last changed (price
# corroborates, never refutes); --verdicts lists each act with its
# verdict; a missing market file is a clear error.
. tests/integration/lib.sh
mkdir -p "$D"
$MADF bench news --json >"$D/bench.json" 2>"$D/bench.err"
eq "bench news --json exits 0" "$?" 0
out=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
for s, v in j["splits"].items():
    e = v["new"]["by_event"]["all"]
    val = v["validator"]
    print(s, sum(val["right"].values()) == e["tp"], sum(val["wrong"].values()) == e["fp"])
' "$D/bench.json")
eq "every act the extractor reports is judged once, right or wrong as by event" "$out" \
"dev True True
held-out True True
named-week True True"
out=$(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["splits"]["dev"]["validator"]
print(*(v[k][x] for k in ("right", "wrong") for x in ("confirmed", "disputed", "unverified")))
' "$D/bench.json")
eq "dev: right 20 confirmed, 1 disputed, 35 unverified; wrong 0, 1, 3" "$out" "20 1 35 0 1 3"
$MADF bench news >"$D/bench.txt"
out=$(sed -n '/^dev:/,/^$/p' "$D/bench.txt" | grep -E '^  (right|wrong) ' | tr -s ' ')
eq "the table prints the same dev counts" "$out" " right 56 20 1 35
 wrong 4 0 1 3"
$MADF bench news --verdicts dev >"$D/verdicts.txt"
eq "--verdicts dev lists the 60 acts" "$(wc -l <"$D/verdicts.txt" | tr -d ' ')" 60
has "--verdicts names the verdict and its evidence" "$(cat "$D/verdicts.txt")" \
	"right BoE cut 1987-03-18 GBP/USD: confirmed: reports: 2 independent reports of BoE cut on 1987-03-18"
out=$($MADF bench news --market "$D/none.csv" 2>&1)
eq "a missing market file exits 1" "$?" 1
has "and says which file and why" "$out" "the market data $D/none.csv (--market): cannot open"
done_testing
