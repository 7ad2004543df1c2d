# madf bench bus --bus nats://...: in one run the file bus, then madf on
# NATS beside a raw libnats publish-then-fetch of the same message size,
# memory and file storage; every figure over runs where every message
# arrived (the two bench processes start at the same moment: their reply
# subjects must not collide). The figures themselves are not asserted
# (machines are noisy); that they exist and count every message is. Then
# on a 3-node cluster: its figures beside the single node's.
. tests/integration/lib.sh
. tests/integration/nats.sh
nats_start
out=$($MADF bench bus --bus "$NATS_URL" --messages 300 --repeat 1 --json 2>"$T/err"); rc=$?
eq "bench bus on NATS exits 0" "$rc" 0
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
j() { printf '%s' "$out" | python3 -c "import json,sys; j=json.load(sys.stdin); print($1)" 2>&1; }
eq "one JSON document: the file bus's figures" "$(j '(j["messages"], j["msgs_per_s"] > 0)')" "(300, True)"
eq "the message size madf and raw libnats share" "$(j 'j["nats"]["message_bytes"] > 200')" True
for st in memory file; do
	eq "$st storage: madf received every message" "$(j "j['nats']['single']['$st']['received']")" 300
	eq "$st storage: madf and raw figures, p50 <= p99" \
		"$(j "[(c['madf_msgs_per_s'] > 0, c['raw_msgs_per_s'] > 0, c['madf_p50_ms'] <= c['madf_p99_ms'], c['raw_p50_ms'] <= c['raw_p99_ms']) for c in [j['nats']['single']['$st']]]")" \
		"[(True, True, True, True)]"
done
eq "one server: no cluster figures" "$(j '"cluster" in j["nats"]')" False
out=$($MADF bench bus --bus "$NATS_URL" --messages 200 --repeat 1 2>&1)
has "text: the memory storage row" "$out" "memory storage, madf"
has "text: the raw libnats row" "$out" "file storage, raw libnats"
has "text: every message counted" "$out" "every message arrived in every run (200 of 200)"
has "text: what durable means" "$out" "a power loss up to that interval on one node"

# --bus with three servers: a 3-node cluster's figures beside the single
# node's (the first server alone), 3 replicas
nats_cluster_start
formed() { MADF_NATS_REPLICAS=3 MADF_BUS=$NATS_CLUSTER_URL $MADF status >/dev/null 2>&1; }
wait_for "the 3-node cluster forms" 60 formed
out=$($MADF bench bus --bus "$NATS_CLUSTER_URL" --messages 200 --repeat 1 --json 2>"$T/err"); rc=$?
eq "bench bus on the cluster exits 0" "$rc" 0
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
eq "three servers named" "$(j 'j["nats"]["servers"]')" 3
for topo in single cluster; do
	for st in memory file; do
		eq "$topo, $st storage: madf received every message, figures for madf and raw" \
			"$(j "[(c['received'], c['madf_msgs_per_s'] > 0, c['raw_msgs_per_s'] > 0, c['madf_p50_ms'] <= c['madf_p99_ms']) for c in [j['nats']['$topo']['$st']]]")" \
			"[(200, True, True, True)]"
	done
done
out=$($MADF bench bus --bus "$NATS_CLUSTER_URL" --messages 100 --repeat 1 2>&1)
has "text: the single node's rows" "$out" "one node (1 replica)"
has "text: the cluster's rows beside them" "$out" "cluster (3 replicas)"
eq "text: a madf row for each storage on each" "$(printf '%s\n' "$out" | grep -c 'storage, madf ')" 4
done_testing
