#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""seed001 - a small version of seed 001 (Takano et al., PSPacer/GridMPI):
pacing an all-to-all over shared bottleneck links, on the virtual testbed.

N ranks, one namespace each, on the bridge fabric.  Every host link is
impaired towards its host with netem-style "delay D rate B limit L" (the
user-space forwarder of apps/sdp-testbed), so each rank's inbound link is
a bottleneck of rate B that its N-1 peers share during an all-to-all.  The
program is bench/seed001_alltoall.c (iterations of MPI_Alltoall, no
computation, data verified) under Open MPI's linear all-to-all (every rank
posts all sends at once: the incast pattern), over UCX_TLS=sctp_dpdk.

Modes (rate-managed MPI_Alltoall of mpi-pace/, as GridMPI's):
  unpaced   no pacing
  B/N       --pace-coll --maxrate B: each rank sends at B/N during the call
  B/2N      the same with SDP_PACE_COLL_NSENDERS=2N
  B/1       SDP_PACE_COLL_NSENDERS=1: each rank at B.  In this topology a
            rank's rate is split over its N-1 destinations, so a receiver
            gets (N-1) x rate/(N-1) = rate: B/1 is the MATB that just fills
            each link (B/N fills 1/N of it).
  B/N-dest  SDP_PACE_COLL_PER=dest: each destination at B/N (the pacer's
            per-destination rates, sch_fq-style), the process's total
            unpaced: a receiver gets (N-1) x B/N, its senders' shares of B.

Counted per run: SCTP retransmissions, fast retransmissions and T3 timeouts
(summed over ranks, UCX_SCTP_DPDK_STATS=y), and the forwarders' drops on
queue overflow ("overlimit", summed over links; read from their logs after
stopping them, before teardown).  Every mode runs --reps times, the modes
interleaved; medians are reported.

  bench/seed001.py --np 4 --rate 20mbit --json out.json --plot out.png
Exit status: 0, 1 on a failed run, 77 (skip) without root or programs.
"""
import argparse
import ast
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
IMPAIR_RE = re.compile(r"sdp-impair \S+ h(\d+): (\{.*\})")


def log(msg):
    print(f"seed001: {msg}", file=sys.stderr, flush=True)


def rate_bps(s):
    return bench_common.rate_bps(s, "seed001")


PER_DEST = {"B/N-dest"}


def modes(n, b_bps):
    """(name, nsenders or None for unpaced)."""
    return [("unpaced", None), ("B/N", n), ("B/2N", 2 * n), ("B/1", 1),
            ("B/N-dest", n)]


def run_one(mr, a, n, mode_ns, prog_args, job, per_dest=False):
    if per_dest:
        a = argparse.Namespace(**vars(a))
        a.env = a.env + ["SDP_PACE_COLL_PER=dest"]
    return run_one_env(mr, a, n, mode_ns, prog_args, job)


def run_one_env(mr, a, n, mode_ns, prog_args, job):
    netem = f"delay {a.delay} rate {a.rate} limit {a.limit}"
    env = ["UCX_SCTP_DPDK_STATS=y",
           "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
           f"OMPI_MCA_coll_tuned_alltoall_algorithm={a.algorithm}"]
    if mode_ns is not None:
        env.append(f"SDP_PACE_COLL_NSENDERS={mode_ns}")
    env += a.env
    opts = mr.options(
        mpi="openmpi", tls="sctp_dpdk", mtu=1500, rate=None,
        pace_coll=mode_ns is not None, maxrate=str(int(rate_bps(a.rate))),
        idle_sleep_us=a.idle_sleep_us, env=env, program=prog_args,
        stream_map="comm", rails=1)  # sdp-mpirun's defaults
    # the machine is shared: every run records its 1-minute load average
    res = {"ok": False, "load1_start": os.getloadavg()[0]}
    # The ranks' MTU and the veths' must agree (the testbed's default is
    # 9000 now; af_packet cannot receive 9000-byte frames into 1500-byte
    # mbufs): the seed's 1500 on both.
    with sdp_launch.Testbed("bridge", job=job, hosts=n, netem=netem,
                            mtu=opts.mtu) as tb:
        if tb.env.get("SDP_IMPAIR_BACKEND") != "user":
            log(f"impairment backend is {tb.env.get('SDP_IMPAIR_BACKEND')}:"
                " drops are counted by the user forwarder only")
        env_dir = mr.write_env_files(opts, tb, n)
        cmd = mr.mpi_command(opts, env_dir, n)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        tb.procs.append(p)
        rc, out, err = sdp_launch.finish(p, a.timeout)
        res["wall_s"] = time.monotonic() - t0
        # Stop the forwarders (SIGTERM): each logs its counters on exit;
        # the logs go with the run directory at teardown.
        subprocess.run([sdp_launch.TESTBED, "bridge", "netem", "--job", job,
                        "--host", "all", "none"], capture_output=True,
                       timeout=60)
        drops = {}
        for h in range(n):
            f = os.path.join(tb.env["SDP_RUN_DIR"], f"impair-h{h}.log")
            try:
                text = open(f).read()
            except OSError:
                continue
            for m in IMPAIR_RE.finditer(text):
                drops[int(m.group(1))] = ast.literal_eval(m.group(2))
    res["load1_end"] = os.getloadavg()[0]
    j = sdp_launch.last_json(out)
    stats = []
    for m in STATS_RE.finditer(err):
        try:
            stats.append(json.loads(m.group(1)))
        except ValueError:  # a line garbled by another rank's output
            pass
    if len(stats) != n:
        log(f"counters of {len(stats)} of {n} ranks read")
    if rc != 0 or j is None or j.get("errors") != 0:
        res["error"] = f"rc {rc}; stderr tail: {err[-1500:]}"
        return res
    us = [s["usrsctp"] for s in stats]
    res.update(ok=True, result=j, ranks_with_stats=len(stats),
               retrans=sum(u["retrans_chunks"] for u in us),
               fast_retrans=sum(u["fast_retrans_chunks"] for u in us),
               t3_timeouts=sum(u["t3_timeouts"] for u in us),
               data_chunks=sum(u["data_chunks_out"] for u in us),
               fwd_drops=sum(d.get("overlimit", 0) for d in drops.values()),
               pace_drops=sum(x.get("dp", {}).get("pace_drops", 0)
                              for x in stats),
               pace_late=sum(x.get("dp", {}).get("pace_late", 0)
                             for x in stats),
               fwd_rx=sum(d.get("rx_br", 0) for d in drops.values()),
               fwd_links=len(drops))
    return res


def summarise(runs):
    ok = [r for r in runs if r["ok"]]
    if not ok:
        return None
    med = statistics.median

    def m(key):
        return med([r[key] for r in ok])
    return {"runs_ok": len(ok), "runs": len(runs),
            "total_s": med([r["result"]["total_s"] for r in ok]),
            "iter_p50_s": med([r["result"]["p50_s"] for r in ok]),
            "iter_p99_s": med([r["result"]["p99_s"] for r in ok]),
            "retrans": m("retrans"), "fast_retrans": m("fast_retrans"),
            "t3_timeouts": m("t3_timeouts"), "fwd_drops": m("fwd_drops"),
            "pace_drops": med([r.get("pace_drops", 0) for r in ok]),
            "load1": med([r.get("load1_end", 0) for r in ok])}


def plot(out, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cfgs = out["configs"]
    fig, axes = plt.subplots(len(cfgs), 3, figsize=(14, 4.2 * len(cfgs)),
                             squeeze=False)
    colors = {"unpaced": "#d62728", "B/N": "#1f77b4", "B/2N": "#2ca02c",
              "B/1": "#9467bd", "B/N-dest": "#ff7f0e"}
    for row, c in zip(axes, cfgs):
        names = [m for m in c["modes"] if c["summary"].get(m)]
        s = [c["summary"][m] for m in names]
        ideal = c["ideal_iter_s"] * c["iters"]
        title = (f"N={c['np']}, B={c['rate']}, delay {c['delay']}, "
                 f"limit {c['limit']}, {c['bytes'] // 1024} KiB/peer")
        ax = row[0]
        ax.bar(names, [x["total_s"] for x in s],
               color=[colors[m] for m in names])
        ax.axhline(ideal, ls="--", color="gray",
                   label="data at rate B, no RTT")
        ax.set_ylabel(f"completion time of {c['iters']} iterations (s)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8)
        ax = row[1]
        x = range(len(names))
        w = 0.27
        ax.bar([i - w for i in x], [v["retrans"] for v in s], w,
               label="SCTP retransmitted chunks")
        ax.bar(list(x), [v["t3_timeouts"] for v in s], w,
               label="T3 (RTO) timeouts")
        ax.bar([i + w for i in x], [v["fwd_drops"] for v in s], w,
               label="bottleneck queue drops")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names)
        ax.set_ylabel("count per run, all ranks/links (median)")
        ax.legend(fontsize=8)
        ax = row[2]
        for m in names:
            runs = [r for r in c["runs"][m] if r["ok"]]
            runs.sort(key=lambda r: r["result"]["total_s"])
            r = runs[len(runs) // 2]
            ax.plot(range(1, c["iters"] + 1),
                    [t * 1e3 for t in r["result"]["iter_s"]],
                    marker=".", color=colors[m], label=m)
        ax.set_yscale("log")
        ax.set_xlabel("iteration (median run)")
        ax.set_ylabel("MPI_Alltoall time, slowest rank (ms)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    log(f"plot written to {path}")


def table(out):
    lines = []
    for c in out["configs"]:
        lines.append(f"N={c['np']} B={c['rate']} delay {c['delay']} limit "
                     f"{c['limit']} {c['bytes']} B/peer x {c['iters']} "
                     f"iterations (ideal {c['ideal_iter_s'] * 1e3:.0f} ms "
                     f"per iteration at B)")
        lines.append(f"{'mode':8} {'rate':>10} {'total s':>8} "
                     f"{'vs unp.':>7} {'p50 ms':>7} {'p99 ms':>7} "
                     f"{'retx':>6} {'fastrx':>6} {'T3':>5} {'drops':>6} "
                     f"{'pacer':>6} {'ok':>4} {'load':>5}")
        base = (c["summary"].get("unpaced") or {}).get("total_s")
        for m in c["modes"]:
            s = c["summary"].get(m)
            if s is None:
                lines.append(f"{m:8} (all runs failed)")
                continue
            ns = c["mode_nsenders"][m]
            r = "-" if ns is None else \
                f"{rate_bps(c['rate']) / ns / 1e6:.1f}M" + \
                ("/dst" if m in PER_DEST else "")
            sp = f"{base / s['total_s']:.2f}x" if base else "-"
            lines.append(
                f"{m:8} {r:>10} {s['total_s']:8.2f} {sp:>7} "
                f"{s['iter_p50_s'] * 1e3:7.0f} {s['iter_p99_s'] * 1e3:7.0f} "
                f"{s['retrans']:6.0f} {s['fast_retrans']:6.0f} "
                f"{s['t3_timeouts']:5.0f} {s['fwd_drops']:6.0f} "
                f"{s['pace_drops']:6.0f} {s['runs_ok']}/{s['runs']:<2} "
                f"{s['load1']:5.1f}")
        lines.append("")
    return "\n".join(lines)


def merge(a):
    """Join the runs of several --json files config by config."""
    parts = [json.load(open(f)) for f in a.merge]
    out = parts[0]
    out["merged_from"] = [{"file": f, "command": p["command"],
                           "machine": p["machine"]}
                          for f, p in zip(a.merge, parts)]
    for p in parts[1:]:
        for c, d in zip(out["configs"], p["configs"]):
            for k in ("np", "rate", "delay", "limit", "bytes", "iters",
                      "modes"):
                if c[k] != d[k]:
                    sys.exit(f"seed001: --merge: {k} differs "
                             f"({c[k]} vs {d[k]})")
            for m in c["modes"]:
                c["runs"][m] += d["runs"][m]
    for c in out["configs"]:
        for m in c["modes"]:
            c["summary"][m] = summarise(c["runs"][m])
    emit(out, a)
    return 0



def emit(out, a):
    """Print the table; write --json and --plot if asked."""
    bench_common.emit(out, table(out), a, plot, "seed001")

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--np", default="4",
                    help="rank counts, comma separated (default 4)")
    ap.add_argument("--rate", default="20mbit", help="bottleneck B per link")
    ap.add_argument("--delay", default="10ms", help="one-way delay per link")
    ap.add_argument("--limit", type=int, default=30,
                    help="forwarder queue in packets, delay line included")
    ap.add_argument("--bytes", type=int, default=65536,
                    help="MPI_Alltoall block per peer")
    ap.add_argument("--iters", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--modes", default="unpaced,B/N,B/2N,B/1,B/N-dest")
    ap.add_argument("--algorithm", type=int, default=1,
                    help="Open MPI coll_tuned_alltoall_algorithm (1 linear)")
    ap.add_argument("--idle-sleep-us", type=int, default=20)
    ap.add_argument("--env", action="append", default=[],
                    help="extra KEY=VALUE for every rank of every run, e.g."
                    " UCX_SCTP_DPDK_DP=tx_hold=64")
    ap.add_argument("--timeout", type=int, default=240,
                    help="per run, seconds")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="run nothing: join the runs of these --json files "
                    "(same settings, e.g. one --reps 1 file per round of a "
                    "loop interleaving two builds) and report their medians")
    a = ap.parse_args()
    if a.plot:
        sdp_launch.need_matplotlib("seed001", __file__, "--plot")
    if a.merge:
        return merge(a)
    if os.geteuid() != 0:
        log("needs root (testbed namespaces): skipped")
        return 77
    build = os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))
    prog = os.path.join(os.environ.get("SDP_BENCH_BIN_DIR",
                                       os.path.join(build, "bench")),
                        "seed001-alltoall-openmpi")
    if not os.access(prog, os.X_OK) or not os.path.exists(
            os.path.join(build, "ucx-tl", "libuct_sctp_dpdk.so")):
        log(f"{prog} or the sctp_dpdk transport is not built: skipped")
        return 77
    os.environ.setdefault("SDP_BUILD_DIR", build)
    mr = sdp_launch.load_mpirun()
    sdp_launch.install_signal_handlers()
    b = rate_bps(a.rate)
    want = a.modes.split(",")
    out = {"machine": {"nproc": os.cpu_count(),
                       "kernel": platform.release(),
                       "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                       "load1_start": os.getloadavg()[0]},
           "command": " ".join(
               [os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)] +
               sys.argv[1:]), "configs": []}
    failed = False
    for n in [int(x) for x in a.np.split(",")]:
        ms = [(m, ns) for m, ns in modes(n, b) if m in want]
        c = {"np": n, "rate": a.rate, "delay": a.delay, "limit": a.limit,
             "bytes": a.bytes, "iters": a.iters, "warmup": a.warmup,
             "algorithm": a.algorithm, "env": a.env,
             "ideal_iter_s": (n - 1) * a.bytes * 8 / b,
             "modes": [m for m, _ in ms],
             "mode_nsenders": {m: ns for m, ns in ms},
             "runs": {m: [] for m, _ in ms}, "summary": {}}
        prog_args = [prog, "--bytes", str(a.bytes), "--iters", str(a.iters),
                     "--warmup", str(a.warmup)]
        for rep in range(a.reps):
            for m, ns in ms:
                job = f"s1{os.getpid() % 100000:05d}"[:8]
                r = run_one(mr, a, n, ns, prog_args, job,
                            per_dest=m in PER_DEST)
                c["runs"][m].append(r)
                if r["ok"]:
                    log(f"N={n} {m} rep {rep + 1}: "
                        f"{r['result']['total_s']:.2f} s, retx {r['retrans']}"
                        f", T3 {r['t3_timeouts']}, drops {r['fwd_drops']}"
                        f", load {r['load1_end']:.1f}")
                else:
                    failed = True
                    log(f"N={n} {m} rep {rep + 1}: FAILED: {r['error']}")
        for m, _ in ms:
            c["summary"][m] = summarise(c["runs"][m])
        out["configs"].append(c)
    out["machine"]["load1_end"] = os.getloadavg()[0]
    emit(out, a)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
