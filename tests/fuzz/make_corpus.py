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


def tl_rec(mode, msg):
    """fuzz_tl: one record [len][mode][message]."""
    return struct.pack("<HB", len(msg), mode) + msg


def tl_hdr(am_id, flags=0):
    """Our 8-byte header; fuzz_tl fills iface id and incarnation (mode 1)."""
    return struct.pack("!BBHHH", am_id, flags, 0, 0, 0)


def tl_rma(kind, flags, addr, length, offset, data=b""):
    """Header + RMA header (key/addr put inside the region by mode 2)."""
    return (tl_hdr(kind, 0x80 | flags) +
            struct.pack("!QQQQIIIHH", 0, addr, length, offset, 0, 1, 0, 0, 0)
            + data)


SEEDS.update({
    "tl/am_short": tl_rec(1, tl_hdr(5) + b"hello world"),
    "tl/am_large": tl_rec(1, tl_hdr(6) + bytes(range(256)) * 10),
    "tl/am_bad_id": tl_rec(1, tl_hdr(100) + b"x" * 8) + tl_rec(1, tl_hdr(7)
                                                                + b"y"),
    "tl/am_wrong_iface": tl_rec(0, tl_hdr(5) + b"z" * 16),
    "tl/short_msg": tl_rec(1, b"\x05\x00\x00"),
    "tl/rts": tl_rec(5, tl_hdr(9) + bytes(64)),
    "tl/put": tl_rec(3, tl_rma(1, 0x40, 16, 64, 0, b"p" * 64)),
    "tl/get": tl_rec(3, tl_rma(2, 0, 128, 512, 0)),
    "tl/flush": tl_rec(3, tl_rma(3, 0, 0, 0, 0)),
    "tl/reply_unknown": tl_rec(1, tl_rma(5, 0, 0, 8, 0, b"r" * 8)),
    "tl/put_outside": tl_rec(1, tl_rma(1, 0x40, 0x1000, 64, 0, b"o" * 64)),
})

for name, data in SEEDS.items():
    path = os.path.join(HERE, "corpus", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
print(f"{len(SEEDS)} seeds written")
