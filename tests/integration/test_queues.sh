# The console's queues view as an operator finds it: the selection after
# switching queues, the columns at 80x24 and under their headers (scripted
# mode, --script/--dump-screen).
. tests/integration/lib.sh
unset NO_COLOR
L=$T/logs
export MADF_LOG_DIR=$L
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'
con() { s=$1; shift; printf '%s\n' "$s" >"$T/script"; "$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" "$@" 2>"$T/err"; }
screen() { cat "$T/screen" 2>/dev/null; }
# the message ids in a queue, one a line
ids_in() { $MADF ls "$@" --json | sed -n 's/^ *"message_id": "\(.*\)",$/\1/p' | sort; }
# COL TEXT: the 1-based column where TEXT starts in the screen's header
# line of the queue (the line with MESSAGE ID)
hdr_col() { screen | awk -v t=" $1" '/MESSAGE ID/ { print index($0, t) + 1; exit }'; }
# LINE COL LEN: LEN characters of screen line LINE from column COL
cut_at() { screen | awk -v l="$1" -v c="$2" -v n="$3" 'NR == l { print substr($0, c, n) }'; }
# the screen line (number) holding TEXT first
line_of() { screen | awk -v t="$1" 'index($0, t) { print NR; exit }'; }

# four dead letters, five waiting messages (sent in order: that is the
# inbox's order at one priority)
for i in 1 2 3 4; do
	d=$($MADF send --to report_writer --type heartbeat --content "$HB")
	$MADF kill "$d" >/dev/null
done
: >"$T/ids"
for i in 1 2 3 4 5; do $MADF send --to research_agent_1 --type heartbeat --content "$HB" >>"$T/ids"; done
i1=$(sed -n 1p "$T/ids"); i2=$(sed -n 2p "$T/ids"); i3=$(sed -n 3p "$T/ids")

# item 14: the cursor on the 4th dead letter, then another queue: its list
# starts at its top
con ':
type dlq
<Enter>
wait-for dead letters: 4 messages
<Down>
<Down>
<Down>
:
type inbox research_agent_1
<Enter>
wait-for inbox of research_agent_1: 5 messages'
has "a new list starts at its top: the first message is selected (its detail shown)" \
	"$(screen)" "\"message_id\": \"$i1\""
# marks go on the messages marked: Space twice from the top marks 1 and 2
con ':
type dlq
<Enter>
wait-for dead letters: 4 messages
<Down>
<Down>
<Down>
:
type inbox research_agent_1
<Enter>
wait-for inbox of research_agent_1: 5 messages
<Space>
<Space>
K
wait-for Kill 2 messages? y/n
y
wait-for kill: 2 of 2 killed'
eq "Space Space K y after switching from :dlq kills messages 1 and 2" \
	"$(ids_in dead-letter | grep -c -e "^$i1\$" -e "^$i2\$")" 2
eq "... and leaves 3, 4 and 5 waiting" "$(ids_in inbox research_agent_1 | tr '\n' ' ')" \
	"$(sed -n 3,5p "$T/ids" | sort | tr '\n' ' ')"

# item 18: values start in the column of their header (inbox and dlq)
con ':
type inbox research_agent_1
<Enter>
wait-for inbox of research_agent_1: 3 messages'
tail_of() { printf %s "$1" | awk '{ print substr($0, length($0) - 10) }'; }
row=$(line_of "$(tail_of "$i3")")
for h in TYPE FROM PRIO TRIES AGE; do
	[ -n "$(hdr_col $h)" ] && [ "$(hdr_col $h)" -gt 0 ] || fail "header $h shown" "$(screen)"
done
eq "TYPE values under TYPE" "$(cut_at "$row" "$(hdr_col TYPE)" 9)" "heartbeat"
eq "FROM values under FROM" "$(cut_at "$row" "$(hdr_col FROM)" 8)" "operator"
eq "PRIO values under PRIO" "$(cut_at "$row" "$(hdr_col PRIO)" 6)" "normal"
eq "TRIES values under TRIES" "$(cut_at "$row" "$(hdr_col TRIES)" 1)" "0"
has "AGE values under AGE (a number of seconds or minutes)" \
	"$(cut_at "$row" "$(hdr_col AGE)" 1 | tr 0-9 9)" "9"
con ':
type dlq
<Enter>
wait-for dead letters: 6 messages'
row=$(line_of "$(tail_of "$i1")")
eq "dlq: ORIGINAL INBOX values under their header" \
	"$(cut_at "$row" "$(hdr_col 'ORIGINAL INBOX')" 16)" "research_agent_1"
eq "dlq: TYPE values under TYPE" "$(cut_at "$row" "$(hdr_col TYPE)" 9)" "heartbeat"
eq "dlq: FROM values under FROM" "$(cut_at "$row" "$(hdr_col FROM)" 8)" "operator"

# item 10: at 80x24 every column shows, the id cut in the middle
con 'resize 80 24
:
type inbox research_agent_1
<Enter>
wait-for inbox of research_agent_1: 3 messages'
hdr=$(screen | grep 'MESSAGE ID')
for h in TYPE FROM PRIO TRIES AGE; do has "80x24: the $h column shows" "$hdr" "$h"; done
# 24 columns for the id at 80: 7 of its head, "..", 15 of its tail
head=$(printf %s "$i3" | cut -c1-7)
tail=$(printf %s "$i3" | awk '{ print substr($0, length($0) - 14) }')
row=$(screen | grep -F "$head..$tail")
has "80x24: the id keeps its head and tail ($head..$tail)" "$row" "$head..$tail"
has "80x24: ... and the row shows PRIO" "$row" "normal"
eq "80x24: the row fits in 80 columns" "$(printf %s "$row" | awk '{ print (length($0) <= 80) }')" 1
eq "80x24: the AGE column is on the screen" "$(( $(hdr_col AGE) + 3 <= 80 ))" 1
con 'resize 80 24
:
type dlq
<Enter>
wait-for dead letters: 6 messages'
hdr=$(screen | grep 'MESSAGE ID')
for h in TYPE 'ORIGINAL INBOX' FROM AGE; do has "80x24 dlq: the $h column shows" "$hdr" "$h"; done

# item 15: :inbox of a name no agent has is refused, the known ones named;
# :inbox! opens it anyway
con ':
type inbox nosuch
<Enter>
wait-for no agent'
has ":inbox nosuch is refused" "$(screen)" 'inbox: no agent "nosuch" (known:'
has "... naming the known agents" "$(screen)" "known: product_manager, report_writer, research_agent_1"
hasnt "... and does not open it" "$(screen)" "inbox of nosuch"
check "... nor make an inbox" test ! -e "$D/messages/inbox/nosuch"
con ':
type inbox! nosuch
<Enter>
wait-for inbox of nosuch: 0 messages'
has ":inbox! nosuch opens it anyway" "$(screen)" "inbox of nosuch: 0 messages"
# :retry-to an unknown agent is refused before any confirmation
n_dead=$(njson "$D/messages/dead-letter")
con ':
type dlq
<Enter>
wait-for dead letters:
T
type reserch_agent_1
<Enter>
wait-for no agent'
has ":retry-to an unknown agent is refused" "$(screen)" 'retry-to: no agent "reserch_agent_1"'
hasnt "... no confirmation asked" "$(screen)" "y/n"
eq "... the dead letters untouched" "$(njson "$D/messages/dead-letter")" "$n_dead"
check "... no inbox made" test ! -e "$D/messages/inbox/reserch_agent_1"

# D -> trash -> R restore: the message comes back as it was, where it was
rid=$($MADF send --to research_agent_2 --type heartbeat --content "$HB")
rf=$(ls "$D/messages/inbox/research_agent_2" | grep -F "$rid")
cp "$D/messages/inbox/research_agent_2/$rf" "$T/r.json"
con ':
type inbox research_agent_2
<Enter>
wait-for inbox of research_agent_2: 1 message
D
wait-for Delete 1 message (to the trash for 30 days; :trash restores)? y/n
y
wait-for delete: 1 of 1 deleted'
has "D says where the message went" "$(screen)" "delete: 1 of 1 deleted (to the trash for 30 days)"
eq "... out of the inbox" "$(njson "$D/messages/inbox/research_agent_2")" 0
has "the journal records what was deleted: id, type, from, to, reason" \
	"$(grep '"action":"delete"' "$D/journal/actions.jsonl" | tail -1)" \
	"\"deleted\":[{\"id\":\"$rid\",\"type\":\"heartbeat\",\"from\":\"operator\",\"to\":\"research_agent_2\",\"reason\":null,\"queue\":\"inbox\",\"agent\":\"research_agent_2\"}]"
# a dead letter's reason is journalled too
did=$($MADF ls dead-letter --json | sed -n 's/^ *"message_id": "\(.*\)",$/\1/p' | head -1)
con ':
type dlq
<Enter>
wait-for dead letters:
/
type '"$(tail_of "$did")"'
<Enter>
D
wait-for y/n
y
wait-for delete: 1 of 1 deleted'
has "... a dead letter's reason in the journal" "$(grep '"action":"delete"' "$D/journal/actions.jsonl" | tail -1)" \
	"{\"id\":\"$did\",\"type\":\"heartbeat\",\"from\":\"operator\",\"to\":\"report_writer\",\"reason\":\"killed\",\"queue\":\"dead-letter\"}"
con ':
type trash
<Enter>
wait-for trash (deleted, kept 30 days; R restores): 2 messages'
has ":trash lists what was deleted, and from where" "$(screen | grep -F "$(tail_of "$rid")")" "inbox/research_agent_2"
has "... the dead letter with its reason" "$(screen | grep -F "$(tail_of "$did")")" "dead-letter: killed"
con ':
type trash
<Enter>
wait-for trash (deleted
/
type '"$(tail_of "$rid")"'
<Enter>
R
wait-for Restore 1 message to where it was deleted from? y/n
y
wait-for restore: 1 of 1 restored'
has "R in :trash restores" "$(screen)" "restore: 1 of 1 restored"
check "... the message back in its inbox, byte for byte" cmp "$T/r.json" "$D/messages/inbox/research_agent_2/$rf"
has "... journalled as a restore" "$(tail -1 "$D/journal/actions.jsonl")" "\"action\":\"restore\",\"ids\":[\"$rid\"]"
con ':
type trash
<Enter>
wait-for trash (deleted
K'
has "K in the trash says why not" "$(screen)" "kill: in the trash: R restores it first"

# item 18: a bulk retry that fills the inbox says how many were retried,
# how many are left in the dead letters and why
: >"$T/v.ids"
for i in 1 2 3 4 5 6 7 8 9 10; do
	$MADF send --to validator_agent --type heartbeat --content "$HB" >>"$T/v.ids"
done
xargs $MADF kill <"$T/v.ids" >/dev/null
export MADF_INBOX_LIMIT=4
con ':
type dlq
<Enter>
wait-for dead letters:
/
type validator_agent
<Enter>
A
R
wait-for Retry 10 messages? y/n
y
wait-for retry: 4 of 10 retried'
unset MADF_INBOX_LIMIT
has "a retry that fills the inbox says what happened to the rest" "$(screen)" \
	"retry: 4 of 10 retried; 6 left in the dead letters: inbox of validator_agent is full: 4 messages waiting (limit 4)"
eq "... 4 in the inbox" "$(njson "$D/messages/inbox/validator_agent")" 4
eq "... 6 still dead letters" "$(ids_in dead-letter | grep -c -F -f "$T/v.ids")" 6

# item 5: R on an expired dead letter refreshes it and says so
printf '{"message_id":"exp2","from":"operator","to":"research_agent_1","type":"task_progress","timestamp":"2020-01-01T00:00:00Z","content":{"task_id":"t1","percent_complete":5,"current_step":"x"},"timeout":1}\n' \
	>"$D/messages/inbox/research_agent_1/exp2.json"
$MADF recv research_agent_1 >/dev/null
eq "the expired message is a dead letter" "$($MADF ls dead-letter | grep -c 'exp2 .*expired')" 1
con ':
type dlq
<Enter>
wait-for dead letters:
/
type exp2
<Enter>
R
wait-for Retry 1 message? y/n
y
wait-for retry: 1 of 1 retried'
has "R on an expired dead letter says it was refreshed" "$(screen)" \
	"retry: 1 of 1 retried (1 had expired: sent again with a new timestamp)"
out=$($MADF recv research_agent_1)
has "... and it is delivered, not dead-lettered again" "$out" '"message_id":"exp2"'
eq "... no dead letter left of it" "$($MADF ls dead-letter | grep -c 'exp2 ')" 0

done_testing
