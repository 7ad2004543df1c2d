# madf as the MCP client of madf: `madf tools` reaching `madf mcp` through a
# .mcp.json in the current directory, the way an operator would wire two
# madf data directories together. Also: a .mcp.json naming madf itself in
# the directory madf mcp runs in must not make it start itself again.
. tests/integration/lib.sh
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
W=$T/work
mkdir -p "$W"
cat >"$W/.mcp.json" <<JSON
{"mcpServers": {"self": {"command": "$MADF",
  "args": ["mcp", "--market", "csv:$FX", "--news", "jsonl:\${NEWS_FILE}"],
  "env": {"MADF_DATA_DIR": "$T/srv", "LOG_DIR": "$T/srv-logs"}}}}
JSON
export NEWS_FILE=$NEWS
run() { (cd "$W" && timeout 120 "$MADF" "$@"); }

out=$(run tools list 2>"$T/err"); rc=$?
eq "tools list through madf mcp exits 0" "$rc" 0
for t in fx_rates news_search news_get queue_status send_task run_weekly read_report review_codebase; do
	has "madf mcp's $t is listed as self.$t" "$out" "self.$t"
done
hasnt "no warning about the server" "$(cat "$T/err")" "not available"

# The closes madf mcp serves are the CSV's (read here, not hard-coded).
want=$(python3 - "$FX" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
col = rows[0].index("Japan") if "Japan" in rows[0] else [i for i, h in enumerate(rows[0]) if "JP" in h.upper()][0]
for r in rows[1:]:
    if "1987-03-23" <= r[0] <= "1987-03-27" and r[col] not in ("", "."):
        print(r[0], "%.4f" % float(r[col]))
PY
)
out=$(run tools call self fx_rates --args '{"pair":"USD/JPY","start":"1987-03-23","end":"1987-03-27"}' 2>"$T/err"); rc=$?
eq "tools call self fx_rates exits 0" "$rc" 0
eq "the closes madf mcp serves are the CSV's" "$(echo "$out" | grep '^1987-03-2')" "$want"

out=$(run tools call self news_search --args '{"start":"1987-03-23","end":"1987-03-27","topics":["money-fx"],"limit":3}' 2>&1); rc=$?
eq "news_search through madf mcp exits 0" "$rc" 0
has "... and finds stories of the week" "$out" "1987-03-2"

# send_task writes into the serving madf's data directory, not the caller's.
out=$(run tools call self send_task --args '{"to":"research_agent_1","content":{"note":"from the other madf"}}' 2>&1); rc=$?
eq "send_task through madf mcp exits 0" "$rc" 0
eq "the task is in the serving madf's inbox" "$(njson "$T/srv/messages/inbox/research_agent_1")" 1
eq "... and not in the caller's" "$(njson "$D/messages/inbox/research_agent_1")" 0
MADF_DATA_DIR=$T/srv "$MADF" validate "$T"/srv/messages/inbox/research_agent_1/*.json >/dev/null
eq "... and it validates" "$?" 0
out=$(run tools call self send_task --args '{"to":"nobody here"}' 2>&1); rc=$?
eq "a bad send_task is exit 1" "$rc" 1
has "... with the server's reason" "$out" "nobody here"

out=$(run tools call self queue_status 2>&1); rc=$?
eq "queue_status through madf mcp exits 0" "$rc" 0
has "... counts the task sent" "$out" "research_agent_1"

# No server left behind by any of those calls.
sleep_until_gone() { ! pgrep -f "$MADF mcp --market csv:$FX" >/dev/null; }
wait_for "no madf mcp process is left" 10 sleep_until_gone

# madf mcp runs where a .mcp.json names madf mcp: it starts no server of
# its own (else it would start itself, which would start itself, ...).
cp "$W/.mcp.json" "$T/srv-mcp.json"
out=$(cd "$W" && printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | MADF_DATA_DIR=$T/srv2 timeout 60 "$MADF" mcp 2>"$T/err"); rc=$?
eq "madf mcp beside a .mcp.json naming itself answers and exits 0" "$rc" 0
hasnt "... lists no tools of a server of its own" "$out" "self."
hasnt "... and started none" "$(cat "$T/err")" "started"

# A madf that is itself a server of madf starts no servers even when asked.
out=$(cd "$W" && MADF_MCP_CHILD=1 timeout 60 "$MADF" tools list 2>&1); rc=$?
eq "a madf started as an MCP server by madf lists its tools" "$rc" 0
has "... says why it starts no MCP server" "$out" "itself an MCP server started by madf"
hasnt "... and has none" "$out" "self.fx_rates"
done_testing
