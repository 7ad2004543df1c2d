# The console in tmux attached over NATS JetStream (a server of this
# test's own): the inbox depths on screen change live as messages are sent
# and received; dead letters (one nacked past MAX_RETRY_ATTEMPTS, two
# killed) are retried by keys to their inbox and to another one, and
# deleted for good (NATS keeps no trash); :inbox opens an inbox that
# exists only on the bus. One -L socket, 120x40, polling the screen.
. tests/integration/lib.sh
. tests/integration/nats.sh
command -v tmux >/dev/null || { echo "not ok - tmux is not installed"; exit 1; }

DRV=$(test_helper bus_driver) || { fail "the bus driver is built (make testbins)"; done_testing; exit 1; }

nats_start
export MADF_BUS=$NATS_URL
export MAX_RETRY_ATTEMPTS=3 MADF_RETRY_BASE_MS=50 MADF_RETRY_MAX_MS=200
S=madf-console-nats-$$
trap 'tmux -L "$S" kill-server 2>/dev/null; for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
tm() { tmux -L "$S" "$@"; }
cap() { tm capture-pane -p -t main; }
on_screen() { cap | grep -qF -- "$1"; }
depth_is() { [ "$(cap | awk -v a="$1" '$1 == a { print $3 }')" = "$2" ]; }
keys() { tm send-keys -t main "$@"; }
# rows_are IDS: the message rows on screen are these ids, in this order
rows_are() { [ "$(cap | grep -oE '^ +[A-Za-z0-9_]+_[0-9]{8}_[0-9]{6}_[0-9a-f]{16}' | tr -d ' ' | tr '\n' ' ')" = "$* " ]; }
# jget JSON PYTHON-EXPR: a value out of JSON (j is the parsed document).
jget() { printf '%s' "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)" 2>&1; }
hb() { echo "{\"status\":\"idle\",\"uptime_seconds\":$1,\"active_tasks\":0}"; }
dead_count() { jget "$($MADF status --json)" 'j["dead_letter"]'; }
# the stored message (JSON, compact) of an id, or the error
body() { $MADF show --json "$1" 2>&1 | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["message"], sort_keys=True))' 2>&1; }
where() { jget "$($MADF show --json "$1" 2>&1)" 'j["queue"] + " " + j.get("agent", "-")'; }

$MADF send --to research_agent_1 --type heartbeat --content "$(hb 1)" >/dev/null
$MADF send --to research_agent_1 --type heartbeat --content "$(hb 2)" >/dev/null

tm -f /dev/null new-session -d -s main -x 120 -y 40 -c "$TOP" \
	"env TERM=xterm-256color LANG=C.UTF-8 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 MADF_BUS='$NATS_URL' '$MADF' --log-dir '$T/logs' console --attach 2>'$T/console.err'; echo exit=\$? >>'$T/console.err'; sleep 30"
wait_for "the console starts on the NATS bus" 20 on_screen "AGENT"
wait_for "research_agent_1's depth shows the 2 waiting on NATS" 10 depth_is research_agent_1 2
$MADF send --to research_agent_1 --type heartbeat --content "$(hb 3)" >/dev/null
wait_for "a send makes it 3, live" 10 depth_is research_agent_1 3
$MADF recv research_agent_1 --max 2 >/dev/null
wait_for "receiving 2 makes it 1, live" 10 depth_is research_agent_1 1
eq "... as madf status says" "$(jget "$($MADF status --json)" 'j["inboxes"]["research_agent_1"]["depth"]')" 1

# a dead letter: nacked three times (MAX_RETRY_ATTEMPTS) by a consumer
nid=$($MADF send --to report_writer --type heartbeat --content "$(hb 41)")
nbody=$(body "$nid")
for i in 1 2 3; do $DRV claim report_writer 30 nack "boom $i" >/dev/null; done
eq "the nacked message is a dead letter, max_attempts" \
	"$(jget "$($MADF ls dead-letter --json)" '[(e["message_id"], e["reason"]) for e in j]')" "[('$nid', 'max_attempts')]"
wait_for "the console counts it: dead letters 1" 10 on_screen "dead letters 1 "
# two more, killed
k1=$($MADF send --to validator_agent --type heartbeat --content "$(hb 51)")
k2=$($MADF send --to validator_agent --type heartbeat --content "$(hb 52)")
k1body=$(body "$k1")
$MADF kill "$k1" >/dev/null
$MADF kill "$k2" >/dev/null
wait_for "... then dead letters 3" 10 on_screen "dead letters 3 "

# :dlq, filtered to the nacked one, R y: back in report_writer's inbox
keys : d l q Enter
wait_for ":dlq lists the 3 dead letters from NATS" 10 on_screen "dead letters: 3 messages"
on_screen "max_attempts (1)" && ok "... grouped by reason: max_attempts (1)" || fail "... grouped by reason: max_attempts (1)" "$(cap)"
on_screen "killed (2)" && ok "... and killed (2)" || fail "... and killed (2)" "$(cap)"
keys / "$nid" Enter
wait_for "/ filters the rows to the nacked one" 10 rows_are "$nid"
keys R
wait_for "R asks" 10 on_screen "Retry 1 message? y/n"
keys y
wait_for "the status line says it was retried" 10 on_screen "retry: 1 of 1 retried"
eq "madf show: it waits in report_writer's inbox again" "$(where "$nid")" "inbox report_writer"
eq "... the same id and body" "$(body "$nid")" "$nbody"
eq "... attempts start again at 0" "$(jget "$($MADF show --json "$nid")" 'j["attempts"]')" 0
eq "madf status: the dead letters dropped to 2" "$(dead_count)" 2
has "madf ls: it is listed in the inbox" "$($MADF ls inbox report_writer)" "$nid"
keys Escape
wait_for "Esc clears the filter: the two killed ones are left" 10 rows_are "$k1 $k2"
on_screen "dead letters: 2 messages" && ok "... dead letters: 2 messages" || fail "... dead letters: 2 messages" "$(cap)"
keys / "$k1" Enter
wait_for "/ filters the rows to the first killed one" 10 rows_are "$k1"
keys T
wait_for "T asks for the inbox" 10 on_screen "retry 1 message to which inbox?"
keys r e s e a r c h _ a g e n t _ 2 Enter
wait_for "... then asks to confirm" 10 on_screen "Retry 1 message to research_agent_2? y/n"
keys y
wait_for "the status line says it went to research_agent_2" 10 on_screen "retry-to: to research_agent_2: 1 of 1 retried"
eq "madf show: it waits in research_agent_2's inbox" "$(where "$k1")" "inbox research_agent_2"
eq "... the same id and content" "$(jget "$($MADF show --json "$k1")" 'j["message"]["content"] == '"$k1body"'["content"]')" True
eq "... addressed to research_agent_2 now" "$(jget "$($MADF show --json "$k1")" 'j["message"]["to"]')" research_agent_2
eq "madf status: the dead letters dropped to 1" "$(dead_count)" 1

# D: the other killed one deleted, for good on NATS (no trash)
keys Escape
wait_for "Esc: the second killed one is left" 10 rows_are "$k2"
on_screen "dead letters: 1 message," && ok "... dead letters: 1 message" || fail "... dead letters: 1 message" "$(cap)"
keys D
wait_for "D asks, saying the delete is for good on NATS" 10 on_screen "Delete 1 message for good (the nats transport has no trash)? y/n"
keys y
wait_for "the status line says it was deleted for good" 10 on_screen "delete: 1 of 1 deleted for good (this transport has no trash)"
eq "madf status: no dead letter left" "$(dead_count)" 0
wait_for "the list says so: dead letters: 0 messages" 10 on_screen "dead letters: 0 messages"
has "madf show: the deleted one is gone from the bus" "$($MADF show "$k2" 2>&1)" "no message $k2"
keys Escape
wait_for "Esc clears the filter" 10 sh -c "! tmux -L '$S' capture-pane -p -t main | grep -qF 'filter: '"
keys : t r a s h Enter
wait_for ":trash on NATS says there is none: a delete is permanent" 10 on_screen "trash (none on the nats transport: a delete there is permanent)"

# :inbox of an inbox that exists only on the bus (no directory, no state
# file under the data directory): opened, not refused
bid=$($MADF send --new-agent --to t_busonly --type heartbeat --content "$(hb 61)")
check "t_busonly has nothing under the data directory" test ! -e "$D/messages/inbox/t_busonly"
keys : i n b o x Space t _ b u s o n l y Enter
wait_for ":inbox t_busonly opens the bus-only inbox" 10 on_screen "inbox of t_busonly: 1 message"
on_screen "$bid" && ok "... listing its message" || fail "... listing its message" "$(cap)"
keys : i n b o x Space t _ n o s u c h Enter
wait_for ":inbox of a name nowhere is still refused" 10 on_screen 'inbox: no agent "t_nosuch"'
cap | tr -d '\n' | grep -q 'known: .*t_busonly' && ok "... naming the bus's agents among the known" || fail "... naming the bus's agents among the known" "$(cap | tail -3)"

keys q
wait_for "q quits" 10 sh -c "! tmux -L '$S' capture-pane -p -t main | grep -qF 'AGENT'"
wait_for "... and the console exits 0" 20 grep -q '^exit=0' "$T/console.err"
eq "... its stderr has nothing else (no sanitizer report)" "$(grep -v '^exit=0' "$T/console.err")" ""
done_testing
