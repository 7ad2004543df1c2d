# Logs travel over the bus: on NATS an agent's structured log lines go to
# a stream of its own as well as to its local files, and a console on
# another host (its own data and log directories, sharing only the NATS
# URL) shows them in its Logs view. The file bus keeps its local files.
. tests/integration/lib.sh
. tests/integration/nats.sh

nats_start
export MADF_BUS=$NATS_URL
mkdir -p "$T/a" "$T/b"
# host A: validator_agent as a process of its own
MADF_DATA_DIR=$T/a/data LOG_DIR=$T/a/logs $MADF agent validator_agent >"$T/a.out" 2>"$T/a.err" &
apid=$!
trap 'kill "$apid" 2>/dev/null; wait "$apid" 2>/dev/null; for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
started() { cat "$T"/a/logs/agents/validator_agent/events/*.jsonl 2>/dev/null | grep -q '"event":"start"'; }
wait_for "host A: the agent logs its start in its own files" 60 started
# host B: a console with other directories reads host A's log from the bus
printf '%s\n' 4 : 'type logs validator_agent' '<Enter>' 'wait-for validator_agent started' '<Enter>' 'wait-for pid' \
	>"$T/script"
MADF_DATA_DIR=$T/b/data LOG_DIR=$T/b/logs $MADF console --attach --script "$T/script" \
	--dump-screen "$T/screen" 2>"$T/b.err"
eq "host B: the scripted console exits 0" "$?" 0
scr=$(cat "$T/screen")
has "host B's Logs view shows host A's start line" "$scr" "validator_agent started"
has "... and says they come from the bus" "$scr" "from the bus, copied to $T/b/data/bus-logs/agents/validator_agent"
has "... with the pid of host A's process in the line's detail" "$scr" "$apid"
check "host B's own log directory has no line of the agent" test ! -e "$T/b/logs/agents/validator_agent"
line=$(grep -h '"event":"start"' "$T"/b/data/bus-logs/agents/validator_agent/events/*.jsonl | tail -1)
eq "the copy holds host A's line as written there" "$line" \
	"$(grep -h '"event":"start"' "$T"/a/logs/agents/validator_agent/events/*.jsonl | tail -1)"
kill -TERM "$apid"; wait "$apid"
eq "host A's agent stops cleanly" "$?" 0
# a second run copies only what is new: the stop line, published as the
# process exits, and nothing twice
MADF_DATA_DIR=$T/b/data LOG_DIR=$T/b/logs $MADF console --attach --script "$T/script" \
	--dump-screen "$T/screen" 2>>"$T/b.err"
eq "host A's stop line reached host B" \
	"$(cat "$T"/b/data/bus-logs/agents/validator_agent/events/*.jsonl | grep -c '"event":"stop"')" 1
eq "host B's copy is host A's lines, each once" \
	"$(cat "$T"/b/data/bus-logs/agents/validator_agent/*/*.jsonl | sort | md5sum)" \
	"$(cat "$T"/a/logs/agents/validator_agent/*/*.jsonl | sort | md5sum)"

# the file bus: logs stay local, the view names the log directory
unset MADF_BUS
printf '%s\n' 4 : 'type logs validator_agent' '<Enter>' >"$T/script"
MADF_DATA_DIR=$T/a/data LOG_DIR=$T/a/logs $MADF console --attach --script "$T/script" \
	--dump-screen "$T/screen" 2>/dev/null
has "file bus: the Logs view reads the log directory" "$(cat "$T/screen")" "from $T/a/logs/agents/validator_agent/"
check "file bus: no copy is made" test ! -e "$T/a/data/bus-logs"
done_testing
