# The console's processing view shows each claim's LEASE: the time left
# until its lease runs out, the value madf ls processing --json gives
# (lease_expires). An agent of the real runtime (tests/helpers/lease_agent)
# claims a message and is stopped with SIGSTOP mid-handler, so that its
# lease is renewed no more and its expiry E stays put (the lease is 600 s:
# it does not run out during the test). The view lists at some moment
# between t0 (before the console starts) and t1 (after the screen is
# read), so the LEASE shown (whole seconds, rounded down) must lie in
# [E - t1 - 1, E - t0]: a bound, never a timed assertion. Again at 80x30.
# One tmux -L socket of this test's own, a fixed size, polling the screen.
. tests/integration/lib.sh
command -v tmux >/dev/null || { echo "not ok - tmux is not installed"; exit 1; }
LA=$(test_helper lease_agent) || { fail "the lease agent is built (make testbins)"; done_testing; exit 1; }
S=madf-console-lease-$$
pa=
trap 'tmux -L "$S" kill-server 2>/dev/null; [ -n "$pa" ] && { kill -9 "$pa" 2>/dev/null; wait "$pa" 2>/dev/null; }; cleanup' EXIT
export MADF_BUS=file: MADF_LEASE_S=600 MESSAGE_POLL_INTERVAL=0.2
L=$T/logs
W=lc_worker
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'
tm() { tmux -L "$S" "$@"; }
cap() { tm capture-pane -p -t "$1"; }
on_screen() { cap "$1" | grep -qF -- "$2"; }
keys() { t=$1; shift; tm send-keys -t "$t" "$@"; }
# the LEASE of the heartbeat's row in the processing view, in seconds
# ("58s", "9m58s", "2h05m"; "over" and "-" as they are)
lease_shown() {
	cap main | awk '$2 == "heartbeat" { print $NF; exit }' | python3 -c '
import re, sys
v = sys.stdin.read().strip()
m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", v)
print(v if not v or not m else int(m[1] or 0) * 3600 + int(m[2] or 0) * 60 + int(m[3] or 0))'
}
# in_bounds V T0 T1: E - T1 - 1 <= V <= E - T0
in_bounds() {
	python3 -c "import sys; v, e, t0, t1 = $1, $E, $2, $3; sys.exit(not e - t1 - 1 <= v <= e - t0)" 2>/dev/null
}
now() { python3 -c 'import time; print(time.time())'; }

$LA $W 3000 >"$T/a" 2>"$T/a.err" & pa=$!
wait_for "the agent runs" 60 grep -q ready "$T/a"
id=$($MADF send --new-agent --to $W --type heartbeat --content "$HB")
wait_for "it claims the message" 30 grep -q "^begin $id\$" "$T/a"
kill -STOP $pa
# renewed no more from here: the expiry moves no more (a renewal under
# way when stopped may still land: read it once two readings agree)
E=
wait_for "its lease expiry is listed, and stays put" 30 sh -c "
	a=\$('$MADF' ls processing $W --json | python3 -c 'import json,sys,datetime; j=json.load(sys.stdin); print(datetime.datetime.fromisoformat(j[0][\"lease_expires\"].replace(\"Z\",\"+00:00\")).timestamp())')
	sleep 0.3
	b=\$('$MADF' ls processing $W --json | python3 -c 'import json,sys,datetime; j=json.load(sys.stdin); print(datetime.datetime.fromisoformat(j[0][\"lease_expires\"].replace(\"Z\",\"+00:00\")).timestamp())')
	[ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ] && echo \$a >'$T/E'"
E=$(cat "$T/E" 2>/dev/null)
[ -n "$E" ] || E=0

t0=$(now)
tm -f /dev/null new-session -d -s main -x 120 -y 40 -c "$TOP" \
	"env TERM=xterm-256color LANG=C.UTF-8 MADF_DATA_DIR='$D' MADF_NO_FSYNC=1 MADF_BUS=file: MADF_LEASE_S=600 '$MADF' --log-dir '$L' console; sleep 30"
wait_for "the console starts" 30 on_screen main "AGENT"
keys main : p r o c e s s i n g Space $W Enter
wait_for ":processing $W lists the claim" 30 on_screen main "processing of $W: 1 message"
# polled: the title can be drawn a frame before the header row is whole
hdr_lease() { cap main | grep -m1 "MESSAGE ID" | grep -qF "AGE   LEASE"; }
wait_for "the header has a LEASE column after AGE" 30 hdr_lease
wait_for "its row is shown" 30 sh -c "tmux -L '$S' capture-pane -p -t main | awk '\$2 == \"heartbeat\" { f = 1 } END { exit !f }'"
v=$(lease_shown)
t1=$(now)
check "120x40: LEASE $v s is the time left on the lease (expiry $E, listed between $t0 and $t1)" \
	in_bounds "${v:-x}" "$t0" "$t1"
# not AGE nor the lease's length: well under 600 s is left, and not 0
check "... less than the lease's 600 s, more than nothing" python3 -c "import sys; sys.exit(not 0 < ${v:-0} < 600)"

# narrower: every column still there
t0=$(now)
tm resize-window -t main -x 80 -y 30
wait_for "80x30: the header still ends in LEASE" 30 sh -c "tmux -L '$S' capture-pane -p -t main | grep 'MESSAGE ID' | grep -q 'LEASE\$'"
# listed again after the resize, every few seconds while claims are shown
wait_for "80x30: a LEASE listed since the resize" 30 sh -c "
	v=\$(tmux -L '$S' capture-pane -p -t main | awk '\$2 == \"heartbeat\" { print \$NF }' | python3 -c '
import re, sys
v = sys.stdin.read().strip()
m = re.fullmatch(r\"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?\", v)
print(int(m[1] or 0) * 3600 + int(m[2] or 0) * 60 + int(m[3] or 0) if v and m else 99999)')
	python3 -c \"import sys; sys.exit(not \$v <= $E - $t0)\""
v=$(lease_shown)
t1=$(now)
check "80x30: LEASE $v s is the time left on the lease" in_bounds "${v:-x}" "$t0" "$t1"

keys main q
# its handler sleeps on (a SIGTERM may reach the lease thread instead):
# killed, as a crash would end it
kill -9 $pa 2>/dev/null
wait $pa 2>/dev/null
pa=
done_testing
