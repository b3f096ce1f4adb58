#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ping_vs_testpmd - sdp-ping against dpdk-testpmd on the same vdevs, as ratios.

For each fabric (a memif pair; two namespaces on a Linux bridge with
af_packet ports), in one run and on one testbed:

  (a) ours:    sdp-ping client  <->  sdp-ping server (our dataplane echoes)
  (b) testpmd: sdp-ping client  <->  dpdk-testpmd --forward-mode=5tswap
               (swaps MACs and IPv4 addresses; the payload is untouched, so
               the client still verifies every byte; it runs with
               --reflector because 5tswap keeps the probe type)
  (c) raw:     dpdk-testpmd txonly (64 B frames) -> dpdk-testpmd rxonly,
               one direction; Rx-pps read from --stats-period 1 output

(a) and (b) measure ping-pong RTT (window 1) and packet rate (window W);
(a)/(b) isolates the cost of our server-side stack against testpmd's
forwarding loop (the client is the same binary, same config).  (a) window
pps / (c) Rx-pps compares us with the one-direction ceiling of the vdev.

All our endpoints run with idle_sleep_us=0 (pure busy poll) like testpmd.
The client uses a static neighbour entry for the server (arp=IP@MAC) in (a)
and (b) alike, because a reflector cannot answer ARP.  Every measurement is
repeated --reps times, interleaved, and the median is reported.

  bench/ping_vs_testpmd.py --json out.json --plot docs/img/ping_vs_testpmd.png
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "apps"))
import sdp_launch  # noqa: E402

TESTPMD = os.environ.get("SDP_TESTPMD", "/usr/bin/dpdk-testpmd")
# MAC given to whichever process is the memif server (ours or testpmd), so
# the client's static neighbour entry is the same in (a) and (b).
MEMIF_SERVER_MAC = "02:5d:ff:00:00:01"
RX_PPS = re.compile(r"Rx-pps:\s+(\d+)")
TX_PPS = re.compile(r"Tx-pps:\s+(\d+)")


class Testpmd:
    """A dpdk-testpmd we started on a testbed endpoint; its output is read
    by threads so we can wait for "forwarding started" with a deadline."""
    READY = "packet forwarding - ports="

    def __init__(self, tb, i, argv):
        self.p = tb.start(i, argv)
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=self._pump, args=(f, buf),
                                         daemon=True)
                        for f, buf in ((self.p.stdout, self.out),
                                       (self.p.stderr, self.err))]
        for t in self.threads:
            t.start()

    @staticmethod
    def _pump(f, buf):
        for line in f:
            buf.append(line)

    def wait_ready(self, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(self.READY in line for line in list(self.out)):
                return
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("testpmd did not start forwarding within "
                           f"{timeout} s (rc {self.p.poll()}):\n"
                           + "".join(self.err)[-2000:])

    def stop(self, timeout=15):
        """SIGINT (testpmd's clean exit, final stats), then by deadline."""
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, 2)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                sdp_launch.stop(self.p)
        for t in self.threads:
            t.join(timeout=5)
        return self.p.returncode, "".join(self.out), "".join(self.err)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, tb, a):
        self.tb = tb
        self.a = a
        self.ep = sdp_launch.find_bin("sdp-ping-ep")
        self.ncpu = os.cpu_count() or 1
        self.s = tb.server_idx
        self.c = tb.client_idx

    # ---- helpers -----------------------------------------------------
    def vdev(self, i):
        v = self.tb.env[f"SDP_VDEV_{i}"]
        if self.tb.fabric == "memif" and i == self.s:
            v += f",mac={MEMIF_SERVER_MAC}"
        return v

    def server_mac(self):
        if self.tb.fabric == "memif":
            return MEMIF_SERVER_MAC
        return self.tb.env[f"SDP_MAC_{self.s}"]

    def dp(self, i, extra=""):
        cfg = self.tb.dp_config(i, "idle_sleep_us=0 link_wait_ms=20000 "
                                + extra)
        # same devargs as testpmd gets (the memif server's fixed MAC)
        return cfg.replace("dev=" + self.tb.env[f"SDP_VDEV_{i}"],
                           "dev=" + self.vdev(i), 1)

    def clean_memif_socket(self):
        """A memif server killed hard leaves its socket file behind."""
        sock = self.tb.env.get("SDP_MEMIF_SOCK")
        if sock and os.path.exists(sock):
            os.unlink(sock)

    def testpmd(self, i, tag, mode, extra=()):
        """argv of a testpmd forwarding on core i % ncpu, on endpoint i."""
        fwd = i % self.ncpu
        main = (fwd + 1) % self.ncpu
        argv = ["stdbuf", "-oL", TESTPMD, "-l", f"{fwd},{main}",
                "--main-lcore", str(main), "--no-pci", "--no-huge",
                "-m", "512", f"--file-prefix=sdp-{self.tb.job}-tp{tag}",
                f"--vdev={self.vdev(i)}", "--",
                f"--forward-mode={mode}", "--auto-start",
                "--stats-period", "1", "--rxq=1", "--txq=1",
                "--nb-cores=1", "--total-num-mbufs=32768"] + list(extra)
        return argv

    def client(self, window, count, reflector):
        argv = [self.ep, "--json", "--peer", self.tb.ip(self.s),
                "--count", str(count), "--size", str(self.a.size),
                "--window", str(window), "--timeout-ms", "1000"]
        if reflector:
            argv.append("--reflector")
        argv += ["--dp", self.dp(self.c, f"arp={self.tb.ip(self.s)}@"
                                 f"{self.server_mac()}")]
        return argv

    @staticmethod
    def check_client(c, what):
        if c is None:
            raise RuntimeError(f"{what}: client printed no result")
        if c["verified"] != c["sent"] or c["lost"] or c["corrupt"]:
            raise RuntimeError(
                f"{what}: {c['sent']} sent, {c['verified']} verified, "
                f"{c['lost']} lost, {c['corrupt']} corrupt")
        return c

    # ---- (a) ours <-> ours -------------------------------------------
    def ours(self, window, count):
        self.clean_memif_socket()
        srv = [self.ep, "--server", "--json", "--idle-exit-ms", "30000",
               "--dp", self.dp(self.s)]
        cli = self.client(window, count, reflector=False)
        (crc, cout, cerr), (src, sout, serr) = sdp_launch.run_pair(
            self.tb, srv, cli, self.a.deadline)
        c = sdp_launch.last_json(cout)
        if crc != 0 or c is None:
            raise RuntimeError(f"ours w{window}: client rc {crc}\n{cerr}\n"
                               f"--- server rc {src} ---\n{serr}")
        return self.check_client(c, f"ours w{window}")

    # ---- (b) ours -> testpmd 5tswap ----------------------------------
    def vs_testpmd(self, window, count):
        self.clean_memif_socket()
        srv = Testpmd(self.tb, self.s, self.testpmd(self.s, "e", "5tswap"))
        try:
            srv.wait_ready()
            cli = self.tb.start(self.c, self.client(window, count, True))
            crc, cout, cerr = sdp_launch.finish(cli, self.a.deadline)
        finally:
            src, sout, serr = srv.stop()
        c = sdp_launch.last_json(cout)
        if crc != 0 or c is None:
            raise RuntimeError(f"testpmd w{window}: client rc {crc}\n{cerr}"
                               f"\n--- testpmd rc {src} ---\n{serr[-2000:]}")
        return self.check_client(c, f"testpmd w{window}")

    # ---- (c) testpmd txonly -> rxonly --------------------------------
    def raw(self):
        self.clean_memif_socket()
        # receiver on the server end, sender on the client end: the
        # direction of the probes
        rx = Testpmd(self.tb, self.s, self.testpmd(self.s, "r", "rxonly"))
        tx, trc, tout = None, None, ""
        try:
            rx.wait_ready()
            tx = Testpmd(self.tb, self.c, self.testpmd(
                self.c, "t", "txonly", ["--txpkts=64"]))
            tx.wait_ready()
            end = time.monotonic() + self.a.raw_seconds
            while time.monotonic() < end:
                if rx.p.poll() is not None or tx.p.poll() is not None:
                    break
                time.sleep(0.2)
        finally:
            if tx is not None:
                trc, tout, terr = tx.stop()
            rrc, rout, rerr = rx.stop()
        rx_s = [int(x) for x in RX_PPS.findall(rout)]
        tx_s = [int(x) for x in TX_PPS.findall(tout)]
        if tx is None or steady(rx_s) == 0:
            raise RuntimeError(f"raw: no Rx-pps samples (rxonly rc {rrc}, "
                               f"txonly rc {trc})\n{rerr[-1500:]}")
        if rrc != 0 or trc != 0:
            # DPDK 22.11's memif PMD can crash (SIGSEGV) at shutdown when
            # the peer disconnects while its lcore still polls; the
            # per-second samples were already written (stdbuf -oL).
            log(f"raw: note: testpmd exit status rxonly {rrc}, txonly "
                f"{trc} at shutdown (samples kept)")
        return {"rx_pps": steady(rx_s), "tx_pps": steady(tx_s),
                "rx_samples": rx_s, "tx_samples": tx_s,
                "rx_rc": rrc, "tx_rc": trc}


def steady(samples):
    """Median of the per-second samples while traffic flowed: drop the
    zeros (before link up / after stop) and the first and last non-zero
    ones (partial seconds)."""
    nz = [s for s in samples if s > 0]
    if len(nz) >= 3:
        nz = nz[1:-1]
    return statistics.median(nz) if nz else 0


def median(xs):
    return statistics.median(xs) if xs else 0.0


def run_fabric(fabric, a):
    job = (a.job or "pv%d" % (os.getpid() % 1000000))[:8]
    log(f"{fabric}: testbed up (job {job})")
    res = {"fabric": fabric, "runs": {"ours_rtt": [], "ours_pps": [],
                                      "tp_rtt": [], "tp_pps": [], "raw": []}}
    with sdp_launch.Testbed(fabric, job=job) as tb:
        b = Bench(tb, a)
        res["vdev_server"] = b.vdev(b.s)
        res["vdev_client"] = b.vdev(b.c)
        for r in range(a.reps):
            # interleaved so slow phases of a noisy machine hit all kinds
            for key, fn in (("ours_rtt", lambda: b.ours(1, a.rtt_count)),
                            ("tp_rtt", lambda: b.vs_testpmd(1, a.rtt_count)),
                            ("ours_pps", lambda: b.ours(a.window,
                                                        a.pps_count)),
                            ("tp_pps", lambda: b.vs_testpmd(a.window,
                                                            a.pps_count)),
                            ("raw", b.raw)):
                t = time.monotonic()
                out = fn()
                res["runs"][key].append(out)
                if key == "raw":
                    brief = f"rx {out['rx_pps']:.0f} pps"
                elif key.endswith("rtt"):
                    brief = (f"p50 {out['rtt_us_p50']:.2f} us p99 "
                             f"{out['rtt_us_p99']:.2f} us")
                else:
                    brief = f"{out['pps']:.0f} pps"
                log(f"{fabric} rep {r + 1}/{a.reps} {key}: {brief} "
                    f"({time.monotonic() - t:.1f} s)")
    R = res["runs"]
    m = {
        "ours_rtt_p50": median([x["rtt_us_p50"] for x in R["ours_rtt"]]),
        "ours_rtt_p99": median([x["rtt_us_p99"] for x in R["ours_rtt"]]),
        "tp_rtt_p50": median([x["rtt_us_p50"] for x in R["tp_rtt"]]),
        "tp_rtt_p99": median([x["rtt_us_p99"] for x in R["tp_rtt"]]),
        "ours_pps": median([x["pps"] for x in R["ours_pps"]]),
        "tp_pps": median([x["pps"] for x in R["tp_pps"]]),
        "raw_rx_pps": median([x["rx_pps"] for x in R["raw"]]),
        "raw_tx_pps": median([x["tx_pps"] for x in R["raw"]]),
    }

    def ratio(x, y):
        return x / y if y else float("nan")
    m["ratio_rtt_p50"] = ratio(m["ours_rtt_p50"], m["tp_rtt_p50"])
    m["ratio_rtt_p99"] = ratio(m["ours_rtt_p99"], m["tp_rtt_p99"])
    m["ratio_pps"] = ratio(m["ours_pps"], m["tp_pps"])
    m["ratio_pps_raw"] = ratio(m["ours_pps"], m["raw_rx_pps"])
    m["ratio_tp_pps_raw"] = ratio(m["tp_pps"], m["raw_rx_pps"])
    res["median"] = m
    return res


def table(results, a):
    rows = [("metric (median of %d)" % a.reps,) +
            tuple(r["fabric"] for r in results)]

    def row(name, key, fmt):
        rows.append((name,) + tuple(fmt.format(r["median"][key])
                                    for r in results))
    row("RTT p50 us, ours<->ours", "ours_rtt_p50", "{:.2f}")
    row("RTT p50 us, ours<->testpmd 5tswap", "tp_rtt_p50", "{:.2f}")
    row("  ratio ours/testpmd", "ratio_rtt_p50", "{:.2f}x")
    row("RTT p99 us, ours<->ours", "ours_rtt_p99", "{:.2f}")
    row("RTT p99 us, ours<->testpmd 5tswap", "tp_rtt_p99", "{:.2f}")
    row("  ratio ours/testpmd", "ratio_rtt_p99", "{:.2f}x")
    row(f"pps (window {a.window}), ours<->ours", "ours_pps", "{:,.0f}")
    row(f"pps (window {a.window}), ours<->testpmd", "tp_pps", "{:,.0f}")
    row("  ratio ours/testpmd", "ratio_pps", "{:.2f}x")
    row("raw txonly->rxonly Rx-pps (64 B)", "raw_rx_pps", "{:,.0f}")
    row("  (sender's Tx-pps, same run)", "raw_tx_pps", "{:,.0f}")
    row("  ratio ours pps / raw", "ratio_pps_raw", "{:.3f}x")
    row("  ratio ours<->testpmd pps / raw", "ratio_tp_pps_raw", "{:.3f}x")
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("| " + " | ".join(
            (c.ljust(w[i]) if i == 0 else c.rjust(w[i]))
            for i, c in enumerate(r)) + " |")
        if k == 0:
            lines.append("|" + "|".join(
                "-" * (w[i] + 2) if i == 0 else "-" * (w[i] + 1) + ":"
                for i in range(len(w))) + "|")
    return "\n".join(lines)


def plot(results, a, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fabs = [r["fabric"] for r in results]
    M = [r["median"] for r in results]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
    xs = range(len(fabs))
    wd = 0.27
    series = [("sdp-ping <-> sdp-ping (ours)", "ours_pps", "#1f77b4"),
              ("sdp-ping <-> testpmd 5tswap", "tp_pps", "#ff7f0e"),
              ("testpmd txonly -> rxonly (raw, 1 dir)", "raw_rx_pps",
               "#7f7f7f")]
    for k, (lab, key, col) in enumerate(series):
        vals = [m[key] for m in M]
        bars = ax1.bar([x + (k - 1) * wd for x in xs], vals, wd, label=lab,
                       color=col)
        for bar, m in zip(bars, M):
            txt = {"ours_pps": f"{m['ratio_pps']:.2f}x tp\n"
                               f"{m['ratio_pps_raw']:.3f}x raw",
                   "tp_pps": f"{m['ratio_tp_pps_raw']:.3f}x raw",
                   "raw_rx_pps": ""}[key]
            ax1.annotate(f"{bar.get_height() / 1e3:,.0f}k\n{txt}".strip(),
                         (bar.get_x() + bar.get_width() / 2,
                          bar.get_height()), ha="center", va="bottom",
                         fontsize=7)
    ax1.set_yscale("log")
    ax1.set_xticks(list(xs))
    ax1.set_xticklabels(fabs)
    ax1.set_ylabel("packets/s (log)")
    ax1.set_title(f"rate: window {a.window}, {a.size} B payload")
    ax1.legend(fontsize=7, loc="upper right")
    ax1.margins(y=0.25)
    for k, (lab, key, col) in enumerate(
            [("ours <-> ours", "ours_rtt_p50", "#1f77b4"),
             ("ours <-> testpmd 5tswap", "tp_rtt_p50", "#ff7f0e")]):
        vals = [m[key] for m in M]
        bars = ax2.bar([x + (k - 0.5) * wd for x in xs], vals, wd,
                       label=lab, color=col)
        p99 = [m[key.replace("p50", "p99")] for m in M]
        ax2.plot([bar.get_x() + bar.get_width() / 2 for bar in bars], p99,
                 "v", color=col, markeredgecolor="black",
                 label=f"{lab}: p99")
        for bar, m in zip(bars, M):
            txt = (f"\n{m['ratio_rtt_p50']:.2f}x tp"
                   if key == "ours_rtt_p50" else "")
            ax2.annotate(f"{bar.get_height():.2f} us{txt}",
                         (bar.get_x() + bar.get_width() / 2,
                          bar.get_height()), ha="center", va="bottom",
                         fontsize=7)
    ax2.set_xticks(list(xs))
    ax2.set_xticklabels(fabs)
    ax2.set_ylabel("RTT, us (bars p50, markers p99)")
    ax2.set_title(f"ping-pong RTT: window 1, {a.size} B payload")
    ax2.legend(fontsize=7, loc="upper left")
    ax2.margins(y=0.25)
    fig.suptitle(f"sdp-ping vs dpdk-testpmd, same vdevs, median of {a.reps}"
                 f" (busy poll; {os.cpu_count()} cores)", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    log(f"plot written to {path}")


def machine():
    cpu = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True,
                             timeout=10).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except Exception:
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu,
            "kernel": platform.release(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--fabrics", default="memif,bridge",
                    help="comma-separated: memif, bridge (default both)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--size", type=int, default=64, help="payload bytes")
    ap.add_argument("--rtt-count", type=int, default=100000,
                    help="probes of the window-1 (RTT) runs")
    ap.add_argument("--pps-count", type=int, default=1000000,
                    help="probes of the windowed (pps) runs; runs much "
                    "shorter than 1 s\nmeasure first-touch page faults "
                    "more than the steady state")
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--raw-seconds", type=float, default=6.0,
                    help="duration of the txonly->rxonly run")
    ap.add_argument("--deadline", type=int, default=120,
                    help="seconds before one sdp-ping client is abandoned")
    ap.add_argument("--job", help="testbed job id, 1-8 letters/digits")
    ap.add_argument("--json", metavar="FILE", help="write all results")
    ap.add_argument("--plot", metavar="PNG", help="write the bar chart "
                    "(needs matplotlib)")
    ap.add_argument("--from-json", metavar="FILE", help="measure nothing: "
                    "print the table and plot from an earlier --json FILE")
    a = ap.parse_args()
    if a.plot:
        sdp_launch.need_matplotlib("ping_vs_testpmd", __file__, "--plot")
    if a.from_json:
        with open(a.from_json) as f:
            old = json.load(f)
        for k, v in old["params"].items():
            setattr(a, k, v)
        print(table(old["results"], a))
        if a.plot:
            plot(old["results"], a, a.plot)
        return 0
    fabrics = [f.strip() for f in a.fabrics.split(",") if f.strip()]
    for f in fabrics:
        if f not in ("memif", "bridge"):
            ap.error(f"--fabrics: unknown fabric {f!r}")
    if os.geteuid() != 0:
        print("ping_vs_testpmd: needs root (testbeds); skipping",
              file=sys.stderr)
        return 77
    if not os.access(TESTPMD, os.X_OK):
        print(f"ping_vs_testpmd: {TESTPMD} not found (package dpdk); "
              "skipping", file=sys.stderr)
        return 77
    if shutil.which("stdbuf") is None:
        sys.exit("ping_vs_testpmd: stdbuf (coreutils) not found")
    if (os.cpu_count() or 1) < 2:
        sys.exit("ping_vs_testpmd: needs at least 2 CPUs")
    sdp_launch.install_signal_handlers()
    t0 = time.monotonic()
    results = [run_fabric(f, a) for f in fabrics]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [os.path.relpath(os.path.abspath(sys.argv[0]), repo)] + sys.argv[1:]
    out = {"command": " ".join(cmd), "machine": machine(),
           "params": {"reps": a.reps, "size": a.size,
                      "rtt_count": a.rtt_count, "pps_count": a.pps_count,
                      "window": a.window, "raw_seconds": a.raw_seconds,
                      "raw_frame_bytes": 64, "idle_sleep_us": 0},
           "seconds": round(time.monotonic() - t0, 1),
           "results": results}
    print(table(results, a))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
        log(f"json written to {a.json}")
    if a.plot:
        plot(results, a, a.plot)
    log(f"done in {out['seconds']} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
