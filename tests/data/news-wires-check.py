#!/usr/bin/env python3
"""Checks a wires file: python3 check.py FILE.jsonl PREFIX
Each line one JSON object: id (PREFIX-NNNN, in order), cat, title, dateline,
published (YYYY-MM-DDTHH:MM:SSZ), body, facts [{bank, action, date,
background}], not_facts [{bank, action}], denied [{bank, action}], note."""
import json, sys, datetime
CODES = {"Fed","BOJ","Bundesbank","BoE","BdF","BdI","BdE","BNB","DNB","DKNB","SNB","BoC","RBA","RBNZ","CBC","Norges"}
ACTS = {"hike","cut","hold","intervention"}
path, prefix = sys.argv[1], sys.argv[2]
bad = 0
def err(n, m):
    global bad; bad += 1; print(f"{path}:{n}: {m}")
seen = set()
for n, line in enumerate(open(path), 1):
    try:
        r = json.loads(line)
    except Exception as e:
        err(n, f"not JSON: {e}"); continue
    for k in ("id","cat","title","dateline","published","body","facts","not_facts","denied","note"):
        if k not in r: err(n, f"no {k}")
    if r.get("id") != f"{prefix}-{n:04d}": err(n, f"id should be {prefix}-{n:04d}")
    try:
        pub = datetime.datetime.strptime(r["published"], "%Y-%m-%dT%H:%M:%SZ").date()
    except Exception:
        err(n, "published not YYYY-MM-DDTHH:MM:SSZ"); continue
    if not r.get("body") or len(r["body"]) < 200: err(n, "body shorter than 200 characters")
    keys = set()
    for f in r.get("facts", []):
        if f.get("bank") not in CODES: err(n, f"fact bank {f.get('bank')} not a code")
        if f.get("action") not in ACTS: err(n, f"fact action {f.get('action')}")
        try:
            d = datetime.date.fromisoformat(f["date"])
        except Exception:
            err(n, "fact date not YYYY-MM-DD"); continue
        old = (pub - d).days > 8
        if bool(f.get("background")) != old: err(n, f"background should be {old} for {f['date']}")
        if (d - pub).days > 1: err(n, "fact after the day following publication")
        keys.add((f.get("bank"), f.get("action")))
    for fld in ("not_facts","denied"):
        for f in r.get(fld, []):
            if f.get("bank") not in CODES: err(n, f"{fld} bank {f.get('bank')} not a code")
            if f.get("action") not in ACTS: err(n, f"{fld} action {f.get('action')}")
            if (f.get("bank"), f.get("action")) in keys: err(n, f"{fld} also a fact: {f}")
print(f"{path}: {n if 'n' in dir() else 0} lines, {bad} problems")
sys.exit(1 if bad else 0)
