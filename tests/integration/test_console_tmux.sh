# The console end to end in tmux: one -L socket for this test, a fixed
# 120x40 window, TERM and locale pinned, polling the screen (never a fixed
# sleep) until it matches.
. tests/integration/lib.sh
command -v tmux >/dev/null || { echo "not ok - tmux is not installed"; exit 1; }
S=madf-console-$$
trap 'tmux -L "$S" kill-server 2>/dev/null; cleanup' EXIT
L=$T/logs
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'
tm() { tmux -L "$S" "$@"; }
start() { # start NAME ARGS...: a session running the console
	name=$1; shift
	tm -f /dev/null new-session -d -s "$name" -x 120 -y 40 -c "$TOP" \
		"env TERM=xterm-256color LANG=C.UTF-8 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 '$MADF' --log-dir '$L' console $*; sleep 30"
}
cap() { tm capture-pane -p -t "$1"; }
on_screen() { cap "$1" | grep -qF -- "$2"; }
depth_is() { [ "$(cap "$1" | awk -v a="$2" '$1 == a { print $3 }')" = "$3" ]; }
files_are() { [ "$(njson "$1")" = "$2" ]; }
keys() { t=$1; shift; tm send-keys -t "$t" "$@"; }

# a dead letter to retry, two messages waiting
$MADF send --to research_agent_1 --type heartbeat --content "$HB" >/dev/null
$MADF send --to research_agent_1 --type heartbeat --content "$HB" >/dev/null
dead=$($MADF send --to report_writer --type heartbeat --content "$HB")
$MADF kill "$dead" >/dev/null

start main --attach
wait_for "the console starts" 10 on_screen main "AGENT"
title=$(tm display -p -t main '#{pane_title}')
wait_for "depth shown = files on disk (2)" 10 depth_is main research_agent_1 "$(njson "$D/messages/inbox/research_agent_1")"
$MADF send --to research_agent_1 --type heartbeat --content "$HB" >/dev/null
wait_for "depth changes live when a message is sent (3)" 10 depth_is main research_agent_1 3
wait_for "dead letters counted" 10 on_screen main "dead letters 1"

# :dlq, R, y: the dead letter goes back to its inbox
keys main : d l q Enter
wait_for ":dlq lists the dead letter" 10 on_screen main "dead letters: 1 message"
keys main R
wait_for "R asks with the count" 10 on_screen main "Retry 1 message? y/n"
keys main y
wait_for "the file moved back to its inbox" 10 files_are "$D/messages/inbox/report_writer" 1
eq "... and out of the dead letters" "$(njson "$D/messages/dead-letter")" 0
wait_for "the status line says so" 10 on_screen main "retry: 1 of 1 retried"

# an escape sequence inside a message does not reach the terminal
$MADF send --to research_agent_2 --type heartbeat \
	--content '{"status":"idle","uptime_seconds":0,"active_tasks":0,"note":"\u001b]0;pwned\u0007 \u001b[2J boom"}' >/dev/null
keys main : i n b o x Space r e s e a r c h _ a g e n t _ 2 Enter
wait_for "the message with escapes is shown" 10 on_screen main "boom"
eq "the window title is unchanged" "$(tm display -p -t main '#{pane_title}')" "$title"
on_screen main "inbox of research_agent_2" && ok "the screen was not cleared by ESC[2J" || fail "the screen was not cleared by ESC[2J" "$(cap main)"

# resize: too small, then back
tm resize-window -t main -x 70 -y 20
wait_for "a small window shows 'too small'" 10 on_screen main "terminal too small: 70x20"
tm resize-window -t main -x 120 -y 40
wait_for "back to 120x40 redraws the view" 10 on_screen main "inbox of research_agent_2"

# q quits and restores the terminal
keys main q
wait_for "q quits" 10 sh -c "! tmux -L '$S' capture-pane -p -t main | grep -qF 'inbox of research_agent_2'"

# --read-only refuses R
dead=$($MADF send --to report_writer --type heartbeat --content "$HB")
$MADF kill "$dead" >/dev/null
start ro --attach --read-only
wait_for "read-only console starts" 10 on_screen ro "read-only"
keys ro : d l q Enter
wait_for "read-only :dlq" 10 on_screen ro "dead letters: 1 message"
keys ro R
wait_for "read-only refuses R" 10 on_screen ro "read-only: retry refused"
eq "... the dead letter stays" "$(njson "$D/messages/dead-letter")" 1
keys ro q

# Past MADF_DLQ_SYNC_MAX (0 here) the dead letters are listed on a thread of
# their own: they arrive, a new dead letter is listed again live, the mark
# stays on its message, and R y retries the marked one.
rm -f "$D"/messages/dead-letter/*.json "$D"/messages/inbox/report_writer/*.json
k1=$($MADF send --to report_writer --type heartbeat --content "$HB")
k2=$($MADF send --to report_writer --type heartbeat --content "$HB")
$MADF kill "$k1" "$k2" --reason "background listing" >/dev/null
tm -f /dev/null new-session -d -s bg -x 120 -y 40 -c "$TOP" \
	"env TERM=xterm-256color LANG=C.UTF-8 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 MADF_DLQ_SYNC_MAX=0 '$MADF' --log-dir '$L' console --attach; sleep 30"
wait_for "background listing: the console starts" 10 on_screen bg "AGENT"
keys bg : d l q Enter
wait_for "background listing: the dead letters arrive" 10 on_screen bg "dead letters: 2 messages"
wait_for "... grouped" 10 on_screen bg "killed (2)"
keys bg Space
wait_for "... one marked" 10 on_screen bg "1 marked"
k3=$($MADF send --to report_writer --type heartbeat --content "$HB")
$MADF kill "$k3" >/dev/null
wait_for "a new dead letter is listed again, live" 10 on_screen bg "dead letters: 3 messages"
on_screen bg "1 marked" && ok "... the mark survives the relisting" || fail "... the mark survives the relisting" "$(cap bg)"
keys bg R
wait_for "R asks for the marked one" 10 on_screen bg "Retry 1 message? y/n"
keys bg y
wait_for "R y retried it into its inbox" 10 files_are "$D/messages/inbox/report_writer" 1
eq "... the other two stay dead" "$(njson "$D/messages/dead-letter")" 2
grep -q "$k1" "$D"/messages/inbox/report_writer/*.json && ok "... it was the marked (first) one" || fail "... it was the marked (first) one" "$(ls "$D"/messages/inbox/report_writer)"
keys bg q

# Past MADF_QUEUE_SYNC_MAX (0 here) an inbox is listed on the worker too:
# its messages arrive, a new one is listed live, and leaving for the dead
# letters while it lists waits for nothing (the listing is dropped).
rm -f "$D"/messages/inbox/report_writer/*.json
i1=$($MADF send --to report_writer --type heartbeat --content "$HB")
i2=$($MADF send --to report_writer --type heartbeat --content "$HB")
tm -f /dev/null new-session -d -s bq -x 120 -y 40 -c "$TOP" \
	"env TERM=xterm-256color LANG=C.UTF-8 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 MADF_QUEUE_SYNC_MAX=0 MADF_DLQ_SYNC_MAX=0 '$MADF' --log-dir '$L' console --attach; sleep 30"
wait_for "background inbox: the console starts" 10 on_screen bq "AGENT"
keys bq : i n b o x Space r e p o r t _ w r i t e r Enter
wait_for "background inbox: its messages arrive" 10 on_screen bq "inbox of report_writer: 2 messages"
on_screen bq "$i1" && ok "... the first message is listed" || fail "... the first message is listed" "$(cap bq)"
i3=$($MADF send --to report_writer --type heartbeat --content "$HB")
wait_for "background inbox: a new message is listed live" 10 on_screen bq "inbox of report_writer: 3 messages"
keys bq : d l q Enter
wait_for "... then the dead letters, listed in turn" 10 on_screen bq "dead letters: 2 messages"
keys bq q

# Embedded: the console runs the agents; r on a task still with a slow
# research_agent_1 goes through the product_manager, which cancels it there
# and puts a task_assignment in research_agent_2's inbox; the task is then
# done by research_agent_2.
D=$T/embedded
start emb --inject-fault research_agent_1:slow --task-timeout 300
wait_for "the embedded console starts the run" 30 on_screen emb "started the weekly run"
keys emb 2
wait_for "the tasks view lists the market task" 30 on_screen emb "USDJPY-market"
# Select USDJPY-market (the first row) and wait until research_agent_1 has it.
pm_state() { python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
t = [t for r in s['runs'].values() for t in r['tasks'] if t['task_id'] == 'USDJPY-market'][0]
print(t['assignee'], t['status'], t.get('done_by', '-'))" "$D/state/product_manager-state.json" 2>/dev/null; }
accepted() { pm_state | grep -q '^research_agent_1 accepted'; }
wait_for "research_agent_1 holds the task" 30 accepted
keys emb g r
wait_for "r shows the product_manager's answer" 10 on_screen emb "reassign USDJPY-market: applied: reassign by operator"
done_by_2() { pm_state | grep -q '^research_agent_2 done research_agent_2'; }
wait_for "the task is done by research_agent_2" 60 done_by_2
grep -q '"action":"reassign"' "$D/journal/actions.jsonl" && ok "the reassign is in the journal" || fail "the reassign is in the journal" "$(cat "$D/journal/actions.jsonl" 2>/dev/null)"
cancelled() { python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))
assert any(t['status'] == 'cancelled' for t in s['tasks'].values())" "$D/state/research_agent_1-state.json"; }
wait_for "research_agent_1 dropped it" 10 cancelled
keys emb q
wait_for "q with embedded agents asks first" 10 on_screen emb "embedded agents stop"
keys emb y
wait_for "y quits" 20 sh -c "! tmux -L '$S' capture-pane -p -t emb | grep -qF ' 1 Overview '"

# q asks before stopping embedded agents (the weekly workflow's five and the
# review master), naming how many and the run's
# state; n keeps everything running, y quits
D=$T/quit
start quit
wait_for "embedded console for the quit question" 30 on_screen quit "started the weekly run"
keys quit q
wait_for "q asks, naming the agents that stop" 10 on_screen quit "quit? 6 embedded agents stop; run weekly-"
wait_for "... and how far the run is" 10 on_screen quit "tasks done"
keys quit n
wait_for "n does not quit" 10 on_screen quit "not quitting"
keys quit 2
wait_for "... the console goes on (tasks view)" 10 on_screen quit "USDJPY-market"
keys quit : q Enter
wait_for ":q asks too" 10 on_screen quit "embedded agents stop"
keys quit y
wait_for "y quits" 20 sh -c "! tmux -L '$S' capture-pane -p -t quit | grep -qF ' 1 Overview '"
has "... the journal is intact (the run was started)" "$(cat "$D/journal/actions.jsonl")" '"action":"start-run"'

# NO_COLOR from another directory: no colours, but the selected line is in
# reverse video and the current tab differs from the title line
D=$T/nocolor
mkdir -p "$D"
tm -f /dev/null new-session -d -s nc -x 120 -y 40 -c "$T" \
	"env TERM=xterm-256color LANG=C.UTF-8 NO_COLOR=1 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 '$MADF' --log-dir '$L' console --attach; sleep 30"
wait_for "NO_COLOR console starts" 10 on_screen nc "product_manager"
# sgr_at TEXT: the SGR attributes (as "bold,reverse,...") in force where
# TEXT starts on the screen captured with its escapes
sgr_at() { tm capture-pane -e -p -t nc | python3 -c '
import re, sys
want = sys.argv[1]
names = {1: "bold", 2: "dim", 4: "underline", 7: "reverse"}
for line in sys.stdin:
    attrs, pos = set(), 0
    for m in re.finditer(r"\x1b\[([0-9;]*)m|[^\x1b]+", line):
        if m.group(0).startswith("\x1b"):
            for p in (m.group(1) or "0").split(";"):
                p = int(p or 0)
                if p == 0: attrs = set()
                elif p in names: attrs.add(names[p])
                elif p in (22, 24, 27): attrs.discard({22: "bold", 24: "underline", 27: "reverse"}[p])
        elif want in m.group(0):
            print(",".join(sorted(attrs)) or "none"); sys.exit(0)
print("absent")' "$1"; }
has "NO_COLOR: the selected agent row is in reverse video" "$(sgr_at 'product_manager ')" "reverse"
hasnt "... the next row is not" "$(sgr_at 'research_agent_1 ')" "reverse"
[ "$(sgr_at ' 1 Overview ')" != "$(sgr_at ' 2 Tasks ')" ] && ok "NO_COLOR: the current tab looks unlike the others" || fail "NO_COLOR: the current tab looks unlike the others" "$(sgr_at ' 1 Overview ') vs $(sgr_at ' 2 Tasks ')"
keys nc q
done_testing
