# Every bus command through the real binary, and bad input of every kind.
. tests/integration/lib.sh

# --- help, version, usage errors -------------------------------------------
check "--version prints a version" sh -c "$MADF --version | grep -q '^madf [0-9]'"
out=$($MADF --help); has "--help lists commands" "$out" "recv"
has "--help lists status" "$out" "status"
check_fails "no command is a usage error" 2 $MADF
check_fails "unknown command is a usage error" 2 $MADF frobnicate
check_fails "unknown option is a usage error" 2 $MADF ls --bogus
out=$($MADF send --help); has "command --help shows usage" "$out" "usage: madf send --to AGENT"

# --- send / ls / status ----------------------------------------------------
id1=$($MADF send --to research_agent_1 --type heartbeat \
	--content '{"status":"idle","uptime_seconds":3,"active_tasks":0}')
case "$id1" in operator_*) ok "send prints the new message_id" ;; *) fail "send prints the new message_id" "$id1" ;; esac
eq "the message is a file in the inbox" "$(njson "$D/messages/inbox/research_agent_1")" 1
id2=$($MADF send --to research-agent-1 --type heartbeat --priority urgent --from pm-agent \
	--content '{"status":"busy","uptime_seconds":1,"active_tasks":1}')
case "$id2" in product_manager_*) ok "aliases normalised on send (pm-agent)" ;; *) fail "aliases normalised on send" "$id2" ;; esac
echo '{"status":"idle","uptime_seconds":0,"active_tasks":0}' > "$T/hb.json"
id3=$($MADF send --to research_agent_1 --type heartbeat --priority 5 --content @"$T/hb.json")
eq "send --content @FILE works" "$?" 0
json=$($MADF ls inbox research_agent_1 --json)
first=$(echo "$json" | sed -n 's/.*"message_id": "\(.*\)".*/\1/p' | head -1)
eq "ls orders by priority: urgent first" "$first" "$id2"
has "ls --json carries from" "$json" '"from": "product_manager"'
has "ls --json carries type" "$json" '"type": "heartbeat"'
has "ls --json carries priority" "$json" '"priority": "low"'
has "ls --json carries age_s" "$json" '"age_s":'
st=$($MADF status --json)
has "status --json has inbox depth" "$(echo "$st" | tr -d ' \n')" '"research_agent_1":{"depth":3'
has "status --json has dead_letter" "$st" '"dead_letter": 0'
has "status --json has processing" "$st" '"processing": 0'
out=$($MADF status); has "status prints a table" "$out" "research_agent_1"

# --- show --------------------------------------------------------------------
out=$($MADF show "$id1"); has "show prints the message" "$out" "\"message_id\": \"$id1\""
has "show says where it is" "$out" "queue:    inbox of research_agent_1"
out=$($MADF show "$id1" --json); has "show --json" "$out" '"queue": "inbox"'
check_fails "show of an unknown id fails" 1 $MADF show nosuchid
out=$($MADF show nosuchid 2>&1); has "show's error names the id" "$out" "no message nosuchid"

# --- recv ------------------------------------------------------------------
out=$($MADF recv research_agent_1 --max 2)
eq "recv --max 2 prints two lines" "$(echo "$out" | wc -l | tr -d ' ')" 2
has "recv prints canonical JSON lines" "$(echo "$out" | head -1)" "{\"message_id\":\"$id2\",\"from\":\"product_manager\",\"to\":\"research_agent_1\",\"type\":\"heartbeat\""
eq "acked messages left the inbox" "$(njson "$D/messages/inbox/research_agent_1")" 1
processed=$(find "$D/messages/processed" -name '*.json' | wc -l | tr -d ' ')
eq "acked messages are in processed/" "$processed" 2
out=$($MADF recv research_agent_1); eq "recv takes the rest" "$(echo "$out" | grep -c "$id3")" 1
out=$($MADF recv research_agent_1); eq "recv on an empty inbox prints nothing" "$out" ""
# --wait: a message sent while waiting is received
( sleep 0.3; $MADF send --to validator_agent --type heartbeat \
	--content '{"status":"idle","uptime_seconds":0,"active_tasks":0}' >/dev/null ) &
out=$($MADF recv validator_agent --wait 5 --max 1); wait
has "recv --wait receives a message sent while waiting" "$out" '"to":"validator_agent"'
check_fails "recv without AGENT is a usage error" 2 $MADF recv
check_fails "recv of an invalid agent name is a usage error" 2 $MADF recv ../etc --max 1
out=$($MADF recv '../etc' 2>&1); has "invalid agent name is named" "$out" "invalid agent name"

# --- refused at send -------------------------------------------------------
out=$($MADF send --to research_agent_1 --type research_result --content '{"task_id":"t"}' 2>&1); rc=$?
eq "an invalid message is refused at send (exit 1)" "$rc" 1
has "the refusal names the field and rule" "$out" "content.status: required"
check_fails "unknown type is a usage error" 2 $MADF send --to research_agent_1 --type gossip
check_fails "path in an agent name is refused" 2 $MADF send --to ../../etc --type heartbeat
check_fails "bad priority" 2 $MADF send --to a1 --type heartbeat --priority 9
check_fails "bad timeout" 2 $MADF send --to a1 --type heartbeat --timeout -3
out=$($MADF send --to research_agent_1 --type heartbeat --content '{"status":' 2>&1)
has "malformed --content is named" "$out" "--content is not valid JSON"
head -c 11000000 /dev/zero | tr '\0' 'a' > "$T/big.txt"
printf '{"status":"idle","uptime_seconds":0,"active_tasks":0,"current_task":"' > "$T/big.json"
cat "$T/big.txt" >> "$T/big.json"; printf '"}' >> "$T/big.json"
out=$($MADF send --to research_agent_1 --type heartbeat --content @"$T/big.json" 2>&1); rc=$?
eq "an oversize message is refused at send" "$rc" 1
has "the refusal says the limit" "$out" "limit"

# --- bad files in an inbox: all to the dead letters, good ones flow ------------
IN=$D/messages/inbox/research_agent_2
mkdir -p "$IN"
good=$($MADF send --to research_agent_2 --type heartbeat --content '{"status":"idle","uptime_seconds":0,"active_tasks":0}')
ts=$(date -u +%Y-%m-%dT%H:%M:%SZ)
env1='"message_id":"m1","from":"operator","to":"research_agent_2","timestamp":"'$ts'"'
printf '{"message_id": "x", ' > "$IN/malformed.json"
printf '{%s,"type":"heartbeat","content":{"status":7,"uptime_seconds":0,"active_tasks":0}}' "$env1" > "$IN/wrongtype.json"
printf '{"message_id":"m2","from":"operator","to":"research_agent_2","type":"heartbeat","content":{}}' > "$IN/missing.json"
printf '{%s,"type":"gossip","content":{}}' "$env1" > "$IN/unknowntype.json"
printf '{%s,"type":"task_acceptance","content":{"task_id":"t","status":"accepted","estimated_completion":"%s","agent_capacity":1.5}}' "$env1" "$ts" > "$IN/range.json"
printf '{"message_id":"m3","from":"operator","to":"research_agent_2","timestamp":"2026-02-30T10:00:00","type":"heartbeat","content":{"status":"idle","uptime_seconds":0,"active_tasks":0}}' > "$IN/badtime.json"
python3 -c "import sys; sys.stdout.write('['*300000 + ']'*300000)" > "$IN/deep.json"
printf '{"message_id":"m4\377\376","from":"operator"}' > "$IN/utf8.json"
printf '{"message_id":"m5","fr\0om":"operator"}' > "$IN/nul.json"
printf '{%s,"from":"x","type":"heartbeat","content":{"status":"idle","uptime_seconds":0,"active_tasks":0}}' "$env1" > "$IN/dupkey.json"
printf '{"message_id":"../../../etc/passwd","from":"operator","to":"research_agent_2","timestamp":"%s","type":"heartbeat","content":{"status":"idle","uptime_seconds":0,"active_tasks":0}}' "$ts" > "$IN/pathid.json"
head -c 11000000 /dev/zero > "$IN/oversize.json"
ln -s /etc/hostname "$IN/symlink.json"
mkfifo "$IN/fifo.json"
mkdir "$IN/dir.json"
printf '{}' > "$IN/unreadable.json"; chmod 000 "$IN/unreadable.json"
before=$(stat -c %Y /etc/hostname)
out=$($MADF recv research_agent_2 -v 2>"$T/recv.err")
has "the good message next to bad ones is delivered" "$out" "\"message_id\":\"$good\""
eq "exactly one message delivered" "$(echo "$out" | grep -c message_id)" 1
eq "the inbox is empty afterwards" "$(ls -A "$IN" | wc -l | tr -d ' ')" 0
dl=$($MADF ls dead-letter --json)
n=$(echo "$dl" | grep -c '"message_id"')
# unreadable.json is readable by root; it then fails validation instead
eq "every bad file is a dead letter" "$n" 16
for f in malformed wrongtype missing unknowntype range badtime deep utf8 nul dupkey pathid; do
	has "dead letter $f has reason invalid" "$(echo "$dl" | tr -d '\n' | sed 's/},/}\n/g' | grep "\"$f.json\"")" '"reason": "invalid"'
done
has "oversize reason" "$(echo "$dl" | tr -d '\n' | sed 's/},/}\n/g' | grep oversize.json)" '"reason": "too_large"'
has "symlink reason" "$(echo "$dl" | tr -d '\n' | sed 's/},/}\n/g' | grep symlink.json)" '"reason": "not_regular"'
has "fifo reason" "$(echo "$dl" | tr -d '\n' | sed 's/},/}\n/g' | grep fifo.json)" '"reason": "not_regular"'
has "directory reason" "$(echo "$dl" | tr -d '\n' | sed 's/},/}\n/g' | grep '"dir.json"')" '"reason": "not_regular"'
has "range error names the field and rule" "$dl" "content.agent_capacity: must be within 0..1"
has "wrong type is named" "$dl" "content.status: must be"
has "missing field is named" "$dl" "timestamp: required"
has "bad timestamp is named" "$dl" "timestamp: must be ISO 8601"
has "deep nesting is named" "$dl" "nesting deeper than"
has "invalid UTF-8 is named" "$dl" "invalid UTF-8"
has "duplicate keys are named" "$dl" "duplicate key"
eq "the symlink's target was not touched" "$(stat -c %Y /etc/hostname)" "$before"
check "the symlink is still a symlink in the dead letters" test -L "$D/messages/dead-letter/symlink.json"
check "sidecar says the original inbox" grep -q '"original_inbox": "research_agent_2"' "$D/messages/dead-letter/malformed.reason.json"
# stray temp and hidden files are not read
printf 'garbage' > "$IN/x.tmp"; printf 'garbage' > "$IN/.hidden.json"
out=$($MADF recv research_agent_2); eq ".tmp and hidden files are not read" "$out" ""
check "they are left alone" test -f "$IN/x.tmp"
rm -f "$IN/x.tmp" "$IN/.hidden.json"

# --- seed 003 spelling on read ------------------------------------------------
printf '{"message_id":"s3-1","timestamp":"%s","from_agent":"pm-agent","to_agent":"validator-agent","message_type":"status","priority":2,"correlation_id":"c-1","payload":{"agent_status":"healthy","cpu_usage_percent":1,"memory_usage_mb":10,"active_tasks":0,"completed_tasks_today":0,"error_count_today":0,"last_successful_operation":"%s","performance_metrics":{}}}' "$ts" "$ts" > "$D/messages/inbox/validator_agent/seed003.json"
out=$($MADF recv validator_agent)
has "seed 003 spelling is normalised on read" "$out" '"from":"product_manager","to":"validator_agent","type":"system_status"'
has "integer priority 2 becomes high" "$out" '"priority":"high"'
has "correlation_id kept" "$out" '"correlation_id":"c-1"'

# --- validate ---------------------------------------------------------------
$MADF show "$good" --json >/dev/null
printf '{"message_id":"v1","from":"operator","to":"validator_agent","timestamp":"%s","type":"heartbeat","content":{"status":"idle","uptime_seconds":0,"active_tasks":0}}' "$ts" > "$T/valid.json"
check "validate accepts a valid file" $MADF validate "$T/valid.json"
printf '{"message_id":"v1","from":"operator","to":"validator_agent","timestamp":"%s","type":"research_result","content":{"task_id":"t","status":"completed","execution_time_minutes":1,"data_points_collected":1,"sources_accessed":[],"key_findings":[],"raw_data":{},"confidence_score":1.2,"data_freshness_hours":0,"warnings":[]}}' "$ts" > "$T/invalid.json"
check_fails "validate rejects an invalid file (exit 1)" 1 $MADF validate "$T/valid.json" "$T/invalid.json"
out=$($MADF validate "$T/invalid.json"); has "validate names the field path and rule" "$out" "content.confidence_score: must be within 0..1"
check_fails "validate of a missing file fails" 1 $MADF validate "$T/nope.json"

# --- retry / kill / delete / requeue -------------------------------------------
mid=$($MADF ls dead-letter --json | sed -n 's/.*"file": "\(malformed.json\)".*/\1/p')
eq "dead letters are addressable by file name" "$mid" "malformed.json"
out=$($MADF retry malformed.json 2>&1); rc=$?
eq "retry of an invalid dead letter is refused" "$rc" 1
has "and says why" "$out" "invalid and would fail again"
check "the refused dead letter is kept" test -f "$D/messages/dead-letter/malformed.json"
k=$($MADF send --to research_agent_1 --type heartbeat --content '{"status":"idle","uptime_seconds":0,"active_tasks":0}')
check "kill moves a waiting message to the dead letters" $MADF kill "$k" --reason "operator test"
out=$($MADF show "$k"); has "killed message shows its reason" "$out" "operator test"
check "retry puts it back" $MADF retry "$k"
eq "back in its original inbox" "$(njson "$D/messages/inbox/research_agent_1")" 1
check "kill again" $MADF kill "$k"
check "retry --to another agent" $MADF retry "$k" --to validator_agent
out=$($MADF recv validator_agent); has "retried to the other inbox, with to rewritten" "$out" '"to":"validator_agent"'
check "delete removes a dead letter" $MADF delete malformed.json
check "with its sidecar" test ! -e "$D/messages/dead-letter/malformed.reason.json"
check_fails "delete of an unknown id fails" 1 $MADF delete nosuch
$MADF show range.json --json | python3 -c "import json,sys; m=json.load(sys.stdin)['message']; m['content']['agent_capacity']=0.5; m['message_id']='fixed1'; print(json.dumps(m))" > "$T/edited.json"
check "requeue with an edited, valid message" $MADF requeue range.json "$T/edited.json"
out=$($MADF recv research_agent_2); has "the edited message is delivered" "$out" '"agent_capacity":0.5'
printf '{"message_id":"x"}' > "$T/bad-edit.json"
check_fails "requeue of an invalid edit fails" 1 $MADF requeue wrongtype.json "$T/bad-edit.json"
check "and keeps the dead letter" test -f "$D/messages/dead-letter/wrongtype.json"

# --- gc ----------------------------------------------------------------------
old=$(find "$D/messages/processed" -name '*.json' | head -1)
mkdir -p "$D/messages/processed/2000-01-01"; cp "$old" "$D/messages/processed/2000-01-01/"
touch -d '2 hours ago' "$D/messages/tmp/old.tmp" 2>/dev/null || { : > "$D/messages/tmp/old.tmp"; touch -d '2 hours ago' "$D/messages/tmp/old.tmp"; }
out=$($MADF gc --dry-run)
has "gc --dry-run names old processed" "$out" "2000-01-01"
has "gc --dry-run names stale temporary files" "$out" "old.tmp"
check "dry run removes nothing" test -d "$D/messages/processed/2000-01-01"
out=$($MADF gc); has "gc reports removals" "$out" "removed"
check "gc removed old processed" test ! -e "$D/messages/processed/2000-01-01"
check "gc removed stale temporary files" test ! -e "$D/messages/tmp/old.tmp"
check "gc keeps recent processed" test -n "$(find "$D/messages/processed" -name '*.json' | head -1)"
# logs (errors 90 days, queries 7), report drafts (7 days), cache (TTL)
mkdir -p "$LOG_DIR/agents/research_agent_1/queries" "$LOG_DIR/agents/research_agent_1/errors" "$D/reports/drafts" "$D/cache/market/2000-01-01"
echo '{}' > "$LOG_DIR/agents/research_agent_1/queries/2000-01-01.jsonl"
echo '{}' > "$LOG_DIR/agents/research_agent_1/errors/$(date -u +%Y-%m-%d).jsonl"
echo '# old' > "$D/reports/drafts/old.md"; touch -d '10 days ago' "$D/reports/drafts/old.md"
echo '# new' > "$D/reports/drafts/new.md"
printf '{"key":"k","stored_at":"2000-01-01T00:00:00Z","stored_ns":946684800000000000,"value":1}' > "$D/cache/market/2000-01-01/0123456789abcdef.json"
out=$($MADF gc --dry-run)
has "gc --dry-run names old query logs" "$out" "queries/2000-01-01.jsonl"
has "gc --dry-run names old drafts" "$out" "drafts/old.md"
has "gc --dry-run names expired cache entries" "$out" "0123456789abcdef.json"
$MADF gc >/dev/null
check "gc removed the old query log" test ! -e "$LOG_DIR/agents/research_agent_1/queries/2000-01-01.jsonl"
check "gc kept today's error log" test -e "$LOG_DIR/agents/research_agent_1/errors/$(date -u +%Y-%m-%d).jsonl"
check "gc removed the old draft" test ! -e "$D/reports/drafts/old.md"
check "gc kept the new draft" test -e "$D/reports/drafts/new.md"
check "gc removed the expired cache entry" test ! -e "$D/cache/market/2000-01-01/0123456789abcdef.json"

# --- data dir from MESSAGE_DIR in .env ----------------------------------------------
mkdir -p "$T/proj"; printf 'MESSAGE_DIR=%s/alt/messages\n' "$T" > "$T/proj/.env"
(cd "$T/proj" && unset MADF_DATA_DIR && $MADF send --to validator_agent --type heartbeat --content '{"status":"idle","uptime_seconds":0,"active_tasks":0}' >/dev/null)
eq "MESSAGE_DIR from .env picks the data directory" "$(njson "$T/alt/messages/inbox/validator_agent")" 1
check "--data-dir overrides" sh -c "$MADF --data-dir '$T/other' status --json | grep -q inboxes && test -d '$T/other/messages/inbox'"

done_testing
