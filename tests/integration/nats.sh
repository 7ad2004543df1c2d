# nats_start: starts a JetStream nats-server of its own for one test, on
# 127.0.0.1 with a free random port, a temporary store and the max_payload
# that 10 MB messages need; sets $NATS_URL and $nats_pid and stops the
# server when the test ends. Source after lib.sh. Ends the test failed
# (never skipped) when the server is missing or does not answer. Lines in
# $NATS_EXTRA are added to the server's configuration. Each call starts one
# more server.
nats_pids=
nats_start() {
	_ns=$(command -v nats-server || { [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server; })
	if [ -z "$_ns" ]; then
		fail "nats-server is installed (make deps installs it)"
		done_testing
		exit 1
	fi
	_n=$(( $(echo $nats_pids | wc -w) + 1 ))
	_dir=$T/nats$_n
	mkdir -p "$_dir/store"
	_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cat >"$_dir/server.conf" <<EOC
listen: 127.0.0.1:$_port
server_name: madf_test_$_n
max_payload: 16MB
jetstream { store_dir: "$_dir/store" }
${NATS_EXTRA:-}
EOC
	"$_ns" -c "$_dir/server.conf" >"$_dir/server.log" 2>&1 &
	nats_pid=$!
	nats_pids="$nats_pids $nats_pid"
	trap 'for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
	NATS_URL=nats://127.0.0.1:$_port
	for _ in $(seq 1 200); do
		grep -q "Server is ready" "$_dir/server.log" 2>/dev/null && return 0
		kill -0 "$nats_pid" 2>/dev/null || break
		sleep 0.05
	done
	fail "nats-server starts on port $_port" "$(tail -5 "$_dir/server.log")"
	done_testing
	exit 1
}

# nats_cluster_start: starts a 3-node JetStream cluster of its own (three
# nats-servers on 127.0.0.1, routes between them, every port distinct,
# stores and logs in $T/n1..n3); sets $NATS_CLUSTER_URL (the three
# servers), $cport1..3 (client ports) and $pid1..3, and stops them when the
# test ends. The cluster takes 3-replica streams once its nodes have met:
# wait for that (madf with MADF_NATS_REPLICAS=3 opens the bus then).
nats_cluster_start() {
	_ns=$(command -v nats-server || { [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server; })
	if [ -z "$_ns" ]; then
		fail "nats-server is installed (make deps installs it)"
		done_testing
		exit 1
	fi
	set -- $(python3 -c '
import socket
ss = [socket.socket() for _ in range(6)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
	cport1=$1 cport2=$2 cport3=$3 rport1=$4 rport2=$5 rport3=$6
	_routes="nats://127.0.0.1:$rport1, nats://127.0.0.1:$rport2, nats://127.0.0.1:$rport3"
	for _n in 1 2 3; do
		eval _cp=\$cport$_n _rp=\$rport$_n
		mkdir -p "$T/n$_n/store"
		cat >"$T/n$_n/server.conf" <<EOC
server_name: n$_n
listen: 127.0.0.1:$_cp
max_payload: 16MB
jetstream { store_dir: "$T/n$_n/store" }
cluster { name: madf_test, listen: 127.0.0.1:$_rp, routes: [$_routes] }
EOC
		"$_ns" -c "$T/n$_n/server.conf" >"$T/n$_n/server.log" 2>&1 &
		eval pid$_n=$!
		nats_pids="$nats_pids $!"
	done
	trap 'for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
	NATS_CLUSTER_URL="nats://127.0.0.1:$cport1,127.0.0.1:$cport2,127.0.0.1:$cport3"
}

# nats_stream_state URL STREAM [EXPR]: prints "LAST_SEQ MSGS" of a JetStream
# stream, asked over the NATS protocol ($JS.API.STREAM.INFO), or EXPR of
# the reply r (a Python expression: r["cluster"]["leader"]), or "error ...".
# nats_consumer_state URL STREAM CONSUMER EXPR: EXPR of the consumer's
# information ($JS.API.CONSUMER.INFO), or "error ...".
nats_stream_state() {
	_nats_info "$1" "STREAM.INFO.$2" "${3:-}"
}
nats_consumer_state() {
	_nats_info "$1" "CONSUMER.INFO.$2.$3" "$4"
}
_nats_info() {
	python3 - "$1" "$2" "${3:-}" <<'EOP'
import json, socket, sys
host, port = sys.argv[1].split("//")[1].split(",")[0].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=10)
f = s.makefile("rb")
f.readline()  # INFO
s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.madf_t 1\r\n'
          b"PUB $JS.API." + sys.argv[2].encode() + b" _INBOX.madf_t 0\r\n\r\n")
while True:
    line = f.readline()
    if not line:
        print("error: no reply"); sys.exit(1)
    if line.startswith(b"PING"):
        s.sendall(b"PONG\r\n")
    elif line.startswith(b"MSG "):
        n = int(line.split()[-1])
        r = json.loads(f.read(n + 2)[:n])
        if "error" in r:
            print("error", r["error"].get("description", "?")); sys.exit(1)
        if sys.argv[3]:
            print(eval(sys.argv[3]))
        else:
            print(r["state"]["last_seq"], r["state"]["messages"])
        break
EOP
}
