# madf mcp: the MCP server over stdio, driven by tests/integration/mcp_client.py
# (which fails on any stdout line that is not a JSON-RPC 2.0 message).
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
CLIENT="python3 $TOP/tests/integration/mcp_client.py"
pick() { $CLIENT pick "$@"; }
# session NAME [madf mcp options...] < script: the client's output in $T/NAME.out,
# the server's stderr in $T/NAME.err; the client's exit status.
session() {
	n=$1; shift
	$CLIENT --stderr "$T/$n.err" -- $MADF mcp --market "csv:$FX" --news "jsonl:$NEWS" \
		--report-dir "$T/reports" "$@" >"$T/$n.out" 2>"$T/$n.cerr"
}

# --- the client's own guard: a line that is not JSON-RPC fails it ------------------
echo ping | $CLIENT -- sh -c 'echo "hello"; cat >/dev/null' >/dev/null 2>"$T/guard.err"
eq "the test client fails on a stdout line that is not JSON-RPC" "$?" 3

# --- handshake and version negotiation ------------------------------------------------
printf 'init 2025-06-18\nping\n' | session hs; rc=$?
eq "a session (initialize, ping, end of input) exits 0 with only protocol on stdout" "$rc" 0
o=$(cat "$T/hs.out")
eq "2025-06-18 is answered with 2025-06-18" "$(printf "%s\n" "$o" | pick id=1000 result.protocolVersion)" 2025-06-18
eq "serverInfo names madf" "$(printf "%s\n" "$o" | pick id=1000 result.serverInfo.name)" madf
eq "serverInfo has madf's version" "$(printf "%s\n" "$o" | pick id=1000 result.serverInfo.version)" \
	"$($MADF --version | cut -d' ' -f2)"
eq "the tools capability, listChanged false" "$(printf "%s\n" "$o" | pick id=1000 result.capabilities)" \
	'{"tools":{"listChanged":false}}'
has "it gives instructions" "$(printf "%s\n" "$o" | pick id=1000 result.instructions)" "run_weekly"
eq "ping answers an empty result" "$(printf "%s\n" "$o" | pick id=1001 result)" '{}'

printf 'init 1999-01-01\n' | session hs2
eq "an unknown version is answered with 2025-11-25" \
	"$(pick id=1000 result.protocolVersion <"$T/hs2.out")" 2025-11-25
printf 'init 2025-03-26\n' | session hs3
eq "2025-03-26 is answered with 2025-03-26" "$(pick id=1000 result.protocolVersion <"$T/hs3.out")" 2025-03-26

printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' ping \
	'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}' | session early
has "tools/list before initialize is an error" "$(pick id=1 error.message <"$T/early.out")" "initialize"
eq "a ping before initialize is answered" "$(pick id=1000 result <"$T/early.out")" '{}'
eq "initialize without protocolVersion is invalid params" "$(pick id=2 error.code <"$T/early.out")" -32602

# --- JSON-RPC errors; the server keeps going ------------------------------------------------
printf '%s\n' init 'raw {"jsonrpc":"2.0","id":5,"method":' ping \
	'{"jsonrpc":"2.0","id":6,"method":"no/such/method"}' \
	'raw [{"jsonrpc":"2.0","id":7,"method":"ping"}]' \
	'raw {"jsonrpc":"2.0","id":8}' \
	'raw {"jsonrpc":"1.0","id":9,"method":"ping"}' \
	'raw {"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1]}' \
	'raw {"jsonrpc":"2.0","id":1e300,"method":"ping"}' \
	'{"jsonrpc":"2.0","method":"notifications/no_such_thing"}' \
	'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}' \
	'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"fx_rates","arguments":"USD/JPY"}}' \
	ping | session errs; rc=$?
eq "the error session exits 0" "$rc" 0
o=$(cat "$T/errs.out")
eq "malformed JSON is a parse error (-32700)" "$(printf "%s\n" "$o" | pick id=null error.code)" -32700
eq "and the next request is still answered" "$(printf "%s\n" "$o" | pick id=1001 result)" '{}'
eq "an unknown method is -32601" "$(printf "%s\n" "$o" | pick id=6 error.code)" -32601
eq "a batch is refused with -32600" "$(printf "%s\n" "$o" | grep 'batches are not supported' | pick id=null error.code)" -32600
eq "  and none of it is run" "$(printf "%s\n" "$o" | pick --count id=7)" 0
eq "a request without a method is -32600" "$(printf "%s\n" "$o" | pick id=8 error.code)" -32600
eq "jsonrpc other than 2.0 is -32600" "$(printf "%s\n" "$o" | pick id=9 error.code)" -32600
eq "an id that is not an integer or a string is -32600" \
	"$(printf "%s\n" "$o" | grep '"id: a string or an integer"' | pick id=null error.code)" -32600
eq "params that are not an object are -32602" "$(printf "%s\n" "$o" | pick id=10 error.code)" -32602
eq "an unknown tool is -32602" "$(printf "%s\n" "$o" | pick id=11 error.code)" -32602
eq "arguments that are not an object are -32602" "$(printf "%s\n" "$o" | pick id=12 error.code)" -32602
eq "a notification gets no answer (12 answers for 12 requests and bad lines)" \
	"$(printf "%s\n" "$o" | python3 -c 'import json,sys; print(sum("method" not in json.loads(l) for l in sys.stdin))')" 12

# --- tools/list: every tool with schemas; pagination -------------------------------------------
TOOLS="fx_rates news_search news_get queue_status send_task run_weekly read_report review_codebase"
tools_summary() {
	python3 -c '
import json, sys
pages, names, bad = 0, [], []
for line in open(sys.argv[1]):
    m = json.loads(line)
    r = m.get("result", {})
    if "tools" not in r:
        continue
    pages += 1
    for t in r["tools"]:
        names.append(t["name"])
        if t.get("inputSchema", {}).get("type") != "object" or not t.get("description") \
                or t.get("outputSchema", {}).get("type") != "object":
            bad.append(t["name"])
print(pages, " ".join(names), "bad:" + ",".join(bad))' "$1"
}
printf 'init\nlist-all\n' | session list
eq "one page by default, every tool with a description, inputSchema and outputSchema" \
	"$(tools_summary "$T/list.out")" "1 $TOOLS bad:"
eq "no nextCursor on the last page" "$(pick --count id=1001 result.nextCursor <"$T/list.out")" 1
check "  (there is none)" sh -c "! $CLIENT pick id=1001 result.nextCursor <'$T/list.out' 2>/dev/null"
printf 'init\nlist-all\n' | MADF_MCP_PAGE_SIZE=3 session pages
eq "with 3 tools a page the client follows the cursor over 3 pages and sees every tool once" \
	"$(tools_summary "$T/pages.out")" "3 $TOOLS bad:"
cur=$(pick id=1001 result.nextCursor <"$T/pages.out")
printf '%s\n' init \
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"$cur\"}}" \
	'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"bogus"}}' \
	| MADF_MCP_PAGE_SIZE=3 session cursor
eq "a cursor given again gives the same page" "$(pick id=1 result.tools.0.name <"$T/cursor.out")" \
	"$(pick id=1002 result.tools.0.name <"$T/pages.out")"
eq "an invalid cursor is -32602" "$(pick id=2 error.code <"$T/cursor.out")" -32602

# --- fx_rates on the real data: exactly the CSV's closes ---------------------------------------------
printf '%s\n' init \
	'call fx_rates {"pair":"USD/JPY","start":"1987-03-23","end":"1987-03-27"}' \
	'call fx_rates {"pair":"USDJPY","start":"1987-03-23","end":"1987-03-27"}' \
	'call fx_rates {"pair":"USD/JPY","start":"1987-03-23"}' \
	'call fx_rates {"pair":"USD/JPY","start":"1987-03-23","end":"1987-03-27","source":"sim"}' \
	| session fx; rc=$?
eq "the fx session exits 0" "$rc" 0
o=$(cat "$T/fx.out")
eq "fx_rates is not an error" "$(printf "%s\n" "$o" | pick id=1001 result.isError)" false
csv=$(python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index("Japan")
print([[r[0], float(r[col])] for r in rows[1:] if "1987-03-23" <= r[0] <= "1987-03-27" and r[col]])' "$FX")
got=$(printf "%s\n" "$o" | pick id=1001 result.structuredContent.points | python3 -c '
import json, sys; print([[d, float(c)] for d, c in json.load(sys.stdin)])')
eq "USD/JPY closes 1987-03-23..27 are the CSV's Japan column" "$got" "$csv"
has "the text lists the last close" "$(printf "%s\n" "$o" | pick id=1001 result.content.0.text)" "1987-03-27 147.72"
eq "the structured result names its pair" "$(printf "%s\n" "$o" | pick id=1001 result.structuredContent.pair)" USD/JPY
eq "a bad pair is a tool error" "$(printf "%s\n" "$o" | pick id=1002 result.isError)" true
has "  which says what is wrong" "$(printf "%s\n" "$o" | pick id=1002 result.content.0.text)" "USDJPY"
eq "a missing end date is a tool error" "$(printf "%s\n" "$o" | pick id=1003 result.isError)" true
has "  naming end" "$(printf "%s\n" "$o" | pick id=1003 result.content.0.text)" "end"
eq "an argument the tool does not take is a tool error" "$(printf "%s\n" "$o" | pick id=1004 result.isError)" true
check "the calls went through the tool registry (usage by the mcp caller)" \
	sh -c "grep -h '\"agent\":\"mcp\"' '$T'/logs/tools/usage-*.jsonl | grep -q fx_rates"

# --- news_search and news_get on the real archive ------------------------------------------------------
printf '%s\n' init \
	'call news_search {"start":"1987-03-23","end":"1987-03-27","topics":["money-fx"],"limit":5}' \
	'call news_search {"start":"1987-03-23","end":"1987-03-27","limit":0}' | session news
o=$(cat "$T/news.out")
eq "news_search is not an error" "$(printf "%s\n" "$o" | pick id=1001 result.isError)" false
printf "%s\n" "$o" | pick id=1001 result.structuredContent >"$T/found.json"
check "it finds money-fx stories inside the window, as the archive has them" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
arch = {}
for line in open(sys.argv[2]):
    s = json.loads(line)
    arch[s["id"]] = s
want = [s for s in arch.values() if "1987-03-23" <= s["published_at"][:10] <= "1987-03-27"
        and "money-fx" in s.get("topics", [])]
assert r["total"] == len(want) > 0, (r["total"], len(want))
assert 0 < len(r["stories"]) <= 5
for s in r["stories"]:
    a = arch[s["id"]]
    assert a["title"] == s["title"] and "money-fx" in s["topics"]
    assert "1987-03-23" <= s["published_at"][:10] <= "1987-03-27"
' "$T/found.json" "$NEWS"
eq "a limit of 0 is a tool error" "$(printf "%s\n" "$o" | pick id=1002 result.isError)" true
sid=$(printf "%s\n" "$o" | pick id=1001 result.structuredContent.stories.0.id)
title=$(printf "%s\n" "$o" | pick id=1001 result.structuredContent.stories.0.title)
printf '%s\n' init "call news_get {\"id\":\"$sid\"}" 'call news_get {"id":"no-such-story"}' | session get
eq "news_get returns that story" "$(pick id=1001 result.structuredContent.title <"$T/get.out")" "$title"
has "  with its text" "$(pick id=1001 result.content.0.text <"$T/get.out")" "$title"
eq "an unknown story is a tool error" "$(pick id=1002 result.isError <"$T/get.out")" true

# --- send_task: a valid file in the inbox; bad input writes nothing ------------------------------------
printf '%s\n' init \
	'call send_task {"to":"research_agent_1","task_type":"market_data","focus_area":"USD/JPY","target_pairs":["USD/JPY"],"priority":"high"}' \
	'call queue_status' \
	'call send_task {"to":"Not An Agent"}' \
	'call send_task {"to":"research_agent_2","priority":"soon"}' \
	'call send_task {"to":"research_agent_2","deadline":"next week"}' \
	'call send_task {"to":"research_agent_2","content":{"target_pairs":"USD/JPY"}}' \
	'call send_task {"to":"research_agent_2","task_type":""}' \
	'call send_task {"task_type":"market_data"}' | session send; rc=$?
eq "the send session exits 0" "$rc" 0
o=$(cat "$T/send.out")
eq "send_task succeeds" "$(printf "%s\n" "$o" | pick id=1001 result.isError)" false
mid=$(printf "%s\n" "$o" | pick id=1001 result.structuredContent.message_id)
ls=$($MADF ls inbox research_agent_1 --json)
has "the message is in research_agent_1's inbox" "$ls" "\"message_id\": \"$mid\""
has "  with priority high" "$ls" '"priority": "high"'
check "  and its file passes madf validate" sh -c "$MADF validate '$D'/messages/inbox/research_agent_1/*.json"
show=$($MADF show "$mid" --json)
has "  a task_assignment" "$show" '"type": "task_assignment"'
has "  with the given task_type" "$show" '"task_type": "market_data"'
st=$(printf "%s\n" "$o" | pick id=1002 result.structuredContent)
eq "queue_status counts it" "$(printf "%s\n" "$st" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inboxes"]["research_agent_1"]["depth"])')" 1
eq "queue_status has what madf status --json has" \
	"$(printf "%s\n" "$st" | python3 -c 'import json,sys; j=json.load(sys.stdin); [v.pop("oldest_age_s") for v in j["inboxes"].values()]; print(json.dumps(j, sort_keys=True))')" \
	"$($MADF status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); [v.pop("oldest_age_s") for v in j["inboxes"].values()]; print(json.dumps(j, sort_keys=True))')"
for i in 1003 1004 1005 1006 1007 1008; do
	eq "bad send_task input $i is a tool error" "$(printf "%s\n" "$o" | pick id=$i result.isError)" true
done
has "an invalid agent name is named" "$(printf "%s\n" "$o" | pick id=1003 result.content.0.text)" "Not An Agent"
has "a bad priority says what is allowed" "$(printf "%s\n" "$o" | pick id=1004 result.content.0.text)" "urgent, high"
has "a bad deadline fails the schema, naming the field" "$(printf "%s\n" "$o" | pick id=1005 result.content.0.text)" "deadline"
has "a missing to is named" "$(printf "%s\n" "$o" | pick id=1008 result.content.0.text)" "to:"
eq "bad input wrote nothing" "$(njson "$D/messages/inbox/research_agent_2")" 0
eq "  and nothing else arrived at research_agent_1" "$(njson "$D/messages/inbox/research_agent_1")" 1

# --- run_weekly on the real data, then read_report ---------------------------------------------
RD=$T/run
printf '%s\n' init \
	'{"jsonrpc":"2.0","id":"wk","method":"tools/call","params":{"name":"run_weekly","arguments":{"as_of":"1987-03-27","pairs":["USD/JPY","GBP/USD"]},"_meta":{"progressToken":"wk-progress"}}}' \
	'call read_report {}' 'call read_report {"format":"json"}' \
	'call run_weekly {"as_of":"1987-03-27","pairs":["USD/JPY","GBP/USD"]}' \
	'call run_weekly {"as_of":"last week"}' 'call run_weekly {"pairs":["USDJPY"]}' \
	'call read_report {"run_id":"no-such-run"}' \
	| session run --data-dir "$RD"; rc=$?
eq "the run session exits 0" "$rc" 0
o=$(cat "$T/run.out")
eq "run_weekly is not an error" "$(printf "%s\n" "$o" | pick id=wk result.isError)" false
eq "  the run is done" "$(printf "%s\n" "$o" | pick id=wk result.structuredContent.status)" done
rid=$(printf "%s\n" "$o" | pick id=wk result.structuredContent.run_id)
md=$(printf "%s\n" "$o" | pick id=wk result.structuredContent.report_md)
eq "  the report is where madf run weekly writes it" "$md" "$T/reports/1987-W13-asia-g10-fx.md"
check "  and it exists" test -s "$md"
n=$(printf "%s\n" "$o" | pick --count method=notifications/progress)
check "progress notifications came ($n)" test "$n" -ge 1
check "  with the request's token, increasing progress" python3 -c '
import json, sys
last = 0
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") != "notifications/progress":
        continue
    p = m["params"]
    assert p["progressToken"] == "wk-progress" and p["progress"] > last, p
    last = p["progress"]
' <"$T/run.out"
rep=$(printf "%s\n" "$o" | pick id=1001 result.content.0.text)
close() { python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index("Japan")
print("%.2f" % float([r for r in rows if r[0] == sys.argv[2]][0][col]))' "$FX" "$1"; }
has "read_report returns the Markdown report" "$rep" "# Weekly Asia/G10 FX report"
has "  with USD/JPY" "$rep" "USD/JPY"
has "  its close on 1987-03-20 from the CSV" "$rep" "$(close 1987-03-20)"
has "  and on 1987-03-27" "$rep" "$(close 1987-03-27)"
eq "  of the run just finished" "$(printf "%s\n" "$o" | pick id=1001 result.structuredContent.run_id)" "$rid"
eq "read_report json gives the JSON twin" \
	"$(printf "%s\n" "$o" | pick id=1002 result.content.0.text | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')" "$rid"
eq "the same request again answers with the finished run" \
	"$(printf "%s\n" "$o" | pick id=1003 result.structuredContent.already_done)" true
eq "  the same run" "$(printf "%s\n" "$o" | pick id=1003 result.structuredContent.run_id)" "$rid"
eq "a bad as_of is a tool error" "$(printf "%s\n" "$o" | pick id=1004 result.isError)" true
eq "a bad pair is a tool error" "$(printf "%s\n" "$o" | pick id=1005 result.isError)" true
eq "an unknown run is a tool error" "$(printf "%s\n" "$o" | pick id=1006 result.isError)" true
eq "the stdout of the run held nothing but protocol lines" \
	"$(grep -vc '^{"jsonrpc":"2.0",' "$T/run.out")" 0

# --- cancelling a long run; SIGTERM ---------------------------------------------------------
# research_agent_1 misses its deadlines and the deadline is long: the run cannot
# finish before it is cancelled.
LONG='"name":"run_weekly","arguments":{"as_of":"1987-03-27","pairs":["USD/JPY","GBP/USD"]},"_meta":{"progressToken":"p"}'
printf '%s\n' init "nowait {\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"tools/call\",\"params\":{$LONG}}" \
	'wait notifications/progress' \
	'nowait {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"test"}}' \
	ping | session cancel --data-dir "$T/cancel" --task-timeout 600 \
	--inject-fault research_agent_1:slow; rc=$?
eq "a session whose run was cancelled ends with exit 0 at the end of input" "$rc" 0
eq "the cancelled request gets no answer" "$(pick --count id=long <"$T/cancel.out")" 0
eq "a ping after the cancellation is answered" "$(pick id=1001 result <"$T/cancel.out")" '{}'
check "the run stopped unfinished (it resumes when asked again)" python3 -c '
import json, sys
runs = json.load(open(sys.argv[1] + "/state/product_manager-state.json"))["runs"]
assert runs and all(r.get("status") != "done" for r in runs.values()), runs.keys()
' "$T/cancel"
printf '%s\n' init "nowait {\"jsonrpc\":\"2.0\",\"id\":\"long\",\"method\":\"tools/call\",\"params\":{$LONG}}" \
	'wait notifications/progress' term | session term --data-dir "$T/term" --task-timeout 600 \
	--inject-fault research_agent_1:slow; rc=$?
eq "SIGTERM during a run ends the server with exit 0" "$rc" 0
eq "  the run's request is answered with a tool error" "$(pick id=long result.isError <"$T/term.out")" true
has "  that says how to resume" "$(pick id=long result.content.0.text <"$T/term.out")" "resume"

printf 'init\nterm\n' | session idle; rc=$?
eq "SIGTERM while idle ends the server with exit 0" "$rc" 0

# --- options ----------------------------------------------------------------------------------
check_fails "an unknown source is a usage error" 2 $MADF mcp --market ftp:x
check_fails "an unknown option is a usage error" 2 $MADF mcp --nope
has "madf mcp --help shows its usage" "$($MADF mcp --help)" "madf mcp"
done_testing
