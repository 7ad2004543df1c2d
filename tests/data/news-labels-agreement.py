#!/usr/bin/env python3
"""Agreement between two readings of the same news stories.

usage: python3 tests/data/news-labels-agreement.py [FIRST [SECOND]]
  FIRST   the first labels  (default tests/data/news-labels.jsonl)
  SECOND  the second reading (default tests/data/news-labels-second.jsonl)

Only the stories of SECOND are compared (FIRST may hold more). Measures:
- by story: the same set of (bank, action) reported as done and not
  background;
- by act: (bank, action) acts reported as done, not background, matched
  within each story, and the same with the date within one day;
- Cohen's kappa on "the story reports at least one non-background act as
  fact";
- each (story, bank, action) that the two readings put in different
  classes: F fact (not background), B background fact only, S speculated,
  - none; and the acts both read as fact but dated more than a day apart.
- apart from those totals: days of an act both read as fact (with some
  days within a day of each other) that one reading has and the other has
  not within a day ("for the third successive day": 03-25, 03-26, 03-27
  against 03-27 alone gives 03-25).
--list prints every disagreement, one line each ("extra day" for the last
kind).
"""
import json
import sys
from collections import Counter
from datetime import date


def load(path):
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            d = json.loads(line)
            if d["id"] in out:
                sys.exit(f"{path}:{n}: story {d['id']} labelled twice")
            out[d["id"]] = d
    return out


def classes(d):
    """(bank, action) -> class F/B/S, and (bank, action) -> set of dates of F."""
    cls, dates = {}, {}
    for s in d["speculated"]:
        cls[(s["bank"], s["action"])] = "S"
    for f in d["facts"]:
        k = (f["bank"], f["action"])
        if f["background"]:
            if cls.get(k) != "F":
                cls[k] = "B"
        else:
            cls[k] = "F"
            dates.setdefault(k, set()).add(f["date"])
    return cls, dates


def day(s):
    return date.fromisoformat(s)


def near(a, b):
    return any(abs((day(x) - day(y)).days) <= 1 for x in a for y in b)


def ratio(a, b):
    return f"{a / b:.3f}" if b else "n/a (no acts)"


def kappa(pairs):
    n = len(pairs)
    po = sum(1 for a, b in pairs if a == b) / n
    p1 = sum(1 for a, _ in pairs if a) / n
    p2 = sum(1 for _, b in pairs if b) / n
    pe = p1 * p2 + (1 - p1) * (1 - p2)
    return po, (po - pe) / (1 - pe) if pe < 1 else 1.0


def main(argv):
    listing = "--list" in argv
    args = [a for a in argv if a != "--list"]
    first_path = args[0] if args else "tests/data/news-labels.jsonl"
    second_path = args[1] if len(args) > 1 else "tests/data/news-labels-second.jsonl"
    first, second = load(first_path), load(second_path)
    missing = [i for i in second if i not in first]
    if missing:
        sys.exit(f"{len(missing)} stories of {second_path} are not in {first_path}: {missing[:5]}")

    n = len(second)
    same_story = 0
    acts1 = acts2 = both = both_dated = both_day = extra_days = 0
    pairs = []
    kinds = Counter()
    lines = []
    for sid, d2 in second.items():
        c1, t1 = classes(first[sid])
        c2, t2 = classes(d2)
        f1 = {k for k, v in c1.items() if v == "F"}
        f2 = {k for k, v in c2.items() if v == "F"}
        same_story += f1 == f2
        pairs.append((bool(f1), bool(f2)))
        acts1 += len(f1)
        acts2 += len(f2)
        for k in f1 & f2:
            both += 1
            if t1[k] & t2[k]:
                both_day += 1
            if near(t1[k], t2[k]):
                both_dated += 1
                x1 = sorted(d for d in t1[k] if not near({d}, t2[k]))
                x2 = sorted(d for d in t2[k] if not near({d}, t1[k]))
                if x1 or x2:
                    extra_days += len(x1) + len(x2)
                    lines.append(f"{sid}\t{k[0]} {k[1]}\tF {sorted(t1[k])}\tF {sorted(t2[k])}\textra day")
            else:
                kinds["F/F date > 1 day"] += 1
                lines.append(f"{sid}\t{k[0]} {k[1]}\tF {sorted(t1[k])}\tF {sorted(t2[k])}\tdate")
        for k in sorted(set(c1) | set(c2)):
            a, b = c1.get(k, "-"), c2.get(k, "-")
            if a != b:
                kinds[f"{a}/{b}"] += 1
                da = f" {sorted(t1[k])}" if a == "F" else ""
                db = f" {sorted(t2[k])}" if b == "F" else ""
                lines.append(f"{sid}\t{k[0]} {k[1]}\t{a}{da}\t{b}{db}")

    po, k = kappa(pairs)
    n11 = sum(1 for a, b in pairs if a and b)
    n10 = sum(1 for a, b in pairs if a and not b)
    n01 = sum(1 for a, b in pairs if b and not a)
    print(f"stories compared: {n} ({first_path} vs {second_path})")
    print(f"by story, same set of non-background facts (bank, action): {same_story}/{n} = {same_story / n:.3f}")
    print(f"stories with a non-background fact: first {n11 + n10}, second {n11 + n01}, both {n11}")
    print(f"kappa on 'reports a non-background act as fact': observed {po:.3f}, kappa {k:.3f}"
          f" (both yes {n11}, first only {n10}, second only {n01}, both no {n - n11 - n10 - n01})")
    print(f"by act (bank, action): first {acts1}, second {acts2}, in both {both};"
          f" agreement 2*both/(first+second) = {ratio(2 * both, acts1 + acts2)}")
    print(f"by act with the date within a day: in both {both_dated};"
          f" agreement = {ratio(2 * both_dated, acts1 + acts2)}; on the same day {both_day}")
    print("disagreements (first/second; F fact, B background only, S speculated, - none):")
    for kind, c in sorted(kinds.items(), key=lambda x: (-x[1], x[0])):
        print(f"  {kind:18s} {c}")
    print(f"  total {sum(kinds.values())}, in"
          f" {len({l.split(chr(9))[0] for l in lines if not l.endswith('extra day')})} stories")
    print(f"days of an act both read as fact that only one reading has (not in the total): {extra_days}")
    if listing:
        print("story\tact\tfirst\tsecond")
        for l in lines:
            print(l)


if __name__ == "__main__":
    main(sys.argv[1:])
