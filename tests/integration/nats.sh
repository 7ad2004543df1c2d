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
