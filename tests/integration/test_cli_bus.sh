# The bus commands as an operator finds them: names that are not agents
# refused (with the known ones named), the trash.
. tests/integration/lib.sh
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'

# item 15: a mistyped agent name is refused, nothing created
out=$($MADF send --to reserch_agent_1 --type heartbeat --content "$HB" 2>&1); rc=$?
eq "send to an unknown agent exits 2" "$rc" 2
has "... naming it" "$out" 'no agent "reserch_agent_1"'
has "... and the known agents" "$out" "known: product_manager, report_writer, research_agent_1, research_agent_2, validator_agent, broadcast"
has "... and how to say it is new" "$out" "--new-agent"
check "... no inbox made for it" test ! -e "$D/messages/inbox/reserch_agent_1"
out=$($MADF recv nobody 2>&1); rc=$?
eq "recv of an unknown agent exits 2" "$rc" 2
has "... naming the known agents" "$out" "known: product_manager, report_writer, research_agent_1"
check "... no inbox made for it" test ! -e "$D/messages/inbox/nobody"
hasnt "... nor shown in status" "$($MADF status)" "nobody"
# known: configured roles, broadcast, and agents seen on the bus
check "send to a configured agent works" $MADF send --to research_agent_1 --type heartbeat --content "$HB"
check "send to broadcast works" $MADF send --to broadcast --type heartbeat --content "$HB"
check "send --new-agent to a new agent works" $MADF send --new-agent --to newbie --type heartbeat --content "$HB"
eq "... into its new inbox" "$(njson "$D/messages/inbox/newbie")" 1
check "then it is known: send without --new-agent" $MADF send --to newbie --type heartbeat --content "$HB"
eq "recv of it works" "$($MADF recv newbie | wc -l | tr -d ' ')" 2
mkdir -p "$D/state" && echo '{}' >"$D/state/stateful-state.json"
check "an agent with a state file is known" $MADF send --to stateful --type heartbeat --content "$HB"
check "recv --new-agent takes a new name" $MADF recv --new-agent brandnew
rd=$($MADF send --to report_writer --type heartbeat --content "$HB")
$MADF kill "$rd" >/dev/null
out=$($MADF retry "$rd" --to reserch_agent_1 2>&1); rc=$?
eq "retry --to an unknown agent exits 2" "$rc" 2
has "... naming the known agents" "$out" 'no agent "reserch_agent_1" is configured or was ever seen on the bus (known:'
eq "... the dead letter kept" "$($MADF ls dead-letter | grep -c "$rd")" 1
check "retry --to a new agent with --new-agent works" $MADF retry "$rd" --to other_agent --new-agent
eq "... into its inbox" "$(njson "$D/messages/inbox/other_agent")" 1

# the trash: delete keeps the message, restore puts it back unchanged
id=$($MADF send --to research_agent_2 --type heartbeat --content "$HB")
f=$(ls "$D/messages/inbox/research_agent_2/" | grep -F "$id")
cp "$D/messages/inbox/research_agent_2/$f" "$T/before.json"
dl=$($MADF send --to report_writer --type heartbeat --content "$HB")
$MADF kill "$dl" --reason "operator test" >/dev/null
cp "$D"/messages/dead-letter/*"$dl"*.reason.json "$T/before.reason.json"
check "delete a waiting message" $MADF delete "$id"
check "delete a dead letter" $MADF delete "$dl"
eq "... out of the inbox" "$(ls "$D/messages/inbox/research_agent_2" | grep -c -F "$id")" 0
eq "... out of the dead letters" "$(njson "$D/messages/dead-letter")" 0
out=$($MADF trash ls)
has "trash ls lists the deleted message and where it was" "$(echo "$out" | grep "$id")" "inbox of research_agent_2"
has "... and the dead letter with its reason" "$(echo "$out" | grep "$dl")" "dead-letter: killed"
has "... and says how long they are kept" "$out" "2 messages in the trash, kept 30 days"
has "trash ls --json" "$($MADF trash ls --json | tr -d ' \n')" "\"message_id\":\"$id\",\"from\":\"operator\",\"to\":\"research_agent_2\",\"type\":\"heartbeat\",\"queue\":\"inbox\",\"agent\":\"research_agent_2\""
out=$($MADF trash restore "$id" "$dl"); rc=$?
eq "trash restore exits 0" "$rc" 0
has "... says where it went" "$out" "restored $id to the inbox of research_agent_2"
has "... the dead letter back to the dead letters" "$out" "restored $dl to the dead letters"
check "the restored message is byte for byte what was deleted" cmp "$T/before.json" "$D/messages/inbox/research_agent_2/$f"
check "the dead letter's reason is back too" cmp "$T/before.reason.json" "$(ls "$D"/messages/dead-letter/*"$dl"*.reason.json)"
has "ls shows the dead letter with its reason" "$($MADF ls dead-letter | grep "$dl")" "killed: operator test"
eq "the trash is empty again" "$($MADF trash ls --json | tr -d ' \n')" "[]"
check_fails "restore of an id not in the trash fails" 1 $MADF trash restore "$id"
check_fails "trash with an unknown subcommand is a usage error" 2 $MADF trash empty
check_fails "trash restore without an id is a usage error" 2 $MADF trash restore
# retention: madf gc purges trash entries deleted over 30 days ago
$MADF delete "$id" >/dev/null
$MADF delete "$dl" >/dev/null
for sc in "$D"/messages/trash/*"$id"*.trash.json; do touch -d '31 days ago' "$sc"; done
out=$($MADF gc --dry-run)
has "gc --dry-run names the old trash entry" "$out" "trash over 30 days"
hasnt "... not the recent one" "$(echo "$out" | grep 'trash over')" "$dl"
$MADF gc >/dev/null
eq "gc purged the entry deleted 31 days ago (file and record)" "$(ls "$D/messages/trash" | grep -c "$id")" 0
eq "... and kept the recent one" "$($MADF trash ls --json | grep -c "\"message_id\": \"$dl\"")" 1

# a message file put in an inbox by hand: NAME (no time in it), TYPE,
# CONTENT, the timestamp TS and timeout 1 s
drop() {
	printf '{"message_id":"%s","from":"operator","to":"%s","type":"%s","timestamp":"%s","content":%s,"timeout":1}\n' \
		"$1" "$2" "$3" "$4" "$5" >"$D/messages/inbox/$2/$1.json"
}
PROG='{"task_id":"t1","percent_complete":50,"current_step":"reading"}'
OLD_TS=2020-01-01T00:00:00Z

# item 5: retrying an expired dead letter refreshes it (and says so);
# delivered afterwards, not dead-lettered again
drop exp1 research_agent_1 task_progress "$OLD_TS" "$PROG"
$MADF recv research_agent_1 >/dev/null
eq "an expired task_progress is dead-lettered" "$($MADF ls dead-letter | grep -c 'exp1 .*expired')" 1
out=$($MADF retry exp1); rc=$?
eq "retry of an expired dead letter exits 0" "$rc" 0
has "... and says it was refreshed" "$out" "exp1 expired (sent 2020-01-01T00:00:00Z, timeout 1 s): refreshed with a new timestamp"
out=$($MADF recv research_agent_1)
has "... then it is delivered" "$out" '"message_id":"exp1"'
hasnt "... with a new timestamp" "$out" "$OLD_TS"
eq "... and not dead-lettered again" "$($MADF ls dead-letter | grep -c 'exp1 ')" 0

# item 7: an expired heartbeat is dropped and counted, not dead-lettered
n0=$(njson "$D/messages/dead-letter")
drop hb1 product_manager heartbeat "$OLD_TS" "$HB"
drop hb2 product_manager system_status "$OLD_TS" '{"agent_status":"healthy","cpu_usage_percent":1,"memory_usage_mb":1,"active_tasks":0,"completed_tasks_today":0,"error_count_today":0,"last_successful_operation":"2020-01-01T00:00:00Z","performance_metrics":{}}'
$MADF recv product_manager >/dev/null
eq "expired heartbeat and system_status are not dead letters" "$(njson "$D/messages/dead-letter")" "$n0"
eq "... nor left in the inbox" "$(njson "$D/messages/inbox/product_manager")" 0
has "status --json counts them" "$($MADF status --json | tr -d ' \n')" '"expired_dropped":2'
has "status says so" "$($MADF status)" "expired heartbeats and status messages dropped 2"

# item 6: a file not named by madf counts with its mtime in OLDEST
for i in 1 2; do $MADF send --to validator_agent --type heartbeat --content "$HB" >/dev/null; done
f=$(ls "$D/messages/inbox/validator_agent" | head -1)
cp "$D/messages/inbox/validator_agent/$f" "$D/messages/inbox/validator_agent/x.json"
touch -d '10 minutes ago' "$D/messages/inbox/validator_agent/x.json"
age=$($MADF status --json | tr -d ' \n' | sed 's/.*"validator_agent":{"depth":[0-9]*,"oldest_age_s":\([0-9.]*\).*/\1/')
eq "oldest_age_s of an inbox holding x.json is its age from its mtime (~600 s, got $age)" \
	"$(awk -v a="$age" 'BEGIN { print (a >= 595 && a < 700) }')" 1
has "status shows that age as OLDEST" "$($MADF status | grep validator_agent)" "10.0m"
has "ls shows that age for x.json (the oldest: first)" "$($MADF ls inbox validator_agent | sed -n 2p)" "10.0m"

done_testing
