#!/usr/bin/env python3
"""The fresh batch (December 2026): every story of the archive, not yet
labelled, published (UTC day of published_at) outside the development
ranges (1987-03-02..03-20, 03-30..04-01, 04-13..09-30), whose title and
body are not the same as a labelled story's or an earlier candidate's,
and whose title or body matches CB below (case-insensitive). Split
named-week for 1987-03-23..27, held-out otherwise. Prints
"id split" per line, in archive order.
usage: select_fresh.py LABELS ARCHIVE"""
import json, re, sys
CB = re.compile(r"central bank|bank of (japan|england|france|canada|italy|spain|norway|finland|sweden)"
                r"|bundesbank|federal reserve|\bfed\b|monetary authorit|reserve bank|national bank"
                r"|nederlandsche|riksbank|interven|discount rate|lombard|prime rate|base rate", re.I)
def dev(day):
    return ("1987-03-02" <= day <= "1987-03-20" or "1987-03-30" <= day <= "1987-04-01"
            or "1987-04-13" <= day <= "1987-09-30")
labels = {json.loads(l)["id"] for l in open(sys.argv[1]) if l.strip()}
arch = [json.loads(l) for l in open(sys.argv[2])]
seen = {((d["title"] or ""), (d["body"] or "")) for d in arch if d["id"] in labels}
for d in arch:
    day = d["published_at"][:10]
    if d["id"] in labels or dev(day):
        continue
    key = ((d["title"] or ""), (d["body"] or ""))
    if key in seen or not CB.search(key[0] + " " + key[1]):
        continue
    seen.add(key)
    print(d["id"], "named-week" if "1987-03-23" <= day <= "1987-03-27" else "held-out")
