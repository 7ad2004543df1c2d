# The MCP client against the project's own MCP test server, over stdio and
# over Streamable HTTP on 127.0.0.1: madf tools list (paginated tools/list,
# built-in and MCP tools), madf tools call (text, structuredContent,
# isError, unknown tools, a timeout that sends notifications/cancelled,
# notifications and a server ping between responses, session expiry),
# over HTTP the session ended by DELETE and the server's own GET stream
# (one a session; a notification and a ping from outside the call's
# answer; opened again with Last-Event-ID when the server closes it;
# servers answering 405 to GET and DELETE; a server priming its streams
# and polling; one ending its GET streams empty), version negotiation,
# ${VAR} expansion, secrets kept out of logs and
# errors, the server's stderr in its log, bad configurations, and the
# agents' runtime registering MCP tools beside the built-in ones.
. tests/integration/lib.sh

SRV=$TOP/tests/integration/mcp_test_server.py
export MCP_SERVER_PY="$SRV"
SLOG=$T/stdio-server.jsonl
HLOG=$T/http-server.jsonl
MLOG=$LOG_DIR/mcp
# Secrets under names that config_redact does not know: only the client's
# own knowledge of header and env values keeps them out.
export WEB_BEARER=hdr-s3cret-0123456789
export STDIO_SECRET=env-s3cret-9876543210
unset GREETING_SRC 2>/dev/null || true

serve "the HTTP test server" python3 "$SRV" --http --log "$HLOG" \
	--require-header "Authorization: Bearer $WEB_BEARER"
export MCP_PORT=$port

mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
cat >.mcp.json <<'EOF'
{
  "mcpServers": {
    "t": {
      "command": "python3",
      "args": ["${MCP_SERVER_PY}", "--stdio", "--log", "${SLOG}",
               "--print-env", "MY_API_KEY"],
      "env": {"GREETING": "${GREETING_SRC:-default-greeting}",
              "MY_API_KEY": "${STDIO_SECRET}"}
    },
    "web": {
      "type": "http",
      "url": "http://127.0.0.1:${MCP_PORT}/mcp",
      "headers": {"Authorization": "Bearer ${WEB_BEARER}"}
    }
  }
}
EOF
export SLOG

# ---- listing ------------------------------------------------------------
out=$($MADF tools list 2>"$T/err"); rc=$?
eq "tools list exits 0" "$rc" 0
eq "all eleven stdio tools, over four pages of three" "$(echo "$out" | grep -c '^t\.')" 11
eq "all eleven HTTP tools" "$(echo "$out" | grep -c '^web\.')" 11
has "built-in tools are listed beside them" "$out" "fx_rates"
has "a line gives name, kind, server and description" "$(echo "$out" | grep '^t\.echo ')" "mcp     t            Echoes its text"
has "a tool name outside the charset is mapped" "$out" "t.upper_case"
eq "tools/list followed nextCursor to the end" \
	"$(grep '"tools/list"' "$SLOG" | grep -c '"cursor"')" 3
hasnt "no warning when every server starts" "$(cat "$T/err")" "warning"
json=$($MADF tools list --json)
eq "--json gives an array with server, tool and input schemas" "$(echo "$json" | python3 -c '
import json, sys
a = json.load(sys.stdin)
add = [t for t in a if t["name"] == "web.add"][0]
up = [t for t in a if t["name"] == "t.upper_case"][0]
fx = [t for t in a if t["name"] == "fx_rates"][0]
print(add["kind"], add["server"], sorted(add["input_schema"]["properties"]), up["tool"],
      fx["kind"], fx["server"])')" "mcp web ['a', 'b'] Upper Case builtin madf"

for s in t web; do
	# ---- calls --------------------------------------------------------
	eq "$s: echo prints its text" "$($MADF tools call $s echo --args '{"text":"hello mcp"}')" "hello mcp"
	eq "$s: add prints the sum" "$($MADF tools call $s add --args '{"a":2,"b":3}')" "5"
	eq "$s: a mapped name is called by the server's own name" \
		"$($MADF tools call $s "Upper Case" --args '{"text":"abc"}')" "ABC"
	out=$($MADF tools call $s fail 2>&1); rc=$?
	eq "$s: isError exits 1" "$rc" 1
	has "$s: isError prints the tool's text" "$out" "the fail tool failed, as asked"
	out=$($MADF tools call $s nosuch 2>&1); rc=$?
	eq "$s: an unknown tool exits 1" "$rc" 1
	has "$s: an unknown tool is named" "$out" "server \"$s\" has no tool \"nosuch\""
	out=$($MADF tools call $s notify 2>&1); rc=$?
	eq "$s: notifications and a server ping before the answer" "$out" "notified; pong received"
	has "$s: notifications/message lands in the server's log" "$(cat "$MLOG/$s.log")" \
		"[info] test: notify tool running"
	has "$s: notifications/progress is logged" "$(cat "$MLOG/$s.log")" "1/2 half way"
	# stdio: on stdout; HTTP: on the GET stream, not in the call's answer
	eq "$s: a notification and a ping from outside the call's answer" \
		"$($MADF tools call $s background 2>&1)" "background; pong received"
	has "$s: that notification lands in the server's log" "$(cat "$MLOG/$s.log")" \
		"[info] test: background work started"
	# ---- timeout and cancellation -------------------------------------
	out=$(timeout 30 $MADF tools call $s slow --timeout 1 2>&1); rc=$?
	eq "$s: a call past its timeout exits 1 (long before the tool's 60 s)" "$rc" 1
	has "$s: the error says it timed out" "$out" "timed out after 1000 ms"
	[ $s = t ] && L=$SLOG || L=$HLOG
	id=$(grep '"name": "slow"' "$L" | tail -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["id"])')
	wait_for "$s: the server got notifications/cancelled for request $id" 10 \
		sh -c "grep '\"notifications/cancelled\"' '$L' | grep -q '\"requestId\": $id,'"
done

# ---- HTTP specifics ---------------------------------------------------------
# sessions made and ended (DELETE), GETs of one session, in a server's log
sessions() { grep '"http": "session"' "$1" | sed 's/.*"session": "\([0-9a-f]*\)".*/\1/'; }
deletes() { grep '"http": "DELETE"' "$1" | sed 's/.*"session": "\([0-9a-f]*\)".*/\1/'; }
gets() { grep '"http": "GET"' "$1" | grep -c "\"session\": \"$2\""; }
eq "web: echo over HTTP" "$($MADF tools call web echo --args '{"text":"bye"}' 2>&1)" "bye"
sid=$(sessions "$HLOG" | tail -1)
eq "the call ends with a DELETE carrying its session id" "$(tail -1 "$HLOG" | deletes /dev/stdin)" "$sid"
has "which madf logs" "$(tail -1 "$MLOG/web.log")" "session ended (DELETE: HTTP 200)"
eq "after it the session is gone (the server answers 404)" "$(python3 -c '
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], data=b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
    headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "Mcp-Session-Id": sys.argv[2], "MCP-Protocol-Version": "2025-11-25",
             "Authorization": "Bearer " + sys.argv[3]})
try:
    print(urllib.request.urlopen(req).status)
except urllib.error.HTTPError as e:
    print(e.code)' "http://127.0.0.1:$MCP_PORT/mcp" "$sid" "$WEB_BEARER")" 404
eq "every session madf made over HTTP was ended" "$(sessions "$HLOG" | sort)" "$(deletes "$HLOG" | sort)"
# one GET stream a session, not one a request: streams opened and closed
# call after call raced the server (which keeps the newest) and lost its
# messages
eq "one GET stream for the session's five requests (four tools/list pages, the call)" \
	"$(gets "$HLOG" "$sid")" 1
has "the GET stream is logged" "$(cat "$MLOG/web.log")" "listening for server messages on a GET stream"
# the server closes the stream during the call, after the notification
# (event 1) and before the ping: madf opens it again with Last-Event-ID
eq "web: the GET stream closed by the server is opened again and the ping arrives" \
	"$($MADF tools call web background --args '{"drop":true}' 2>&1)" "background; pong received"
sid=$(sessions "$HLOG" | tail -1)
eq "the second GET of that session resumes after event 1 (Last-Event-ID)" \
	"$(grep '"http": "GET"' "$HLOG" | grep "\"session\": \"$sid\"" | sed 's/.*"last_event_id": //')" \
	"$(printf 'null}\n"1"}')"
has "the reopening is logged, after the server's retry time" "$(cat "$MLOG/web.log")" \
	"GET stream closed by the server: opening it again in 100 ms (Last-Event-ID)"
hasnt "no GET stream or DELETE went wrong" "$(cat "$MLOG/web.log")" " warn "
n0=$(grep -c '"initialize"' "$HLOG")
eq "an expired session (404) is initialized again and the call retried" \
	"$($MADF tools call web expire 2>&1)" "session renewed"
eq "two initializations for that one call" "$(( $(grep -c '"initialize"' "$HLOG") - n0 ))" 2
has "the re-initialization is logged" "$(cat "$MLOG/web.log")" "session expired (HTTP 404)"
out=$(WEB_BEARER=wrong-bearer-value-42 $MADF tools call web echo --args '{"text":"x"}' 2>&1); rc=$?
eq "a refused request (401) exits 1" "$rc" 1
has "its error names the status" "$out" "HTTP 401"
hasnt "a header value echoed by the server is not shown" "$out" "wrong-bearer-value-42"

# a server answering 405 to GET and to DELETE works as before
pid1=$server_pid
serve "the HTTP test server without GET and DELETE" python3 "$SRV" --http --no-get --no-delete \
	--log "$T/n405.jsonl"
pid2=$server_pid
trap 'kill "$pid1" "$pid2" 2>/dev/null; wait "$pid1" "$pid2" 2>/dev/null; cleanup' EXIT
printf '{"mcpServers": {"n405": {"type": "http", "url": "http://127.0.0.1:%s/mcp"}}}\n' "$port" >n405.json
out=$($MADF --mcp-config n405.json tools call n405 echo --args '{"text":"no get"}' 2>&1); rc=$?
eq "405 to GET and DELETE: a call works" "$rc:$out" "0:no get"
eq "405 to GET and DELETE: notifications in the call's answer still arrive" \
	"$($MADF --mcp-config n405.json tools call n405 notify 2>&1)" "notified; pong received"
has "405 to GET and DELETE: the notification is logged" "$(cat "$MLOG/n405.log")" \
	"[info] test: notify tool running"
has "405 to GET: logged as the server offering no stream" "$(cat "$MLOG/n405.log")" \
	"the server offers no stream of its own (GET: HTTP 405)"
has "405 to DELETE: logged as not allowed" "$(cat "$MLOG/n405.log")" \
	"the server does not let clients end sessions (DELETE: HTTP 405)"
hasnt "405 to GET and DELETE: no warning" "$(cat "$MLOG/n405.log")" " warn "
n0=$(grep -c '"tools/list"' "$T/n405.jsonl")
out=$($MADF --mcp-config n405.json tools list 2>&1); rc=$?
sid=$(sessions "$T/n405.jsonl" | tail -1)
eq "after a 405 no other GET in the session (four tools/list pages, one GET)" \
	"$rc:$(( $(grep -c '"tools/list"' "$T/n405.jsonl") - n0 )):$(gets "$T/n405.jsonl" "$sid")" "0:4:1"
eq "405 to DELETE: madf still asked to end each session" \
	"$(sessions "$T/n405.jsonl" | sort)" "$(deletes "$T/n405.jsonl" | sort)"

# a server that primes each event stream (an id, empty data: the spec's
# SHOULD) and closes its GET stream at once after it (polling): the empty
# event is no message, and each GET resumes from the last priming id
serve "the HTTP test server priming and polling its streams" python3 "$SRV" --http --priming --poll \
	--log "$T/prime.jsonl"
pid3=$server_pid
trap 'kill "$pid1" "$pid2" "$pid3" 2>/dev/null; wait "$pid1" "$pid2" "$pid3" 2>/dev/null; cleanup' EXIT
printf '{"mcpServers": {"primed": {"type": "http", "url": "http://127.0.0.1:%s/mcp"}}}\n' "$port" >primed.json
eq "priming events: a call whose answer is an event stream primed first (notify)" \
	"$($MADF --mcp-config primed.json tools call primed notify 2>&1)" "notified; pong received"
# the tool waits 2.5 s before it sends: the GET streams meanwhile close
# with their priming event only, many more than 5 in a row
eq "priming events: the server's messages on a GET stream closed after each priming event arrive" \
	"$($MADF --mcp-config primed.json tools call primed background --args '{"delay":2.5}' 2>&1)" \
	"background; pong received"
sid=$(sessions "$T/prime.jsonl" | tail -1)
eq "each GET after the first carries the priming id of the stream before (Last-Event-ID), more than 5 in a row with nothing but it" \
	"$(python3 -c '
import json, sys
gets, primes = [], []
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j.get("session") != sys.argv[2]:
        continue
    if j.get("http") == "GET":
        gets.append(j["last_event_id"])
    elif j.get("http") == "prime":
        primes.append(j["id"])
print(len(gets) > 5, gets[0], gets[1:] == primes[:len(gets) - 1])' "$T/prime.jsonl" "$sid")" \
	"True None True"
hasnt "priming events: no event reported as not JSON, no warning" "$(cat "$MLOG/primed.log")" " warn "

# a server whose GET streams end at once with no event: given up after 5
# in a row; a call waiting for what the server sends there times out,
# and its error says why
serve "the HTTP test server ending its GET streams empty" python3 "$SRV" --http --empty-get \
	--log "$T/empty.jsonl"
pid4=$server_pid
trap 'kill "$pid1" "$pid2" "$pid3" "$pid4" 2>/dev/null; wait "$pid1" "$pid2" "$pid3" "$pid4" 2>/dev/null; cleanup' EXIT
printf '{"mcpServers": {"empty": {"type": "http", "url": "http://127.0.0.1:%s/mcp"}}}\n' "$port" >empty.json
out=$(timeout 60 $MADF --mcp-config empty.json tools call empty background --timeout 6 2>&1); rc=$?
eq "GET streams ending empty: the call waiting on them fails with exit 1 (no hang, no crash)" "$rc" 1
has "its error names why: the GET stream given up after 5 empty endings" "$out" \
	'server "empty": tools/call timed out after 6000 ms; its GET stream was given up (the server ended it 5 times in a row without an event), so what the server sent outside the call'"'"'s answer did not arrive'
sid=$(sessions "$T/empty.jsonl" | tail -1)
eq "exactly 5 GETs in that session, then no more" "$(gets "$T/empty.jsonl" "$sid")" 5
has "the giving up is a warning in the server's log" "$(cat "$MLOG/empty.log")" \
	"warn GET stream: the server ended it 5 times in a row without an event; not tried again in this session"
eq "a call that needs nothing from the GET stream still works there" \
	"$($MADF --mcp-config empty.json tools call empty echo --args '{"text":"still here"}' 2>&1)" "still here"

# ---- stdio specifics --------------------------------------------------------
eq "\${VAR:-default} expansion in env" "$($MADF tools call t getenv --args '{"name":"GREETING"}')" "default-greeting"
eq "\${VAR} from the environment wins over the default" \
	"$(GREETING_SRC=hello $MADF tools call t getenv --args '{"name":"GREETING"}')" "hello"
$MADF tools call t stderr --args '{"text":"a line on stderr 4711"}' >/dev/null
has "the server's stderr lands in its log" "$(cat "$MLOG/t.log")" "stderr a line on stderr 4711"
has "a secret env value on stderr is redacted in the log" "$(cat "$MLOG/t.log")" "MY_API_KEY=[redacted]"
out=$($MADF tools call t crash 2>&1); rc=$?
eq "a crashing server fails the call" "$rc" 1
has "the error names the exit status" "$out" "exited with status 3"
eq "the next call starts it again" "$($MADF tools call t echo --args '{"text":"back"}')" "back"
if grep -rqF -e "$WEB_BEARER" -e "$STDIO_SECRET" -e wrong-bearer-value-42 "$LOG_DIR" "$D"; then
	fail "no secret in the logs or the data directory" "$(grep -rlF -e "$WEB_BEARER" -e "$STDIO_SECRET" "$LOG_DIR" "$D")"
else
	ok "no secret in the logs or the data directory"
fi
has "the calls were counted in the tool usage lines" "$(cat "$LOG_DIR"/tools/usage-*.jsonl)" '"tool":"web.echo"'

# ---- built-in tools through the same command ------------------------------
out=$($MADF tools call madf fx_rates --args '{"pair":"USD/JPY","start":"2024-01-01","end":"2024-01-10"}'); rc=$?
eq "a built-in tool is called as server madf" "$rc" 0
has "its JSON result is printed" "$out" '"points"'

# ---- usage errors -------------------------------------------------------
check_fails "call without a TOOL is a usage error" 2 $MADF tools call t
check_fails "--args that is not an object is a usage error" 2 $MADF tools call t echo --args '[1]'
check_fails "an unknown subcommand is a usage error" 2 $MADF tools frob
out=$($MADF tools call nosrv echo 2>&1); rc=$?
eq "an unknown server exits 1" "$rc" 1
has "an unknown server is named" "$out" 'unknown server "nosrv"'

# ---- versions ---------------------------------------------------------------
mkdir -p "$T/v" && cd "$T/v" || exit 1
cat >v.json <<'EOF'
{"mcpServers": {
  "old": {"command": "python3", "args": ["${MCP_SERVER_PY}", "--stdio", "--version", "2025-06-18"]},
  "bogus": {"command": "python3", "args": ["${MCP_SERVER_PY}", "--stdio", "--version", "1999-01-01"]}}}
EOF
eq "protocol version 2025-06-18 is accepted" "$($MADF --mcp-config v.json tools call old echo --args '{"text":"v"}')" "v"
has "and logged" "$(cat "$MLOG/old.log")" "initialized: protocol 2025-06-18"
out=$($MADF --mcp-config v.json tools call bogus echo --args '{"text":"v"}' 2>&1); rc=$?
eq "a version madf does not speak is refused" "$rc" 1
has "the error names both versions" "$out" 'answered protocol version "1999-01-01"; madf offers 2025-11-25'
out=$($MADF --mcp-config v.json tools list 2>&1); rc=$?
eq "a server that fails is a warning for tools list" "$rc" 0
has "the warning names the server" "$out" 'warning: MCP server "bogus" is not available'
has "the other server's tools are listed" "$out" "old.echo"

# ---- bad configurations ---------------------------------------------------------
bad() { # DESC JSON EXPECTED
	printf '%s' "$2" >"$T/v/bad.json"
	out=$($MADF --mcp-config "$T/v/bad.json" tools list 2>&1); rc=$?
	eq "$1: exits 1" "$rc" 1
	has "$1: says so" "$out" "$3"
}
bad "invalid JSON" '{"mcpServers": {' "bad.json: not valid JSON"
bad "no mcpServers" '{"servers": {}}' '"mcpServers" is missing or not an object'
bad "no command" '{"mcpServers": {"s1": {"args": []}}}' 'server "s1": "command" is missing'
bad "args not a list" '{"mcpServers": {"s2": {"command": "x", "args": "a b"}}}' 'server "s2": "args" must be an array of strings'
bad "an unset variable" '{"mcpServers": {"s3": {"command": "x", "env": {"K": "${NO_SUCH_VAR_42}"}}}}' 'server "s3": "env.K": ${NO_SUCH_VAR_42} is not set'
bad "a bad type" '{"mcpServers": {"s4": {"type": "ftp", "url": "x"}}}' 'server "s4": "type" must be'
bad "an http server without a url" '{"mcpServers": {"s5": {"type": "http"}}}' 'server "s5": "url" is missing'
out=$($MADF --mcp-config "$T/v/none.json" tools list 2>&1); rc=$?
eq "a missing --mcp-config file exits 1" "$rc" 1
has "and is named" "$out" "none.json"
mkdir -p "$T/empty" && cd "$T/empty" || exit 1
out=$($MADF tools list 2>&1); rc=$?
eq "without .mcp.json, tools list shows the built-in tools" "$rc:$(echo "$out" | wc -l | tr -d ' ')" "0:3"

# ---- the agents' runtime ------------------------------------------------------
cd "$T/cwd" || exit 1
cat >run.json <<'EOF'
{"mcpServers": {
  "t": {"command": "python3", "args": ["${MCP_SERVER_PY}", "--stdio"]},
  "gone": {"command": "/nonexistent/mcp-server"}}}
EOF
out=$($MADF --data-dir "$T/rundata" --mcp-config run.json run weekly --as-of 2026-11-20 --pairs USD/JPY \
	--report-dir "$T/runrep" 2>&1); rc=$?
eq "madf run works with an MCP server that cannot start" "$rc" 0
has "which is a warning on stderr" "$out" 'warning: MCP server "gone" is not available'
reg=$(cat "$T/rundata/tools/tool-registry.json" 2>/dev/null)
has "the run's tool registry has the MCP tools" "$reg" '"name": "t.echo"'
has "with kind mcp" "$(echo "$reg" | grep -A3 '"t.echo"')" '"kind": "mcp"'
has "beside the built-in ones" "$reg" '"name": "fx_rates"'

done_testing
