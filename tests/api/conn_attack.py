#!/usr/bin/env python3
"""Connection-exhaustion attack on a running `schedlab serve` (loopback only).

From one attack address (default 127.0.0.2) it opens SLOW slowloris
connections (a partial request header, then one more header byte every
--trickle-s seconds, so that an idle timeout never fires) and IDLE sockets
that never send a byte. Meanwhile it probes GET /v1/health from another
address (default 127.0.0.1) every 0.25 s and records each probe's latency.
It runs for --duration-s seconds, then prints one JSON line:

  {"probes": n, "probe_max_s": x, "probe_failures": k,
   "attack_open_after_1s": a, "attack_open_at_end": b,
   "slowloris_open_at_end": c, "closed_after_s": [...]}

With --expect-deadline D it exits 1 unless every probe answered within 1 s
and no attack connection is open at the end (the run must last longer than
D plus a margin); without it, it only measures (bench use against an older
build). Used by tests/e2e/66-api-connections.sh.
"""
import argparse
import json
import resource
import socket
import sys
import time


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))


def connect_from(src, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    return s


def alive(s):
    """False once the server closed or reset the connection."""
    try:
        data = s.recv(4096)
        return bool(data)  # b"": closed; data: an answer (e.g. 408), also fine
    except BlockingIOError:
        return True
    except OSError:
        return False


def probe(port, src, timeout):
    t0 = time.monotonic()
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((src, 0))
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        s.close()
        ok = buf.startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--attack-from", default="127.0.0.2")
    ap.add_argument("--probe-from", default="127.0.0.1")
    ap.add_argument("--idle", type=int, default=500)
    ap.add_argument("--slow", type=int, default=300)
    ap.add_argument("--trickle-s", type=float, default=2.0)
    ap.add_argument("--duration-s", type=float, default=10.0)
    ap.add_argument("--probe-timeout-s", type=float, default=5.0)
    ap.add_argument("--expect-deadline", type=float, default=None)
    a = ap.parse_args()
    raise_fd_limit(a.idle + a.slow + 64)

    t_start = time.monotonic()
    slow, idle = [], []
    for _ in range(a.slow):
        try:
            s = connect_from(a.attack_from, a.port)
            s.send(b"GET /v1/health HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            slow.append([s, True, None])
        except OSError:
            pass
    for _ in range(a.idle):
        try:
            idle.append([connect_from(a.attack_from, a.port), True, None])
        except OSError:
            pass
    conns = slow + idle

    probes, failures, worst = 0, 0, 0.0
    open_after_1s = None
    next_trickle = time.monotonic() + a.trickle_s
    while time.monotonic() - t_start < a.duration_s:
        now = time.monotonic()
        for c in conns:
            if c[1] and not alive(c[0]):
                c[1], c[2] = False, now - t_start
        if open_after_1s is None and now - t_start >= 1.0:
            open_after_1s = sum(c[1] for c in conns)
        if now >= next_trickle:
            for c in slow:
                if c[1]:
                    try:
                        c[0].send(b"a")
                    except OSError:
                        c[1], c[2] = False, now - t_start
            next_trickle = now + a.trickle_s
        ok, took = probe(a.port, a.probe_from, a.probe_timeout_s)
        probes += 1
        failures += not ok
        worst = max(worst, took)
        time.sleep(0.25)

    report = {
        "probes": probes,
        "probe_max_s": round(worst, 3),
        "probe_failures": failures,
        "attack_connected": len(conns),
        "attack_open_after_1s": open_after_1s,
        "attack_open_at_end": sum(c[1] for c in conns),
        "slowloris_open_at_end": sum(c[1] for c in slow),
        "closed_after_s": sorted(round(c[2], 1) for c in conns if c[2] is not None and c[2] > 1.0),
    }
    for c in conns:
        c[0].close()
    print(json.dumps(report))
    if a.expect_deadline is None:
        return 0
    bad = []
    if failures or worst >= 1.0:
        bad.append(f"health: {failures} failed probes, slowest {worst:.3f} s (limit 1 s)")
    if report["attack_open_at_end"]:
        bad.append(f"{report['attack_open_at_end']} attack connections outlived the "
                   f"{a.expect_deadline} s request deadline")
    late = [t for t in report["closed_after_s"] if t > a.expect_deadline + 2.5]
    if late:
        bad.append(f"connections closed late: {late[:5]}")
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
