"""Copies stdin to stdout line by line, slowly, so that a `madf recv`
writing into it spends most of its time blocked with a claim held."""
import sys, time
out = sys.stdout
for line in sys.stdin:
    out.write(line)
    out.flush()
    time.sleep(0.001)
