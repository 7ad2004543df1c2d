# The NATS transport on a 3-node JetStream cluster on 127.0.0.1 (three
# nats-server processes with routes, streams with MADF_NATS_REPLICAS=3).
# The leader of the inbox stream is killed with SIGKILL while a sender and
# consumers run: every send that was acknowledged is received (none lost),
# and delivery resumes on a new leader.
. tests/integration/lib.sh
. tests/integration/nats.sh

DRV=
for _d in "${UNIT_DIR:-}" "$(dirname "$MADF")/tests" "$TOP/build/san/tests" "$TOP/build/rel/tests"; do
	if [ -n "$_d" ] && [ -x "$_d/bus_driver" ]; then DRV=$_d/bus_driver; break; fi
done
_ns=$(command -v nats-server || { [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server; })
if [ -z "$DRV" ] || [ -z "$_ns" ]; then
	fail "the bus driver is built (make testbins) and nats-server installed (make deps)"
	done_testing
	exit 1
fi

# --- three nodes, every port distinct ---
set -- $(python3 -c '
import socket
ss = [socket.socket() for _ in range(6)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
cport1=$1 cport2=$2 cport3=$3 rport1=$4 rport2=$5 rport3=$6
routes="nats://127.0.0.1:$rport1, nats://127.0.0.1:$rport2, nats://127.0.0.1:$rport3"
for n in 1 2 3; do
	eval cp=\$cport$n rp=\$rport$n
	mkdir -p "$T/n$n/store"
	cat >"$T/n$n/server.conf" <<EOC
server_name: n$n
listen: 127.0.0.1:$cp
max_payload: 16MB
jetstream { store_dir: "$T/n$n/store" }
cluster { name: madf_test, listen: 127.0.0.1:$rp, routes: [$routes] }
EOC
	"$_ns" -c "$T/n$n/server.conf" >"$T/n$n/server.log" 2>&1 &
	eval pid$n=$!
	nats_pids="$nats_pids $!"
done
trap 'for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT

export MADF_BUS="nats://127.0.0.1:$cport1,127.0.0.1:$cport2,127.0.0.1:$cport3"
export MADF_NATS_REPLICAS=3 MADF_DATA_DIR=$T/data
export MADF_LEASE_S=3 MAX_RETRY_ATTEMPTS=3 MADF_RETRY_BASE_MS=50 MADF_RETRY_MAX_MS=200
A=cl
# The cluster is formed when JetStream can place three replicas: until
# then the streams cannot be created (no suitable peers).
ok=no
for _ in $(seq 1 150); do
	if $DRV send-seq $A pre 1 >"$T/pre.out" 2>&1 && grep -qx 'sent 1' "$T/pre.out"; then ok=yes; break; fi
	sleep 0.2
done
eq "the 3-node cluster forms and takes a message on an R3 stream" "$ok" yes
eq "the inbox stream has three replicas" \
	"$(nats_stream_state "$MADF_BUS" madf_in_$A 'r["config"]["num_replicas"], 1 + len(r["cluster"].get("replicas", []))')" "(3, 3)"
eq "and so has the dead-letter stream" \
	"$(nats_stream_state "$MADF_BUS" madf_dlq 'r["config"]["num_replicas"]')" 3

# --- sends and receives run; the stream leader is killed -------------------
N=600
$DRV send-seq $A s $N >"$T/send.out" 2>&1 & sender=$!
# Consumers one after another: one that loses its server mid-claim fails and
# the next one carries on (until, the sender done, 3 runs find nothing).
( idle=0; i=0
  while [ $idle -lt 3 ] && [ $i -lt 200 ]; do
	$MADF recv --new-agent $A --wait 1 >"$T/out.$i" 2>>"$T/recv.err"
	if [ -s "$T/out.$i" ] || kill -0 $sender 2>/dev/null; then idle=0; else idle=$((idle + 1)); fi
	i=$((i + 1))
  done ) & receiver=$!

# Kill the leader once both run with messages flowing.
for _ in $(seq 1 100); do
	[ "$(cat "$T"/out.* 2>/dev/null | wc -l)" -ge 50 ] && break
	sleep 0.05
done
echo "# $(cat "$T"/out.* 2>/dev/null | wc -l) received, $(ls "$T"/out.* 2>/dev/null | wc -l) runs"
leader=$(nats_stream_state "$MADF_BUS" madf_in_$A 'r["cluster"]["leader"]')
case $leader in n1|n2|n3) ;; *) fail "the stream has a leader" "$leader" ;; esac
eval lpid=\$pid${leader#n}
kill -9 "$lpid"
wait "$lpid" 2>/dev/null
before=$(cat "$T"/out.* 2>/dev/null | wc -l)
echo "# killed $leader (the stream leader) after $before messages were received"

wait $sender
sent=$(sed -n 's/^sent //p' "$T/send.out")
echo "# sender: $(tr '\n' ' ' <"$T/send.out")"
eq "every send was acknowledged (retried through the election)" "$sent" "$N"
wait $receiver

live=
for n in 1 2 3; do [ "n$n" != "$leader" ] && { eval live=nats://127.0.0.1:\$cport$n; break; }; done
new=$(nats_stream_state "$live" madf_in_$A 'r["cluster"]["leader"]')
eq "a new leader took over" "$([ "$new" != "$leader" ] && case $new in n[123]) echo yes;; esac)" yes

# Every acknowledged send received (or, if a consumer died holding it three
# times, dead-lettered): none lost.
cat "$T"/out.* | grep -o '"message_id":"s_[0-9]*"' | sed 's/"message_id":"\(.*\)"/\1/' | sort -u >"$T/got.ids"
dl=$($MADF ls dead-letter --json 2>&1)
printf '%s' "$dl" | python3 -c 'import json,sys; [print(e["message_id"]) for e in json.load(sys.stdin)]' >>"$T/got.ids" 2>&1
i=0; : >"$T/acked.ids"
while [ $i -lt "${sent:-0}" ]; do printf 's_%06d\n' $i >>"$T/acked.ids"; i=$((i + 1)); done
missing=$(sort -u "$T/got.ids" | comm -13 - "$T/acked.ids" | wc -l | tr -d ' ')
eq "no acknowledged send is lost" "$missing" 0
eq "none received that was not sent" "$(sort -u "$T/got.ids" | comm -23 - "$T/acked.ids" | grep -vc '^pre_')" 0
after=$(( $(cat "$T"/out.* | wc -l) - before ))
eq "delivery resumed after the kill" "$([ "$after" -gt 0 ] && echo yes || echo "no: $after")" yes
st=$(nats_stream_state "$live" madf_in_$A)
eq "the inbox is empty on the new leader" "${st#* }" 0
sed "s/^/# recv: /" "$T/recv.err" | head -5
echo "# $(cat "$T"/out.* | wc -l | tr -d ' ') deliveries printed for $(grep -c . "$T/got.ids") messages; recv errors: $(wc -l <"$T/recv.err")"
done_testing
