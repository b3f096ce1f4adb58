#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of the fuzz harnesses into corpus/ (run once;
the files are committed).  Layouts: see the comment at the top of each
harness."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUR = bytes([2, 0, 0, 0, 0, 1])
PEER = bytes([2, 0, 0, 0, 0, 2])


def csum(h):
    s = sum((h[i] << 8) | h[i + 1] for i in range(0, len(h), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(proto, l4, udp=False):
    payload = l4
    if udp:
        payload = struct.pack("!HHHH", 9899, 9899, 8 + len(l4), 0) + l4
        proto = 17
    h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload),
                              1, 0x4000, 64, proto, 0, bytes([10, 0, 0, 2]),
                              bytes([10, 0, 0, 1])))
    struct.pack_into("!H", h, 10, csum(bytes(h)))
    return OUR + PEER + b"\x08\x00" + bytes(h) + payload


def arp(op, dst, tha):
    return (dst + PEER + b"\x08\x06" +
            struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + PEER +
            bytes([10, 0, 0, 2]) + tha + bytes([10, 0, 0, 1]))


INIT = (struct.pack("!HHII", 5000, 5000, 0, 0) +
        struct.pack("!BBHIIHHI", 1, 0, 20, 0x12345678, 65536, 10, 10, 1))
DATA = (struct.pack("!HHII", 5000, 5000, 0x12345678, 0) +
        struct.pack("!BBHIHHI", 0, 3, 24, 7, 0, 0, 51) + b"ABCDEFGH")
REQ = arp(1, b"\xff" * 6, b"\0" * 6)
REP = arp(2, OUR, OUR)
SEEDS = {
    "frame/sctp_init": b"\x00" + frame(132, INIT),
    "frame/sctp_udp": b"\x01" + frame(132, INIT, udp=True),
    "frame/exp": b"\x00" + frame(253, b"x" * 16),
    "frame/arp_request": b"\x00" + REQ,
    "frame/arp_reply_padded": b"\x02" + REP + b"\0" * 18,
    "arp/raw_request": b"\x00" + bytes([len(REQ)]) + REQ,
    "arp/send_then_reply": b"\x02\x02\x01" + bytes([1, 2, 1, 1, 2, 0, 0]),
    "arp/send_retry_fail": b"\x02\x05" + b"\x03\x05" * 6,
    "arp/request_spoofed": (b"\x01" + bytes([0, 9, 1, 0, 9, 0, 0]) +
                            b"\x01" + bytes([0, 9, 1, 1, 9, 0, 0])),
    "link/init_crc": b"\x04" + INIT,
    "link/init_udp_crc": b"\x06" + INIT,
    "link/data_crc": b"\x04" + DATA,
    "link/raw_frame": b"\x01" + frame(132, INIT),
}

for name, data in SEEDS.items():
    path = os.path.join(HERE, "corpus", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
print(f"{len(SEEDS)} seeds written")
