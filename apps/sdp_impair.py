#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sdp_impair.py - the user-space impairment forwarder of apps/sdp-testbed: a
netem subset (delay with jitter, loss, duplicate, corrupt, reorder with gap,
rate, limit) for kernels without sch_netem.

It sits in the switch namespace between a host's veth end (h<i>) and the
bridge port (x<i>) and forwards frames both ways; frames towards the host
are impaired, as `tc qdisc ... dev h<i> root netem` would impair them.

  sdp_impair.py sdp-impair JOB HOSTIF BRIF PIDFILE -- NETEM-ARGS...
  sdp_impair.py --check -- NETEM-ARGS...       (parse only; notes on stderr)
  sdp_impair.py --rate-bps RATE                 (a tc rate in bit/s)

The per-frame decisions live in Impairment, which takes the time and the
frame as arguments (no sockets, no clock), so tests/testbed/test_impair.py
checks them with a seeded generator.  Tops out near 70 Mbit/s through two
hops on a 2-core machine: shape with tbf/htb in the kernel where only a
rate is needed.
"""
import errno
import heapq
import os
import random
import select
import signal
import socket
import sys
import time


class ImpairError(Exception):
    """A netem argument this backend cannot honour."""


def fail(msg):
    raise ImpairError(msg)

TIME_UNITS = [("usecs", 1e-6), ("usec", 1e-6), ("us", 1e-6), ("msecs", 1e-3),
              ("msec", 1e-3), ("ms", 1e-3), ("secs", 1.0), ("sec", 1.0), ("s", 1.0)]
RATE_UNITS = [("tibit", 1024.0**4), ("tbit", 1e12), ("gibit", 1024.0**3), ("gbit", 1e9),
              ("mibit", 1024.0**2), ("mbit", 1e6), ("kibit", 1024.0), ("kbit", 1e3),
              ("bit", 1.0), ("tibps", 8 * 1024.0**4), ("tbps", 8e12),
              ("gibps", 8 * 1024.0**3), ("gbps", 8e9), ("mibps", 8 * 1024.0**2),
              ("mbps", 8e6), ("kibps", 8 * 1024.0), ("kbps", 8e3), ("bps", 8.0)]

def num(s):
    try:
        return float(s)
    except ValueError:
        return None

def parse_time(s):
    for u, f in TIME_UNITS:
        if s.endswith(u) and num(s[:-len(u)]) is not None:
            return num(s[:-len(u)]) * f
    if num(s) is not None:
        return num(s) * 1e-6          # tc: a bare number is microseconds
    return None

def parse_pct(s):
    v = num(s[:-1]) if s.endswith("%") else num(s)
    return None if v is None else v / 100.0   # tc netem: "2" == "2%"

def parse_rate(s):
    low = s.lower()
    for u, f in RATE_UNITS:
        if low.endswith(u) and num(low[:-len(u)]) is not None:
            return num(low[:-len(u)]) * f
    if num(low) is not None:
        return num(low)                # bare number: bit/s
    return None

def parse(args):
    c = dict(delay=0.0, jitter=0.0, dist="uniform", loss=0.0, dup=0.0, corrupt=0.0,
             reorder=0.0, gap=0, rate=0.0, limit=1000)
    i, n = 0, len(args)
    def nxt(conv, what):
        nonlocal i
        if i >= n:
            fail("'%s' needs a value" % what)
        v = conv(args[i])
        if v is None or v < 0:
            fail("bad value '%s' for %s" % (args[i], what))
        i += 1
        return v
    def opt(conv):
        nonlocal i
        if i < n and conv(args[i]) is not None:
            v = conv(args[i]); i += 1
            return v
        return None
    ignored = []
    while i < n:
        kw = args[i]; i += 1
        if kw == "delay":
            c["delay"] = nxt(parse_time, "delay")
            j = opt(parse_time)
            if j is not None:
                c["jitter"] = j
                if opt(parse_pct) is not None:
                    ignored.append("delay correlation")
        elif kw == "distribution":
            d = args[i] if i < n else ""
            i += 1
            if d not in ("uniform", "normal"):
                fail("distribution '%s' not supported (uniform, normal)" % d)
            c["dist"] = d
        elif kw in ("loss", "drop"):
            if i < n and args[i] == "random":
                i += 1
            if i < n and args[i] in ("state", "gemodel"):
                fail("loss %s is not supported by the user backend" % args[i])
            c["loss"] = nxt(parse_pct, "loss")
            if opt(parse_pct) is not None:
                ignored.append("loss correlation")
        elif kw == "duplicate":
            c["dup"] = nxt(parse_pct, "duplicate")
            if opt(parse_pct) is not None:
                ignored.append("duplicate correlation")
        elif kw == "corrupt":
            c["corrupt"] = nxt(parse_pct, "corrupt")
            if opt(parse_pct) is not None:
                ignored.append("corrupt correlation")
        elif kw == "reorder":
            c["reorder"] = nxt(parse_pct, "reorder")
            if opt(parse_pct) is not None:
                ignored.append("reorder correlation")
        elif kw == "gap":
            c["gap"] = int(nxt(num, "gap"))
        elif kw == "rate":
            c["rate"] = nxt(parse_rate, "rate")
            while i < n and num(args[i]) is not None:   # packetoverhead etc.
                i += 1
                ignored.append("rate overhead arguments")
        elif kw == "limit":
            c["limit"] = max(1, int(nxt(num, "limit")))
        else:
            fail("netem keyword '%s' is not supported by the user backend" % kw)
    for k in ("loss", "dup", "corrupt", "reorder"):
        if c[k] > 1.0:
            fail("%s above 100%%" % k)
    if c["reorder"] > 0 and c["gap"] == 0:
        c["gap"] = 1
    return c, ignored


class Impairment:
    """netem's decisions for one direction: arrive() returns the copies of
    a frame to send and when (absolute seconds, the caller's clock); [] when
    it is dropped.  queue_len is the number of frames the caller holds for
    later (netem's limit counts them)."""

    def __init__(self, cfg, rnd=None):
        self.cfg = cfg
        self.rnd = rnd or random.Random()
        self.counter = 0        # frames since the last reordered one
        self.last_dep = 0.0     # rate: when the link is free again
        self.st = dict(rx=0, lost=0, dup=0, corrupt=0, overlimit=0,
                       reordered=0)

    def arrive(self, now, pkt, queue_len=0):
        c, rnd, st = self.cfg, self.rnd, self.st
        st["rx"] += 1
        if c["loss"] and rnd.random() < c["loss"]:
            st["lost"] += 1
            return []
        copies = 1
        if c["dup"] and rnd.random() < c["dup"]:
            copies, st["dup"] = 2, st["dup"] + 1
        out = []
        for _ in range(copies):
            p = pkt
            if c["corrupt"] and rnd.random() < c["corrupt"] and len(p):
                b = bytearray(p)
                b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
                p, st["corrupt"] = bytes(b), st["corrupt"] + 1
            if (c["reorder"] and self.counter >= c["gap"] - 1
                    and rnd.random() < c["reorder"]):
                # sent at once, ahead of the delayed frames
                t, self.counter = now, 0
                st["reordered"] += 1
            else:
                self.counter += 1
                dl = c["delay"]
                if c["jitter"]:
                    if c["dist"] == "normal":
                        dl += rnd.gauss(0.0, c["jitter"])
                    else:
                        dl += rnd.uniform(-c["jitter"], c["jitter"])
                t = now + max(0.0, dl)
            # a frame dropped at the queue limit takes no link time
            # (netem checks the limit first)
            if queue_len + len(out) >= c["limit"]:
                st["overlimit"] += 1
                continue
            if c["rate"]:
                t = max(t, self.last_dep) + len(p) * 8.0 / c["rate"]
                self.last_dep = t
            out.append((t, p))
        return out


def open_if(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    try:
        s.setsockopt(263, 23, 1)       # SOL_PACKET, PACKET_IGNORE_OUTGOING
        ign = True
    except OSError:
        ign = False
    for opt in (socket.SO_RCVBUF, socket.SO_SNDBUF):
        try:
            s.setsockopt(socket.SOL_SOCKET, opt, 4 << 20)
        except OSError:
            pass
    s.bind((name, 3))
    s.setblocking(False)
    return s, ign


def recv_burst(s, ign):
    out = []
    for _ in range(256):
        try:
            if ign:
                out.append(s.recv(65600))
            else:
                d, a = s.recvfrom(65600)
                if a[2] != socket.PACKET_OUTGOING:
                    out.append(d)
        except (BlockingIOError, InterruptedError):
            break
        except OSError as e:
            # the link was taken down (sdp-testbed rail-down): the socket
            # reports it once; the path is dead until it comes back up
            if e.errno != errno.ENETDOWN:
                raise
            break
    return out


def forward(job, hostif, brif, pidfile, cfg):
    hs, hign = open_if(hostif)      # towards the host (impaired direction)
    bs, bign = open_if(brif)        # towards the bridge
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    tmp = pidfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(tmp, pidfile)
    sys.stderr.write("sdp-impair %s %s<->%s: %r\n" % (job, hostif, brif, cfg))
    imp = Impairment(cfg)
    heap, seq = [], 0
    st = dict(rx_host=0, txerr=0, down=0)

    def send(s, d):
        try:
            s.send(d)
        except OSError as e:
            if e.errno in (errno.ENXIO, errno.ENODEV):
                raise               # the interface is gone: teardown
            if e.errno == errno.ENETDOWN:
                st["down"] += 1     # rail-down: dropped, as on a cut link
            else:
                st["txerr"] += 1
    try:
        while True:
            now = time.monotonic()
            while heap and heap[0][0] <= now:
                send(hs, heapq.heappop(heap)[2])
            timeout = max(0.0, heap[0][0] - now) if heap else 1.0
            r, _, _ = select.select([hs, bs], [], [], timeout)
            if hs in r:
                for d in recv_burst(hs, hign):
                    st["rx_host"] += 1
                    send(bs, d)
            if bs in r:
                now = time.monotonic()
                for d in recv_burst(bs, bign):
                    for t, p in imp.arrive(now, d, len(heap)):
                        if t <= now:
                            send(hs, p)
                        else:
                            seq += 1
                            heapq.heappush(heap, (t, seq, p))
    finally:
        st.update(imp.st)
        sys.stderr.write("sdp-impair %s %s: %r\n" % (job, hostif, st))


def main(argv):
    if len(argv) == 2 and argv[0] == "--rate-bps":
        # for the testbed's kernel shaping: a tc rate in bit/s
        bps = parse_rate(argv[1])
        if bps is None or bps <= 0:
            sys.stderr.write("sdp-impair: '%s' is not a rate\n" % argv[1])
            return 2
        print(int(bps))
        return 0
    if "--" not in argv:
        sys.stderr.write("sdp-impair: usage: sdp-impair JOB HOSTIF BRIF "
                         "PIDFILE -- ARGS | --check -- ARGS\n")
        return 2
    k = argv.index("--")
    head, args = argv[:k], argv[k + 1:]
    try:
        cfg, ignored = parse(args)
    except ImpairError as e:
        sys.stderr.write("sdp-impair: %s\n" % e)
        return 2
    if head == ["--check"]:
        for w in sorted(set(ignored)):
            sys.stderr.write("sdp-impair: note: %s ignored by the user "
                             "backend\n" % w)
        return 0
    if len(head) != 5 or head[0] != "sdp-impair":
        sys.stderr.write("sdp-impair: bad arguments %r\n" % head)
        return 2
    _, job, hostif, brif, pidfile = head
    forward(job, hostif, brif, pidfile, cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
