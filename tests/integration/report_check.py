"""Checks a weekly report's JSON twin against what a reader relies on.
usage: report_check.py REPORT.json CHECK [ARGS...]; exits 1 with a reason."""
import json, sys

def fail(msg):
    print(msg)
    sys.exit(1)

rep = json.load(open(sys.argv[1]))
check = sys.argv[2]
args = sys.argv[3:]
pairs = {p["pair"]: p for p in rep.get("pairs", [])}

if check == "window":
    w = rep["window"]
    if (w["start"], w["end"]) != (args[0], args[1]):
        fail("window %s..%s" % (w["start"], w["end"]))
elif check == "pair":          # PAIR START_DATE START END_DATE END CHANGE
    p = pairs.get(args[0]) or fail("no pair %s in %s" % (args[0], list(pairs)))
    got = (p["start"]["date"], "%.2f" % p["start"]["close"], p["end"]["date"],
           "%.2f" % p["end"]["close"], "%.4f" % p["change_pct"])
    if got != tuple(args[1:6]):
        fail("%s: %s" % (args[0], got))
elif check == "all_pairs_have_figures":
    for name in args[0].split(","):
        p = pairs.get(name)
        if not p or p.get("change_pct") is None:
            fail("no figures for %s" % name)
elif check == "findings_cite_window_stories":   # JSONL START END
    stories = {}
    with open(args[0]) as f:
        for line in f:
            s = json.loads(line)
            stories[s["id"]] = s["published_at"][:10]
    cited = [s for f in rep["findings"] for s in f.get("sources", []) if s.startswith("reuters-")]
    if len(cited) < 3:
        fail("only %d Reuters stories cited" % len(cited))
    for s in cited:
        if s not in stories:
            fail("cites %s, not in the archive" % s)
        if not (args[1] <= stories[s] <= args[2]):
            fail("cites %s dated %s, outside the window" % (s, stories[s]))
    print("%d citations, all real and inside the window" % len(cited))
elif check == "verdicts":
    v = [f.get("verdict") for f in rep["findings"]]
    if not v or any(x not in ("confirmed", "disputed", "unverified") for x in v):
        fail("verdicts %s" % sorted(set(map(str, v))))
elif check == "failure":        # WHAT AGENT
    fs = rep.get("failures", [])
    if not any(f.get("what") == args[0] and args[1] in (f.get("from"), f.get("to")) for f in fs):
        fail("no %s failure naming %s in %s" % (args[0], args[1], fs))
elif check == "validation":
    st = rep.get("validation", {}).get("status")
    if st != args[0]:
        fail("validation status %s" % st)
elif check == "no_duplicate_findings":
    ids = [f["id"] for f in rep["findings"]]
    if len(ids) != len(set(ids)):
        fail("duplicate findings %s" % [i for i in ids if ids.count(i) > 1])
else:
    fail("unknown check " + check)
