# The bus semantics, one list of cases run on each transport: the file bus
# (file:) and NATS JetStream (nats://, a server of this test's own). The
# same commands and the same expected values on both; where the transports
# differ on purpose, the case says so and asserts each one's answer.
. tests/integration/lib.sh
. tests/integration/nats.sh

DRV=$(test_helper bus_driver) || { fail "the bus driver is built (make testbins)"; done_testing; exit 1; }

export MAX_RETRY_ATTEMPTS=3 MADF_RETRY_BASE_MS=50 MADF_RETRY_MAX_MS=200 MADF_LEASE_S=2
HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'

# jget JSON PYTHON-EXPR: a value out of JSON (j is the parsed document).
jget() { printf '%s' "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)" 2>&1; }

# bus_cases NAME: every case, on the transport MADF_BUS names.
bus_cases() {
	tr=$1
	# --- send, recv, ack ---
	id=$($MADF send --new-agent --to t_basic --type heartbeat --content "$HB")
	eq "[$tr] send prints the message id" "$(echo "$id" | cut -c1-9)" "operator_"
	st=$($MADF status --json)
	eq "[$tr] status counts the waiting message" "$(jget "$st" 'j["inboxes"]["t_basic"]["depth"]')" 1
	out=$($MADF recv --new-agent t_basic --max 1)
	eq "[$tr] recv gets it" "$(jget "$out" 'j["message_id"]')" "$id"
	st=$($MADF status --json)
	eq "[$tr] the acked message left the inbox" "$(jget "$st" 'j["inboxes"]["t_basic"]["depth"]')" 0
	eq "[$tr] recv of an empty inbox prints nothing" "$($MADF recv --new-agent t_basic)" ""
	out=$($MADF show "$id" 2>&1)
	case $tr in
	file) has "[$tr] an acked message is kept in processed/" "$out" "queue:    processed" ;;
	# WorkQueue retention: the ack deletes it (man/madf-messages.5).
	nats) has "[$tr] an acked message is no longer stored" "$out" "no message $id" ;;
	esac

	# --- priority, then age ---
	low=$($MADF send --new-agent --to t_prio --type heartbeat --priority low --content "$HB")
	n1=$($MADF send --new-agent --to t_prio --type heartbeat --content "$HB")
	urg=$($MADF send --new-agent --to t_prio --type heartbeat --priority urgent --content "$HB")
	high=$($MADF send --new-agent --to t_prio --type heartbeat --priority high --content "$HB")
	n2=$($MADF send --new-agent --to t_prio --type heartbeat --content "$HB")
	ls=$($MADF ls inbox t_prio --json)
	eq "[$tr] ls orders by priority then age" \
		"$(jget "$ls" '" ".join(e["message_id"] for e in j)')" "$urg $high $n1 $n2 $low"
	got=$($MADF recv --new-agent t_prio --max 5 | python3 -c 'import json,sys; print(" ".join(json.loads(l)["message_id"] for l in sys.stdin))')
	eq "[$tr] recv delivers by priority then age" "$got" "$urg $high $n1 $n2 $low"

	# --- a send wakes a waiting consumer (no polling needed) ---
	$DRV wait-fd t_bell 60 >"$T/bell.$tr" &
	bpid=$!
	wait_for "[$tr] a consumer waits on its fd" 30 grep -q ready "$T/bell.$tr"
	$MADF send --new-agent --to t_bell --type heartbeat --content "$HB" >/dev/null
	wait "$bpid"
	eq "[$tr] the send wakes it" "$(tail -1 "$T/bell.$tr")" woken

	# --- 1000 waiting per inbox ---
	out=$($DRV send-many t_full 1001)
	has "[$tr] 1000 sends to one inbox are taken" "$out" "sent 1000"
	has "[$tr] the 1001st is refused: inbox full" "$out" "inbox of t_full is full"
	out=$($MADF send --new-agent --to t_full --type heartbeat --content "$HB" 2>&1); rc=$?
	eq "[$tr] madf send to a full inbox fails" "$rc" 1
	has "[$tr] and says the inbox is full" "$out" "is full"
	st=$($MADF status --json)
	eq "[$tr] status shows the 1000" "$(jget "$st" 'j["inboxes"]["t_full"]["depth"]')" 1000

	# --- idempotent send by message id ---
	$DRV send-id t_idem idem_0001 >/dev/null
	$DRV send-id t_idem idem_0001 >/dev/null
	n=$(jget "$($MADF ls inbox t_idem --json)" 'len(j)')
	case $tr in
	nats) eq "[$tr] a send repeated with the same message id is stored once" "$n" 1 ;;
	# The file bus does not deduplicate (man/madf-messages.5 says so).
	file) eq "[$tr] the file bus keeps both sends of one message id (documented)" "$n" 2 ;;
	esac

	# --- nack, backoff, dead letter after MAX_RETRY_ATTEMPTS ---
	nid=$($MADF send --new-agent --to t_nack --type heartbeat --content "$HB")
	tries=
	for i in 1 2 3; do
		out=$($DRV claim t_nack 30 nack "boom $i")
		tries="$tries ${out#* }"
	done
	eq "[$tr] each nack comes back as one more attempt" "$tries" " 0 1 2"
	eq "[$tr] after the third failure nothing is left to claim" \
		"$($DRV claim t_nack 0.5 ack; echo "rc=$?")" "rc=3"
	dl=$($MADF ls dead-letter --json)
	eq "[$tr] the message is a dead letter" "$(jget "$dl" '[e["message_id"] for e in j]')" "['$nid']"
	eq "[$tr] reason max_attempts" "$(jget "$dl" 'j[0]["reason"]')" max_attempts
	eq "[$tr] the last error" "$(jget "$dl" 'j[0]["error"]')" "boom 3"
	eq "[$tr] the attempts" "$(jget "$dl" 'j[0]["attempts"]')" 3
	eq "[$tr] the original inbox" "$(jget "$dl" 'j[0]["original_inbox"]')" t_nack
	st=$($MADF status --json)
	eq "[$tr] status counts the dead letter" "$(jget "$st" 'j["dead_letter"]')" 1

	# --- a failed message waiting out its backoff counts as retrying ---
	$MADF send --new-agent --to t_retry --type heartbeat --content "$HB" >/dev/null
	MADF_RETRY_BASE_MS=600000 MADF_RETRY_MAX_MS=600000 $DRV claim t_retry 30 nack "later" >/dev/null
	st=$($MADF status --json)
	eq "[$tr] status: retrying 1, processing 0, waiting 0" \
		"$(jget "$st" '(j["inboxes"]["t_retry"]["retry"], j["inboxes"]["t_retry"]["processing"], j["inboxes"]["t_retry"]["depth"])')" "(1, 0, 0)"
	ls=$($MADF ls retry t_retry --json)
	eq "[$tr] ls retry lists it, one failure, due in the future" \
		"$(jget "$ls" '[(e["queue"], e["attempts"], e["due"] > "'"$(date -u +%Y-%m-%dT%H:%M:%S)"'") for e in j]')" "[('retry', 1, True)]"
	tid=$(jget "$ls" 'j[0]["message_id"]')
	out=$($MADF kill "$tid" --reason "no more"); eq "[$tr] kill of a retrying message" "$out" "killed $tid"
	out=$($MADF show "$tid" --json)
	eq "[$tr] it is a dead letter" "$(jget "$out" 'j["queue"]+" "+j["reason"]')" "dead-letter killed"
	$MADF delete "$tid" >/dev/null
	$MADF send --new-agent --to t_retry --type heartbeat --content "$HB" >/dev/null
	MADF_RETRY_BASE_MS=600000 MADF_RETRY_MAX_MS=600000 $DRV claim t_retry 30 nack "later" >/dev/null
	tid=$(jget "$($MADF ls retry t_retry --json)" 'j[0]["message_id"]')
	out=$($MADF delete "$tid" 2>"$T/del.err"); eq "[$tr] delete of a retrying message" "$out" "deleted $tid"
	case $tr in
	file) eq "[$tr] delete says nothing more (into the trash)" "$(cat "$T/del.err")" "" ;;
	nats) eq "[$tr] delete says, in one line, that it is permanent there" "$(cat "$T/del.err")" \
		"madf: delete: on the nats transport a delete is permanent (it has no trash; madf trash restore cannot bring it back)" ;;
	esac
	st=$($MADF status --json)
	eq "[$tr] nothing of t_retry is counted any more" \
		"$(jget "$st" '(j["inboxes"]["t_retry"]["retry"], j["inboxes"]["t_retry"]["processing"], j["inboxes"]["t_retry"]["depth"], j["dead_letter"])')" "(0, 0, 0, 1)"

	# --- a permanent failure goes straight to the dead letters ---
	rid=$($MADF send --new-agent --to t_rej --type heartbeat --content "$HB")
	$DRV claim t_rej 30 reject "cannot ever work" >/dev/null
	out=$($MADF show "$rid" --json)
	eq "[$tr] a rejected message is dead at once" "$(jget "$out" 'j["queue"]+" "+j["reason"]+" "+str(j["attempts"])')" "dead-letter rejected 1"

	# --- what a foreign writer put there unchecked: invalid to the dead letters ---
	ts=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	printf '{"message_id":"bad_%s_1","from":"operator","to":"t_raw","timestamp":"%s","type":"heartbeat","content":{"status":7,"uptime_seconds":0,"active_tasks":0}}' "$tr" "$ts" >"$T/bad.$tr.json"
	printf '{"message_id": "x", ' >"$T/malformed.$tr.json"
	printf '{"message_id":"mis_%s_1","from":"operator","to":"someone_else","timestamp":"%s","type":"heartbeat","content":{"status":"idle","uptime_seconds":0,"active_tasks":0}}' "$tr" "$ts" >"$T/mis.$tr.json"
	$DRV raw t_raw "$T/bad.$tr.json"
	$DRV raw t_raw "$T/malformed.$tr.json"
	$DRV raw t_raw "$T/mis.$tr.json"
	good=$($MADF send --new-agent --to t_raw --type heartbeat --content "$HB")
	out=$($MADF recv --new-agent t_raw)
	eq "[$tr] beside bad messages the good one is delivered, alone" \
		"$(jget "[$out]" '[m["message_id"] for m in j]')" "['$good']"
	dl=$($MADF ls dead-letter --json)
	eq "[$tr] a message failing validation is a dead letter, reason invalid" \
		"$(jget "$dl" '[e["reason"] for e in j if e["message_id"]=="bad_'$tr'_1"]')" "['invalid']"
	has "[$tr] with the field and rule" "$dl" "content.status: must be"
	eq "[$tr] malformed JSON too" \
		"$(jget "$dl" 'len([e for e in j if e["reason"]=="invalid" and e["original_inbox"]=="t_raw"])')" 2
	eq "[$tr] a misrouted message, reason misrouted" \
		"$(jget "$dl" '[e["reason"] for e in j if e["message_id"]=="mis_'$tr'_1"]')" "['misrouted']"
	for x in $(jget "$dl" '" ".join(e["file"] for e in j if e["original_inbox"]=="t_raw")'); do
		$MADF delete "$x" >/dev/null
	done

	# --- the operator's retry (to the original inbox, then another) and delete ---
	out=$($MADF retry "$nid"); eq "[$tr] retry of a dead letter" "$out" "retried $nid"
	out=$($MADF show "$nid" --json)
	eq "[$tr] it waits in its original inbox again" "$(jget "$out" 'j["queue"]+" "+j["agent"]')" "inbox t_nack"
	out=$($DRV claim t_nack 30 ack)
	eq "[$tr] and is delivered as a first attempt" "$out" "$nid 0"
	out=$($MADF retry "$rid" --to t_other --new-agent); eq "[$tr] retry --to another inbox" "$out" "retried $rid"
	out=$($MADF recv --new-agent t_other --max 1)
	eq "[$tr] the other inbox gets it, addressed to it" "$(jget "$out" 'j["message_id"]+" "+j["to"]')" "$rid t_other"
	kid=$($MADF send --new-agent --to t_kill --type heartbeat --content "$HB")
	out=$($MADF kill "$kid" --reason "operator test"); eq "[$tr] kill of a waiting message" "$out" "killed $kid"
	out=$($MADF show "$kid" --json)
	eq "[$tr] the killed message is a dead letter with the reason" \
		"$(jget "$out" 'j["reason"]+": "+j["error"]')" "killed: operator test"
	out=$($MADF delete "$kid"); eq "[$tr] delete of a dead letter" "$out" "deleted $kid"
	check_fails "[$tr] a deleted dead letter is gone" 1 $MADF show "$kid"
	qid=$($MADF send --new-agent --to t_rq --type heartbeat --content "$HB")
	$MADF kill "$qid" >/dev/null
	$MADF show "$qid" --json | python3 -c 'import json,sys; m=json.load(sys.stdin)["message"]; m["to"]="t_rq2"; m["content"]["active_tasks"]=7; print(json.dumps(m))' >"$T/edit.$tr.json"
	out=$($MADF requeue "$qid" "$T/edit.$tr.json"); eq "[$tr] requeue of an edited dead letter" "$out" "requeued $qid"
	out=$($MADF recv --new-agent t_rq2 --max 1)
	eq "[$tr] the edited message reaches its new inbox" "$(jget "$out" 'j["message_id"]+" "+str(j["content"]["active_tasks"])')" "$qid 7"
	st=$($MADF status --json)
	eq "[$tr] no dead letters left" "$(jget "$st" 'j["dead_letter"]')" 0

	# --- a consumer killed while it holds a claim loses nothing ---
	hid=$($MADF send --new-agent --to t_hold --type heartbeat --content "$HB")
	$DRV claim t_hold 30 hold >"$T/hold.$tr" &
	hpid=$!
	wait_for "[$tr] the holder claimed the message" 30 grep -q "$hid" "$T/hold.$tr"
	st=$($MADF status --json)
	eq "[$tr] status counts it as processing" \
		"$(jget "$st" '(j["inboxes"]["t_hold"]["depth"], j["inboxes"]["t_hold"]["processing"])')" "(0, 1)"
	kill -9 "$hpid"; wait "$hpid" 2>/dev/null
	out=$($DRV claim t_hold 60 ack)
	eq "[$tr] the claim comes back after the lease, counted as an attempt" "$out" "$hid 1"
	st=$($MADF status --json)
	eq "[$tr] and is gone once acked" "$(jget "$st" 'j["inboxes"]["t_hold"]["processing"]+j["inboxes"]["t_hold"]["depth"]')" 0

	# --- expiry: a message whose timeout passed is dead-lettered (a
	# task_progress: an expired heartbeat is dropped and counted instead) ---
	eid=$($MADF send --new-agent --to t_exp --type task_progress --timeout 1 \
		--content '{"task_id":"t1","percent_complete":50,"current_step":"reading"}')
	sleep 1.5
	eq "[$tr] an expired message is not delivered" "$($MADF recv --new-agent t_exp)" ""
	out=$($MADF show "$eid" --json)
	eq "[$tr] it is a dead letter, reason expired" "$(jget "$out" 'j["reason"]')" expired

	# --- an expired heartbeat: dropped and counted, not a dead letter ---
	st=$($MADF status --json)
	drop0=$(jget "$st" 'j["expired_dropped"]')
	dead0=$(jget "$st" 'j["dead_letter"]')
	did=$($MADF send --new-agent --to t_hbexp --type heartbeat --timeout 1 --content "$HB")
	sleep 1.5
	eq "[$tr] an expired heartbeat is not delivered" "$($MADF recv --new-agent t_hbexp)" ""
	st=$($MADF status --json)
	eq "[$tr] status counts it in expired_dropped, not in dead_letter" \
		"$(jget "$st" '(j["expired_dropped"], j["dead_letter"])')" "($((drop0 + 1)), $dead0)"
	eq "[$tr] and it left the inbox" \
		"$(jget "$st" '(j["inboxes"]["t_hbexp"]["depth"], j["inboxes"]["t_hbexp"]["processing"])')" "(0, 0)"
	out=$($MADF show "$did" --json 2>&1); rc=$?
	eq "[$tr] it is not a dead letter (show finds nothing)" "$rc" 1
	hasnt "[$tr] nor listed with the dead letters" "$($MADF ls dead-letter --json)" "$did"

	# --- broadcast: one copy per agent, the sender left out ---
	ninb=$(jget "$($MADF status --json)" 'len(j["inboxes"])')
	out=$($MADF send --new-agent --to broadcast --from t_basic --type heartbeat --content "$HB" 2>&1); rc=$?
	case $tr in
	# The file bus lets broadcast copies past the inbox limit.
	file) eq "[$tr] broadcast succeeds" "$rc" 0 ;;
	nats) eq "[$tr] broadcast with one inbox full fails" "$rc" 1
	      has "[$tr] naming the full inbox and what reached the others" "$out" \
		"broadcast reached $((ninb - 2)) of $((ninb - 1)) inboxes: inbox of t_full is full" ;;
	esac
	st=$($MADF status --json)
	eq "[$tr] broadcast reaches every inbox but the sender's" \
		"$(jget "$st" '(j["inboxes"]["research_agent_1"]["depth"], j["inboxes"]["validator_agent"]["depth"], j["inboxes"]["t_basic"]["depth"])')" "(1, 1, 0)"

	# --- the console's overview counts, attached ---
	for i in 1 2 3; do $MADF send --new-agent --to t_con --type heartbeat --content "$HB" >/dev/null; done
	printf 'wait-for t_con\n' >"$T/script.$tr"
	$MADF --log-dir "$T/logs" console --attach --script "$T/script.$tr" \
		--dump-screen "$T/screen.$tr" 2>"$T/con.err.$tr"
	eq "[$tr] the console (attached) runs" "$?" 0
	eq "[$tr] its overview shows the inbox depth" \
		"$(awk '$1 == "t_con" { print $3 }' "$T/screen.$tr")" 3

	# --- what differs, said in one line ---
	# the console's delete says where the message goes
	printf '%s\n' 3 : 'type inbox research_agent_1' '<Enter>' 'wait-for inbox of research_agent_1: 1 message' D 'wait-for Delete 1 message' \
		>"$T/script.$tr"
	$MADF --log-dir "$T/logs" console --attach --script "$T/script.$tr" \
		--dump-screen "$T/screen.$tr" 2>"$T/con.err.$tr"
	case $tr in
	file) has "[$tr] the console's delete prompt: into the trash" "$(cat "$T/screen.$tr")" \
		"Delete 1 message (to the trash for 30 days; :trash restores)? y/n" ;;
	nats) has "[$tr] the console's delete prompt: for good, no trash there" "$(cat "$T/screen.$tr")" \
		"Delete 1 message for good (the nats transport has no trash)? y/n" ;;
	esac
	out=$($MADF ls processed 2>&1); rc=$?
	case $tr in
	file) eq "[$tr] ls processed lists processed messages" "$rc" 0 ;;
	nats) has "[$tr] ls processed says it is not supported" "$out" \
		"not supported on the nats transport: the processed queue" ;;
	esac
	out=$($MADF trash ls 2>&1); rc=$?
	case $tr in
	file) eq "[$tr] trash ls lists the trash" "$rc" 0 ;;
	nats) eq "[$tr] trash ls fails there" "$rc" 1
	      has "[$tr] ... saying why in one line" "$out" \
		"not supported on the nats transport: the trash (a delete there is permanent)" ;;
	esac
}

# gc_cases NAME: retention, a day later (after bus_cases, on its leftovers,
# with a reply to the operator, a status message and a task added).
gc_cases() {
	tr=$1
	rid=$($MADF send --new-agent --from validator_agent --to operator --type task_acceptance \
		--content '{"task_id":"t1","status":"accepted","estimated_completion":"2030-01-01T00:00:00Z","agent_capacity":0.5}')
	sid=$($MADF send --new-agent --to t_gc --type system_status \
		--content '{"agent_status":"healthy","cpu_usage_percent":1,"memory_usage_mb":10,"active_tasks":0,"completed_tasks_today":0,"error_count_today":0,"last_successful_operation":"2026-01-01T00:00:00Z","performance_metrics":{}}')
	tid=$($MADF send --new-agent --to t_gc --type task_assignment --content \
		'{"task_type":"market_data","focus_area":"USD/JPY","target_pairs":["USD/JPY"],"timeframe":"1w","data_sources":["ecb"],"deadline":"2030-01-01T00:00:00Z","output_format":"json"}')
	ls=$($MADF ls inbox --json)
	# what each waiting message should become, from its type and inbox
	drop=$(jget "$ls" 'sum(e["type"] in ("heartbeat","system_status") for e in j)')
	read=$(jget "$ls" 'sum(e["type"] not in ("heartbeat","system_status") and e["agent"]=="operator" for e in j)')
	waiting=$(jget "$ls" 'len(j)')
	dead_new=$((waiting - drop - read))
	eq "[$tr] gc cases: the status message and the task wait" \
		"$(jget "$ls" 'sorted(e["type"] for e in j if e["agent"]=="t_gc")')" "['system_status', 'task_assignment']"
	eq "[$tr] gc cases: the reply to the operator waits" "$read" 1
	st=$($MADF status --json)
	dead=$(jget "$st" 'j["dead_letter"]')
	dropped=$(jget "$st" 'j["expired_dropped"]')
	out=$($DRV gc - 25 dry)
	eq "[$tr] gc a day later would drop every heartbeat and status message" \
		"$(echo "$out" | grep -c 'heartbeat or status message waiting over 24 hours, dropped')" "$drop"
	eq "[$tr] would mark the reply to the operator read" \
		"$(echo "$out" | grep -c 'reply to the operator waiting over 24 hours, marked read')" 1
	eq "[$tr] would dead-letter the rest" \
		"$(echo "$out" | grep -c 'waiting over 24 hours, to the dead letters')" "$dead_new"
	st=$($MADF status --json)
	eq "[$tr] a dry run moves nothing" "$(jget "$st" '(j["dead_letter"], j["expired_dropped"])')" "($dead, $dropped)"
	$DRV gc - 25 >/dev/null
	st=$($MADF status --json)
	eq "[$tr] gc a day later empties the inboxes" \
		"$(jget "$st" 'sum(a["depth"] for a in j["inboxes"].values())')" 0
	eq "[$tr] heartbeats and status messages are dropped and counted, not dead letters" \
		"$(jget "$st" 'j["expired_dropped"]')" "$((dropped + drop))"
	eq "[$tr] the rest into the dead letters" "$(jget "$st" 'j["dead_letter"]')" "$((dead + dead_new))"
	dl=$($MADF ls dead-letter --json)
	eq "[$tr] with reason retention: the task only" \
		"$(jget "$dl" 'sorted((e["message_id"], e["reason"]) for e in j if e["original_inbox"] in ("t_gc","t_full","operator"))')" \
		"[('$tid', 'retention')]"
	out=$($MADF show "$rid" 2>&1)
	case $tr in
	file) has "[$tr] the reply to the operator is processed (read)" "$out" "queue:    processed" ;;
	# WorkQueue retention: taken as read, it leaves the stream as an ack does
	nats) has "[$tr] the reply to the operator left the stream (read)" "$out" "no message $rid" ;;
	esac
	out=$($MADF show "$sid" 2>&1)
	has "[$tr] the status message is gone, not a dead letter" "$out" "no message $sid"
	out=$($MADF gc --dry-run); rc=$?
	eq "[$tr] madf gc --dry-run works" "$rc" 0
	has "[$tr] and counts what it would do" "$out" \
		"would do with messages waiting over 24 hours: 0 heartbeats and status messages dropped, 0 replies to the operator marked read, 0 to the dead letters"
}

# run_cases NAME: the weekly workflow (every agent, in one process) on a
# fresh bus of the transport.
run_cases() {
	tr=$1
	mkdir -p "$T/wf-$tr"
	out=$(cd "$T/wf-$tr" && MADF_DATA_DIR=$T/wf-$tr/data MADF_NATS_PREFIX=wf \
		$MADF run weekly --as-of 2026-11-20 2>&1)
	eq "[$tr] run weekly succeeds" "$?" 0
	has "[$tr] every task of the run is done" "$out" "done: 20/20 tasks done, 0 failed"
	check "[$tr] the report is written" test -s "$(echo "$out" | tail -1)"
	out=$(MADF_DATA_DIR=$T/wf-$tr/data MADF_NATS_PREFIX=wf $MADF status --json)
	eq "[$tr] nothing was dead-lettered" "$(jget "$out" 'j["dead_letter"]')" 0
}

# mcp_cases NAME: madf mcp's send_task and queue_status on the transport.
mcp_cases() {
	tr=$1
	printf '%s\n' init \
		'call send_task {"to":"t_mcp","task_type":"market_data","focus_area":"USD/JPY","target_pairs":["USD/JPY"],"priority":"high"}' \
		'call queue_status' | python3 "$TOP/tests/integration/mcp_client.py" \
		--stderr "$T/mcp.$tr.err" -- $MADF mcp >"$T/mcp.$tr.out" 2>"$T/mcp.$tr.cerr"
	eq "[$tr] an mcp session exits 0" "$?" 0
	mid=$(python3 "$TOP/tests/integration/mcp_client.py" pick id=1001 result.structuredContent.message_id <"$T/mcp.$tr.out")
	out=$($MADF show "$mid" --json)
	eq "[$tr] send_task's message waits in the inbox, high" \
		"$(jget "$out" 'j["queue"]+" "+j["agent"]+" "+j["priority"]')" "inbox t_mcp high"
	st=$(python3 "$TOP/tests/integration/mcp_client.py" pick id=1002 result.structuredContent <"$T/mcp.$tr.out")
	eq "[$tr] queue_status counts it" "$(jget "$st" 'j["inboxes"]["t_mcp"]["depth"]')" 1
}

# --- the file bus ---------------------------------------------------------
export MADF_DATA_DIR=$T/data-file MADF_BUS=file:
bus_cases file
mcp_cases file

# --- NATS JetStream ---------------------------------------------------------
nats_start
export MADF_DATA_DIR=$T/data-nats MADF_BUS=$NATS_URL
bus_cases nats
mcp_cases nats
hasnt "nats: nothing was written to the data directory's messages" \
	"$(find "$T/data-nats/messages" -name '*.json' 2>/dev/null)" ".json"

# --- selection: --bus, bad URLs, credentials never shown ------------------------
unset MADF_BUS
out=$($MADF --bus "$NATS_URL" status --json)
eq "--bus selects NATS (the 1000 are there)" "$(jget "$out" 'j["inboxes"]["t_full"]["depth"]')" 1000
out=$(MADF_BUS=$NATS_URL MADF_NATS_PREFIX=other $MADF status --json)
eq "MADF_NATS_PREFIX keeps another installation apart" "$(jget "$out" '"t_full" in j["inboxes"]')" False
out=$(cd "$T" && printf 'BUS_URL=%s\n' "$NATS_URL" >.env && $MADF status --json)
eq "BUS_URL in .env selects NATS" "$(jget "$out" 'j["inboxes"]["t_full"]["depth"]')" 1000
rm -f "$T/.env"
out=$($MADF --bus "ftp://x" status 2>&1); rc=$?
eq "an unknown scheme fails" "$rc" 1
has "and says which schemes exist" "$out" 'unknown bus URL scheme "ftp": use file: or nats://'
out=$($MADF --bus "madfuser:s3cretPassw0rd@127.0.0.1:4222" status 2>&1); rc=$?
eq "a URL without a scheme fails" "$rc" 1
has "saying what a bus URL is" "$out" "invalid bus URL: use file: or nats://"
hasnt "without echoing its user" "$out" "madfuser"
port=${NATS_URL##*:}
out=$($MADF --bus "nats://madfuser:s3cretPassw0rd@127.0.0.1:1" status 2>&1); rc=$?
eq "an unreachable server fails" "$rc" 1
has "and the error names the server" "$out" "cannot connect to the NATS bus at nats://127.0.0.1:1"
hasnt "the password is never printed" "$out" "s3cretPassw0rd"
hasnt "nor the user" "$out" "madfuser"

# --- a server that wants a user and password --------------------------------
plain=$NATS_URL
NATS_EXTRA='authorization { user: madfuser, password: "s3cretPassw0rd" }' nats_start
authed=nats://madfuser:s3cretPassw0rd@${NATS_URL#nats://}
out=$($MADF --bus "$authed" send --new-agent --to t_auth --type heartbeat --content "$HB" 2>&1)
eq "the URL's user and password log in" "$(echo "$out" | cut -c1-9)" "operator_"
out=$($MADF --bus "$authed" ls inbox t_auth 2>&1)
hasnt "ls does not show the password" "$out" "s3cretPassw0rd"
out=$($MADF --bus "${authed%%@*}x@${authed#*@}" status 2>&1); rc=$?
eq "a wrong password fails" "$rc" 1
has "saying why" "$out" "Authorization"
hasnt "without showing the password tried" "$out" "s3cretPassw0rdx"
hasnt "or the user" "$out" "madfuser"
out=$($MADF --bus "$NATS_URL" status 2>&1); rc=$?
eq "no password fails too" "$rc" 1
NATS_URL=$plain

# --- retention, on each ---------------------------------------------------
export MADF_DATA_DIR=$T/data-file MADF_BUS=file:
gc_cases file
export MADF_DATA_DIR=$T/data-nats MADF_BUS=$NATS_URL
gc_cases nats

# --- the weekly run, on each ----------------------------------------------------
MADF_BUS=file: run_cases file
MADF_BUS=$NATS_URL run_cases nats
done_testing
