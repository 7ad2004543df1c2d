# Live data over HTTP against the project's fixture server on 127.0.0.1:
# ECB euro reference rates (crosses computed from the fixture CSVs), RSS
# and Atom feeds, the cache and its TTLs, the per-host rate limit, 429
# with Retry-After, 503, timeouts and garbage, the offline fallback on
# stale cached data, and no cache at all.
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
RSS=$TOP/../shared/data/news/reuters-1987-03-money-fx-interest.rss.xml
FIX=$TOP/tests/integration/fixtures
LC="python3 tests/integration/live_check.py"
CHK="python3 tests/integration/report_check.py"
PAIRS="USD/JPY EUR/USD AUD/USD GBP/USD"
PAIRS_CSV=$(echo $PAIRS | tr ' ' ,)
export MADF_HTTP_MIN_INTERVAL_MS=500
unset MADF_ECB_TTL_S MADF_RSS_TTL_S MADF_HTTP_TIMEOUT_MS MADF_HTTP_RETRY_MAX_S 2>/dev/null || true

# start_server NAME [ARGS...]: a fixture server; sets PORT and PID.
start_server() {
	name=$1; shift
	python3 tests/integration/fixture_server.py --log "$T/$name.log" --feed reuters.rss="$RSS" \
		"$@" >"$T/$name.port" 2>"$T/$name.err" &
	PID=$!
	i=0
	while [ ! -s "$T/$name.port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	PORT=$(head -1 "$T/$name.port")
}
stop_server() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
mode() { python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1]).read()" \
	"http://127.0.0.1:$1/_mode/$2"; }
# weekly NAME MARKET NEWS [ENV...]: runs the 2017-03-17 week; $T/NAME.{out,err,rc}
weekly() {
	_n=$1 _m=$2 _nw=$3; shift 3
	env "$@" $MADF run weekly --fresh --as-of 2017-03-17 --pairs "$PAIRS_CSV" --market "$_m" \
		--news "$_nw" --report-dir "$T/$_n" >"$T/$_n.out" 2>"$T/$_n.err"
	echo $? >"$T/$_n.rc"
}
REP=2017-W11-asia-g10-fx.json

# --- the fixtures are real data ------------------------------------------------------------
mkdir -p "$T/regen"
python3 "$FIX/ecb/make_fixtures.py" "$FX" "$T/regen"
check "the ECB fixtures are what make_fixtures.py derives from the FRED rates" \
	diff -r -x make_fixtures.py -x '__pycache__' "$FIX/ecb" "$T/regen"

# --- first run: everything over HTTP --------------------------------------------------------
start_server s1
S1=$PID P1=$PORT
ECB1=ecb:http://127.0.0.1:$P1/service/data/EXR
FEEDS1=rss:http://127.0.0.1:$P1/feeds/reuters.rss,http://127.0.0.1:$P1/feeds/central-banks.atom
weekly r1 "$ECB1" "$FEEDS1"
eq "a run on the ECB source and two feeds exits 0" "$(cat "$T/r1.rc")" 0
check "its closes are the crosses of the ECB fixture CSVs" $LC closes "$T/r1/$REP" "$FIX/ecb" $PAIRS
check "every pair has its figures" $CHK "$T/r1/$REP" all_pairs_have_figures "$PAIRS_CSV"
md=$(cat "$T/r1/2017-W11-asia-g10-fx.md")
has "the report names the ECB source and its host" "$md" "ecb (127.0.0.1:$P1)"
hasnt "live data is not labelled simulated" "$md" "imulated"
has "the Atom feed's stories reach the report" "$md" "urn:madf:fixture:"
n1=$($LC nreq "$T/s1.log")
eq "one request per currency and feed (USD JPY AUD GBP, 2 feeds)" "$n1" 6
eq "the ECB series are asked in the Data Portal's shape" \
	"$($LC nreq "$T/s1.log" "/service/data/EXR/D.JPY.EUR.SP00.A?startPeriod=2016-10-21&endPeriod=2017-03-17&format=csvdata")" 1
ver=$($MADF --version | awk '{print $NF}')
check "every request sends a User-Agent naming madf and its version" $LC user_agent "$T/s1.log" "madf/$ver"
# (the server stamps arrivals: allow it 50 ms of jitter)
check "requests to one host are at least MADF_HTTP_MIN_INTERVAL_MS apart" $LC min_gap "$T/s1.log" 0.45
check "the answers were cached" sh -c "ls '$D'/cache/ecb/*/*.json '$D'/cache/rss/*/*.json"
hasnt "nothing to warn about" "$(cat "$T/r1.err")" "warning"

# --- within the TTL: no request ------------------------------------------------------------------
weekly r2 "$ECB1" "$FEEDS1"
eq "a second run within the TTL exits 0" "$(cat "$T/r2.rc")" 0
eq "and sends no request" "$($LC nreq "$T/s1.log")" "$n1"
check "with the same closes" $LC closes "$T/r2/$REP" "$FIX/ecb" $PAIRS
# Without the tools' result cache, the live cache alone answers.
rm -rf "$D/cache/market" "$D/cache/news" "$D/cache/validation"
weekly r3 "$ECB1" "$FEEDS1"
eq "with the tool results dropped, the live cache alone answers (exit 0)" "$(cat "$T/r3.rc")" 0
eq "still without a request" "$($LC nreq "$T/s1.log")" "$n1"
check "and the same closes" $LC closes "$T/r3/$REP" "$FIX/ecb" $PAIRS

# --- offline: TTL over, server gone: stale cache with a warning --------------------------------
stop_server $S1
sleep 2   # let the 1-second TTL below run out
weekly r4 "$ECB1" "$FEEDS1" MADF_ECB_TTL_S=1 MADF_RSS_TTL_S=1
eq "offline with an expired cache the run still exits 0" "$(cat "$T/r4.rc")" 0
err=$(cat "$T/r4.err")
has "stderr warns: the ECB cannot be reached" "$err" "warning: ecb: cannot reach 127.0.0.1:$P1 ("
has "naming the cached data and its time" "$err" "using cached rates from 20"
has "the feeds too" "$err" "warning: rss: cannot reach 127.0.0.1:$P1 ("
eq "each warning is shown once on stderr" "$(grep -c 'warning: ecb:' "$T/r4.err")" 1
check "the agent's log has the warning" sh -c "grep -h data_source_degraded '$T'/logs/agents/research_agent_*/events/*.jsonl | grep -q 'ecb: cannot reach 127.0.0.1:$P1'"
check "the closes come from the cached rates" $LC closes "$T/r4/$REP" "$FIX/ecb" $PAIRS
has "the report says the rates are cached" "$(cat "$T/r4/2017-W11-asia-g10-fx.md")" "ecb (127.0.0.1:$P1; cached 20"

# --- no cache, no server: a clear error, no crash ---------------------------------------------------
out=$($MADF --data-dir "$T/empty" run weekly --as-of 2017-03-17 --pairs USD/JPY --market "$ECB1" \
	--report-dir "$T/r5" 2>"$T/r5.err"); rc=$?
eq "with no cache and no server the run ends with its failed task (exit 1, no crash)" "$rc" 1
has "stderr names the failed task" "$(cat "$T/r5.err")" "finished with 1 of 2 tasks failed: USDJPY-market"
check "the task failed the normal way, with the reason" $CHK "$T/r5/$REP" failure failed research_agent_1
has "which names the source, the reason and the missing cache" "$(cat "$T/r5/$REP")" \
	"ecb: cannot reach 127.0.0.1:$P1 ("
has "and that nothing was cached" "$(cat "$T/r5/$REP")" "no cached rates to fall back on"
has "stderr says so too" "$(cat "$T/r5.err")" "madf: error: fx_rates: ecb: cannot reach 127.0.0.1:$P1 ("
hasnt "no sanitizer report" "$(cat "$T/r5.err")" "Sanitizer"

# --- 429 with Retry-After ----------------------------------------------------------------------------
start_server s2 --mode 429-once:1
S2=$PID P2=$PORT
ECB2=ecb:http://127.0.0.1:$P2/service/data/EXR
weekly r6 "$ECB2" sim
eq "after a 429 the run exits 0" "$(cat "$T/r6.rc")" 0
check "the request was made again no sooner than Retry-After said" $LC retried "$T/s2.log" 1
check "and the closes are right" $LC closes "$T/r6/$REP" "$FIX/ecb" $PAIRS
hasnt "no warning: the retry succeeded" "$(cat "$T/r6.err")" "warning"

# --- 503, garbage, too slow, a Retry-After too long: stale data with the reason ---------------------
for case in "503|answered HTTP 503" "garbage|unusable answer from 127.0.0.1:$P2 (" \
	    "slow:5|no answer from 127.0.0.1:$P2 within 1000 ms" \
	    "429:3600|answered HTTP 429 with Retry-After 3600 s"; do
	fm=${case%%|*} why=${case#*|}
	mode "$P2" "$fm"
	sleep 2   # let the 1-second TTL run out
	weekly "r7$fm" "$ECB2" sim MADF_ECB_TTL_S=1 MADF_HTTP_TIMEOUT_MS=1000
	eq "$fm: the run exits 0" "$(cat "$T/r7$fm.rc")" 0
	has "$fm: stderr names the reason" "$(cat "$T/r7$fm.err")" "$why"
	has "$fm: and uses the cached rates" "$(cat "$T/r7$fm.err")" "using cached rates from"
	check "$fm: the closes are still right" $LC closes "$T/r7$fm/$REP" "$FIX/ecb" $PAIRS
done
mode "$P2" ok

# --- RSS over HTTP: the Reuters feed, March 1987 ---------------------------------------------------------
RSS2=rss:http://127.0.0.1:$P2/feeds/reuters.rss
$MADF run weekly --as-of 1987-03-27 --pairs USD/JPY --market "csv:$FX" --news "$RSS2" \
	--report-dir "$T/r8" >/dev/null 2>"$T/r8.err"; rc=$?
eq "an RSS feed over HTTP works as a news source" "$rc" 0
check "the findings cite the feed's stories inside the window" $CHK "$T/r8/1987-W13-asia-g10-fx.json" \
	findings_cite_window_stories "$NEWS" 1987-03-20 1987-03-27
c1=$($LC cited "$T/r8/1987-W13-asia-g10-fx.json")
sleep 2
$MADF run weekly --fresh --as-of 1987-03-27 --pairs USD/JPY --market "csv:$FX" --news "$RSS2" \
	--report-dir "$T/r9" >/dev/null 2>&1
c2=$($LC cited "$T/r9/1987-W13-asia-g10-fx.json")
eq "story ids are the same when the feed is fetched again" "$c2" "$c1"

# --- a currency the ECB does not publish ---------------------------------------------------------------
$MADF run weekly --as-of 2017-03-17 --pairs USD/TWD --market "$ECB2" --report-dir "$T/r10" \
	>/dev/null 2>"$T/r10.err"; rc=$?
eq "a pair the ECB cannot give ends the run with that task failed (exit 1)" "$rc" 1
has "the report's failure names the currency" "$(cat "$T/r10/$REP")" "the ECB publishes no euro reference rate for TWD"
has "stderr too" "$(cat "$T/r10.err")" "publishes no euro reference rate for TWD"
eq "and nothing was asked for it" "$($LC nreq "$T/s2.log" D.TWD)" 0
stop_server $S2

# --- specs, help, man ---------------------------------------------------------------------------------------
check_fails "ecb: needs an http(s) URL" 2 $MADF run weekly --market ecb:ftp://x/EXR
check_fails "rss: needs a host" 2 $MADF run weekly --news rss:http://
check_fails "a space in a feed URL is refused" 2 $MADF run weekly --news "rss:http://a/b c"
help=$($MADF run weekly --help 2>&1)
has "run --help documents the ECB source" "$help" "ecb[:BASE_URL]"
has "and RSS over HTTP" "$help" "rss:URL"
check "the man page documents them" grep -q "MADF_ECB_TTL_S" man/madf.1
done_testing
