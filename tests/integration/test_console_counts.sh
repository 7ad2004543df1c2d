# The console's counts, in tmux (one -L socket for this test, a fixed
# 120x40 window, polling the screen until it matches): without inotify
# (MADF_FORCE_POLL=1, the file bus) the bus monitor has no descriptor, and
# the counts on the screen must still follow the bus at the poll interval.
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

done_testing
