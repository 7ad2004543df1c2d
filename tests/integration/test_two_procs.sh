# Two processes share one bus: two consumers of one inbox and a sender
# running at once; each message is handled once.
. tests/integration/lib.sh
A=shared
export MADF_INBOX_LIMIT=100000 # more than the default 1000 wait at once here
python3 tests/integration/gen_messages.py "$D" $A 1500 two
( i=0; while [ $i -lt 100 ]; do
	$MADF send --to $A --type heartbeat --content '{"status":"idle","uptime_seconds":0,"active_tasks":0}' >>"$T/sent.ids"
	i=$((i + 1)); done ) & s=$!
$MADF recv $A --wait 2 >"$T/a.out" & a=$!
$MADF recv $A --wait 2 >"$T/b.out" & b=$!
wait $s; wait $a; wait $b
total=$(cat "$T/a.out" "$T/b.out" | wc -l | tr -d ' ')
eq "all 1600 messages received" "$total" 1600
dups=$(cat "$T/a.out" "$T/b.out" | grep -o '"message_id":"[^"]*"' | sort | uniq -d | wc -l | tr -d ' ')
eq "no message received by both consumers" "$dups" 0
na=$(wc -l < "$T/a.out" | tr -d ' '); nb=$(wc -l < "$T/b.out" | tr -d ' ')
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] && ok "both consumers got work ($na / $nb)" || fail "both consumers got work" "$na / $nb"
eq "the inbox is empty" "$(njson "$D/messages/inbox/$A")" 0
st=$($MADF status --json | tr -d ' \n')
has "status agrees" "$st" "\"$A\":{\"depth\":0"
done_testing
