# The console's scripted mode (--script FILE --dump-screen FILE): headless
# on a 120x40 virtual screen, under the sanitizer build the runner uses.
# Checks what a user would look for, not whole-screen goldens.
. tests/integration/lib.sh
unset NO_COLOR
L=$T/logs
export MADF_LOG_DIR=$L
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'
con() { s=$1; shift; printf '%s\n' "$s" >"$T/script"; "$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" "$@" 2>"$T/err"; }
screen() { cat "$T/screen" 2>/dev/null; }
# depth column of an agent's row in the overview
depth_of() { screen | awk -v a="$1" '$1 == a { print $3 }'; }

# overview: the depths shown are the files on disk
for i in 1 2 3; do $MADF send --to research_agent_1 --type heartbeat --content "$HB" >/dev/null; done
$MADF send --to validator_agent --type heartbeat --content "$HB" >/dev/null
con 'wait-for research_agent_1'
eq "scripted run exits 0" "$?" 0
eq "overview: research_agent_1 depth = files" "$(depth_of research_agent_1)" "$(njson "$D/messages/inbox/research_agent_1")"
eq "overview: validator_agent depth = files" "$(depth_of validator_agent)" "$(njson "$D/messages/inbox/validator_agent")"
has "overview: agents without state are offline" "$(screen | grep product_manager)" "offline"
has "title shows the views" "$(screen | head -1)" "1 Overview  2 Tasks  3 Queues"
has "title shows attach mode" "$(screen | head -1)" "attach"

# the data size is measured off the UI thread: shown once the walk ends,
# and it counts what is in the data directory (a 3 MiB file added)
head -c 3145728 /dev/zero >"$D/ballast.bin"
con 'wait-for MB of 1 GB alert'
eq "data size shown after its walk" "$?" 0
mb=$(screen | sed -n 's/^ data \([0-9.]*\) MB of 1 GB alert.*/\1/p')
eq "data size counts the 3 MiB file (shown: $mb MB)" "$(awk -v m="$mb" 'BEGIN { print (m >= 3.0 && m < 4.0) }')" 1
rm -f "$D/ballast.bin"

# help is generated from the key table (scrolled down to the queue keys)
con '?
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j'
has "help lists R from the key table" "$(screen)" "retry dead letters to their original inbox (confirm)"
has "help lists the task cancel" "$(screen)" "cancel the task (named in the report) (confirm)"
has "help lists the commands" "$(screen)" ":inbox NAME"

# :inbox NAME lists the messages; Enter on an agent opens its inbox
con ':
type inbox research_agent_1
<Enter>
wait-for inbox of research_agent_1: 3 messages'
has ":inbox shows the inbox" "$(screen)" "inbox of research_agent_1: 3 messages"
has "detail pane pretty-prints the message" "$(screen)" '"type": "heartbeat"'
con '<Down>
<Enter>
wait-for inbox of research_agent_1'
has "Enter on an agent opens its inbox" "$(screen)" "inbox of research_agent_1: 3 messages"

# Tab completion of commands and agent names (the ambiguous prefix left is
# no agent's name: refused, with the known ones named)
con ':
type inb
<Tab>
type research_agent_
<Tab>
<Enter>
wait-for no agent'
has "Tab completes the command and lists agent candidates" "$(screen)" 'inbox: no agent "research_agent_" (known:'
con ':
type inb
<Tab>
type research_agent_1
<Enter>
wait-for inbox of research_agent_1'
has "Tab completes the command" "$(screen)" "inbox of research_agent_1"

# filter: regex, ! inverts
con '/
type valid
<Enter>'
hasnt "filter hides other agents" "$(screen | grep -c research_agent_1)" "1"
has "filter keeps matches" "$(screen)" "validator_agent"
con '/
type !valid|research
<Enter>'
has "inverted filter" "$(screen)" "product_manager"
hasnt "inverted filter hides matches" "$(screen)" "validator_agent "

# kill to the dead letters (K y), then :dlq R y retries it to its inbox
id=$($MADF send --to report_writer --type heartbeat --content "$HB")
con ':
type inbox report_writer
<Enter>
wait-for inbox of report_writer: 1 message
K
wait-for Kill 1 message? y/n
y
wait-for kill: 1 of 1 killed'
eq "K y moves the message to the dead letters" "$(njson "$D/messages/dead-letter")" 1
eq "... out of the inbox" "$(njson "$D/messages/inbox/report_writer")" 0
con ':
type dlq
<Enter>
wait-for dead letters: 1 message'
has "dlq groups by reason" "$(screen)" "(1)"
has "dlq detail shows the reason" "$(screen)" "dead-letter reason:"
con ':
type dlq
<Enter>
wait-for dead letters: 1 message
R
wait-for Retry 1 message? y/n
n
wait-for cancelled'
eq "R n changes nothing" "$(njson "$D/messages/dead-letter")" 1
con ':
type dlq
<Enter>
wait-for dead letters: 1 message
R
wait-for read-only: retry refused' --read-only
has "--read-only refuses R" "$(screen)" "read-only: retry refused"
eq "--read-only left the dead letter" "$(njson "$D/messages/dead-letter")" 1
con ':
type dlq
<Enter>
wait-for dead letters: 1 message
R
wait-for Retry 1 message? y/n
y
wait-for retry: 1 of 1 retried'
eq "R y retries the dead letter" "$(njson "$D/messages/dead-letter")" 0
eq "... back to its original inbox" "$(njson "$D/messages/inbox/report_writer")" 1
has "the journal records the retry" "$(cat "$D/journal/actions.jsonl")" "\"action\":\"retry\",\"ids\":[\"$id\"]"
has "the journal records the refusal" "$(cat "$D/journal/actions.jsonl")" "refused: read-only"

# Space marks, A marks all, D deletes the marked set
con ':
type inbox research_agent_1
<Enter>
wait-for 3 messages
A
D
wait-for Delete 3 messages (to the trash for 30 days; :trash restores)? y/n
y
wait-for delete: 3 of 3 deleted'
eq "A D y deletes all three" "$(njson "$D/messages/inbox/research_agent_1")" 0

# a bulk action past 200 messages runs on a thread of its own: K on 300
# marked messages, then R on the 300 dead letters; each ends with the count
python3 tests/integration/gen_messages.py "$D" research_agent_2 300 bulk
con ':
type inbox research_agent_2
<Enter>
wait-for 300 messages
A
K
wait-for Kill 300 messages? y/n
y
wait-for kill: 300 of 300 killed'
eq "bulk K y: 300 dead letters" "$(njson "$D/messages/dead-letter")" 300
eq "... the inbox empty" "$(njson "$D/messages/inbox/research_agent_2")" 0
has "... one journal line with every id" "$(tail -1 "$D/journal/actions.jsonl")" '"bulk_000299"'
con ':
type dlq
<Enter>
wait-for dead letters: 300 messages
A
R
wait-for Retry 300 messages? y/n
y
wait-for retry: 300 of 300 retried'
eq "bulk R y: no dead letter left" "$(njson "$D/messages/dead-letter")" 0
eq "... all 300 back in their inbox" "$(njson "$D/messages/inbox/research_agent_2")" 300
rm -f "$D"/messages/inbox/research_agent_2/*.json

# escape sequences in a message are shown neutralised
$MADF send --to research_agent_2 --type heartbeat --content '{"status":"idle","uptime_seconds":0,"active_tasks":0,"note":"\u001b]0;pwned\u0007 \u001b[2J boom"}' >/dev/null
con ':
type inbox research_agent_2
<Enter>
wait-for boom'
hasnt "no ESC byte reaches the screen" "$(screen | tr -d '[:print:]\n' | od -c | grep -c 033)" "1"
has "the text of the escape is still shown" "$(screen)" "pwned"

# E: a dead letter edited in $EDITOR (a sed script here), validated, requeued
RR='{"task_id":"t1","status":"completed","execution_time_minutes":1,"data_points_collected":3,"sources_accessed":["sim"],"key_findings":["x"],"raw_data":{},"confidence_score":0.5,"data_freshness_hours":1,"warnings":[]}'
eid=$($MADF send --from research_agent_1 --to validator_agent --type research_result --content "$RR")
$MADF kill "$eid" >/dev/null
# it went bad on disk: a confidence out of range, so R cannot save it
sed -i 's/"confidence_score": 0.5/"confidence_score": 1.5/' "$D"/messages/dead-letter/*"$eid"*.0.json
printf '#!/bin/sh\nsed -i "s/\\"confidence_score\\": [0-9.]*/\\"confidence_score\\": 7/" "$1"\n' >"$T/ed-bad"
printf '#!/bin/sh\nsed -i "s/\\"confidence_score\\": [0-9.]*/\\"confidence_score\\": 0.9/" "$1"\n' >"$T/ed-fix"
chmod +x "$T/ed-bad" "$T/ed-fix"
nv=$(njson "$D/messages/inbox/validator_agent")
EDITOR=$T/ed-bad con ':
type dlq
<Enter>
wait-for dead letters: 1 message
E
wait-for Edit and requeue 1 message? y/n
y
wait-for edit: refused'
has "E: an invalid edit is refused with the validation error" "$(screen)" "confidence_score"
eq "... and the dead letter is kept" "$(njson "$D/messages/dead-letter")" 1
has "... and the edit is kept in the data directory" "$(cat "$D"/console/edits/*.json)" '"confidence_score": 7'
has "... and the journal says where" "$(grep '"action":"edit"' "$D/journal/actions.jsonl")" "console/edits/"
EDITOR=$T/ed-fix con ':
type dlq
<Enter>
wait-for dead letters: 1 message
E
wait-for Edit and requeue 1 message? y/n
y
wait-for edit: requeued to validator_agent'
eq "E y with a valid edit: out of the dead letters" "$(njson "$D/messages/dead-letter")" 0
eq "... into its inbox" "$(njson "$D/messages/inbox/validator_agent")" $((nv + 1))
has "... as edited" "$(cat "$D"/messages/inbox/validator_agent/*.json | tr -d ' \n')" '"confidence_score":0.9'
has "the journal records the edit" "$(cat "$D/journal/actions.jsonl")" "\"action\":\"edit\",\"ids\":[\"$eid\"],\"result\":\"requeued to validator_agent\""
con ':
type inbox validator_agent
<Enter>
wait-for inbox of validator_agent
E'
has "E outside the dead letters says why" "$(screen)" "E edits dead letters (:dlq)"
$MADF kill "$($MADF send --to research_agent_1 --type heartbeat --content "$HB")" >/dev/null
EDITOR=$T/ed-fix con ':
type dlq
<Enter>
wait-for dead letters: 1 message
E
wait-for read-only: edit refused' --read-only
has "--read-only refuses E" "$(screen)" "read-only: edit refused"

# T: dead letters retried to another inbox, the agent asked on the command line
$MADF kill "$($MADF send --to research_agent_1 --type heartbeat --content "$HB")" >/dev/null
n1=$(njson "$D/messages/inbox/research_agent_2")
con ':
type dlq
<Enter>
wait-for dead letters: 2 messages
A
T
wait-for :retry-to
type research_agent_
<Tab>
type 2
<Enter>
wait-for Retry 2 messages to research_agent_2? y/n
y
wait-for retry-to: to research_agent_2: 2 of 2 retried'
eq "T y retries the marked dead letters" "$(njson "$D/messages/dead-letter")" 0
eq "... to the other inbox" "$(njson "$D/messages/inbox/research_agent_2")" $((n1 + 2))
eq "... not the original one" "$(njson "$D/messages/inbox/research_agent_1")" 0
has "the journal records retry-to" "$(cat "$D/journal/actions.jsonl")" '"action":"retry-to"'
rid=$($MADF send --to research_agent_1 --type heartbeat --content "$HB")
$MADF kill "$rid" >/dev/null
con ':
type dlq
<Enter>
wait-for dead letters: 1 message
:
type retry-to validator_agent
<Enter>
wait-for Retry 1 message to validator_agent? y/n
y
wait-for retry-to: to validator_agent: 1 of 1 retried'
has ":retry-to AGENT moves it there" "$(cat "$D"/messages/inbox/validator_agent/*.json | tr -d ' \n')" "\"message_id\":\"$rid\""
con ':
type retry-to validator_agent
<Enter>' --read-only
has "--read-only refuses :retry-to" "$(screen)" "read-only: retry-to refused"

# :processed lists what was handled, read-only
$MADF recv research_agent_2 >/dev/null
np=$(find "$D/messages/processed" -name '*.json' | wc -l | tr -d ' ')
con ':
type processed
<Enter>
wait-for processed (read-only): '"$np"' messages
D'
has ":processed lists the processed messages" "$(screen)" "processed (read-only): $np messages"
has "... and refuses actions" "$(screen)" "processed messages are history: read-only here"
eq "... leaving them on disk" "$(find "$D/messages/processed" -name '*.json' | wc -l | tr -d ' ')" "$np"

# logs :since hides older lines; overview errors per minute and tool calls
today=$(date -u +%F)
now=$(date -u +%FT%TZ)
old=$(date -u -d '-1 hour' +%FT%TZ)
mkdir -p "$L/agents/validator_agent/errors" "$D/tools"
for ts in "$old" "$now" "$now"; do
	printf '{"ts":"%s","level":"error","category":"errors","event":"check_failed","message":"at %s"}\n' "$ts" "$ts"
done >>"$L/agents/validator_agent/errors/$today.jsonl"
con ':
type logs validator_agent
<Enter>
wait-for at '"$old"
has "logs show the old line without a window" "$(screen)" "at $old"
con ':
type logs validator_agent
<Enter>
:
type since 30m
<Enter>
wait-for since 30m'
hasnt ":since 30m hides the older line" "$(screen)" "at $old"
has "... keeps the recent ones" "$(screen)" "at $now"
con ':
type logs validator_agent
<Enter>
:
type since 30m
<Enter>
:
type since all
<Enter>
wait-for at '"$old"
has ":since all shows every line again" "$(screen)" "all day"
con ':
type since 5x
<Enter>'
has ":since refuses a bad duration" "$(screen)" ":since takes a duration"

# logs: / filters the lines; Enter shows every field of one, wrapped
mkdir -p "$L/agents/research_agent_2/decisions"
long=$(awk 'BEGIN { for (i = 0; i < 60; i++) printf "word%d ", i; printf "the-last-word" }')
{
	printf '{"ts":"%s","level":"info","category":"decisions","event":"reassign","message":"reassign USDJPY-news to research_agent_1"}\n' "$now"
	printf '{"ts":"%s","level":"info","category":"decisions","event":"run_started","message":"run 7 started"}\n' "$now"
	printf '{"ts":"%s","level":"info","category":"decisions","event":"long_one","message":"%s","task_id":"EURUSD-market"}\n' "$now" "$long"
} >"$L/agents/research_agent_2/decisions/$today.jsonl"
con ':
type logs research_agent_2
<Enter>
wait-for run 7 started
/
type reassign
<Enter>
wait-for filter: reassign'
has "logs /: a matching line stays" "$(screen)" "reassign USDJPY-news to research_agent_1"
hasnt "logs /: a line that does not match is gone" "$(screen)" "run 7 started"
con ':
type logs research_agent_2
<Enter>
wait-for long_one
<End>
<Enter>
wait-for the-last-word'
eq "Enter on a log line: the whole message is shown (its last word)" "$?" 0
has "... with the line's other fields" "$(screen | grep '^ task_id')" "EURUSD-market"
has "... the message wrapped, nothing cut (word30 on a line)" "$(screen | grep -c 'word30 ')" "1"
con ':
type logs research_agent_2
<Enter>
wait-for long_one
<End>
<Enter>
wait-for the-last-word
<Esc>'
hasnt "Esc closes the detail pane" "$(screen)" "the-last-word"
# a console started elsewhere with --data-dir reads that bus's logs
# (the logs/ beside its data directory) and says where they come from
mkdir -p "$T/elsewhere" "$T/bus2/data" "$T/bus2/logs/agents/product_manager/decisions" \
	"$T/elsewhere/logs/agents/product_manager/decisions"
printf '{"ts":"%s","level":"info","category":"decisions","event":"x","message":"line of bus two"}\n' "$now" \
	>"$T/bus2/logs/agents/product_manager/decisions/$today.jsonl"
printf '{"ts":"%s","level":"info","category":"decisions","event":"x","message":"line of the cwd"}\n' "$now" \
	>"$T/elsewhere/logs/agents/product_manager/decisions/$today.jsonl"
printf '4\nwait-for line of\n' >"$T/script"
(cd "$T/elsewhere" && env -u LOG_DIR "$MADF" --data-dir "$T/bus2/data" console --attach --script "$T/script" \
	--dump-screen "$T/screen" 2>"$T/err")
has "another cwd with --data-dir: that bus's logs" "$(screen)" "line of bus two"
hasnt "... not those of the working directory" "$(screen)" "line of the cwd"
has "... and the header names their directory" "$(screen)" "from $T/bus2/logs/agents/product_manager/"
con 'wait-for errors 0.4/min (5m)'
has "overview: errors per minute over 5 minutes" "$(screen)" "errors 0.4/min (5m)"
printf '{"ts":"%s","level":"error","category":"errors","event":"x","message":"y"}\n' "$now" "$now" "$now" >>"$L/agents/validator_agent/errors/$today.jsonl"
con 'wait-for errors 1.0/min (5m)'
has "overview: appended errors are counted" "$(screen)" "errors 1.0/min (5m)"
printf '{"updated_at":"x","tools":{"market_data":{"calls":5,"by_agent":{"research_agent_1":3}},"news_search":{"calls":6,"by_agent":{"research_agent_1":2,"research_agent_2":4}}}}\n' >"$D/tools/usage.json"
con 'wait-for TOOLS'
eq "overview: tool calls per agent" "$(screen | awk '$1 == "research_agent_1" { print $9 }')" 5
eq "... summed over tools" "$(screen | awk '$1 == "research_agent_2" { print $9 }')" 4

# reports: finished reports listed newest first; Enter shows one, Esc the draft
mkdir -p "$D/reports/weekly" "$D/reports/drafts"
printf '# Week twelve report\n' >"$D/reports/weekly/1987-W12-asia-g10-fx.md"
printf '# Week thirteen report\n\n| pair | close |\n|---|---|\n| USD/JPY | 147.72 |\n' >"$D/reports/weekly/1987-W13-asia-g10-fx.md"
printf '# Draft in progress\n' >"$D/reports/drafts/weekly-test.md"
con '5
wait-for Finished reports (2'
has "reports: the finished reports are listed" "$(screen)" "1987-W12-asia-g10-fx.md"
eq "... newest first" "$(screen | grep -o '1987-W1[23]' | head -1)" "1987-W13"
has "... above the live draft" "$(screen)" "Draft in progress"
con '5
wait-for Finished reports (2
<Enter>
wait-for Week thirteen report'
hasnt "Enter shows the report instead of the draft" "$(screen)" "Draft in progress"
has "... rendered" "$(screen)" "│"
con '5
wait-for Finished reports (2
<Enter>
wait-for Week thirteen report
<Esc>
wait-for Draft in progress'
hasnt "Esc goes back to the live draft" "$(screen)" "Week thirteen report"
rm -f "$D/reports/weekly/1987-W1"[23]-asia-g10-fx.md "$D/reports/drafts/weekly-test.md"
# reports: paragraphs and table notes are wrapped, not cut at the edge
para=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "para%d ", i; printf "paragraph-end" }')
printf '# Wrapped\n\n%s\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nNote: %s note-end\n' "$para" "$para" \
	>"$D/reports/drafts/weekly-wrap.md"
con 'resize 80 24
5
wait-for Wrapped'
has "reports: a long paragraph is read to its last word" "$(screen)" "paragraph-end"
has "reports: the note under a table too" "$(screen)" "note-end"
eq "reports: no line wider than the screen" "$(awk 'length($0) > 80' "$T/screen" | wc -l | tr -d ' ')" 0
con '5
wait-for Wrapped
/
type note-end
<Enter>
wait-for filter: note-end'
has "reports /: the matching line stays" "$(screen)" "note-end"
hasnt "reports /: the others are gone" "$(screen)" "Wrapped"
rm -f "$D/reports/drafts/weekly-wrap.md"

# tasks: r asks the product_manager to reassign the task
mkdir -p "$D/state"
cat >"$D/state/product_manager-state.json" <<'JSON'
{"runs":{"weekly-test":{"run_id":"weekly-test","status":"researching","started_at":"2026-01-01T00:00:00Z",
 "window":{"start":"1987-03-20","end":"1987-03-27"},"sources":{"market":"sim","news":"sim"},
 "tasks":[{"task_id":"USDJPY-market","kind":"market","pair":"USD/JPY","assignee":"research_agent_1",
  "status":"assigned","attempts":1,"deadline_ns":0,"progress":0,"current":"x"}]}}}
JSON
n2=$(njson "$D/messages/inbox/product_manager")
con '2
wait-for USDJPY-market
r
wait-for reassign USDJPY-market'
has "tasks view lists the task" "$(screen)" "USDJPY-market"
has "reassign says the product_manager is offline and the control waits" "$(screen)" "product_manager is offline (it has never run here): the control waits in its inbox"
eq "an operator_control request is in the product_manager's inbox" "$(njson "$D/messages/inbox/product_manager")" $((n2 + 1))
has "... to reassign that task" "$(cat "$D"/messages/inbox/product_manager/*.json | tr -d ' \n')" '"action":"reassign","run_id":"weekly-test","task_id":"USDJPY-market"'
con '2
wait-for USDJPY-market
C
wait-for Cancel 1 task'
has "C asks to confirm a cancel" "$(screen)" "Cancel 1 task? y/n"
n3=$(njson "$D/messages/inbox/product_manager")
con '2
wait-for USDJPY-market
:
type assign news USD/SGD research_agent_2
<Enter>
wait-for assign:'
has ":assign says what it asked" "$(screen)" "for a news task on USD/SGD"
eq ":assign puts one request in the product_manager's inbox" "$(njson "$D/messages/inbox/product_manager")" $((n3 + 1))
has "... a new news task for USD/SGD" "$(cat "$D"/messages/inbox/product_manager/*.json | tr -d ' \n')" '"action":"assign","run_id":"weekly-test","task_id":"","to":"research_agent_2","kind":"news","pair":"USD/SGD"'
con '2
wait-for USDJPY-market
:
type assign gossip USD/SGD
<Enter>
wait-for usage'
has ":assign with a bad kind says the usage" "$(screen)" "usage :assign market|news PAIR [AGENT]"

# LLM budget: a task paused on its budget shows as such; B asks to confirm,
# y sends approve_budget; B on another task is refused without a message
cat >"$D/state/product_manager-state.json" <<'JSON'
{"runs":{"weekly-test":{"run_id":"weekly-test","status":"researching","started_at":"2026-01-01T00:00:00Z",
 "window":{"start":"1987-03-20","end":"1987-03-27"},"sources":{"market":"sim","news":"sim"},
 "tasks":[{"task_id":"USDJPY-market","kind":"market","pair":"USD/JPY","assignee":"research_agent_1",
  "status":"awaiting_approval","attempts":1,"deadline_ns":0,"progress":40,"current":"x"},
  {"task_id":"USDJPY-news","kind":"news","pair":"USD/JPY","assignee":"research_agent_2",
  "status":"assigned","attempts":1,"deadline_ns":0,"progress":0,"current":"y"}]}}}
JSON
n4=$(njson "$D/messages/inbox/product_manager")
con '2
wait-for USDJPY-news
j
B
wait-for not awaiting'
has "B on a task that is not paused says so" "$(screen)" "USDJPY-news is assigned, not awaiting budget approval"
eq "... and sends nothing" "$(njson "$D/messages/inbox/product_manager")" "$n4"
con '2
wait-for USDJPY-market
B
wait-for Approve another LLM budget for 1 task? y/n
y
wait-for approve_budget USDJPY-market'
has "the paused task shows it waits for a budget" "$(screen | grep USDJPY-market)" "await-budget"
eq "B y puts one request in the product_manager's inbox" "$(njson "$D/messages/inbox/product_manager")" $((n4 + 1))
has "... approve_budget for that task" "$(cat "$D"/messages/inbox/product_manager/*.json | tr -d ' \n')" '"action":"approve_budget","run_id":"weekly-test","task_id":"USDJPY-market"'
has "... journalled" "$(tail -1 "$D/journal/actions.jsonl")" '"action":"approve_budget"'
con '2
wait-for USDJPY-market
B
wait-for read-only' --read-only
has "--read-only refuses B" "$(screen)" "read-only"

# LLM mode: the validation's review and the narrative are rows too; S
# (confirmed) sends skip_llm for a paused one; the other task keys and B on
# a stage that is not paused are refused without a message
cat >"$D/state/product_manager-state.json" <<'JSON'
{"runs":{"weekly-test":{"run_id":"weekly-test","status":"validating","started_at":"2026-01-01T00:00:00Z",
 "window":{"start":"1987-03-20","end":"1987-03-27"},"sources":{"market":"sim","news":"sim"},
 "llm":{"mode":"llm","provider":"anthropic"},
 "tasks":[{"task_id":"USDJPY-market","kind":"market","pair":"USD/JPY","assignee":"research_agent_1",
  "status":"done","attempts":1,"deadline_ns":0,"progress":100,"current":"x"}],
 "validation":{"status":"awaiting_approval","request_id":"v1","deadline_ns":0}}}}
JSON
n5=$(njson "$D/messages/inbox/product_manager")
con '2
wait-for narrative
j
j
B
wait-for not awaiting'
has "LLM mode: the validation is a row of the validator, paused on its budget" \
	"$(screen | grep ' validation ')" "validator_agent    await-budget"
has "LLM mode: the narrative is a row of the product_manager, not started" \
	"$(screen | grep ' narrative ')" "product_manager    waiting"
has "B on the narrative that is not paused says so" "$(screen)" "narrative is waiting, not awaiting budget approval"
con '2
wait-for narrative
j
r
wait-for takes B'
has "r on the validation is refused" "$(screen)" "the validation takes B, C and S only"
eq "... and nothing is sent" "$(njson "$D/messages/inbox/product_manager")" "$n5"
con '2
wait-for narrative
j
S
wait-for Skip the LLM part of 1 task? y/n
y
wait-for skip_llm validation'
eq "S y on the validation puts one request in the product_manager's inbox" \
	"$(njson "$D/messages/inbox/product_manager")" $((n5 + 1))
has "... skip_llm for the validation" "$(cat "$D"/messages/inbox/product_manager/*.json | tr -d ' \n')" \
	'"action":"skip_llm","run_id":"weekly-test","task_id":"validation"'
has "... journalled" "$(tail -1 "$D/journal/actions.jsonl")" '"action":"skip_llm"'
con '2
wait-for narrative
j
S
wait-for read-only' --read-only
has "--read-only refuses S" "$(screen)" "read-only"
con '?
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
wait-for skip the LLM part'
has "? help lists S from the key table" "$(screen | grep 'skip the LLM part')" "S"

# tools view: LLM usage per agent and per task, paused tasks first
mkdir -p "$D/llm"
cat >"$D/llm/usage.json" <<'JSON'
{"updated_at":"2026-01-01T00:00:00Z",
 "agents":{"research_agent_1":{"calls":3,"input_tokens":1200,"output_tokens":300,"cost_usd":0.0081},
           "product_manager":{"calls":1,"input_tokens":900,"output_tokens":450,"cost_usd":0.0477}},
 "tasks":{"m1":{"agent":"research_agent_1","label":"USDJPY-market","calls":3,"input_tokens":1200,
           "output_tokens":300,"cost_usd":0.0081,"status":"awaiting_approval"}}}
JSON
con '6
wait-for LLM usage'
has "tools view: LLM tokens per agent" "$(screen | grep 'research_agent_1 ' | head -1)" "1200"
has "tools view: the total cost" "$(screen | grep ' all ')" "0.0558"
has "tools view: the paused task" "$(screen | grep 'USDJPY-market')" "awaiting_approval"
rm -rf "$D/llm"
# tools view: a long recommendation of the learning system is wrapped, not cut
mkdir -p "$L/learning"
rec=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "advice%d ", i; printf "advice-end" }')
printf '{"by_agent":{},"by_error_type":{},"recommendations":[{"agent":"research_agent_2","task_kind":"news","error_rate":0.5,"text":"%s"}]}\n' \
	"$rec" >"$L/learning/improvement-metrics.json"
con '6
wait-for Recommendations'
has "tools view: a long recommendation is read to its end" "$(screen)" "advice-end"
rm -f "$L/learning/improvement-metrics.json"

# themes: :theme, --theme, a broken theme names file:line
con ':
type theme light
<Enter>'
has ":theme switches" "$(screen)" "theme light"
con '1' --theme mono
eq "--theme mono runs" "$?" 0
printf 'normal = default,default\nselected = purple,black\n' >"$T/bad.theme"
con '1' --theme "$T/bad.theme"
has "a bad theme names file and line" "$(cat "$T/err")" "bad.theme:2: unknown colour \"purple\""
NO_COLOR=1 con '1'
eq "NO_COLOR runs" "$?" 0

# too small, then big enough again
con 'resize 60 20'
has "below 80x24 says so" "$(screen)" "terminal too small: 60x20"
con 'resize 60 20
resize 100 30'
has "resizing back redraws the view" "$(screen)" "AGENT"

# 80x24: every column of the agents table shows, values included
N=$T/narrow/data
mkdir -p "$N/state"
printf '{"heartbeat":{"at":"%s","status":"busy","active_tasks":1,"current_task":"EURUSD-news"}}\n' \
	"$(date -u +%FT%TZ)" >"$N/state/research_agent_1-state.json"
printf 'resize 80 24\nwait-for CURRENT TASK\n' >"$T/script"
"$MADF" --data-dir "$N" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
hdr=$(screen | grep ' AGENT ')
has "80x24: the BEAT header shows" "$hdr" " BEAT "
has "80x24: the CURRENT TASK header shows whole" "$hdr" "CURRENT TASK"
row=$(screen | grep ' busy ')
eq "80x24: the row's last field is its current task" "$(echo "$row" | awk '{ print $NF }')" "EURUSD-news"
has "80x24: ... after its beat age" "$(echo "$row" | awk '{ print $(NF-1) }' | grep -E '^[0-9]+s$')" "s"
has "80x24: the error rate still shows, whole" "$(screen | grep -oE 'errors [0-9.]+/min \(5m\)')" "/min (5m)"
eq "80x24: no line is wider than the screen" "$(awk 'length($0) > 80' "$T/screen" | wc -l | tr -d ' ')" 0

# an agent process killed with -9 is offline at once, not stalled (its
# pid, on this host, is gone)
K=$T/crash/data
env -u LOG_DIR "$MADF" --data-dir "$K" agent research_agent_2 >/dev/null 2>"$T/agent.err" &
apid=$!
wait_for "madf agent writes its heartbeat with pid and host" 20 grep -q '"host"' "$K/state/research_agent_2-state.json"
# with neither --log-dir nor LOG_DIR, madf agent logs beside its data
# directory: where the console looks
wait_for "madf agent logs to the logs/ beside the data directory" 20 \
	test -s "$T/crash/logs/agents/research_agent_2/events/$(date -u +%F).jsonl"
printf 'wait-for research_agent_2\n' >"$T/script"
"$MADF" --data-dir "$K" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "the running agent is not offline" "$(screen | awk '$1 == "research_agent_2" { print $2 }' | grep -c offline)" 0
kill -9 "$apid"
wait "$apid" 2>/dev/null
"$MADF" --data-dir "$K" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "after kill -9: offline at once" "$(screen | awk '$1 == "research_agent_2" { print $2 }')" "offline"
# a heartbeat silent past a minute is offline too, whatever the pid says
printf '{"heartbeat":{"at":"%s","status":"idle","active_tasks":0}}\n' "$(date -u -d '-2 min' +%FT%TZ)" \
	>"$K/state/research_agent_1-state.json"
printf '{"heartbeat":{"at":"%s","status":"idle","active_tasks":0}}\n' "$(date -u -d '-30 sec' +%FT%TZ)" \
	>"$K/state/validator_agent-state.json"
printf 'wait-for research_agent_1\n' >"$T/script"
"$MADF" --data-dir "$K" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "a heartbeat 2 minutes old: offline" "$(screen | awk '$1 == "research_agent_1" { print $2 }')" "offline"
eq "a heartbeat 30 s old: stalled" "$(screen | awk '$1 == "validator_agent" { print $2 }')" "stalled"

# export: no absolute path of this machine in what is exported (sources,
# warnings, the journal's earlier exports); a data directory whose exports
# cannot be written is named with the reason
X=$T/exp
mkdir -p "$X/data/state" "$X/data/reports/drafts"
cat >"$X/data/state/product_manager-state.json" <<JSON
{"runs":{"weekly-r1":{"run_id":"weekly-r1","title":"Weekly Asia/G10 FX report","status":"done",
 "as_of":"2026-11-24T00:00:00Z","window":{"start":"2026-11-17","end":"2026-11-24"},"pairs":["USD/JPY"],
 "sources":{"market":"csv:$X/fx.csv","news":"jsonl:$X/news.jsonl","market_simulated":false,"news_simulated":false},
 "market":{},"events":[],"sentiment":{},"findings":[],"issues":[],"failures":[],
 "warnings":["cannot read $X/news.jsonl: No such file or directory"],"messages":{},"validation":{},"tasks":[]}}}
JSON
printf '# Weekly draft r1\n' >"$X/data/reports/drafts/weekly-r1.md"
printf '5\nwait-for Weekly draft r1\ne\nwait-for export:\n' >"$T/script"
for i in 1 2; do # the second export has the first one's journal line in it
	"$MADF" --data-dir "$X/data" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
done
html=$(cat "$X"/data/reports/exports/*.html 2>/dev/null)
has "export: the HTML was written" "$html" "Weekly Asia/G10 FX report"
hasnt "export: the HTML has no absolute path of the test's directory" "$html" "$T"
hasnt "export: nor has the JSON" "$(cat "$X"/data/reports/exports/*.json)" "$T"
has "export: the sources relative to the data directory" "$html" "csv:../fx.csv"
has "export: the journal's earlier export too" "$html" "wrote reports/exports/"
rm -rf "$X/data/reports/exports"
: >"$X/data/reports/exports"
"$MADF" --data-dir "$X/data" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has "export: a data directory it cannot write says what failed" "$(screen)" \
	"export: cannot write $X/data/reports/exports: Not a directory"
# no run and no draft: it says so, naming where it looked
mkdir -p "$T/empty/data"
printf '5\ne\nwait-for export:\n' >"$T/script"
"$MADF" --data-dir "$T/empty/data" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has "export with nothing to export says why" "$(screen)" \
	"export: nothing to export: this console started no run and $T/empty/data/reports/drafts has no draft"

# a script error is reported with file:line
con '<Nope>'
has "an unknown script key names the line" "$(cat "$T/err")" "script:1: unknown key"

# Each view names its own keys (from the key table) on the bottom lines: the
# dead letters their R, E, T, D (not K, which they refuse); read-only hides
# what it refuses
$MADF kill "$($MADF send --to research_agent_1 --type heartbeat --content "$HB")" >/dev/null
con ':
type dlq
<Enter>
wait-for dead letters: 1 message'
bottom=$(screen | tail -2)
has "dead-letter view: the bottom lines name R" "$bottom" "R retry"
has "... E" "$bottom" "E edit"
has "... T" "$bottom" "T retry-to"
has "... D and Space" "$bottom" "D delete"
hasnt "... not K (dead letters are killed already)" "$bottom" "K kill"
con ':
type inbox research_agent_1
<Enter>
wait-for inbox of research_agent_1'
has "inbox view: K kill on the bottom lines" "$(screen | tail -2)" "K kill"
hasnt "... not R (inbox messages are not dead)" "$(screen | tail -2)" "R retry"
con '2
wait-for USDJPY-market'
has "tasks view: its keys on the bottom lines" "$(screen | tail -2)" "C cancel"
has "... every one of them" "$(screen | tail -2)" "o hold  u release  p priority"
con ':
type dlq
<Enter>
wait-for dead letters: 1 message' --read-only
hasnt "read-only: the refused keys are not offered" "$(screen | tail -2)" "R retry"

# Enter on a row reads it whole: a task with its record from the state
con '2
wait-for USDJPY-market
<Enter>
wait-for Tasks: USDJPY-market'
has "Enter on a task shows its record" "$(screen)" '"assignee":  "research_agent_1"'
has "... its whole attempts count" "$(screen)" '"attempts":  1'
con '2
wait-for USDJPY-market
<Enter>
wait-for Tasks: USDJPY-market
<Esc>
wait-for TASK '
hasnt "Esc returns from the reader" "$(screen)" '"assignee":'

# Tab on an empty : line lists every command above the command line;
# Tab again cycles through the candidates
con ':
<Tab>'
above=$(screen | tail -2 | head -1)
has "Tab lists the commands above the command line" "$above" "agent  assign  conversations  dlq  help  inbox"
has "... :overview among them" "$above" "overview"
has "... :messages among them" "$above" "messages"
eq "... the command line still empty" "$(screen | tail -1)" ":"
con ':
type t
<Tab>'
eq "Tab on t: the four candidates listed" "$(screen | tail -2 | head -1 | sed 's/^ *//')" "tasks  theme  tools  trash"
con ':
type t
<Tab>
<Tab>'
eq "Tab again takes the first candidate" "$(screen | tail -1)" ":tasks"
con ':
type t
<Tab>
<Tab>
<Tab>
<Tab>'
eq "... and cycles on (third Tab after the list: tools)" "$(screen | tail -1)" ":tools"
con ':
type ov
<Tab>
<Enter>
wait-for AGENT'
has ":ov Tab completes :overview, which runs" "$(screen)" "AGENT"

# ? help: the view headings are indented like "everywhere"; :overview and
# :messages are listed
con '?
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j
j'
eq "help: the Tasks heading is indented like everywhere" "$(screen | grep -c '^ Tasks$')" 1
con '?'
has "help lists :overview" "$(screen)" ":overview"
has "help lists :messages" "$(screen)" ":messages"
eq "help: ' everywhere' heading" "$(screen | grep -c '^ everywhere$')" 1

# a long status message wraps onto the line above; :messages shows it whole
LONG=$T/$(printf 'a%.0s' $(seq 70))/$(printf 'b%.0s' $(seq 70))/the-end-of-it.theme
con ':
type theme '"$LONG"'
<Enter>'
has "a long message: its end is on the screen" "$(screen | tail -2 | tr -d '\n')" "the-end-of-it.theme: No such file or directory"
con ':
type theme '"$LONG"'
<Enter>
:
type messages
<Enter>
wait-for Messages ('
has ":messages lists the message" "$(screen)" "error:"
has "... whole, wrapped (its end)" "$(screen)" "the-end-of-it.theme: No such file or directory"
eq "... the path unbroken once the lines are joined" "$(screen | sed -n '/error:/,/No such file/p' | sed 's/^ *//; s/^[0-9:]*  error: *//' | tr -d '\n' | grep -c "$LONG")" 1
con ':
type messages
<Enter>
wait-for Messages (
<Esc>
wait-for AGENT'
has "Esc leaves :messages" "$(screen)" "AGENT"

# themes are found beside the binary, whatever the current directory
(cd "$T" && unset MADF_THEME_DIR && "$MADF" --log-dir "$L" console --attach --script "$T/script" \
	--dump-screen "$T/screen" --theme light 2>"$T/err")
eq "--theme light from another directory" "$?" 0
(cd "$T" && unset MADF_THEME_DIR && "$MADF" --log-dir "$L" console --attach --script "$T/script" \
	--dump-screen "$T/screen" --theme mono 2>"$T/err")
eq "--theme mono from another directory" "$?" 0
printf ':\ntype theme light\n<Enter>\n' >"$T/script"
(cd "$T" && unset MADF_THEME_DIR && "$MADF" --log-dir "$L" console --attach --script "$T/script" \
	--dump-screen "$T/screen")
eq ":theme light from another directory" "$(screen | tail -1)" "theme light"

# --read-only reads only, even without --attach: no agent starts, nothing
# under the data directory changes but the journal's refusals, whatever
# action key is pressed
$MADF send --to product_manager --type heartbeat --content "$HB" >/dev/null
$MADF send --to research_agent_2 --type heartbeat --content "$HB" >/dev/null
mkdir -p "$D/reports/drafts" && printf '# Draft\n' >"$D/reports/drafts/weekly-test.md"
snap() { (cd "$D" && find . ! -path ./journal/actions.jsonl | sort && find . -type f ! -path ./journal/actions.jsonl | sort | xargs sha256sum); }
before=$(snap)
nj=$(wc -l <"$D/journal/actions.jsonl")
printf '%s\n' ':' 'type dlq' '<Enter>' 'wait-for dead letters: 1 message' R D E T K '<Space>' A \
	':' 'type retry-to research_agent_2' '<Enter>' \
	':' 'type inbox product_manager' '<Enter>' 'wait-for inbox of product_manager' K D \
	2 'wait-for USDJPY-market' r t o u p C B S a ':' 'type assign news USD/SGD' '<Enter>' \
	5 e q >"$T/script"
EDITOR=true "$MADF" --log-dir "$L" console --read-only --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "read-only console without --attach runs the script" "$?" 0
has "... as an attached console" "$(screen | head -1)" "attach read-only"
eq "... the data directory is unchanged but for the journal" "$(snap)" "$before"
eq "... the journal has one refusal per action (19: R D E T K :retry-to, K D, r t o u p C B S a :assign, e)" "$(tail -n +$((nj + 1)) "$D/journal/actions.jsonl" | grep -c '"result":"refused: read-only"')" 19
hasnt "... and nothing else" "$(tail -n +$((nj + 1)) "$D/journal/actions.jsonl" | grep -v 'refused: read-only')" "action"
check_fails "--read-only with a run option is refused, saying why" 2 "$MADF" console --read-only --as-of 1987-03-27 --script "$T/script"
has "... naming both" "$("$MADF" console --read-only --pairs USD/JPY --script "$T/script" 2>&1)" "--pairs is for the agents the console runs; --read-only runs none"
rm -f "$D/reports/drafts/weekly-test.md"
rm -f "$D"/messages/inbox/*/*.json "$D"/messages/dead-letter/*.json

# the console takes every option of run weekly: a real week (1987) from the
# CSV and the Reuters JSONL, one pair; it says which sources it uses
FX=$TOP/../shared/data/fx/fred-daily-1971-2017.csv
NEWS=$TOP/../shared/data/news/reuters21578.jsonl
has "console --help lists --inject-fault" "$("$MADF" console --help)" "--inject-fault AGENT:KIND"
has "... and --as-of, --pairs, --fresh" "$("$MADF" console --help)" "[--as-of TIME] [--pairs LIST]"
printf '%s\n' 'wait-for started the weekly run' 2 'wait-for USDJPY-news' 'wait-for status done' \
	':' 'type messages' '<Enter>' 'wait-for Messages (' >"$T/script"
MADF_SCRIPT_TIMEOUT=300 MADF_DATA_DIR=$T/realweek "$MADF" --log-dir "$L" console --as-of 1987-03-27 --pairs USD/JPY \
	--market "csv:$FX" --news "jsonl:$NEWS" --report-dir "$T/realweek-reports" \
	--script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "console --as-of --pairs --market csv --news jsonl runs the week" "$?" 0
msgs=$(screen | tr -d '\n' | tr -s ' ')
has "... it says the sources it uses" "$msgs" "(market csv:fred-daily-1971-2017.csv, news jsonl:reuters21578.jsonl)"
has "... and the week and the pair" "$msgs" "as of 1987-03-27 for USD/JPY"
hasnt "... not simulated ones" "$msgs" "simulated"
ntasks=$(python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
r = list(s['runs'].values())[0]
print(r['window']['start'], r['window']['end'], ' '.join(sorted(t['pair'] + ':' + t['kind'] for t in r['tasks'])))" "$T/realweek/state/product_manager-state.json")
eq "... the run's window and its only tasks, for USD/JPY" "$ntasks" "1987-03-20 1987-03-27 USD/JPY:market USD/JPY:news"
check "... the report's USD/JPY is the CSV's week" python3 tests/integration/report_check.py \
	"$T/realweek-reports/1987-W13-asia-g10-fx.json" pair USD/JPY 1987-03-20 151.70 1987-03-27 147.72 -2.6236

printf 'wait-for is done already\n' >"$T/script"
MADF_DATA_DIR=$T/realweek "$MADF" --log-dir "$L" console --as-of 1987-03-27 --pairs USD/JPY \
	--market "csv:$FX" --news "jsonl:$NEWS" --report-dir "$T/realweek-reports" \
	--script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "the same week again: the console says it is done, as run weekly does" "$?" 0
eq "... and starts nothing (one start-run in the journal)" "$(grep -c '"action":"start-run"' "$T/realweek/journal/actions.jsonl")" 1

# the man page: every command's entry starts with .TP
for c in "run weekly" "tools list"; do
	eq "man page: .TP before $c" "$(grep -B1 "^\.B $c " man/madf.1 | head -1)" ".TP"
done

# embedded: the agents run the weekly workflow; reports view and export
printf '2\nwait-for status done\n6\nwait-for news_search\n5\nwait-for Weekly Asia/G10 FX report\ne\nwait-for export: wrote\n' >"$T/script"
"$MADF" --log-dir "$L" console --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "embedded run exits 0 (the tools view showed the calls while it ran)" "$?" 0
has "the draft is rendered" "$(screen)" "Weekly Asia/G10 FX report"
has "tables are aligned" "$(screen)" "│"
ls "$D"/reports/exports/*.md "$D"/reports/exports/*.json "$D"/reports/exports/*.html >/dev/null 2>&1 && ok "export wrote md, json, html" || fail "export wrote md, json, html" "$(ls -R "$D/reports" 2>&1)"
has "the HTML has a table" "$(cat "$D"/reports/exports/*.html)" "<table>"
has "the Markdown has the action journal" "$(cat "$D"/reports/exports/*.md)" "## Operator actions"
has "the JSON has the manifest" "$(cat "$D"/reports/exports/*.json)" '"manifest"'
has "the report's MA5 vs MA20 column is explained under the table" "$(cat "$D"/reports/exports/*.md)" \
	"MA5 vs MA20 says whether the average of the last 5 closes"
hasnt "... and no unexplained Trend column" "$(cat "$D"/reports/exports/*.md)" "| Trend |"
has "the journal records the export" "$(cat "$D/journal/actions.jsonl")" '"action":"export"'
printf '4\nwait-for run_started\nv\nv\n' >"$T/script"
"$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has "logs view with level filter" "$(screen)" "level error and above"
done_testing
