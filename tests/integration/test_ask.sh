# madf ask against the project's own replay server on 127.0.0.1: streamed
# text printed exactly, retries after 429 and 529 honouring retry-after,
# a mid-stream error, a missing key, the request's headers and body, and
# the key never in the output.
. tests/integration/lib.sh

KEY=sk-madf-test-0123456789abcdef
LOG=$T/requests.jsonl
serve "the replay server" python3 tests/integration/llm_replay.py --key "$KEY" --log "$LOG"
ok "the replay server listens on 127.0.0.1:$port"

# No .env or config of the caller's leaks in: run from an empty directory.
mkdir -p "$T/cwd"
cd "$T/cwd" || exit 1
unset ANTHROPIC_API_KEY OPENAI_API_KEY CLAUDE_MODEL_EXECUTION CLAUDE_MODEL_ORCHESTRATOR \
	OPENAI_MODEL ANTHROPIC_BASE_URL OPENAI_BASE_URL 2>/dev/null || true
A="env ANTHROPIC_API_KEY=$KEY ANTHROPIC_BASE_URL=http://127.0.0.1:$port CLAUDE_MODEL_EXECUTION=claude-test"
O="env OPENAI_API_KEY=$KEY OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_MODEL=gpt-test"
EXPECTED=$(printf 'Hello, world! \303\251t\303\251 \342\200\224 done.\nSecond line.')

# requests N PATH_SUBSTRING CASE: the recorded requests of one case, as JSON lines.
requests() { grep -F "case:$1" "$LOG" | grep -F "\"path\": \"$2"; }
nreq() { requests "$1" "$2" | wc -l | tr -d ' '; }
# gap CASE PATH: seconds between the first two requests of a case.
gap() {
	requests "$1" "$2" | python3 -c '
import json, sys
t = [json.loads(l)["t"] for l in sys.stdin]
print("%.3f" % (t[1] - t[0]) if len(t) >= 2 else "none")'
}
ge() { python3 -c "import sys; sys.exit(0 if float('$2') >= float('$3') else 1)" 2>/dev/null \
	&& ok "$1" || fail "$1" "expected >= $3, got $2"; }

for prov in anthropic openai; do
	if [ $prov = anthropic ]; then E=$A P=/v1/messages; else E=$O P=/v1/chat/completions; fi

	# --- a normal answer ---------------------------------------------------
	$E "$MADF" ask --provider $prov "say hi case:normal" >"$T/out" 2>"$T/err"; rc=$?
	eq "$prov: a normal answer exits 0" "$rc" 0
	eq "$prov: the streamed text is printed exactly" "$(cat "$T/out")" "$EXPECTED"
	eq "$prov: nothing on stderr" "$(cat "$T/err")" ""
	hasnt "$prov: the key is not in the output" "$(cat "$T/out" "$T/err")" "$KEY"
	eq "$prov: exactly the bytes, no added newline" "$(wc -c <"$T/out" | tr -d ' ')" \
		"$(printf '%s' "$EXPECTED" | wc -c | tr -d ' ')"

	# --- the request ----------------------------------------------------------
	req=$(requests normal "$P" | tail -1)
	if [ $prov = anthropic ]; then
		has "$prov: x-api-key header sent" "$req" "\"x-api-key\": \"$KEY\""
		has "$prov: anthropic-version header sent" "$req" '"anthropic-version": "2023-06-01"'
		has "$prov: the default model comes from CLAUDE_MODEL_EXECUTION" "$req" '\"model\":\"claude-test\"'
	else
		has "$prov: Authorization: Bearer sent" "$req" "\"authorization\": \"Bearer $KEY\""
		hasnt "$prov: no x-api-key to OpenAI" "$req" "x-api-key"
		has "$prov: stream_options.include_usage asked" "$req" '\"include_usage\":true'
		has "$prov: the model comes from OPENAI_MODEL" "$req" '\"model\":\"gpt-test\"'
	fi
	has "$prov: JSON content type" "$req" '"content-type": "application/json"'
	body=$(echo "$req" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["body"])')
	fields=$(echo "$body" | python3 -c '
import json, sys
b = json.loads(sys.stdin.read())
print(type(b["model"]).__name__, b["max_tokens"], b["stream"], b["messages"][-1]["role"], b["messages"][-1]["content"])')
	eq "$prov: the body has model, max_tokens, stream: true and the prompt" "$fields" \
		"str 1024 True user say hi case:normal"

	# --- --model and --max-tokens -----------------------------------------
	$E "$MADF" ask --provider $prov --model other-model --max-tokens 77 "case:normal flags" >/dev/null 2>&1
	req=$(requests "normal flags" "$P" | tail -1)
	has "$prov: --model is sent" "$req" '\"model\":\"other-model\"'
	has "$prov: --max-tokens is sent" "$req" '\"max_tokens\":77'

	# --- a mid-stream error -----------------------------------------------------
	$E "$MADF" ask --provider $prov "case:error" >"$T/out" 2>"$T/err"; rc=$?
	eq "$prov: a mid-stream error exits 1" "$rc" 1
	has "$prov: the error's message is shown" "$(cat "$T/err")" "Overloaded while streaming"
	if [ $prov = anthropic ]; then
		has "$prov: the error's type is shown" "$(cat "$T/err")" "overloaded_error"
	else
		has "$prov: the error's type is shown" "$(cat "$T/err")" "server_error"
	fi
	eq "$prov: the text before the error was streamed" "$(cat "$T/out")" "$EXPECTED"
	eq "$prov: a mid-stream error is not retried" "$(nreq error "$P")" 1

	# --- 429 with retry-after: 1, then success ------------------------------
	$E "$MADF" ask --provider $prov "case:429" >"$T/out" 2>"$T/err"; rc=$?
	eq "$prov: 429 then success exits 0" "$rc" 0
	eq "$prov: 429: the answer after the retry" "$(cat "$T/out")" "$EXPECTED"
	eq "$prov: 429: the server saw 2 requests" "$(nreq 429 "$P")" 2
	ge "$prov: 429: the retry waited retry-after (>= 0.9 s)" "$(gap 429 "$P")" 0.9

	# --- 529 overloaded (503 for OpenAI), then success -------------------------
	$E "$MADF" ask --provider $prov "case:529" >"$T/out" 2>"$T/err"; rc=$?
	eq "$prov: overloaded then success exits 0" "$rc" 0
	eq "$prov: overloaded: the answer after the retry" "$(cat "$T/out")" "$EXPECTED"
	eq "$prov: overloaded: the server saw 2 requests" "$(nreq 529 "$P")" 2
	ge "$prov: overloaded: the retry waited retry-after (>= 0.9 s)" "$(gap 529 "$P")" 0.9

	# --- the key never shows ----------------------------------------------------
	$E "$MADF" -v ask --provider $prov "case:echo" >"$T/out" 2>"$T/err"; rc=$?
	eq "$prov: an HTTP 400 exits 1 without retries" "$rc:$(nreq echo "$P")" "1:1"
	has "$prov: the HTTP error is shown" "$(cat "$T/err")" "invalid_request_error: bad key"
	hasnt "$prov: a key echoed by the server is redacted" "$(cat "$T/out" "$T/err")" "$KEY"
	has "$prov: ... as [redacted]" "$(cat "$T/err")" "[redacted]"
done

# --- configuration errors --------------------------------------------------
out=$(env ANTHROPIC_BASE_URL=http://127.0.0.1:$port CLAUDE_MODEL_EXECUTION=m "$MADF" ask hi 2>&1); rc=$?
eq "a missing ANTHROPIC_API_KEY exits 1" "$rc" 1
has "the error names ANTHROPIC_API_KEY" "$out" "ANTHROPIC_API_KEY"
out=$(env OPENAI_MODEL=m "$MADF" ask --provider openai hi 2>&1); rc=$?
eq "a missing OPENAI_API_KEY exits 1" "$rc" 1
has "the error names OPENAI_API_KEY" "$out" "OPENAI_API_KEY"
out=$(env ANTHROPIC_API_KEY=$KEY "$MADF" ask hi 2>&1); rc=$?
eq "no model exits 1" "$rc" 1
has "the error names CLAUDE_MODEL_EXECUTION" "$out" "CLAUDE_MODEL_EXECUTION"
out=$(env ANTHROPIC_API_KEY=wrong-key-value CLAUDE_MODEL_EXECUTION=m \
	ANTHROPIC_BASE_URL=http://127.0.0.1:$port "$MADF" ask hi 2>&1); rc=$?
eq "a rejected key exits 1" "$rc" 1
has "the authentication error is shown" "$out" "HTTP 401: authentication_error"
hasnt "the rejected key is not shown" "$out" "wrong-key-value"
out=$($A ANTHROPIC_BASE_URL=ftp://x "$MADF" ask hi 2>&1); rc=$?
eq "a bad base URL exits 1" "$rc" 1
has "the error names ANTHROPIC_BASE_URL" "$out" "ANTHROPIC_BASE_URL"
check_fails "no PROMPT is a usage error" 2 $A "$MADF" ask
check_fails "an unknown provider is a usage error" 2 $A "$MADF" ask --provider mistral hi
check_fails "a bad --max-tokens is a usage error" 2 $A "$MADF" ask --max-tokens 0 hi
# A closed port: connection refused, retried, then a clear failure.
cport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
out=$(env ANTHROPIC_API_KEY=$KEY CLAUDE_MODEL_EXECUTION=m ANTHROPIC_BASE_URL=http://127.0.0.1:$cport \
	"$MADF" ask hi 2>&1); rc=$?
eq "an unreachable server exits 1" "$rc" 1
has "... saying it could not connect" "$out" "onnect"
# The key from .env works the same, and stays out of the output.
printf 'ANTHROPIC_API_KEY=%s\nANTHROPIC_BASE_URL=http://127.0.0.1:%s\nCLAUDE_MODEL_ORCHESTRATOR=from-env-file\n' \
	"$KEY" "$port" >.env
out=$("$MADF" ask "case:normal dotenv" 2>&1); rc=$?
eq "configuration from .env works" "$rc:$out" "0:$EXPECTED"
has "CLAUDE_MODEL_ORCHESTRATOR is the fallback model" "$(requests 'normal dotenv' /v1/messages)" \
	'\"model\":\"from-env-file\"'
rm -f .env
cd "$TOP" || exit 1
done_testing
