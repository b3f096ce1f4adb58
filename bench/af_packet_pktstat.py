#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""af_packet_pktstat.py PIDFILE... : every 0.1 s, read PACKET_STATISTICS (tp_packets,
tp_drops) of every packet socket of the given processes (duplicated with
pidfd_getfd, closed right after reading) until they exit; print totals.
Reading resets the kernel counters (DPDK 22.11's af_packet PMD never reads
them, so its stats show no ring drops).  tp_drops > 0 means the PMD's RX
ring was full when the kernel delivered a frame."""
import ctypes, os, socket, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_getfd = 438
SOL_PACKET, PACKET_STATISTICS = 263, 6
def sample(pid, tot):
    pfd = os.pidfd_open(pid)
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if not os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                    continue
            except OSError:
                continue
            nfd = libc.syscall(SYS_pidfd_getfd, pfd, int(fd), 0)
            if nfd < 0:
                continue
            s = socket.socket(fileno=nfd)
            try:
                p, d = struct.unpack("II", s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
                tot[0] += p; tot[1] += d; n += 1
            except OSError:
                pass
            finally:
                s.close()
    finally:
        os.close(pfd)
    tot[2] = max(tot[2], n)
pidfiles = sys.argv[1:]
deadline = time.time() + 60
pids = {}
while time.time() < deadline and len(pids) < len(pidfiles):
    for f in pidfiles:
        if f not in pids and os.path.exists(f):
            pids[f] = int(open(f).read())
    time.sleep(0.05)
tot = {f: [0, 0, 0] for f in pids}
done = set()
while len(done) < len(pids):
    for f, pid in pids.items():
        if f in done:
            continue
        try:
            sample(pid, tot[f])
        except OSError:
            done.add(f)
    time.sleep(0.1)
for f, (p, d, n) in tot.items():
    print(f"{f}: packet sockets {n} tp_packets {p} tp_drops {d} (counts after the last sample before exit are lost)")
