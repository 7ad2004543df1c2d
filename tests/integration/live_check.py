"""Checks for test_live_data.sh.
usage: live_check.py CHECK ARGS...
  closes REPORT.json FIXTURE_DIR PAIR...   each pair's start and end close
      equals the cross computed from the ECB fixture CSVs on those dates
  nreq LOG [PATH_SUBSTRING]                number of logged requests
  user_agent LOG PREFIX                    every request's User-Agent starts so
  min_gap LOG SECONDS                      consecutive requests at least so far apart
  retried LOG SECONDS                      a 429 then the same path answered 200,
                                           at least SECONDS later
  cited REPORT.json                        the ids of the stories the findings cite"""
import csv, json, sys


def fail(msg):
    print(msg)
    sys.exit(1)


def per_euro(fixtures, ccy):
    if ccy == "EUR":
        return None
    out = {}
    with open("%s/D.%s.EUR.SP00.A.csv" % (fixtures, ccy), newline="") as f:
        for row in csv.DictReader(f):
            if row["OBS_VALUE"]:
                out[row["TIME_PERIOD"]] = float(row["OBS_VALUE"])
    return out


def cross(fixtures, pair, day):
    b, q = pair.split("/")
    lb, lq = per_euro(fixtures, b), per_euro(fixtures, q)
    vb = 1.0 if lb is None else lb[day]
    vq = 1.0 if lq is None else lq[day]
    return vq / vb


def requests(path, sub=""):
    try:
        return [json.loads(l) for l in open(path) if sub in json.loads(l)["path"]]
    except FileNotFoundError:
        return []


check, args = sys.argv[1], sys.argv[2:]
if check == "closes":
    rep = json.load(open(args[0]))
    pairs = {p["pair"]: p for p in rep["pairs"]}
    for pair in args[2:]:
        p = pairs.get(pair) or fail("no %s in the report" % pair)
        for end in ("start", "end"):
            got, day = p[end]["close"], p[end]["date"]
            want = cross(args[1], pair, day)
            if abs(got - want) > 1e-9 * want:
                fail("%s %s %s: report %r, fixtures give %r" % (pair, end, day, got, want))
        print("%s %s %.6f .. %s %.6f" % (pair, p["start"]["date"], p["start"]["close"],
                                         p["end"]["date"], p["end"]["close"]))
elif check == "nreq":
    print(len(requests(args[0], args[1] if len(args) > 1 else "")))
elif check == "user_agent":
    rs = requests(args[0])
    if not rs:
        fail("no requests")
    for r in rs:
        ua = r["headers"].get("User-Agent", "")
        if not ua.startswith(args[1]):
            fail("User-Agent %r" % ua)
elif check == "min_gap":
    ts = sorted(r["t"] for r in requests(args[0]))
    if len(ts) < 2:
        fail("fewer than two requests")
    gap = min(b - a for a, b in zip(ts, ts[1:]))
    if gap < float(args[1]):
        fail("two requests %.3f s apart" % gap)
elif check == "retried":
    rs = requests(args[0])
    first = next((r for r in rs if r["status"] == 429), None) or fail("no 429 answered")
    again = [r for r in rs if r["path"] == first["path"] and r["status"] == 200 and r["t"] > first["t"]]
    if not again:
        fail("%s was not asked again after the 429" % first["path"])
    if again[0]["t"] - first["t"] < float(args[1]):
        fail("asked again %.3f s after the 429" % (again[0]["t"] - first["t"]))
elif check == "cited":
    rep = json.load(open(args[0]))
    print(" ".join(sorted({s for f in rep["findings"] for s in f.get("sources", [])
                           if not s.startswith("ecb") and " " not in s})))
else:
    fail("unknown check " + check)
