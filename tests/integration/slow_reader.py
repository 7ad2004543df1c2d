"""Copies stdin (a FIFO) to stdout slowly, so that a `madf recv` writing
into it spends most of its time blocked with a claim held.

Slowly means in small reads with a pause between them, from a pipe made as
small as the kernel allows (one page): a line-by-line loop over sys.stdin
reads the pipe ahead in 8 KB chunks, so a consumer writing into it was
seldom blocked and a kill seldom found it holding a claim."""
import fcntl, os, sys, time

try:
    fcntl.fcntl(0, fcntl.F_SETPIPE_SZ, 4096)
except (AttributeError, OSError):
    pass  # not a pipe, or an older Python: the pause still slows it
out = sys.stdout.buffer
while True:
    data = os.read(0, 256)
    if not data:
        break
    out.write(data)
    out.flush()
    time.sleep(0.005)
