# The validator reads no story published after the run's window: a report
# as of Friday cannot have known what Saturday's news said. A Bank of Japan
# intervention reported by one Tokyo story on the window's last day and by
# a London story the day after stays unverified (one independent report),
# and the verdict names only the Tokyo story; a run as of the next day,
# whose window holds both, confirms it on the two.
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$T/news.jsonl
cat >"$NEWS" <<'JSON'
{"id": "t-1", "source": "Reuters", "published_at": "1987-03-27T03:10:00Z", "topics": ["money-fx"], "places": ["japan"], "orgs": [], "title": "BANK OF JAPAN BUYS DOLLARS IN TOKYO - DEALERS", "dateline": "TOKYO, March 27 -", "body": "The Bank of Japan bought dollars against the yen in Tokyo today to stem the dollar's fall, dealers said.\n"}
{"id": "t-2", "source": "Reuters", "published_at": "1987-03-28T10:00:00Z", "topics": ["money-fx"], "places": ["uk"], "orgs": [], "title": "DEALERS SAY BANK OF JAPAN BOUGHT DOLLARS FRIDAY", "dateline": "LONDON, March 28 -", "body": "The Bank of Japan bought dollars against the yen in Tokyo on Friday, March 27, London dealers said.\n"}
JSON
# run AS_OF: the weekly run for USD/JPY as of AS_OF; its verdict on the
# BOJ intervention of 1987-03-27 in $T/verdict.
run() {
	rm -rf "$T/d" "$T/rep"
	MADF_LLM=off MADF_DATA_DIR=$T/d MADF_LOG_DIR=$T/logs "$MADF" run weekly --as-of "$1" \
		--pairs USD/JPY --market "csv:$FX" --news "jsonl:$NEWS" --report-dir "$T/rep" \
		>"$T/run.out" 2>&1
	python3 - "$T/rep" >"$T/verdict" <<'PY'
import glob, sys
lines = open(glob.glob(sys.argv[1] + "/*.md")[0]).read().split("\n")
for i, l in enumerate(lines):
    if "BOJ intervention on 1987-03-27" in l and i + 1 < len(lines) and "Reason:" in lines[i + 1]:
        print(lines[i + 1].strip())
        break
PY
}
run 1987-03-27T23:59:00Z
v=$(cat "$T/verdict")
has "as of Friday: the act is found" "$v" "BOJ"
has "as of Friday: one report, unverified" "$v" "unverified"
hasnt "as of Friday: Saturday's London story is not read" "$v" "t-2"
run 1987-03-28T23:59:00Z
v=$(cat "$T/verdict")
has "as of Saturday: two independent reports confirm it" "$v" "confirmed"
has "as of Saturday: the London story is cited" "$v" "t-2"
done_testing
