#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""seed003 - seed 003 (Mohammed et al., SCTP multi-homing for MPI) on the
virtual testbed: large transfers between two ranks over 1, 2 and 3
independent paths ("rails"), each shaped to the same rate.

Two ranks, one namespace each, on the bridge fabric with --rails N: N
bridges, one veth per host each, each its own subnet (apps/sdp-testbed).
Every host port of every rail is shaped towards its host by the kernel's
token bucket (tc tbf, "--netem-rail R 'rate B'"), so the links, not the two
cores, are the bottleneck: N rails carry at most N x B.  The program is
bench/seed003_xfer.c: one MPI_Send of S MB (10^6 B) matched by one MPI_Recv,
answered with one byte; time per transfer, median of --reps after
--warmup, every word verified.  The ranks get one transport port per rail
(apps/sdp-mpirun --rails N) and UCX's multi-rail settings
UCX_MAX_EAGER_RAILS = UCX_MAX_RNDV_RAILS = N.

Transports (--tls):
  sctp_dpdk  one sctp_dpdk device per rail (the port variables list one
             entry per rail), af_packet ports in the namespaces.  Counted:
             SCTP retransmitted chunks, fast retransmissions and T3 timeouts
             (UCX_SCTP_DPDK_STATS=y, summed over the ranks), frames lost on
             the path (tbf drops on every rail port + the ports' own drop
             counters); retransmissions beyond the frames lost are
             spurious (a chunk resent that had not been lost).
  tcp        UCX's tcp transport on the kernel addresses of the same veths
             (UCX_NET_DEVICES=sdpnet0..N-1), the baseline; counted: the
             kernel's TCP RetransSegs in the ranks' namespaces.

Seed 003 (OMNeT++ simulation, link rates not given): 40 MB in 30.33 ms on
one path, 19.86 on two (1.53x), 23.85 on three (1.27x).  Goal here: >= 1.8x
on two rails and >= 2.6x on three.

  bench/seed003.py --json out.json --plot out.png          (full run)
  bench/seed003.py --quick                                 (20 and 40 MB, 2 reps)
Exit status: 0, 1 when a run failed, 77 (skip) without root or programs.
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
APPS = os.path.join(ROOT, "apps")
sys.path.insert(0, APPS)
import sdp_launch  # noqa: E402
sys.path.insert(0, HERE)
import bench_common  # noqa: E402

STATS_RE = re.compile(r"sctp_dpdk stats: (\{.*\})")
TBF_DROP_RE = re.compile(r"qdisc tbf .*?\n\s*Sent (\d+) bytes (\d+) pkt "
                         r"\(dropped (\d+), overlimits (\d+)")
# Seed 003, Tables I and II: execution time (ms) by size (MB) and paths.
SEED003_MS = {
    1: {20: 2.286814, 24: 4.464083, 28: 8.456284, 32: 13.645028,
        36: 19.722385, 40: 30.331633},
    2: {20: 1.351112, 24: 3.578660, 28: 6.659053, 32: 10.097254,
        36: 14.629627, 40: 19.855265},
    3: {20: 2.236239, 24: 4.111785, 28: 6.756544, 32: 11.328705,
        36: 15.363163, 40: 23.849022},
}
GOAL_SPEEDUP = {2: 1.8, 3: 2.6}


def log(msg):
    print(f"seed003: {msg}", file=sys.stderr, flush=True)


def rate_bps(s):
    return bench_common.rate_bps(s, "seed003")


def all_json(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def tbf_counters(tb, rails):
    """Per rail port: (tbf present, frames sent, frames dropped)."""
    res = {}
    sw = tb.env["SDP_NS_SW"]
    for r in range(rails):
        for h in range(2):
            port = f"h{h}" if r == 0 else f"h{h}r{r}"
            p = subprocess.run(["ip", "netns", "exec", sw, "tc", "-s",
                                "qdisc", "show", "dev", port],
                               capture_output=True, text=True, timeout=30)
            m = TBF_DROP_RE.search(p.stdout)
            res[port] = {"tbf": m is not None,
                         "pkts": int(m.group(2)) if m else 0,
                         "dropped": int(m.group(3)) if m else 0}
    return res


def tcp_retrans(tb):
    """Kernel TCP RetransSegs summed over the hosts' namespaces (fresh
    namespaces: the counters start at zero)."""
    total = 0
    for h in range(2):
        p = subprocess.run(["ip", "netns", "exec", tb.env[f"SDP_NS_{h}"],
                            "cat", "/proc/net/snmp"], capture_output=True,
                           text=True, timeout=30)
        rows = [ln.split() for ln in p.stdout.splitlines()
                if ln.startswith("Tcp:")]
        if len(rows) >= 2 and "RetransSegs" in rows[0]:
            total += int(rows[1][rows[0].index("RetransSegs")])
    return total


def run_one(mr, a, prog, tls, rails, job):
    env = list(a.env)
    if tls == "sctp_dpdk":
        env.insert(0, "UCX_SCTP_DPDK_STATS=y")
    prog_args = [prog, "--sizes-mb", a.sizes_mb, "--reps", str(a.reps),
                 "--warmup", str(a.warmup)]
    opts = mr.options(
        mpi=a.mpi, tls=tls, mtu=a.mtu, rate=None, pace_coll=False,
        maxrate="1G", idle_sleep_us=a.idle_sleep_us, env=env,
        program=prog_args, rails=rails,
        stream_map="comm")  # sdp-mpirun's default
    res = {"ok": False, "tls": tls, "rails": rails}
    limit = f" limit {a.limit}" if a.limit else ""
    shape = {r: f"rate {a.rate}{limit}" for r in range(rails)}
    with sdp_launch.Testbed("bridge", job=job, hosts=2, mtu=a.mtu,
                            kernel_ip=(tls == "tcp"), rails=rails,
                            netem_rails=shape) as tb:
        env_dir = mr.write_env_files(opts, tb, 2)
        with open(os.path.join(env_dir, "rank0.env")) as f:
            res["rank0_env"] = [ln.strip()[len("export "):] for ln in f
                                if "RAILS" in ln or "DEVARGS" in ln or
                                "_IP=" in ln or "NET_DEVICES" in ln]
        cmd = mr.mpi_command(opts, env_dir, 2)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        tb.procs.append(p)
        rc, out, err = sdp_launch.finish(p, a.timeout)
        res["wall_s"] = time.monotonic() - t0
        tbf = tbf_counters(tb, rails)
        retx_tcp = tcp_retrans(tb) if tls == "tcp" else None
    sizes = all_json(out)
    res["tbf"] = tbf
    res["tbf_everywhere"] = all(v["tbf"] for v in tbf.values())
    res["path_tbf_drops"] = sum(v["dropped"] for v in tbf.values())
    res["rail_pkts"] = {k: v["pkts"] for k, v in tbf.items()}
    if rc != 0 or not sizes or any(s.get("errors") for s in sizes):
        res["error"] = f"rc {rc}; stderr tail: {err[-2500:]}"
        res["sizes"] = sizes
        return res
    res.update(ok=True, sizes=sizes)
    if tls == "tcp":
        res["tcp_retrans_segs"] = retx_tcp
        return res
    stats = []
    for m in STATS_RE.finditer(err):
        try:
            stats.append(json.loads(m.group(1)))
        except ValueError:  # a line garbled by another rank's output
            pass
    if len(stats) < 2:
        log(f"counters of {len(stats)} stats lines read (2 ranks)")
    # One line per device ("dev": "sdpK") with several ports; usrsctp's
    # counters in it are process-wide: count them once per process (the
    # sdp0 line, or every line of a single-port build without "dev").
    us = [s["usrsctp"] for s in stats if s.get("dev", "sdp0") == "sdp0"]
    res["stats_devs"] = sorted({s.get("dev", "sdp0") for s in stats})
    port_drops = sum(sum(s.get("dp", {}).get("drops", {}).values())
                     for s in stats)
    retx = sum(u.get("retrans_chunks", 0) for u in us)
    lost = res["path_tbf_drops"] + port_drops
    res.update(stats_lines=len(stats), retrans=retx,
               fast_retrans=sum(u.get("fast_retrans_chunks", 0) for u in us),
               t3_timeouts=sum(u.get("t3_timeouts", 0) for u in us),
               data_chunks=sum(u.get("data_chunks_out", 0) for u in us),
               port_drops=port_drops, frames_lost=lost,
               spurious_retrans=max(0, retx - lost))
    return res


def summarise(out):
    """Per transport: median time per size per rail count, speed-ups."""
    summ = {}
    for tls in out["tls"]:
        by_rails = {}
        for r in out["runs"]:
            if r["tls"] != tls or not r["ok"]:
                continue
            by_rails[r["rails"]] = {s["size_mb"]: s["median_ms"]
                                    for s in r["sizes"]}
        sp = {}
        base = by_rails.get(1, {})
        for n, t in by_rails.items():
            sp[n] = {mb: base[mb] / ms for mb, ms in t.items()
                     if mb in base and ms > 0}
        summ[tls] = {"median_ms": by_rails, "speedup_vs_1": sp}
    return summ


def table(out):
    lines = []
    sizes = [int(x) for x in out["sizes_mb"].split(",")]
    big = max(sizes)
    for tls in out["tls"]:
        s = out["summary"][tls]
        lines.append(f"{tls}: every rail shaped to {out['rate']} (tbf, queue "
                     f"{out.get('limit', 1000)} frames), "
                     f"median of {out['reps']} transfers, ms")
        lines.append(f"{'rails':>5} " + " ".join(f"{mb:>8}MB" for mb in sizes)
                     + f" {'x@' + str(big) + 'MB':>9} {'Mbit/s':>7} "
                     f"{'retx':>6} {'T3':>4} {'spur.':>6} {'lost':>5}")
        for n in out["rails"]:
            t = s["median_ms"].get(n)
            run = next((r for r in out["runs"]
                        if r["tls"] == tls and r["rails"] == n), None)
            if not t:
                why = (run or {}).get("error", "not run")
                lines.append(f"{n:>5} FAILED: {why.splitlines()[0][:150]}")
                continue
            sp = s["speedup_vs_1"].get(n, {}).get(big)
            rate = big * 8e6 / (t[big] / 1e3) / 1e6 if big in t else 0
            if tls == "tcp":
                cnt = f"{run.get('tcp_retrans_segs', 0):>6} {'-':>4} " \
                      f"{'-':>6} {run.get('path_tbf_drops', 0):>5}"
            else:
                cnt = f"{run['retrans']:>6} {run['t3_timeouts']:>4} " \
                      f"{run['spurious_retrans']:>6} {run['frames_lost']:>5}"
            lines.append(f"{n:>5} " + " ".join(
                f"{t.get(mb, float('nan')):>10.1f}" for mb in sizes) +
                f" {(f'{sp:.2f}x' if sp else '-'):>9} {rate:>7.0f} {cnt}")
        lines.append("")
    lines.append("seed 003 (simulation), 40 MB: 1 path 30.33 ms, 2 paths "
                 "19.86 (1.53x), 3 paths 23.85 (1.27x); goal >= 1.8x / 2.6x")
    return "\n".join(lines)


def table_rows(out):
    """seeds.py's rows (its ROW_KEYS): sctp_dpdk's speed-up at the largest
    size over one rail, for each rail count above one, against the seed's
    simulation and the goal."""
    big = str(max(int(x) for x in out["sizes_mb"].split(",")))
    sp = out["summary"].get("sctp_dpdk", {}).get("speedup_vs_1", {})
    seed = out["seed003_ms"]
    rows = []
    for n in out["rails"]:
        if n == 1:
            continue
        key = str(n) if str(n) in sp else n
        ours = sp.get(key, {}).get(big) or sp.get(key, {}).get(int(big))
        theirs = seed["1"][big] / seed[str(n)][big] \
            if str(n) in seed and big in seed[str(n)] else None
        goal = out["goal_speedup"].get(str(n))
        rows.append({
            "seed": "003",
            "experiment": f"{big} MB over {n} rails vs 1 (sctp_dpdk)",
            "theirs": f"{theirs:.2f}x" if theirs else "-",
            "ours": f"{ours:.2f}x" if ours else "failed",
            "ratio": f"{ours / theirs:.2f}" if ours and theirs else "-",
            "goal": f">= {goal}x" if goal else "-",
            "met": ("yes" if ours >= goal else "no") if ours and goal
            else "?",
            "note": f"median of {out['reps']} transfers"})
    return rows


def plot(out, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = [int(x) for x in out["sizes_mb"].split(",")]
    big = max(sizes)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    colors = {1: "#1f77b4", 2: "#2ca02c", 3: "#d62728", 4: "#9467bd"}
    styles = {"sctp_dpdk": "-", "tcp": "--"}
    ax = axes[0]
    for tls in out["tls"]:
        for n, t in sorted(out["summary"][tls]["median_ms"].items()):
            xs = [mb for mb in sizes if mb in t]
            ax.plot(xs, [t[mb] / 1e3 for mb in xs], styles.get(tls, "-"),
                    marker="o", color=colors.get(n, "k"),
                    label=f"{tls}, {n} rail{'s' if n > 1 else ''}")
    ax.set_xlabel("transfer size (MB)")
    ax.set_ylabel("time per transfer, median (s)")
    ax.set_title(f"every rail {out['rate']} (tbf)", fontsize=9)
    ax.legend(fontsize=8)
    ax = axes[1]
    rails = out["rails"]
    ax.plot(rails, rails, ":", color="gray", label="ideal (N x one rail)")
    seed = [SEED003_MS[1][40] / SEED003_MS[n][40] for n in rails
            if n in SEED003_MS]
    ax.plot([n for n in rails if n in SEED003_MS], seed, "s-", color="#7f7f7f",
            label="seed 003, 40 MB (simulation)")
    goal = [(n, GOAL_SPEEDUP.get(n, 1.0)) for n in rails]
    ax.plot([g[0] for g in goal], [g[1] for g in goal], "^", color="k",
            label="goal")
    for tls in out["tls"]:
        sp = out["summary"][tls]["speedup_vs_1"]
        xs = [n for n in rails if big in sp.get(n, {})]
        ax.plot(xs, [sp[n][big] for n in xs], styles.get(tls, "-"),
                marker="o", label=f"{tls}, {big} MB")
    ax.set_xlabel("rails")
    ax.set_ylabel("speed-up vs one rail")
    ax.set_xticks(rails)
    ax.legend(fontsize=8)
    ax = axes[2]
    labels, retx, lost = [], [], []
    for r in out["runs"]:
        if not r["ok"]:
            continue
        labels.append(f"{r['tls']}\n{r['rails']}r")
        if r["tls"] == "tcp":
            retx.append(r.get("tcp_retrans_segs", 0))
        else:
            retx.append(r["retrans"])
        lost.append(r.get("frames_lost", r.get("path_tbf_drops", 0)))
    x = range(len(labels))
    ax.bar([i - 0.2 for i in x], retx, 0.4,
           label="retransmissions (SCTP chunks / TCP segments)")
    ax.bar([i + 0.2 for i in x], lost, 0.4, label="frames lost on the path")
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("count per run (all transfers)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    log(f"plot written to {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rails", default="1,2,3",
                    help="rail counts, comma separated (default 1,2,3)")
    ap.add_argument("--sizes-mb", default="20,24,28,32,36,40")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--rate", default="200mbit",
                    help="tbf rate of every rail port (default 200mbit)")
    ap.add_argument("--limit", type=int, default=0,
                    help="tbf queue of every rail port, frames of the MTU "
                    "(default: the testbed's 1000, netem's default)")
    ap.add_argument("--tls", default="sctp_dpdk,tcp",
                    help="transports, comma separated: sctp_dpdk, tcp")
    ap.add_argument("--mpi", choices=["mpich", "openmpi"], default="mpich",
                    help="MPI (tcp needs mpich: Open MPI's PMIx client "
                    "cannot leave a namespace)")
    ap.add_argument("--mtu", type=int, default=sdp_launch.DEFAULT_MTU)
    ap.add_argument("--idle-sleep-us", default="auto")
    ap.add_argument("--env", action="append", default=[],
                    help="extra KEY=VALUE for every rank of every run")
    ap.add_argument("--timeout", type=int, default=600,
                    help="per run (all sizes of one rail count), seconds")
    ap.add_argument("--quick", action="store_true",
                    help="20 and 40 MB, 2 transfers each (a smoke run)")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    a = ap.parse_args()
    if a.quick:
        a.sizes_mb, a.reps = "20,40", 2
    if a.plot:
        sdp_launch.need_matplotlib("seed003", __file__, "--plot")
    rate_bps(a.rate)
    tls_list = a.tls.split(",")
    for t in tls_list:
        if t not in ("sctp_dpdk", "tcp"):
            ap.error(f"--tls {t!r}: expected sctp_dpdk or tcp")
    if "tcp" in tls_list and a.mpi != "mpich":
        ap.error("--tls tcp needs --mpi mpich")
    rails = [int(x) for x in a.rails.split(",")]
    if any(not 1 <= n <= 8 for n in rails):
        ap.error("--rails: counts 1..8")
    if os.geteuid() != 0:
        log("needs root (testbed namespaces): skipped")
        return 77
    build = os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))
    prog = os.path.join(os.environ.get("SDP_BENCH_BIN_DIR",
                                       os.path.join(build, "bench")),
                        f"seed003-xfer-{a.mpi}")
    if not os.access(prog, os.X_OK) or not os.path.exists(
            os.path.join(build, "ucx-tl", "libuct_sctp_dpdk.so")):
        log(f"{prog} or the sctp_dpdk transport is not built: skipped")
        return 77
    os.environ.setdefault("SDP_BUILD_DIR", build)
    mr = sdp_launch.load_mpirun()
    sdp_launch.install_signal_handlers()
    out = {"machine": {"nproc": os.cpu_count(),
                       "kernel": platform.release(),
                       "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")},
           "command": " ".join(
               [os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] +
               sys.argv[1:]),
           "rate": a.rate, "limit": a.limit or 1000, "sizes_mb": a.sizes_mb, "reps": a.reps,
           "warmup": a.warmup, "mpi": a.mpi, "mtu": a.mtu, "env": a.env,
           "tls": tls_list, "rails": rails,
           "port_list_sep": mr.PORT_LIST_SEP,
           "seed003_ms": SEED003_MS, "goal_speedup": GOAL_SPEEDUP,
           "runs": []}
    failed = False
    for tls in tls_list:
        for n in rails:
            job = f"s3{os.getpid() % 100000:05d}"[:8]
            r = run_one(mr, a, prog, tls, n, job)
            out["runs"].append(r)
            if r["ok"]:
                big = r["sizes"][-1]
                log(f"{tls} {n} rail(s): {big['size_mb']} MB in "
                    f"{big['median_ms']:.1f} ms ({big['mbit_s']:.0f} Mbit/s)"
                    f"; tbf on every port: {r['tbf_everywhere']}; "
                    f"rail pkts {r['rail_pkts']}")
            else:
                failed = True
                log(f"{tls} {n} rail(s): FAILED: {r['error'][-800:]}")
    out["summary"] = summarise(out)
    out["table"] = table_rows(out)
    bench_common.emit(out, table(out), a, plot, "seed003")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
