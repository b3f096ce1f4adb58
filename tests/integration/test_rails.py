#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Testbed rails (sdp-testbed --rails N) with real traffic: DPDK ports
(sdp-ping, every payload verified) over each rail of a memif, a bridge
and a vhost (Open vSwitch with DPDK) testbed; rail-down cuts the DPDK
traffic of that rail only and rail-up restores it (bridge and vhost);
sdp-mpirun --rails 2 --rail-event runs an MPI job striped over both rails
by sctp_dpdk through a rail going down and up (the rail's association
waits out the outage: SCTP retransmits once the rail is back), every word
verified, on the bridge and on vhost (there each rank opens one
virtio_user port per rail on the one memfd of its EAL).  UCX tcp is not used there: after
such a cut its MPICH job finished every transfer and then hung in
finalize until the launcher's deadline.  Each testbed is torn down
even when a check fails (the Testbed context manager)."""

import json
import os
import re
import subprocess
import sys
import threading
import time

import harness
from harness import check, run, tool

sys.path.insert(0, harness.APPS)
import sdp_launch  # noqa: E402

RAILS = 3


def job(tag):
    return f"{tag}{os.getpid() % 1000000}"[:8]


def ping_every_rail(fabric):
    for r in range(RAILS):
        res = tool("sdp-ping", "--fabric", fabric, "--rails", str(RAILS),
                   "--rail", str(r), "--count", "5000", "--window", "16",
                   "--job", job(f"p{fabric[0]}"))
        c = res["client"]
        check(res["rail"] == r and c["verified"] == 5000 and c["lost"] == 0,
              f"{fabric} rail {r}: verified {c['verified']} lost {c['lost']}")
        print(f"    {fabric} rail {r}: 5000 verified, p50 "
              f"{c['rtt_us_p50']:.1f} us")


def test_memif_every_rail():
    ping_every_rail("memif")


def test_bridge_every_rail():
    ping_every_rail("bridge")


def test_vhost_every_rail():
    ping_every_rail("vhost")


def ping_pair(tb, rail, count):
    """sdp-ping endpoints on one rail of tb: (verified, lost, client rc)."""
    ep = sdp_launch.find_bin("sdp-ping-ep")
    srv = [ep, "--server", "--json", "--idle-exit-ms", "3000",
           "--dp", tb.dp_config(tb.server_idx, rail=rail)]
    cli = [ep, "--json", "--peer", tb.ip(tb.server_idx, rail), "--count",
           str(count), "--timeout-ms", "300",
           "--dp", tb.dp_config(tb.client_idx, rail=rail)]
    (crc, cout, cerr), _ = sdp_launch.run_pair(tb, srv, cli, 120,
                                               server_grace=30)
    c = sdp_launch.last_json(cout)
    if c is None:
        return 0, count, crc, cerr[-1500:]
    return c["verified"], c["lost"], crc, cerr[-1500:]


def rail_status(tb):
    r = subprocess.run([sdp_launch.TESTBED, "status", "--job", tb.job],
                       capture_output=True, text=True, timeout=60)
    return r.stdout


def switch_rx(tb, rail, ovs_dir=None):
    """Frames the vhost switch took from the ports of a rail and forwarded:
    the packet count of every OpenFlow rule of br<rail> (the testbed's
    static flows; every frame from a host's port matches one).  The
    switch's revalidators pull these counts from its datapath every
    ~0.1 s (max-revalidator), so a count lags the frames by that much.
    (The vhost ports' own counters are not used: ovs-ofctl dump-ports
    prints them as "?" on this switch, during a run as well.)"""
    d = ovs_dir or tb.env["SDP_OVS_DIR"]
    r = subprocess.run(["ovs-ofctl", "--timeout=10", "dump-aggregate",
                        f"unix:{d}/br{rail}.mgmt"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"ovs-ofctl dump-aggregate br{rail}: "
          f"{r.stderr}")
    m = re.search(r"packet_count=(\d+)", r.stdout)
    check(m is not None, f"ovs-ofctl dump-aggregate br{rail}: no "
          f"packet_count in {r.stdout!r}")
    return int(m.group(1))


def settled_rx(tb, rail):
    """switch_rx once two reads 0.3 s apart agree (at most 3 s)."""
    a = switch_rx(tb, rail)
    for _ in range(10):
        time.sleep(0.3)
        b = switch_rx(tb, rail)
        if a == b:
            break
        a = b
    return a


def rail_down_cuts(fabric):
    with sdp_launch.Testbed(fabric, job=job(f"d{fabric[0]}"), hosts=2,
                            rails=2) as tb:
        rxa = settled_rx(tb, 1) if fabric == "vhost" else 0
        v, lost, rc, err = ping_pair(tb, 1, 200)
        check(v == 200, f"rail 1 before rail-down: verified {v} of 200 "
              f"(rc {rc}) {err}")
        if fabric == "vhost":
            rxb = settled_rx(tb, 1)
            check(rxb >= rxa + 400, f"the switch counted {rxb - rxa} "
                  "frames on rail 1 for 200 probes and their answers")
        tb.rail_down(1)
        check("rail 1: DOWN" in rail_status(tb),
              f"status does not list rail 1 as DOWN:\n{rail_status(tb)}")
        rx0 = settled_rx(tb, 1) if fabric == "vhost" else 0
        v, lost, rc, err = ping_pair(tb, 1, 20)
        check(v == 0, f"rail 1 down: {v} probes verified, expected none")
        if fabric == "vhost":
            # neither host's port gave the switch a frame: both
            # directions are cut at the switch, not only the replies
            rx1 = settled_rx(tb, 1)
            check(rx1 == rx0, f"rail 1 down: the switch took {rx1 - rx0} "
                  "frames from the rail's ports, expected none")
        print(f"    {fabric} rail 1 down: 0 of 20 verified (client rc {rc})")
        v, lost, rc, err = ping_pair(tb, 0, 200)
        check(v == 200, f"rail 0 while rail 1 is down: verified {v} of 200"
              f" (rc {rc}) {err}")
        tb.rail_down(1, up=True)
        check("rail 1: DOWN" not in rail_status(tb),
              "status still lists rail 1 as DOWN after rail-up")
        v, lost, rc, err = ping_pair(tb, 1, 200)
        check(v == 200, f"rail 1 after rail-up: verified {v} of 200 "
              f"(rc {rc}) {err}")


def test_rail_down_cuts_dpdk_traffic():
    rail_down_cuts("bridge")


def test_vhost_rail_down_cuts_dpdk_traffic():
    rail_down_cuts("vhost")


def xfer_prog(mpi):
    prog = os.path.join(os.environ.get("SDP_BENCH_BIN_DIR", os.path.join(
        harness.ROOT, "build", "bench")), f"seed003-xfer-{mpi}")
    check(os.access(prog, os.X_OK), f"{prog} is not built: ninja -C build "
          f"bench/seed003-xfer-{mpi} (or set SDP_BENCH_BIN_DIR)")
    return prog


def mpirun_xfer(args):
    """apps/sdp-mpirun ARGS (its options, then the transfer program and
    its own): the completed run and its JSON results, checked: rc 0, a
    result and no verification error (else the launcher's own words)."""
    r = subprocess.run([os.path.join(harness.APPS, "sdp-mpirun")] + args,
                       capture_output=True, text=True, timeout=300)
    res = [json.loads(ln) for ln in r.stdout.splitlines()
           if ln.startswith("{")]
    check(r.returncode == 0 and res and res[0]["errors"] == 0,
          f"job rc {r.returncode}, result {res}\n"
          f"{harness.job_failure(r)}")
    return r, res


def shaped_xfer(tag, launcher_extra=(), prog_extra=()):
    """MPICH's 10 MB x 10 transfer job over sctp_dpdk on two bridge rails,
    each shaped to 200 Mbit/s by the testbed's tbf, with STATS: mpirun_xfer
    of it (launcher_extra: more sdp-mpirun options, prog_extra: more of
    the transfer program's)."""
    return mpirun_xfer(
        ["--mpi", "mpich", "--tls", "sctp_dpdk", "--fabric", "bridge",
         "--rails", "2",
         "--netem-rail", "0", "rate 200mbit",
         "--netem-rail", "1", "rate 200mbit"] + list(launcher_extra) +
        ["--env", "UCX_SCTP_DPDK_STATS=y", "--timeout", "240",
         "--job", job(tag), "-np", "2", xfer_prog("mpich"),
         "--sizes-mb", "10", "--reps", "10"] + list(prog_extra))


def stats_of(stderr, garbled=None):
    """Every rank's sctp_dpdk stats line (UCX_SCTP_DPDK_STATS=y); the
    first 300 characters of each line that is not readable JSON go to
    garbled when given."""
    stats = []
    for ln in stderr.splitlines():
        if "sctp_dpdk stats: " in ln:
            try:
                stats.append(json.loads(ln.split("sctp_dpdk stats: ", 1)[1]))
            except ValueError:
                if garbled is not None:
                    garbled.append(ln[:300])
    return stats


def striped(mpi, fabric, rails):
    """An MPI job over sctp_dpdk with one port per rail: data verified and
    every rail's port of the sender carries a fair share of the frames."""
    r, res = mpirun_xfer(
        ["--mpi", mpi,
         "--fabric", fabric, "--rails", str(rails),
         "--env", "UCX_SCTP_DPDK_STATS=y", "--timeout", "240",
         "--job", job("m"), "-np", "2", xfer_prog(mpi),
         "--sizes-mb", "16", "--reps", "3"])
    garbled = []
    stats = stats_of(r.stderr, garbled)
    # a line the launcher split or interleaved with another rank's output
    # cannot be read: say so, not "a rail below its share"
    check(not garbled, f"unreadable STATS lines (interleaved output?): "
          f"{garbled}")
    devs = sorted({s.get("dev") for s in stats})
    check(devs == [f"sdp{k}" for k in range(rails)],
          f"stats of devices {devs}, expected sdp0..sdp{rails - 1}")
    # the sender (rank 0) has the rail-0 address ending in .1
    tx = {s["dev"]: s["dp"]["tx_pkts"] for s in stats
          if s["ip"].endswith(".1")}
    total = sum(tx.values())
    check(len(tx) == rails and all(v >= total / rails / 2
                                   for v in tx.values()),
          f"rank 0 frames per rail {tx}: a rail below half its share "
          f"(STATS lines: {[(s['dev'], s['ip']) for s in stats]})")
    print(f"    {mpi} {fabric} {rails} rails: 16 MB in "
          f"{res[0]['median_ms']:.0f} ms, rank 0 frames per rail {tx}")


def test_striped_mpich_bridge_3():
    striped("mpich", "bridge", 3)


def test_striped_openmpi_memif_2():
    striped("openmpi", "memif", 2)




def sender_t3(stats):
    """Rank 0's (address .1) usrsctp T3 timeouts (process-wide counter)."""
    t3 = [s["usrsctp"]["t3_timeouts"] for s in stats
          if s["ip"].endswith(".1") and s["dev"] == "sdp0"]
    check(len(t3) == 1, f"rank 0's sdp0 stats line missing: {stats}")
    return t3[0]


def test_shaped_rails_no_timeouts():
    """Both rails shaped by the testbed's tbf (200 Mbit/s, a queue of 1000
    jumbo frames) and nothing cut: the sender's SCTP sees no loss, so no
    retransmission timeout may fire.  DPDK's af_packet leaves frames in its
    TX ring when the socket's send buffer is full (skbs queued in the tbf
    stay charged to it) and only the next burst sends them; before
    dp_afp_kick.c that next burst was a T3 timeout: 29 of them here, ~1000
    chunks retransmitted, the first 10 MB transfer 3.5-6 s instead of
    ~0.25 s."""
    r, res = shaped_xfer("t")
    stats = stats_of(r.stderr)
    t3 = sender_t3(stats)
    kicks = {s["dev"]: s["dp"]["afp_kick_bytes"] for s in stats
             if s["ip"].endswith(".1")}
    check(t3 <= 5, f"rank 0: {t3} SCTP retransmission timeouts without "
          f"any loss (expected at most 5: a descheduled peer); 10 MB "
          f"transfers (ms) {res[0]['times_ms']}; bytes our af_packet "
          f"kicks sent per rail {kicks}")
    print(f"    rank 0: {t3} T3 timeouts; 10 MB transfers (ms): "
          f"{res[0]['times_ms']}; af_packet kick bytes per rail {kicks}")


def test_mpirun_rail_event():
    r, res = shaped_xfer(
        "e", ["--rail-event", "2.5:down:1", "--rail-event", "4:up:1"],
        # transfers go on past rail-up even where they are fast
        ["--min-seconds", "5"])
    events = [ln for ln in r.stderr.splitlines() if "rail-event:" in ln]
    check(len(events) == 2 and " rail 1 down at " in events[0] and
          " rail 1 up at " in events[1],
          f"rail events printed: {events}\n{r.stderr[-2000:]}")
    print(f"    {events[0].split(': ', 1)[1]}; {events[1].split(': ', 1)[1]}")
    print(f"    10 MB transfers (ms): {res[0]['times_ms']}; rank 0: "
          f"{sender_t3(stats_of(r.stderr))} T3 timeouts")


class RailSampler(threading.Thread):
    """Samples, every 0.2 s while a vhost job runs, whether its rail is
    down (the testbed's rail<R>.down, seen before and after the counters
    are read) and the frames the switch took from the rail's ports."""

    def __init__(self, jobid, rail):
        super().__init__(daemon=True)
        self.run_dir = f"/run/sdp/{jobid}"
        self.rail = rail
        self.samples = []  # (down, rx)
        self.stop = threading.Event()

    def run(self):
        mark = os.path.join(self.run_dir, f"rail{self.rail}.down")
        # bounded: the job's own deadline is 240 s
        for _ in range(int(300 / 0.2)):
            if self.stop.wait(0.2):
                return
            down = os.path.exists(mark)
            try:
                rx = switch_rx(None, self.rail,
                               os.path.join(self.run_dir, "ovs"))
            except Exception:  # switch not up yet, or gone
                continue
            self.samples.append((down and os.path.exists(mark), rx))


def test_mpirun_vhost_rail_event():
    """MPICH over sctp_dpdk on two vhost rails (each rank: two virtio_user
    ports, one EAL memfd shared with both of the switch's vhost devices),
    rail 1 cut at 2.5 s and back at 4 s: every word verified, both rails
    carried the sender's frames, the switch took no frame from rail 1
    while it was down and took frames again after rail-up."""
    jobid = job("v")
    sampler = RailSampler(jobid, 1)
    sampler.start()
    try:
        r, res = mpirun_xfer(
            ["--mpi", "mpich", "--tls", "sctp_dpdk", "--fabric", "vhost",
             "--rails", "2",
             "--rail-event", "2.5:down:1", "--rail-event", "4:up:1",
             "--env", "UCX_SCTP_DPDK_STATS=y", "--timeout", "240",
             "--job", jobid, "-np", "2", xfer_prog("mpich"),
             "--sizes-mb", "10", "--reps", "10", "--min-seconds", "6"])
    finally:
        sampler.stop.set()
        sampler.join(30)
    s = sampler.samples
    down = [i for i, (d, _) in enumerate(s) if d]
    check(len(down) >= 4, f"only {len(down)} samples of the switch while "
          f"rail 1 was down (expected ~7 in 1.5 s): {s}")
    # the first two samples may still count frames from before the cut
    # (the counts lag ~0.1 s), the last may straddle rail-up (the ports
    # come up before the mark goes)
    held = {s[i][1] for i in down[2:-1]}
    check(len(held) == 1, f"the switch took frames from rail 1 while it "
          f"was down: rx counts {[s[i][1] for i in down]}")
    after = [rx for _, rx in s[down[-1] + 1:]]
    check(after and max(after) > s[down[0]][1], "no frame on rail 1 "
          f"after rail-up: rx counts after it {after}")
    events = [ln for ln in r.stderr.splitlines() if "rail-event:" in ln]
    check(len(events) == 2 and " rail 1 down at " in events[0] and
          " rail 1 up at " in events[1],
          f"rail events printed: {events}\n{r.stderr[-2000:]}")
    stats = stats_of(r.stderr)
    tx = {s["dev"]: s["dp"]["tx_pkts"] for s in stats
          if s["ip"].endswith(".1")}
    total = sum(tx.values())
    check(sorted(tx) == ["sdp0", "sdp1"] and
          all(v >= total / 2 / 4 for v in tx.values()),
          f"rank 0 frames per rail {tx}: a rail below a quarter of its "
          "share")
    check(res[0]["extra_reps"] > 0, f"the job moved no transfer past its "
          f"timed ones ({res[0]}): it may have ended before the rail events")
    t3 = sender_t3(stats)
    print(f"    {events[0].split(': ', 1)[1]}; {events[1].split(': ', 1)[1]}")
    print(f"    10 MB transfers (ms): {res[0]['times_ms']} and "
          f"{res[0]['extra_reps']} more, verified; rank 0 frames per rail "
          f"{tx}, {t3} T3 timeouts; switch rx on rail 1 held at "
          f"{s[down[0]][1]} over {len(down)} samples while down, "
          f"{max(after)} at the end")


def need_ovs():
    ovs = os.environ.get("SDP_TESTBED_OVS_VSWITCHD",
                         "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
    check(os.access(ovs, os.X_OK), f"{ovs} missing: the vhost rails need "
          "Open vSwitch with DPDK (apt-get install -y "
          "openvswitch-switch-dpdk)")


def vhost_test(fn):
    def t():
        need_ovs()
        fn()
    return t


if __name__ == "__main__":
    harness.require_root()
    run(f"memif: sdp-ping verified over each of {RAILS} rails",
        test_memif_every_rail)
    run(f"bridge: sdp-ping verified over each of {RAILS} rails",
        test_bridge_every_rail)
    run("bridge: rail-down cuts DPDK traffic on that rail only, rail-up "
        "restores it", test_rail_down_cuts_dpdk_traffic)
    run(f"vhost: sdp-ping verified over each of {RAILS} rails",
        vhost_test(test_vhost_every_rail))
    run("vhost: rail-down cuts DPDK traffic on that rail only (both "
        "directions at the switch), rail-up restores it",
        vhost_test(test_vhost_rail_down_cuts_dpdk_traffic))
    run("sdp-mpirun --fabric vhost --rails 2 --rail-event: MPI job through "
        "a rail down/up, both rails used",
        vhost_test(test_mpirun_vhost_rail_event))
    run("2 tbf-shaped bridge rails, nothing cut: no SCTP retransmission "
        "timeout", test_shaped_rails_no_timeouts)
    run("sdp-mpirun --rails 2 --rail-event: MPI job through a rail down/up",
        test_mpirun_rail_event)
    run("MPICH over sctp_dpdk striped over 3 bridge rails, verified",
        test_striped_mpich_bridge_3)
    run("Open MPI over sctp_dpdk striped over 2 memif rails, verified",
        test_striped_openmpi_memif_2)
    harness.done()
