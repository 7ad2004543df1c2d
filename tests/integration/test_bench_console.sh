# madf bench console, small: runs it with 2,000 dead letters and one idle
# second, and checks the JSON carries every figure (names, not values:
# timings are never asserted).
. tests/integration/lib.sh

json=$($MADF bench console --json --idle 1 --scale 2000 2>&1); rc=$?
eq "bench console --json exits 0" "$rc" 0
check "bench console --json prints one JSON object" \
	python3 -c 'import json,sys; json.loads(sys.argv[1])' "$json"
for f in inboxes messages_per_inbox dead_letters setup_s idle_seconds keys frames open_ms \
	refresh_ms peak_rss_mb idle_cpu_pct dead_letter_rows dead_letters_counted \
	baseline_empty ratio_to_empty aims; do
	has "bench console --json has $f" "$json" "\"$f\":"
done
for k in view typing apply scroll page tab all; do
	has "bench console --json has keys.$k" "$json" "\"$k\": {\"n\":"
done
for f in median_ms p95_ms max_ms; do
	has "bench console --json has $f" "$json" "\"$f\":"
done
check "bench console: the console saw the 2,000 dead letters; keys, frames and figures present" \
	python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["dead_letters"] == 2000 and j["dead_letters_counted"] == 2000
assert j["dead_letter_rows"] >= 2000
for r in (j, j["baseline_empty"]):
    assert r["frames"] > 0 and r["keys"]["all"]["n"] > 0
    for k in ("overview", "dead_letters"):
        assert k in r["idle_cpu_pct"] and k in r["refresh_ms"]
    assert r["peak_rss_mb"] > 0
' "$json"
eq "bench console removes its scratch directory" "$(ls "$D" | grep -c bench-console)" 0
check_fails "bench console: a bad --scale is a usage error" 2 $MADF bench console --scale x
check_fails "bench console: a bad --idle is a usage error" 2 $MADF bench console --idle 0
done_testing
