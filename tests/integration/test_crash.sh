# Consumers killed with SIGKILL at random moments while thousands of
# messages flow. Afterwards every message is in processed/ or dead-letter/
# exactly once, none lost, none corrupted, and every acked message printed.
. tests/integration/lib.sh
A=crash
export MADF_INBOX_LIMIT=100000 # more than the default 1000 wait at once here
R=15      # rounds: each adds B messages, starts two consumers, kills them
B=900
N=$((R * B))
# More arrive while consumers die: a sender in the background.
( i=0; while [ $i -lt 150 ]; do
	$MADF send --new-agent --to $A --type heartbeat --content "{\"status\":\"busy\",\"uptime_seconds\":1,\"active_tasks\":0,\"sequence\":$i}" >>"$T/sent.ids" 2>>"$T/send.err" || echo "send failed" >>"$T/send.err"
	i=$((i + 1))
done ) &
sender=$!

rnd_ms() { echo $(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % $1 + $2 )); }
round=0
while [ $round -lt $R ]; do
	python3 tests/integration/gen_messages.py "$D" $A $B "r$round"
	# Each consumer writes into a slow reader: it is mostly blocked on its
	# output, holding a claim, when it is killed.
	mkfifo "$T/f.$round.a" "$T/f.$round.b"
	python3 tests/integration/slow_reader.py <"$T/f.$round.a" >"$T/out.$round.a" & r1=$!
	python3 tests/integration/slow_reader.py <"$T/f.$round.b" >"$T/out.$round.b" & r2=$!
	$MADF recv $A --wait 1 >"$T/f.$round.a" 2>>"$T/recv.err" & p1=$!
	$MADF recv $A --wait 1 >"$T/f.$round.b" 2>>"$T/recv.err" & p2=$!
	ms=$(rnd_ms 300 20)
	sleep "$(echo "$ms" | awk '{printf "%.3f", $1/1000}')"
	kill -9 $p1 2>/dev/null
	ms=$(rnd_ms 100 1)
	sleep "$(echo "$ms" | awk '{printf "%.3f", $1/1000}')"
	kill -9 $p2 2>/dev/null
	wait $p1 $p2 $r1 $r2 2>/dev/null
	round=$((round + 1))
done
wait $sender
eq "every background send succeeded" "$(cat "$T/send.err" 2>/dev/null | wc -l | tr -d ' ')" 0
# Drain: dead consumers' claims are recovered and delivered (or dead-lettered).
i=0
while [ $i -lt 20 ]; do
	$MADF recv $A --wait 0.5 >"$T/out.final.$i" 2>>"$T/recv.err"
	left=$(( $(njson "$D/messages/inbox/$A") + $(ls "$D/messages/processing/$A" | wc -l) + $(ls "$D/messages/retry/$A" | wc -l) ))
	[ "$left" -eq 0 ] && break
	i=$((i + 1))
done
eq "nothing left waiting, claimed or retrying" "$left" 0

# Every id, from the file names: P.T.ID.A.json
ids_of() { find "$@" -name '*.json' ! -name '*.reason.json' | sed 's|.*/[0-3]\.[0-9]*\.\(.*\)\.[0-9]*\.json$|\1|'; }
ids_of "$D/messages/processed" > "$T/processed.ids"
ids_of "$D/messages/dead-letter" > "$T/dead.ids"
sort "$T/processed.ids" "$T/dead.ids" > "$T/all.ids"
total=$((N + 150))
eq "every message is accounted for" "$(sort -u "$T/all.ids" | wc -l | tr -d ' ')" "$total"
eq "no message is in processed/ or dead-letter/ twice" "$(uniq -d "$T/all.ids" | wc -l | tr -d ' ')" 0
( r=0; while [ $r -lt $R ]; do i=0; while [ $i -lt $B ]; do printf 'r%d_%06d\n' $r $i; i=$((i + 1)); done; r=$((r + 1)); done; cat "$T/sent.ids" ) | sort > "$T/expected.ids"
eq "exactly the sent ids, none lost" "$(sort -u "$T/all.ids" | cmp - "$T/expected.ids" && echo same)" "same"
# None corrupted: every stored message still validates.
bad=0
for f in $(find "$D/messages/processed" -name '*.json' | head -400); do
	$MADF validate "$f" >/dev/null 2>&1 || bad=$((bad + 1))
done
eq "processed messages are intact (validate)" "$bad" 0
# Every acked message was printed by some consumer.
cat "$T"/out.* | grep -o '"message_id":"[^"]*"' | sed 's/"message_id":"\(.*\)"/\1/' | sort -u > "$T/printed.ids"
eq "every acked message was printed" "$(sort -u "$T/processed.ids" | comm -23 - "$T/printed.ids" | wc -l | tr -d ' ')" 0
dead=$(wc -l < "$T/dead.ids" | tr -d ' ')
again=$(find "$D/messages/processed" -name '*.[1-9].json' | wc -l | tr -d ' ')
echo "# $again messages were delivered again after their consumer was killed"
echo "# $dead dead letters (claimed by a killed consumer 3 times), $(wc -l < "$T/processed.ids" | tr -d ' ') processed"
if [ "$dead" -gt 0 ]; then
	has "dead letters say the consumer died" "$(cat "$D"/messages/dead-letter/*.reason.json)" "died while handling"
fi
done_testing
