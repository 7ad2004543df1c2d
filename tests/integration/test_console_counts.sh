# The console's counts, in tmux (one -L socket for this test, a fixed
# 120x40 window, polling the screen until it matches): without inotify
# (MADF_FORCE_POLL=1, the file bus) the bus monitor has no descriptor, and
# the counts on the screen must still follow the bus at the poll interval;
# a queue's header under a / filter says how many of its messages are shown.
. tests/integration/lib.sh
command -v tmux >/dev/null || { echo "not ok - tmux is not installed"; exit 1; }
S=madf-counts-$$
trap 'tmux -L "$S" kill-server 2>/dev/null; cleanup' EXIT
L=$T/logs
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'
tm() { tmux -L "$S" "$@"; }
cap() { tm capture-pane -p -t "$1"; }
on_screen() { cap "$1" | grep -qF -- "$2"; }
# the DEPTH column of an agent's row in the Overview
depth_is() { [ "$(cap "$1" | awk -v a="$2" '$1 == a { print $3 }')" = "$3" ]; }

$MADF send --to research_agent_1 --type heartbeat --content "$HB" >/dev/null
$MADF send --to research_agent_1 --type heartbeat --content "$HB" >/dev/null
tm -f /dev/null new-session -d -s poll -x 120 -y 40 -c "$TOP" \
	"env TERM=xterm-256color LANG=C.UTF-8 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 MADF_FORCE_POLL=1 MESSAGE_POLL_INTERVAL=0.2 '$MADF' --log-dir '$L' console --attach; sleep 30"
wait_for "force-poll: the console starts" 10 on_screen poll "AGENT"
wait_for "force-poll: the depth shown is the 2 waiting" 10 depth_is poll research_agent_1 2
$MADF send --to research_agent_1 --type heartbeat --content "$HB" >/dev/null
wait_for "force-poll: a third send shows 3" 10 depth_is poll research_agent_1 3
got=$($MADF recv research_agent_1 --max 2 | wc -l | tr -d ' ')
eq "force-poll: two messages received" "$got" 2
wait_for "force-poll: after two receives the depth shown is 1" 10 depth_is poll research_agent_1 1
eq "... as many as are on disk" "$(njson "$D/messages/inbox/research_agent_1")" 1
tm send-keys -t poll q
wait_for "force-poll: q quits" 10 sh -c "! tmux -L '$S' capture-pane -p -t poll | grep -qF ' 1 Overview '"

# The Queues view's header under a / filter: 3 urgent of 12 messages.
for i in 1 2 3 4 5 6 7 8 9; do
	$MADF send --to research_agent_2 --type heartbeat --content "$HB" >/dev/null
done
for i in 1 2 3; do
	$MADF send --to research_agent_2 --type heartbeat --priority urgent --content "$HB" >/dev/null
done
keys() { t=$1; shift; tm send-keys -t "$t" "$@"; }
tm -f /dev/null new-session -d -s filt -x 120 -y 40 -c "$TOP" \
	"env TERM=xterm-256color LANG=C.UTF-8 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 '$MADF' --log-dir '$L' console --attach; sleep 30"
wait_for "filter: the console starts" 10 on_screen filt "AGENT"
keys filt : i n b o x Space r e s e a r c h _ a g e n t _ 2 Enter
wait_for "filter: the inbox header counts its 12 messages" 10 on_screen filt "inbox of research_agent_2: 12 messages, 0 marked"
keys filt / u r g e n t Enter
wait_for "filter: /urgent shows 3 of 12 in the header" 10 on_screen filt "inbox of research_agent_2: 3 of 12 messages, 0 marked"
rows() { cap filt | grep -c " heartbeat  *operator  *$1 "; }
eq "... and 3 urgent rows are listed" "$(rows urgent)" 3
eq "... and no normal one" "$(rows normal)" 0
keys filt Space
wait_for "filter: a mark counts" 10 on_screen filt "inbox of research_agent_2: 3 of 12 messages, 1 marked"
# / opens with the filter in force: six backspaces take "urgent" away
keys filt / BSpace BSpace BSpace BSpace BSpace BSpace ! u r g e n t Enter
wait_for "filter: /!urgent shows 9 of 12 (the mark hidden, still counted)" 10 on_screen filt "inbox of research_agent_2: 9 of 12 messages, 1 marked"
keys filt Escape
wait_for "filter: Esc clears it, back to 12" 10 on_screen filt "inbox of research_agent_2: 12 messages, 1 marked"
keys filt / x y z z y Enter
wait_for "filter: a filter matching nothing shows 0 of 12" 10 on_screen filt "inbox of research_agent_2: 0 of 12 messages, 1 marked"
keys filt q
done_testing
