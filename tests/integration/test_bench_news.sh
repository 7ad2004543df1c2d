# madf bench news: the validator's verdicts on the extractor's acts. Every
# distinct act the extractor reports as done is judged once: right and
# wrong add up to the "by event" right and wrong counts; on dev no act
# the labels call wrong is confirmed, at most one right act is disputed
# and at least a third of the right ones are confirmed (December 2026:
# right 56: 21 confirmed, 1 disputed, 34 unverified; wrong 4: 0, 1, 3;
# the counts move with the extractor's readings, so they are not pinned);
# the table prints the JSON's counts; --verdicts lists each act with its
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
set -- $out
eq "dev: no wrong act confirmed" "$4" 0
check "dev: at most one right act disputed ($2)" test "$2" -le 1
check "dev: a third of the right acts confirmed or more ($1 of $(($1 + $2 + $3)))" \
	test $((3 * $1)) -ge $(($1 + $2 + $3))
$MADF bench news >"$D/bench.txt"
got=$(sed -n '/^dev:/,/^$/p' "$D/bench.txt" | grep -E '^  (right|wrong) ' | tr -s ' ')
eq "the table prints the JSON's dev counts" "$got" " right $(($1 + $2 + $3)) $1 $2 $3
 wrong $(($4 + $5 + $6)) $4 $5 $6"
$MADF bench news --verdicts dev >"$D/verdicts.txt"
eq "--verdicts dev lists every act judged" "$(wc -l <"$D/verdicts.txt" | tr -d ' ')" \
	$(($1 + $2 + $3 + $4 + $5 + $6))
has "--verdicts names the verdict and its evidence" "$(cat "$D/verdicts.txt")" \
	"right BoE cut 1987-03-18 GBP/USD: confirmed: reports: 2 independent reports of BoE cut on 1987-03-18"
out=$($MADF bench news --market "$D/none.csv" 2>&1)
eq "a missing market file exits 1" "$?" 1
has "and says which file and why" "$out" "the market data $D/none.csv (--market): cannot open"
done_testing
