#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""af_packet_kpath.py IFACE DST_MAC SRC_MAC DST_IP N SIZE - the kernel's
cost per frame of the path an af_packet port's frames take: send N
IPv4 frames (protocol 132, SIZE bytes with the Ethernet header) on IFACE
through an AF_PACKET socket with PACKET_QDISC_BYPASS (as DPDK's af_packet
PMD does), one send each, and print the kernel (sys) and user CPU
microseconds per frame (getrusage) and the wall time.  Run it inside a
testbed host namespace; bench/af_packet_kpath_ab.sh drives an A/B of the
kernel's settings.  sys time per frame is
CPU time, so it stays meaningful on a loaded machine where wall time and
throughput do not."""
import os, resource, socket, struct, sys, time
iface, dmac, smac, dip, n, size = sys.argv[1:7]
n, size = int(n), int(size)
mac = lambda m: bytes(int(x, 16) for x in m.split(":"))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
s.setsockopt(263, 20, 1)  # SOL_PACKET, PACKET_QDISC_BYPASS
s.bind((iface, 0))
iplen = size - 14
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, iplen, 0, 0x4000, 64, 132, 0,
                 socket.inet_aton("10.0.0.99"), socket.inet_aton(dip))
def csum(b):
    t = sum(struct.unpack("!10H", b)); t = (t & 0xffff) + (t >> 16); t = (t & 0xffff) + (t >> 16)
    return (~t) & 0xffff
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
frame = mac(dmac) + mac(smac) + b"\x08\x00" + ip + bytes(size - 34)
r0 = resource.getrusage(resource.RUSAGE_SELF); t0 = time.monotonic()
sent = 0
for i in range(n):
    try:
        s.send(frame); sent += 1
    except OSError:
        pass
r1 = resource.getrusage(resource.RUSAGE_SELF); t1 = time.monotonic()
print(f"sys_us_per_frame {(r1.ru_stime - r0.ru_stime) * 1e6 / n:.2f} "
      f"user_us_per_frame {(r1.ru_utime - r0.ru_utime) * 1e6 / n:.2f} "
      f"wall_us_per_frame {(t1 - t0) * 1e6 / n:.2f} sent {sent}")
