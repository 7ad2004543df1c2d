# TLS and credentials on the NATS transport, against real nats-servers of
# this test's own: a user and password in the URL (percent-encoded ones
# with '@', ':' and '%' too, and malformed escapes), a token in the URL, a
# credentials file (NATS_CREDS: operator, account and user JWTs made here),
# and tls:// with the CA in NATS_CA (certificates made here with openssl).
# Wrong secrets and a wrong CA fail in one clear line; no secret reaches
# any output, log or file of the data directory.
. tests/integration/lib.sh
. tests/integration/nats.sh

HB='{"status":"idle","uptime_seconds":0,"active_tasks":0}'
PW=pw-Zq7vT3s3cret
TOKEN=tok-Hh81xLqa9Wm
BADPW=wrong-Pw-4kX
ALL=$T/all-output
: >"$ALL"
# run OUT CMD...: runs CMD, its stdout and stderr in $OUT and in $ALL, and
# sets rc
run() { _o=$1; shift; "$@" >"$T/$_o" 2>&1; rc=$?; cat "$T/$_o" >>"$ALL"; }
depth() { python3 -c 'import json,sys; print(json.load(sys.stdin)["inboxes"][sys.argv[1]]["depth"])' "$1" <"$T/$2" 2>&1; }
# one_line DESC FILE NEEDLE: FILE is one line containing NEEDLE
one_line() {
	if [ "$(wc -l <"$2")" -eq 1 ] && grep -qF -- "$3" "$2"; then ok "$1"; else fail "$1" "expected one line with: $3" "actual: $(cat "$2")"; fi
}

# --- (a) user and password: authorization { user, password } -----------
NATS_EXTRA="authorization { user: madf, password: \"$PW\" }"
nats_start
HP=${NATS_URL#nats://}
GOOD=nats://madf:$PW@$HP
run send env MADF_BUS="$GOOD" $MADF send --to research_agent_1 --type heartbeat --content "$HB"
eq "user:password in the URL: send works" "$rc" 0
run status $MADF --bus "$GOOD" status --json
eq "... --bus with user:password: status counts it" "$(depth research_agent_1 status)" 1
run recv env MADF_BUS="$GOOD" $MADF recv research_agent_1
eq "... recv gets it" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["message_id"])' <"$T/recv" 2>&1)" "$(cat "$T/send")"
run bad env MADF_BUS="nats://madf:$BADPW@$HP" $MADF status
eq "a wrong password fails (exit 1)" "$rc" 1
one_line "... in one line saying the authorization failed" "$T/bad" "cannot connect to the NATS bus at nats://$HP: Authentication Violation (Authorization Violation)"
run nouser env MADF_BUS="$NATS_URL" $MADF send --to research_agent_1 --type heartbeat --content "$HB"
eq "no credentials: refused too" "$rc" 1
one_line "... in one line" "$T/nouser" "cannot connect to the NATS bus at nats://$HP"
# an agent with the password in its URL writes logs and state
MADF_BUS=$GOOD $MADF agent validator_agent >"$T/agent.out" 2>"$T/agent.err" &
apid=$!
trap 'kill "$apid" 2>/dev/null; wait "$apid" 2>/dev/null; for _p in $nats_pids; do kill "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; done; cleanup' EXIT
started() { cat "$T"/logs/agents/validator_agent/events/*.jsonl 2>/dev/null | grep -q '"event":"start"'; }
wait_for "an agent runs with user:password in MADF_BUS" 60 started
run send2 env MADF_BUS="$GOOD" $MADF send --to validator_agent --type heartbeat --content "$HB"
kill -TERM "$apid"; wait "$apid"
eq "... and stops cleanly" "$?" 0
cat "$T/agent.out" "$T/agent.err" >>"$ALL"

# --- (a2) percent-encoded (RFC 3986) user and password -----------------
# '@', ':' and '%' in them are written %40, %3A and %25 in the URL
PW2='p@ss:w0rd%Zq7'
PW2_URL='p%40ss%3Aw0rd%25Zq7'
NATS_EXTRA="authorization { user: \"ops@madf\", password: \"$PW2\" }"
nats_start
HP=${NATS_URL#nats://}
ENC=nats://ops%40madf:$PW2_URL@$HP
run esend env MADF_BUS="$ENC" $MADF send --to research_agent_2 --type heartbeat --content "$HB"
eq "percent-encoded user and password ('@', ':', '%' in them): send works" "$rc" 0
run estatus $MADF --bus "$ENC" status --json
eq "... status counts it" "$(depth research_agent_2 estatus)" 1
run erecv env MADF_BUS="$ENC" $MADF recv research_agent_2
eq "... recv gets it" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["message_id"])' <"$T/erecv" 2>&1)" "$(cat "$T/esend")"
run elower $MADF --bus "nats://ops%40madf:p%40ss%3aw0rd%25Zq7@$HP" status
eq "... lower-case escapes too" "$rc" 0
run eraw $MADF --bus "nats://ops%40madf:p%40ss%3Aw0rd%25Zq8@$HP" status
eq "... one character off: refused (exit 1)" "$rc" 1
one_line "... as a failed authorization" "$T/eraw" "cannot connect to the NATS bus at nats://$HP: Authentication Violation"
run ebadpw $MADF --bus "nats://ops%40madf:p%zzss@$HP" status
eq "a malformed escape (%zz) in the password: refused (exit 1)" "$rc" 1
one_line "... naming the password, not quoting it" "$T/ebadpw" "invalid password in the bus URL: a '%' not followed by two hexadecimal digits"
run ebadcut $MADF --bus "nats://ops%40madf:pass%4@$HP" status
eq "a cut escape (%4) in the password: refused (exit 1)" "$rc" 1
one_line "... naming the password" "$T/ebadcut" "invalid password in the bus URL"
run ebaduser $MADF --bus "nats://ops%4:x@$HP" status
eq "a malformed escape in the user name: refused (exit 1)" "$rc" 1
one_line "... naming the user name" "$T/ebaduser" "invalid user name in the bus URL"
run eat $MADF --bus "nats://ops@madf:$PW2_URL@$HP" status
eq "a raw '@' in the userinfo: refused (exit 1)" "$rc" 1
one_line "... saying how to write it" "$T/eat" "'@' is written %40"
TOK2='t@k:en%7Yq'
TOK2_URL='t%40k%3Aen%257Yq'
NATS_EXTRA="authorization { token: \"$TOK2\" }"
nats_start
HP=${NATS_URL#nats://}
run etok env MADF_BUS="nats://$TOK2_URL@$HP" $MADF send --to research_agent_2 --type heartbeat --content "$HB"
eq "a percent-encoded token ('@', ':', '%' in it): send works" "$rc" 0
run etokstatus $MADF --bus "nats://$TOK2_URL@$HP" status --json
eq "... status counts it" "$(depth research_agent_2 etokstatus)" 1
run etokbad $MADF --bus "nats://t%40k%zz@$HP" status
eq "a malformed escape in the token: refused (exit 1)" "$rc" 1
one_line "... naming the token" "$T/etokbad" "invalid token in the bus URL"

# --- (b) a token in the URL: authorization { token } -------------------
NATS_EXTRA="authorization { token: \"$TOKEN\" }"
nats_start
HP=${NATS_URL#nats://}
run tsend env MADF_BUS="nats://$TOKEN@$HP" $MADF send --to research_agent_2 --type heartbeat --content "$HB"
eq "a token in the URL: send works" "$rc" 0
run tstatus env MADF_BUS="nats://$TOKEN@$HP" $MADF status --json
eq "... status counts it" "$(depth research_agent_2 tstatus)" 1
run tbad env MADF_BUS="nats://tok-wrong@$HP" $MADF status
eq "a wrong token fails (exit 1)" "$rc" 1
one_line "... in one line" "$T/tbad" "cannot connect to the NATS bus at nats://$HP: Authentication Violation (Authorization Violation)"

# --- (b) NATS_CREDS: an operator-mode server, a user credentials file --
python3 tests/integration/nats_jwt.py "$T/jwt" >"$T/jwt.out" 2>&1 ||
	fail "the operator, account and user JWTs are made" "$(cat "$T/jwt.out")"
NATS_EXTRA=$(cat "$T/jwt/server.conf")
nats_start
run csend env MADF_BUS="$NATS_URL" NATS_CREDS="$T/jwt/user.creds" $MADF send --to report_writer --type heartbeat --content "$HB"
eq "NATS_CREDS: send works on an operator-mode server" "$rc" 0
run cstatus env MADF_BUS="$NATS_URL" NATS_CREDS="$T/jwt/user.creds" $MADF status --json
eq "... status counts it" "$(depth report_writer cstatus)" 1
run cnone env MADF_BUS="$NATS_URL" $MADF status
eq "without NATS_CREDS: refused (exit 1)" "$rc" 1
one_line "... in one line" "$T/cnone" "cannot connect to the NATS bus at $NATS_URL"
run cother env MADF_BUS="$NATS_URL" NATS_CREDS="$T/jwt/stranger.creds" $MADF status
eq "a user of another operator: refused (exit 1)" "$rc" 1
one_line "... in one line" "$T/cother" "cannot connect to the NATS bus at $NATS_URL"
run cmissing env MADF_BUS="$NATS_URL" NATS_CREDS="$T/jwt/nosuch.creds" $MADF status
eq "a missing credentials file fails (exit 1)" "$rc" 1
one_line "... naming NATS_CREDS and why" "$T/cmissing" "cannot read NATS_CREDS=$T/jwt/nosuch.creds: No such file or directory"

# --- (c) TLS: tls:// and the CA in NATS_CA ------------------------------
C=$T/certs
mkdir -p "$C"
mkca() { # mkca NAME: a self-signed CA
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=madf test $1" \
		-keyout "$C/$1.key" -out "$C/$1.pem" >>"$C/openssl.log" 2>&1
}
mkca ca && mkca otherca &&
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$C/server.key" \
		-out "$C/server.csr" >>"$C/openssl.log" 2>&1 &&
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$C/san.ext" &&
	openssl x509 -req -in "$C/server.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
		-days 2 -extfile "$C/san.ext" -out "$C/server.pem" >>"$C/openssl.log" 2>&1
eq "openssl made the CA and the server's certificate" "$?" 0
NATS_EXTRA="tls { cert_file: \"$C/server.pem\", key_file: \"$C/server.key\" }"
nats_start
HP=${NATS_URL#nats://}
run tlsend env MADF_BUS="tls://$HP" NATS_CA="$C/ca.pem" $MADF send --to product_manager --type heartbeat --content "$HB"
eq "tls:// with NATS_CA: send works" "$rc" 0
run tlsls env MADF_BUS="tls://$HP" NATS_CA="$C/ca.pem" $MADF ls inbox product_manager
has "... ls lists it" "$(cat "$T/tlsls")" "$(cat "$T/tlsend")"
run tlswrong env MADF_BUS="tls://$HP" NATS_CA="$C/otherca.pem" $MADF status
eq "a CA that did not sign the server's certificate fails (exit 1)" "$rc" 1
one_line "... in one line saying the certificate was not verified" "$T/tlswrong" "cannot connect to the NATS bus at tls://$HP: SSL Error"
has "... why" "$(cat "$T/tlswrong")" "unable to get local issuer certificate"
has "... and what to check" "$(cat "$T/tlswrong")" "is NATS_CA=$C/otherca.pem the CA that signed the server's certificate?"
run tlsnoca env -u NATS_CA MADF_BUS="tls://$HP" SSL_CERT_FILE="$C/otherca.pem" $MADF status
eq "no NATS_CA: the system's CAs, which do not know it (exit 1)" "$rc" 1
one_line "... in one line naming NATS_CA" "$T/tlsnoca" "NATS_CA names the file of the CA that signed the server's certificate"
run tlsbadca env MADF_BUS="tls://$HP" NATS_CA="$C/nosuch.pem" $MADF status
eq "a missing CA file fails (exit 1)" "$rc" 1
one_line "... naming NATS_CA and why" "$T/tlsbadca" "cannot read NATS_CA=$C/nosuch.pem: No such file or directory"
printf 'not a certificate\n' >"$C/junk.pem"
run tlsjunk env MADF_BUS="tls://$HP" NATS_CA="$C/junk.pem" $MADF status
eq "a CA file that holds no certificate fails (exit 1)" "$rc" 1
one_line "... naming NATS_CA" "$T/tlsjunk" "cannot load the CA certificates NATS_CA=$C/junk.pem"
run halfpair env MADF_BUS="tls://$HP" NATS_CA="$C/ca.pem" NATS_CERT="$C/server.pem" $MADF status
eq "NATS_CERT without NATS_KEY fails (exit 1)" "$rc" 1
one_line "... saying they go together" "$T/halfpair" "NATS_CERT and NATS_KEY go together"
run tlsplain env MADF_BUS="nats://$HP" $MADF status
eq "nats:// to a server that requires TLS fails (exit 1)" "$rc" 1
one_line "... in one line" "$T/tlsplain" "cannot connect to the NATS bus at nats://$HP"

# a server that verifies clients: NATS_CERT and NATS_KEY, signed by the CA
openssl req -newkey rsa:2048 -nodes -subj "/CN=madf client" -keyout "$C/client.key" \
	-out "$C/client.csr" >>"$C/openssl.log" 2>&1 &&
	openssl x509 -req -in "$C/client.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
		-days 2 -out "$C/client.pem" >>"$C/openssl.log" 2>&1
eq "openssl made the client's certificate" "$?" 0
NATS_EXTRA="tls { cert_file: \"$C/server.pem\", key_file: \"$C/server.key\", ca_file: \"$C/ca.pem\", verify: true }"
nats_start
HP=${NATS_URL#nats://}
run mtls env MADF_BUS="tls://$HP" NATS_CA="$C/ca.pem" NATS_CERT="$C/client.pem" NATS_KEY="$C/client.key" \
	$MADF send --to validator_agent --type heartbeat --content "$HB"
eq "a server that verifies clients: NATS_CERT and NATS_KEY work" "$rc" 0
run mtlsno env MADF_BUS="tls://$HP" NATS_CA="$C/ca.pem" $MADF status
eq "... without them: refused (exit 1)" "$rc" 1
one_line "... in one line saying what to set" "$T/mtlsno" "if the server verifies clients, NATS_CERT and NATS_KEY name a client certificate and its key"

# --- no secret anywhere -------------------------------------------------
for s in "$PW" "$TOKEN" "$BADPW" tok-wrong "$PW2" "$PW2_URL" p%zzss w0rd "$TOK2" "$TOK2_URL"; do
	hits=$(grep -rlF -- "$s" "$ALL" "$T/data" "$T/logs" 2>/dev/null)
	eq "the secret $s is in no output, log or data file" "$hits" ""
done
seed=$(grep -h '^SU' "$T/jwt/user.creds" | head -1)
eq "the credentials' seed is in no output, log or data file" \
	"$(grep -rlF -- "${seed:-no seed}" "$ALL" "$T/data" "$T/logs" 2>/dev/null)" ""
done_testing
