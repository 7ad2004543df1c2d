# test_crash.sh on the NATS transport: consumers killed with SIGKILL at
# random moments while 3,000 messages flow through a nats-server of this
# test's own. Afterwards the inbox stream is empty, every message was
# either acknowledged (printed by a consumer) or dead-lettered, exactly the
# sent ids and none twice in the dead letters, and every printed message is
# intact (valid, its content's sequence the number in its id).
. tests/integration/lib.sh
. tests/integration/nats.sh

DRV=$(test_helper bus_driver) || { fail "the bus driver is built (make testbins)"; done_testing; exit 1; }

jget() { printf '%s' "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)" 2>&1; }

nats_start
export MADF_BUS=$NATS_URL MADF_DATA_DIR=$T/data-nats
# A killed consumer's claim comes back after the lease (the ack wait).
export MADF_LEASE_S=2 MAX_RETRY_ATTEMPTS=3 MADF_RETRY_BASE_MS=50 MADF_RETRY_MAX_MS=200
export MADF_INBOX_LIMIT=10000 # all 3,000 may wait at once
A=crashn
R=4     # rounds: each adds B messages, starts two consumers, kills them
B=600
BG=600  # and more arrive while consumers die: a sender in the background
N=$((R * B + BG))

rnd_ms() { echo $(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % $1 + $2 )); }
nap() { sleep "$(echo "$1" | awk '{printf "%.3f", $1/1000}')"; }
$DRV send-seq $A bg $BG >"$T/send.bg" 2>&1 & sender=$!
: >"$T/send.out"
round=0
while [ $round -lt $R ]; do
	$DRV send-seq $A "r$round" $B >>"$T/send.out" 2>&1
	# Each consumer writes into a slow reader: it is mostly blocked on its
	# output, holding a claim, when it is killed.
	mkfifo "$T/f.$round.a" "$T/f.$round.b"
	python3 tests/integration/slow_reader.py <"$T/f.$round.a" >"$T/out.$round.a" & r1=$!
	python3 tests/integration/slow_reader.py <"$T/f.$round.b" >"$T/out.$round.b" & r2=$!
	$MADF recv --new-agent $A --wait 1 >"$T/f.$round.a" 2>>"$T/recv.err" & p1=$!
	$MADF recv --new-agent $A --wait 1 >"$T/f.$round.b" 2>>"$T/recv.err" & p2=$!
	# the kill comes at a random moment once both consumers deliver (a
	# sanitizer build on a busy machine can take longer than the nap to
	# connect); bounded: 10 s at most
	i=0
	while [ $i -lt 200 ] && ! { [ -s "$T/out.$round.a" ] && [ -s "$T/out.$round.b" ]; }; do
		sleep 0.05; i=$((i + 1))
	done
	nap "$(rnd_ms 300 20)"
	kill -9 $p1 2>/dev/null
	nap "$(rnd_ms 100 1)"
	kill -9 $p2 2>/dev/null
	wait $p1 $p2 2>/dev/null
	# the claims the killed consumers held (their leases still running)
	jget "$($MADF status --json)" 'j["inboxes"]["'$A'"]["processing"]' >>"$T/held"
	wait $r1 $r2 2>/dev/null
	round=$((round + 1))
done
wait $sender
held=$(awk '{ n += $1 } END { print n + 0 }' "$T/held")
echo "# $held claims held by killed consumers, over the rounds"
eq "the kills hit consumers holding claims" "$([ "$held" -ge 1 ] && echo yes || echo "no: $(tr '\n' ' ' <"$T/held")")" yes
eq "every send succeeded" "$(cat "$T/send.out" "$T/send.bg")" \
	"$(printf 'sent %s\n' $(seq 1 $R | sed "s/.*/$B/") $BG)"

# Drain: the dead consumers' claims come back after the lease and are
# delivered (or dead-lettered). Until nothing waits, is claimed or retries.
i=0
while [ $i -lt 30 ]; do
	$MADF recv --new-agent $A --wait 1 >"$T/out.final.$i" 2>>"$T/recv.err"
	st=$($MADF status --json)
	left=$(jget "$st" 'j["inboxes"]["'$A'"]["depth"] + j["inboxes"]["'$A'"]["processing"] + j["inboxes"]["'$A'"]["retry"]')
	[ "$left" = 0 ] && break
	i=$((i + 1))
done
eq "nothing left waiting, claimed or retrying" "$left" 0
eq "no consumer failed (other than by the kills)" "$(cat "$T/recv.err")" ""

# The printed messages: intact, each the content it was sent with.
cat "$T"/out.* >"$T/printed"
bad=$(python3 - "$T/printed" <<'EOF'
import json, re, sys
bad = 0
for line in open(sys.argv[1]):
    try:
        m = json.loads(line)
        n = int(re.fullmatch(r"(?:r\d+|bg)_(\d{6})", m["message_id"]).group(1))
        if m["content"]["sequence"] != n or m["type"] != "heartbeat":
            bad += 1
    except Exception:
        bad += 1
print(bad)
EOF
)
eq "every printed message is intact (its sequence matches its id)" "$bad" 0
head -1 "$T/printed" >"$T/one.json"
$MADF validate "$T/one.json" >/dev/null 2>&1; rc=$?
eq "a printed message validates" "$rc" 0
grep -o '"message_id":"[^"]*"' "$T/printed" | sed 's/"message_id":"\(.*\)"/\1/' | sort -u >"$T/printed.ids"

dl=$($MADF ls dead-letter --json)
jget "$dl" '"\n".join(e["message_id"] for e in j if e["original_inbox"] == "'$A'")' | sed '/^$/d' | sort >"$T/dead.ids"
eq "no message is dead-lettered twice" "$(uniq -d "$T/dead.ids" | wc -l | tr -d ' ')" 0
( r=0; while [ $r -lt $R ]; do i=0; while [ $i -lt $B ]; do printf 'r%d_%06d\n' $r $i; i=$((i + 1)); done; r=$((r + 1)); done
  i=0; while [ $i -lt $BG ]; do printf 'bg_%06d\n' $i; i=$((i + 1)); done ) | sort >"$T/expected.ids"
sort -u "$T/printed.ids" "$T/dead.ids" >"$T/all.ids"
eq "every message acked or dead-lettered: exactly the sent ids, none lost" \
	"$(cmp "$T/all.ids" "$T/expected.ids" >/dev/null && echo same || echo "$(comm -13 "$T/all.ids" "$T/expected.ids" | wc -l) missing, $(comm -23 "$T/all.ids" "$T/expected.ids" | wc -l) extra")" "same"
# Each message was stored once (the stream's sequences) and has left it.
st=$(nats_stream_state "$NATS_URL" "madf_in_$A")
eq "the inbox stream stored each message once and holds none now" "$st" "$N 0"
dead=$(wc -l <"$T/dead.ids" | tr -d ' ')
again=$(( $(wc -l <"$T/printed") - $(wc -l <"$T/printed.ids") ))
echo "# $(cat "$T"/out.[0-9]* | wc -l | tr -d ' ') printed before the kills, $(cat "$T"/out.final.* | wc -l | tr -d ' ') in the drain"
echo "# $again deliveries printed again after their consumer was killed"
echo "# $dead dead letters, $(wc -l <"$T/printed.ids" | tr -d ' ') distinct messages printed"
if [ "$dead" -gt 0 ]; then
	has "dead letters say the lease ran out" "$(jget "$dl" '" ".join(e.get("reason","") for e in j)')" "max_attempts"
fi
done_testing
