#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Dataplane integration: two processes exchange IPv4 frames with sdp-ping
over memif and over af_packet in namespaces; every payload is verified byte
for byte; under loss and corruption nothing corrupted is counted delivered
and every received frame is accounted for by exactly one counter."""

import os
import subprocess
import sys

import harness
from harness import check, run, tool

sys.path.insert(0, harness.APPS)
import sdp_launch  # noqa: E402

N = 100000


def accounted(side, stats):
    """rx_pkts = delivered + valid ARP + memif close handshake frames +
    receive-side drops by reason (the transmit-side reasons count frames
    we sent, not received)."""
    tx_reasons = {"tx_full", "hold_full", "arp_timeout", "no_mbuf"}
    drops = sum(v for k, v in stats["drops"].items() if k not in tx_reasons)
    total = stats["delivered"] + stats["arp_rx"] + stats["bye_rx"] + drops
    check(stats["rx_pkts"] == total,
          f"{side}: rx_pkts {stats['rx_pkts']} != delivered "
          f"{stats['delivered']} + arp {stats['arp_rx']} + bye "
          f"{stats['bye_rx']} + drops {drops}")


def clean_run(fabric):
    r = tool("sdp-ping", "--fabric", fabric, "--count", str(N), "--size",
             "512", "--window", "32", "--timeout-ms", "2000")
    c, s = r["client"], r["server"]
    check(c["sent"] == N, f"sent {c['sent']}")
    check(c["verified"] == N and c["lost"] == 0 and c["corrupt"] == 0,
          f"verified {c['verified']} lost {c['lost']} corrupt "
          f"{c['corrupt']} of {N}")
    check(s["echoed"] >= N, f"server echoed {s['echoed']}")
    check(c["fin_acked"] and s["fin"], "FIN handshake")
    accounted("client", c["stats"])
    accounted("server", s["stats"])
    check(c["stats"]["arp_tx"] >= 1 or s["stats"]["arp_tx"] >= 1,
          "no ARP exchanged")
    print(f"    {fabric}: p50 {c['rtt_us_p50']:.1f} us, {c['pps']:.0f} pps")


def test_memif():
    clean_run("memif")


def test_bridge():
    clean_run("bridge")


def test_bridge_attach_from_host_namespace():
    """Processes in the host's namespace, ports opened in theirs."""
    r = tool("sdp-ping", "--fabric", "bridge", "--attach", "--count",
             "20000", "--window", "16")
    c = r["client"]
    check(c["verified"] == 20000 and c["lost"] == 0,
          f"verified {c['verified']} lost {c['lost']}")
    accounted("client", c["stats"])


def test_bridge_af_xdp():
    r = tool("sdp-ping", "--fabric", "bridge", "--xdp", "--count", "20000",
             "--window", "16")
    c = r["client"]
    check(c["verified"] == 20000 and c["lost"] == 0,
          f"af_xdp: verified {c['verified']} lost {c['lost']}")
    accounted("client", c["stats"])


def ip_in_receives(ns):
    """Frames the kernel's IPv4 stack of namespace ns took in (Ip:
    InReceives): ip_rcv counts every frame it routes, not the ones it drops
    at once as another host's (PACKET_OTHERHOST)."""
    snmp = subprocess.run(["ip", "netns", "exec", ns, "cat",
                           "/proc/net/snmp"], capture_output=True,
                          text=True, check=True, timeout=30).stdout
    head, vals = [l.split()[1:] for l in snmp.splitlines()
                  if l.startswith("Ip:")][:2]
    return int(vals[head.index("InReceives")])


def test_bridge_own_mac():
    """own_mac=1 on af_packet: the port sends and answers as 02:5d:<ip>
    while sdpnet0 keeps its MAC, so the host's kernel sees our frames as
    another host's and drops them before any route lookup (~0.7 us of
    kernel time per frame).  Without it every frame to us also
    goes through the kernel's ip_rcv and routing (InReceives grows by
    one per frame): the control run shows the counter works."""
    n = 5000
    ep = sdp_launch.find_bin("sdp-ping-ep")
    for own in (0, 1):
        with sdp_launch.Testbed("bridge", mtu=9000) as tb:
            s = tb.server_idx
            ns = tb.env[f"SDP_NS_{s}"]
            before = ip_in_receives(ns)
            srv = [ep, "--server", "--json", "--idle-exit-ms", "30000",
                   "--dp", tb.dp_config(s, f"own_mac={own}")]
            cli = [ep, "--json", "--peer", tb.ip(s), "--count", str(n),
                   "--size", "1000", "--window", "16", "--timeout-ms",
                   "2000", "--dp", tb.dp_config(tb.client_idx,
                                                f"own_mac={own}")]
            (crc, cout, cerr), (src, sout, serr) = sdp_launch.run_pair(
                tb, srv, cli, 300)
            c = sdp_launch.last_json(cout)
            check(crc == 0 and c is not None,
                  f"own_mac={own}: client rc {crc}\n{cerr[-3000:]}\n"
                  f"server: {serr[-3000:]}")
            got = ip_in_receives(ns) - before
            mac = subprocess.run(["ip", "netns", "exec", ns, "cat",
                                  "/sys/class/net/sdpnet0/address"],
                                 capture_output=True, text=True,
                                 check=True, timeout=30).stdout.strip()
        check(c["verified"] == n and c["lost"] == 0,
              f"own_mac={own}: verified {c['verified']} lost {c['lost']}")
        check(mac == tb.env[f"SDP_MAC_{s}"],
              f"own_mac={own}: sdpnet0's MAC changed to {mac}")
        if own:
            check(got < n // 10, f"own_mac=1: the server host's kernel "
                  f"took {got} of {n} frames into ip_rcv")
        else:
            check(got >= n, f"own_mac=0: InReceives grew by {got} only "
                  f"for {n} frames: the control does not count")
        print(f"    own_mac={own}: server host's ip_rcv took {got} frames "
              f"for {n} probes")


def test_bridge_loss_and_corruption():
    n = 5000
    r = tool("sdp-ping", "--fabric", "bridge", "--count", str(n), "--size",
             "512", "--window", "16", "--timeout-ms", "300",
             "--netem", "loss 2% corrupt 1%")
    c, s = r["client"], r["server"]
    check(c["sent"] == n, f"sent {c['sent']}")
    # every probe is either verified or lost; corrupted ones never count
    check(c["verified"] + c["lost"] == n,
          f"verified {c['verified']} + lost {c['lost']} != {n}")
    check(c["lost"] > 0, "impairment did not lose anything")
    # (how many are lost depends on the machine's load too: the impairment
    # forwarder is a user-space process; only require that most arrive)
    check(c["verified"] >= n // 2, f"only {c['verified']} of {n} verified")
    accounted("client", c["stats"])
    accounted("server", s["stats"])
    caught = (c["corrupt"] + s["bad"] +
              sum(c["stats"]["drops"].values()) +
              sum(s["stats"]["drops"].values()))
    check(caught > 0, "corruption was never detected anywhere")
    print(f"    lost {c['lost']}, corrupt payloads caught {c['corrupt']}, "
          f"dataplane drops client {c['stats']['drops']} "
          f"server {s['stats']['drops']}")


if __name__ == "__main__":
    harness.require_root()
    run("memif: 100k frames verified", test_memif)
    run("af_packet bridge: 100k frames verified", test_bridge)
    run("af_packet bridge, ports attached from the host namespace",
        test_bridge_attach_from_host_namespace)
    run("af_xdp bridge: 20k frames verified", test_bridge_af_xdp)
    run("af_packet bridge, own_mac=1: the host kernel drops our frames "
        "before routing", test_bridge_own_mac)
    run("af_packet bridge: 2% loss + 1% corruption", test_bridge_loss_and_corruption)
    harness.done()
