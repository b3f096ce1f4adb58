#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A memif peer killed mid-transfer (meson test vanish): sdp-perf-ep streams
1 MiB messages over a memif pair, and 1 s after the server took the
test one end is killed
(SIGKILL, by the PID started here; the launcher removes the runtime dir
/var/run/dpdk/<prefix> the killed EAL leaves).  Both roles die in turn, the memif
server and the memif client, with a copying client and with the zero-copy
one (--memif-zc).  The survivor must not crash (no signal, no core), must
say what happened (sg's line naming the peer that left and peer_gone_ms,
then sdp-perf's "lost"), and must exit by itself within SURVIVOR_S.

Without sg peer_gone_ms (sctp/sg_gone.c) a receiver whose sender vanished
learns it only from failed heartbeats: the server took 39.7 s here, the
sending client ~7 s, and neither said why."""

import os
import select
import time

import harness
from harness import check, run

import sdp_launch

SURVIVOR_S = 15    # peer_gone_ms 1000 + exit; SCTP alone: ~40 s
RUN_BEFORE_KILL_S = 1.0   # after the test started
START_S = 60


def wait_line(p, text, timeout):
    """Read p's stderr (unbuffered: the rest stays for communicate) until
    @text appears, with a deadline of @timeout s; return what was read."""
    got = b""
    fd = p.stderr.fileno()
    end = time.time() + timeout
    while text.encode() not in got and time.time() < end:
        r, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
        if not r:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        got += chunk
    return got.decode(errors="replace")


def vanish(victim, zc):
    what = f"{victim} killed ({'zero-copy' if zc else 'copy'} client)"
    ep = sdp_launch.find_bin("sdp-perf-ep")
    with sdp_launch.Testbed("memif", job=f"vn{os.getpid()}",
                            memif_zc=zc) as tb:
        common = ["--json", "--deadline-s", "120"]
        srv = [ep, "--server", "--idle-exit-ms", "60000",
               "--dp", tb.dp_config(tb.server_idx)] + common
        cli = [ep, "--peer", tb.ip(tb.server_idx), "--test", "bw",
               "--size", "1048576", "--total", str(64 << 30),
               "--dp", tb.dp_config(tb.client_idx)] + common
        s = tb.start(tb.server_idx, srv)
        time.sleep(0.2)
        c = tb.start(tb.client_idx, cli)
        # the transfer is under way: the server took the client's START
        early = wait_line(s, "sdp-perf: test started", START_S)
        check("test started" in early, f"{what}: no test started within "
              f"{START_S} s\n{early}")
        time.sleep(RUN_BEFORE_KILL_S)
        v, surv = (s, c) if victim == "server" else (c, s)
        check(v.poll() is None and surv.poll() is None,
              f"{what}: an end stopped before the kill (server rc "
              f"{s.poll()}, client rc {c.poll()})")
        sdp_launch.kill(v)
        # the launcher that reaped the victim removed its EAL's runtime
        # dir (a SIGKILLed EAL cannot), not only sdp-testbed down later
        gone = os.path.join(sdp_launch.DPDK_RUN_ROOT, v.sdp_prefix)
        check(not os.path.exists(gone), f"{what}: the victim's DPDK "
              f"runtime dir {gone} is left after sdp_launch.kill reaped it")
        t0 = time.time()
        rc, out, err = sdp_launch.finish(surv, SURVIVOR_S)
        if surv is s:
            err = early + err
        secs = time.time() - t0
    tail = err[-3000:]
    check(rc != 124, f"{what}: the survivor still ran {SURVIVOR_S} s "
          f"after its peer died\n{tail}")
    check(rc >= 0, f"{what}: the survivor died by "
          f"{sdp_launch.signal_name(rc)}\n{tail}")
    check(rc != 0, f"{what}: the survivor reported success\n{tail}")
    check("the peer process left" in err and "peer_gone_ms" in err,
          f"{what}: the survivor did not say its memif peer left\n{tail}")
    check("lost" in err, f"{what}: sdp-perf did not report the loss\n{tail}")
    res = sdp_launch.last_json(out)
    check(res is not None and res["sg"].get("peer_gone_aborts") == 1,
          f"{what}: sg peer_gone_aborts "
          f"{res and res['sg'].get('peer_gone_aborts')}, want 1")
    print(f"    {what}: survivor exited rc {rc} after {secs:.1f} s")


if __name__ == "__main__":
    harness.require_root()
    for zc in (False, True):
        for victim in ("server", "client"):
            run(f"memif {victim} killed mid-transfer"
                f"{' (zero-copy client)' if zc else ''}: the survivor "
                f"says so and exits",
                lambda v=victim, z=zc: vanish(v, z))
    harness.done()
