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

done_testing
