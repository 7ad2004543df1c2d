# madf mcp's review_codebase off the server's thread: while a review works
# the server answers a ping, a second review waits in the queue and runs
# after it, and notifications/cancelled stops the review (its agents stop,
# no answer for it); the critical agent is made slow (it never answers),
# so only the cancellation can end that review.
. tests/integration/lib.sh
CLIENT="python3 $TOP/tests/integration/mcp_client.py"
pick() { $CLIENT pick "$@"; }
FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
export MADF_REVIEW_BACKOFF_MS=10
call() { # call ID AGENTS [META]
	printf '{"jsonrpc":"2.0","id":"%s","method":"tools/call","params":{"name":"review_codebase","arguments":{"id":"%s","params":{"agents":%s}}%s}}' \
		"$1" "$FIX" "$2" "${3:+,\"_meta\":$3}"
}
{ echo 'init 2025-06-18'
  echo "nowait $(call slow '["critical"]' '{"progressToken":"pt"}')"
  echo "nowait $(call queued '["debt"]')"
  echo 'wait notifications/progress'
  echo '{"jsonrpc":"2.0","id":"p1","method":"ping"}'
  echo 'nowait {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"the test"}}'
  echo '{"jsonrpc":"2.0","id":"p2","method":"ping"}'
} | $CLIENT --timeout 300 --stderr "$T/s.err" -- $MADF mcp --inject-fault review_critical:slow \
	>"$T/s.out" 2>"$T/s.cerr"
eq "the session exits 0 (the cancelled review does not hold the server)" "$?" 0
eq "a ping is answered while the review works" "$(pick id=p1 result <"$T/s.out")" "{}"
line_of() { grep -n "\"id\":\"$1\"" "$T/s.out" | head -1 | cut -d: -f1; }
check "... before the queued review's answer" test "$(line_of p1)" -lt "$(line_of queued)"
eq "progress notifications carry the review's token" "$(pick method=notifications/progress params.progressToken <"$T/s.out")" pt
eq "the cancelled review is not answered" "$(pick --count id=slow <"$T/s.out")" 0
eq "the queued review runs after it and answers" "$(pick id=queued result.isError <"$T/s.out")" false
eq "... with its findings" "$(pick id=queued result.structuredContent.debt <"$T/s.out" | python3 -c '
import json, sys
print(" ".join("%s:%d" % (f["file"], f["line"]) for f in json.load(sys.stdin)))')" \
   "src/buffer.c:15 src/memory.c:10 src/parse.c:4"
has "the master logs the cancellation" "$(cat "$T"/logs/agents/review_master/*/* 2>/dev/null)" "review_cancelled"
done_testing
