"""Writes N valid heartbeat messages into an inbox the way a sender must:
a temporary file, then a rename. Names follow madf's P.T.ID.A.json grammar.
usage: gen_messages.py DATA_DIR AGENT N PREFIX"""
import json, os, sys, time

data, agent, n, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
inbox = os.path.join(data, "messages", "inbox", agent)
tmp = os.path.join(data, "messages", "tmp")
os.makedirs(inbox, exist_ok=True)
os.makedirs(tmp, exist_ok=True)
now = time.time()
ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
for i in range(n):
    mid = "%s_%06d" % (prefix, i)
    m = {"message_id": mid, "from": "operator", "to": agent, "type": "heartbeat",
         "timestamp": ts, "content": {"status": "idle", "uptime_seconds": 1,
                                      "active_tasks": 0, "sequence": i},
         "priority": "normal"}
    t = os.path.join(tmp, mid + ".tmp")
    with open(t, "w") as f:
        json.dump(m, f)
    name = "2.%019d.%s.0.json" % (int(now * 1e9) + i, mid)
    os.rename(t, os.path.join(inbox, name))
