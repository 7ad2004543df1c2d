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

# Tab completion of commands and agent names
con ':
type inb
<Tab>
type research_agent_
<Tab>
<Enter>
wait-for inbox of research_agent_'
has "Tab completes the command and lists agent candidates" "$(screen)" "inbox of research_agent_"

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
wait-for kill: 1 of 1 done'
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
wait-for retry: 1 of 1 done'
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
wait-for Delete 3 messages? y/n
y
wait-for delete: 3 of 3 done'
eq "A D y deletes all three" "$(njson "$D/messages/inbox/research_agent_1")" 0

# escape sequences in a message are shown neutralised
$MADF send --to research_agent_2 --type heartbeat --content '{"status":"idle","uptime_seconds":0,"active_tasks":0,"note":"\u001b]0;pwned\u0007 \u001b[2J boom"}' >/dev/null
con ':
type inbox research_agent_2
<Enter>
wait-for boom'
hasnt "no ESC byte reaches the screen" "$(screen | tr -d '[:print:]\n' | od -c | grep -c 033)" "1"
has "the text of the escape is still shown" "$(screen)" "pwned"

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
has "reassign says who was asked" "$(screen)" "asked product_manager"
eq "an operator_control request is in the product_manager's inbox" "$(njson "$D/messages/inbox/product_manager")" $((n2 + 1))
has "... to reassign that task" "$(cat "$D"/messages/inbox/product_manager/*.json | tr -d ' \n')" '"action":"reassign","run_id":"weekly-test","task_id":"USDJPY-market"'
con '2
wait-for USDJPY-market
C
wait-for Cancel 1 task'
has "C asks to confirm a cancel" "$(screen)" "Cancel 1 task? y/n"

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

# a script error is reported with file:line
con '<Nope>'
has "an unknown script key names the line" "$(cat "$T/err")" "script:1: unknown key"

# embedded: the agents run the weekly workflow; reports view and export
printf '2\nwait-for status done\n5\nwait-for Weekly Asia/G10 FX report\ne\nwait-for export: wrote\n' >"$T/script"
"$MADF" --log-dir "$L" console --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
eq "embedded run exits 0" "$?" 0
has "the draft is rendered" "$(screen)" "Weekly Asia/G10 FX report"
has "tables are aligned" "$(screen)" "│"
ls "$D"/reports/exports/*.md "$D"/reports/exports/*.json "$D"/reports/exports/*.html >/dev/null 2>&1 && ok "export wrote md, json, html" || fail "export wrote md, json, html" "$(ls -R "$D/reports" 2>&1)"
has "the HTML has a table" "$(cat "$D"/reports/exports/*.html)" "<table>"
has "the Markdown has the action journal" "$(cat "$D"/reports/exports/*.md)" "## Operator actions"
has "the JSON has the manifest" "$(cat "$D"/reports/exports/*.json)" '"manifest"'
has "the journal records the export" "$(cat "$D/journal/actions.jsonl")" '"action":"export"'
printf '4\nwait-for run_started\nv\nv\n' >"$T/script"
"$MADF" --log-dir "$L" console --attach --script "$T/script" --dump-screen "$T/screen" 2>"$T/err"
has "logs view with level filter" "$(screen)" "level error and above"
done_testing
