#!/usr/bin/env python3
"""Submits N jobs to a schedlab service and cancels each at once, over one
HTTP/1.1 connection per request (the standard library only), each job with
its own inline patch of PATCH_BYTES; prints how many got 202 and 200 and the
seconds taken. Used by tests/e2e/67-api-quotas.sh to show the store bounded.

usage: flood.py URL TOKEN N PATCH_BYTES [SOURCE]"""
import http.client
import json
import sys
import time
import urllib.parse


def main():
    url, token, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    source = sys.argv[5] if len(sys.argv) > 5 else "debian:linux-source-6.1"
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    auth = {"Authorization": "Bearer " + token} if token else {}
    accepted = cancelled = 0
    t0 = time.monotonic()
    for i in range(n):
        body = "--- a/x\n+++ b/x\n" + ("+%08d\n" % i) + "x" * max(0, size - 30) + "\n"
        job = {"name": "flood-%d" % i, "base": {"source": source},
               "patches": [{"name": "p.patch", "content": body}],
               "workloads": [{"tool": "rt-migrate-test", "args": ["3"]}], "repeat": 1}
        conn.request("POST", "/v1/jobs", json.dumps(job),
                     dict(auth, **{"Content-Type": "application/json"}))
        r = conn.getresponse()
        data = r.read()
        if r.status != 202:
            sys.exit("submission %d: HTTP %d %s" % (i, r.status, data[:300]))
        accepted += 1
        jid = json.loads(data)["id"]
        conn.request("DELETE", "/v1/jobs/" + jid, headers=auth)
        r = conn.getresponse()
        r.read()
        if r.status not in (200, 202, 409):  # an old service may have started it
            sys.exit("cancel %d: HTTP %d" % (i, r.status))
        cancelled += 1
    print("%d accepted, %d cancelled in %.1f s" % (accepted, cancelled, time.monotonic() - t0))


main()
