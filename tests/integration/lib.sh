# Shared helpers for the integration tests: TAP-like "ok"/"not ok" lines
# that tests/run.sh counts. Each test gets a fresh data directory.
set -u
MADF=${MADF_BIN:-$(pwd)/madf}
TOP=$(pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/madf-test.XXXXXX")
D=$T/data
export MADF_DATA_DIR=$D
export MADF_NO_FSYNC=1
export LOG_DIR=$T/logs
unset MESSAGE_DIR 2>/dev/null || true
# A model configured in the caller's environment must not switch the tests
# to LLM mode: the tests that want it say so themselves.
unset ANTHROPIC_API_KEY OPENAI_API_KEY MADF_LLM 2>/dev/null || true
n_ok=0 n_fail=0
cleanup() { rm -rf "$T"; }
trap cleanup EXIT
# serve WHAT CMD...: starts a test server of ours in the background (it
# prints its port on stdout's first line, its errors go to $T/serve.err);
# sets $port and $server_pid, stops it when the test ends, and ends the
# test failed when no port comes.
serve() {
	_what=$1; shift
	# gone first: the previous server's port must not be read before the
	# new one's redirection empties the file (a race under load)
	rm -f "$T/serve.port"
	"$@" >"$T/serve.port" 2>"$T/serve.err" &
	server_pid=$!
	trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; cleanup' EXIT
	port=
	for _ in $(seq 1 200); do
		port=$(head -1 "$T/serve.port" 2>/dev/null)
		[ -n "$port" ] && break
		sleep 0.05
	done
	if [ -z "$port" ]; then
		fail "$_what starts" "$(cat "$T/serve.err")"
		done_testing
		exit 1
	fi
}

ok() { n_ok=$((n_ok + 1)); echo "ok - $1"; }
fail() { n_fail=$((n_fail + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

# check DESC CMD...: passes when CMD exits 0.
check() { d=$1; shift; if out=$("$@" 2>&1); then ok "$d"; else fail "$d" "command: $*" "output: $out"; fi; }
# check_fails DESC CODE CMD...: passes when CMD exits with CODE.
check_fails() {
	d=$1 code=$2; shift 2
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" -eq "$code" ]; then ok "$d"; else fail "$d" "expected exit $code, got $rc" "command: $*" "output: $out"; fi
}
# eq DESC ACTUAL EXPECTED
eq() { if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected: $3" "actual:   $2"; fi; }
# has DESC HAYSTACK NEEDLE
has() { case "$2" in *"$3"*) ok "$1" ;; *) fail "$1" "expected to contain: $3" "actual: $2" ;; esac; }
hasnt() { case "$2" in *"$3"*) fail "$1" "expected not to contain: $3" "actual: $2" ;; *) ok "$1" ;; esac; }
# count files matching *.json (not sidecars) in a directory
njson() { find "$1" -maxdepth 1 -name '*.json' ! -name '*.reason.json' 2>/dev/null | wc -l | tr -d ' '; }
# wait_for DESC SECONDS CMD...: polls CMD until it succeeds.
wait_for() {
	d=$1 s=$2; shift 2
	end=$(( $(date +%s) + s ))
	while [ "$(date +%s)" -le "$end" ]; do
		if "$@" >/dev/null 2>&1; then ok "$d"; return 0; fi
		sleep 0.05
	done
	fail "$d" "timed out after ${s}s: $*"
}
# bg_port NAME CMD...: runs CMD in the background (it prints its port on
# stdout's first line: madf serve, the replay server), adds its pid to
# $PIDS, sets $bport and $bpid; NAME names $T/NAME.port and $T/NAME.err.
bg_port() {
	_n=$1; shift
	"$@" >"$T/$_n.port" 2>"$T/$_n.err" &
	bpid=$!
	PIDS="$PIDS $bpid"
	bport=
	for _ in $(seq 1 600); do bport=$(head -1 "$T/$_n.port" 2>/dev/null); [ -n "$bport" ] && break; sleep 0.05; done
	[ -n "$bport" ] || fail "$_n starts" "$(cat "$T/$_n.err")"
}
# sid_of FILE: the sessionId of the SSE stream saved in FILE (its first event)
sid_of() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\n")[0][6:])["data"]["sessionId"])' "$1"; }
# test_helper NAME: the path of the helper program NAME (tests/helpers/,
# built by make testbins beside the unit tests); false when not built.
test_helper() {
	for _d in "${UNIT_DIR:-}" "$(dirname "$MADF")/tests" "$TOP/build/san/tests" "$TOP/build/rel/tests"; do
		if [ -n "$_d" ] && [ -x "$_d/$1" ]; then echo "$_d/$1"; return 0; fi
	done
	return 1
}
done_testing() { echo "# $n_ok passed, $n_fail failed"; [ "$n_fail" -eq 0 ]; }
