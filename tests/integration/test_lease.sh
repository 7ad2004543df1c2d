# Leases on each transport, the file bus and NATS JetStream (a nats-server
# of this test's own), with a lease of 2 s and agents of the real runtime
# (tests/helpers/lease_agent: a handler that blocks the agent's thread):
# - a handler that takes 7 s, with a second agent on the same inbox all
#   along: the message is handled once (one "begin"), acked, and the
#   processing message's listed lease moves on while it runs;
# - an agent killed with SIGKILL mid-handler: the message is delivered
#   again, to the other agent;
# - an agent stopped with SIGSTOP mid-handler (alive, renewing nothing):
#   the message comes back after the lease and the other agent handles it;
# - a handler that hangs (20 s) past the lease's maximum (MADF_LEASE_MAX_S
#   of 3 s): its claim is renewed no more, another agent gets the message
#   as a second attempt and acks it, the hung agent's log warns lease_max
#   (its id, the time held, the maximum), and when the hung handler ends
#   its ack is refused ("lost the claim"): the message is processed once.
. tests/integration/lib.sh
. tests/integration/nats.sh

LA=$(test_helper lease_agent) || { fail "the lease agent is built (make testbins)"; done_testing; exit 1; }

export MADF_LEASE_S=2 MESSAGE_POLL_INTERVAL=0.2 MAX_RETRY_ATTEMPTS=5
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'

jget() { printf '%s' "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)" 2>&1; }
# begins ID FILE...: how many handlers began ID
begins() { id=$1; shift; cat "$@" 2>/dev/null | grep -c "^begin $id\$"; }
# processing AGENT: messages claimed from AGENT's inbox, per madf status
processing() { jget "$($MADF status --json)" 'j["inboxes"]["'$1'"]["processing"]'; }
depth() { jget "$($MADF status --json)" 'j["inboxes"]["'$1'"]["depth"]'; }
stop_agents() {
	for _p in "$@"; do kill -CONT "$_p" 2>/dev/null; kill "$_p" 2>/dev/null; done
	for _p in "$@"; do wait "$_p" 2>/dev/null; done
}

lease_cases() {
	tr=$1
	# --- a 7-second handler, a rival agent on the same inbox -------------
	W=lw_$tr
	$LA $W 7 >"$T/a.$tr" 2>"$T/a.$tr.err" & pa=$!
	$LA $W 7 >"$T/b.$tr" 2>"$T/b.$tr.err" & pb=$!
	wait_for "[$tr] both agents run" 60 sh -c "grep -q ready '$T/a.$tr' && grep -q ready '$T/b.$tr'"
	id=$($MADF send --new-agent --to $W --type heartbeat --content "$HB")
	wait_for "[$tr] an agent begins handling it" 30 grep -q "^begin $id\$" "$T/a.$tr" "$T/b.$tr"
	# the lease listed (on NATS from the first renewal on), then the same
	# listing after a renewal
	wait_for "[$tr] the processing message's lease is listed" 10 \
		sh -c "$MADF ls processing $W --json | grep -q lease_expires"
	l1=$(jget "$($MADF ls processing $W --json)" 'j[0]["lease_expires"]')
	left=$(jget "$($MADF ls processing $W --json)" 'j[0]["lease_left_s"]')
	check "[$tr] the processing message's lease is at most 2 s ahead ($left)" \
		python3 -c "import sys; sys.exit(not 0 <= $left <= 2)"
	wait_for "[$tr] its listed expiry moves on while the handler runs" 10 \
		sh -c "$MADF ls processing $W --json | grep '\"lease_expires\"' | grep -vq '$l1'"
	has "[$tr] madf show gives the lease too" "$($MADF show "$id")" "lease:    until "
	out=$($MADF ls processing $W)
	has "[$tr] madf ls processing shows a LEASE column" "$(echo "$out" | head -1)" "LEASE"
	eq "[$tr] its row: the id, the time left (at most 2 s), 0 attempts" \
		"$(echo "$out" | awk -v id="$id" '$1 == id { sub(/s$/, "", $7); v = $7 + 0; print (v > 0 && v <= 2) ? "ok " $8 : "lease " $7 }')" "ok 0"
	wait_for "[$tr] the handler ends" 60 grep -q "^end $id\$" "$T/a.$tr" "$T/b.$tr"
	wait_for "[$tr] and its message is acked" 30 sh -c "[ \"\$($MADF status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); i=j[\"inboxes\"][\"$W\"]; print(i[\"processing\"]+i[\"depth\"]+i[\"retry\"])')\" = 0 ]"
	stop_agents $pa $pb
	eq "[$tr] handled exactly once in 7 s with a 2-second lease" "$(begins "$id" "$T/a.$tr" "$T/b.$tr")" 1
	eq "[$tr] ended once" "$(cat "$T/a.$tr" "$T/b.$tr" | grep -c "^end $id\$")" 1
	if [ "$tr" = file ]; then
		out=$($MADF show "$id" --json)
		eq "[$tr] processed as a first attempt" "$(jget "$out" 'j["queue"]+" "+str(j["attempts"])')" "processed 0"
	fi
	eq "[$tr] no dead letter" "$(jget "$($MADF status --json)" 'j["dead_letter"]')" 0

	# --- SIGKILL mid-handler: delivered again, to the other agent --------
	K=lk_$tr
	$LA $K 30 >"$T/k1.$tr" 2>"$T/k1.$tr.err" & p1=$!
	wait_for "[$tr] the first agent runs" 60 grep -q ready "$T/k1.$tr"
	kid=$($MADF send --new-agent --to $K --type heartbeat --content "$HB")
	wait_for "[$tr] the first agent begins" 30 grep -q "^begin $kid\$" "$T/k1.$tr"
	kill -9 $p1; wait $p1 2>/dev/null
	$LA $K 0 >"$T/k2.$tr" 2>"$T/k2.$tr.err" & p2=$!
	wait_for "[$tr] killed with SIGKILL mid-handler: another agent gets it" 60 \
		grep -q "^end $kid\$" "$T/k2.$tr"
	wait_for "[$tr] and acks it" 30 sh -c "[ \"\$($MADF status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); i=j[\"inboxes\"][\"$K\"]; print(i[\"processing\"]+i[\"depth\"]+i[\"retry\"])')\" = 0 ]"
	stop_agents $p2
	if [ "$tr" = file ]; then
		out=$($MADF show "$kid" --json)
		eq "[$tr] as a second attempt" "$(jget "$out" 'j["queue"]+" "+str(j["attempts"])')" "processed 1"
	fi

	# --- SIGSTOP mid-handler: alive but renewing nothing -----------------
	S=ls_$tr
	$LA $S 30 >"$T/s1.$tr" 2>"$T/s1.$tr.err" & p1=$!
	wait_for "[$tr] the agent to stop runs" 60 grep -q ready "$T/s1.$tr"
	sid=$($MADF send --new-agent --to $S --type heartbeat --content "$HB")
	wait_for "[$tr] it begins" 30 grep -q "^begin $sid\$" "$T/s1.$tr"
	kill -STOP $p1
	$LA $S 0 >"$T/s2.$tr" 2>"$T/s2.$tr.err" & p2=$!
	wait_for "[$tr] stopped mid-handler: the claim comes back after the lease, another agent handles it" 60 \
		grep -q "^end $sid\$" "$T/s2.$tr"
	wait_for "[$tr] and acks it" 30 sh -c "[ \"\$($MADF status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); i=j[\"inboxes\"][\"$S\"]; print(i[\"processing\"]+i[\"depth\"]+i[\"retry\"])')\" = 0 ]"
	kill -9 $p1 2>/dev/null; wait $p1 2>/dev/null
	stop_agents $p2
	if [ "$tr" = file ]; then
		out=$($MADF show "$sid" --json)
		eq "[$tr] as a second attempt" "$(jget "$out" 'j["queue"]+" "+str(j["attempts"])')" "processed 1"
	fi

	# --- a hung handler, past the lease's maximum -------------------------
	H=lh_$tr
	MADF_LEASE_MAX_S=3 $LA $H 20 >"$T/h1.$tr" 2>"$T/h1.$tr.err" & p1=$!
	wait_for "[$tr] the agent to hang runs" 60 grep -q ready "$T/h1.$tr"
	hid=$($MADF send --new-agent --to $H --type heartbeat --content "$HB")
	wait_for "[$tr] its handler begins (and hangs)" 30 grep -q "^begin $hid\$" "$T/h1.$tr"
	$LA $H 0 >"$T/h2.$tr" 2>"$T/h2.$tr.err" & p2=$!
	wait_for "[$tr] held past the maximum: another agent gets it" 60 \
		grep -q "^end $hid\$" "$T/h2.$tr"
	wait_for "[$tr] and acks it" 30 sh -c "[ \"\$($MADF status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); i=j[\"inboxes\"][\"$H\"]; print(i[\"processing\"]+i[\"depth\"]+i[\"retry\"])')\" = 0 ]"
	hlog=$MADF_DATA_DIR/logs/agents/$H/errors
	warn=$(cat "$hlog"/*.jsonl 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    j = json.loads(l)
    if j.get("event") == "lease_max":
        print(j["level"], j["agent"], j["message_id"], j["held_s"] >= 3, j["lease_max_s"])' 2>&1)
	eq "[$tr] the hung agent's log warns: lease_max, the agent, the message, held 3 s or more of 3" \
		"$warn" "warn $H $hid True 3"
	wait_for "[$tr] the hung handler ends" 60 grep -q "^end $hid\$" "$T/h1.$tr"
	wait_for "[$tr] and its ack is refused: lost the claim" 30 \
		sh -c "cat '$hlog'/*.jsonl | grep bus_error | grep 'lost the claim on $hid' | grep -q MADF_LEASE_MAX_S"
	stop_agents $p1 $p2
	eq "[$tr] handled by each agent once" "$(begins "$hid" "$T/h1.$tr") $(begins "$hid" "$T/h2.$tr")" "1 1"
	eq "[$tr] nothing left of it to deliver" \
		"$(jget "$($MADF status --json)" 'j["inboxes"]["'$H'"]["processing"]+j["inboxes"]["'$H'"]["depth"]+j["inboxes"]["'$H'"]["retry"]')" 0
	eq "[$tr] no dead letter" "$(jget "$($MADF status --json)" 'j["dead_letter"]')" 0
	if [ "$tr" = file ]; then
		out=$($MADF show "$hid" --json)
		eq "[$tr] processed once, as a second attempt" "$(jget "$out" 'j["queue"]+" "+str(j["attempts"])')" "processed 1"
	fi
}

export MADF_BUS=file:
lease_cases file

nats_start
export MADF_BUS=$NATS_URL MADF_DATA_DIR=$T/data-nats
lease_cases nats

done_testing
