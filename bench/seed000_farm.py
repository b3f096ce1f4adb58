#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""seed000_farm - seed 000's Bulk Processor Farm (Kamal 2005, fig. 5.5-5.7)
over UCX_TLS=sctp_dpdk on the bridge testbed with the user-space
impairment forwarder (random loss on every host link), 10 SCTP streams
against 1.

The program is bench/farm.c: a manager (rank 0) and workers, each worker
keeping `outstanding` (10) requests open; per request the manager sends
`fanout` (1 or 10) tasks of one of 10 types, 30 KB or 300 KB each.

Variants (the transport's stream map, apps/sdp-mpirun --stream-map):
  comm/1   one communicator per task type, --stream-map off: every message
           between two ranks on the ep's one stream (head-of-line blocking)
  comm/10  the same program, --stream-map comm: each task type's
           communicator on its own stream (legal for every program)
  tag/1    one communicator, one tag per type (no MPI_ANY_TAG), map off
  tag/10   the same, --stream-map tag (opt-in: the program never uses
           MPI_ANY_TAG)
UCX_SCTP_DPDK_STREAMS=11 everywhere (10 usable), so only the map differs.
Tasks of 300 KB go by UCP rendezvous (RTS on the task's stream, the data
by RMA GET whose replies come on the RTS's stream with the map, on the
ep's without) unless --rndv-thresh raises UCP's threshold
(UCX_RNDV_THRESH), which sends them eager in 64 KB fragments that follow
their first's stream.

Every (MPI, size, fanout, loss) cell runs each variant --reps times,
variants interleaved; the median run time is reported and the gain
1 - t(10 streams) / t(1 stream).  The seed's goal: >= 25 % faster.

  bench/seed000_farm.py --json out.json --plot out.png     # the full run
  bench/seed000_farm.py --quick                            # a short one
Exit status: 0, 1 on a failed run, 77 (skip) without root or programs.
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
STATS_RE = re.compile(r"sctp_dpdk stats: (\{.*\})")
VARIANTS = [("comm", 1), ("comm", 10), ("tag", 1), ("tag", 10)]
# The seed's head-of-line runs (Kamal 2005, fig. 5.5; F=10, 10,000 tasks,
# 8 nodes on 1 Gbit/s, Dummynet loss only: ch. 5 adds no delay, the 10/50
# ms of ch. 3 were its TCP study): {(size, loss %): (10 streams s, 1 stream s)}
SEED_HOL = {(30000, 0): (8.7, 9.3), (30000, 1): (11.7, 11.0),
            (30000, 2): (16.0, 21.6), (300000, 0): (79, 79),
            (300000, 1): (786, 1000), (300000, 2): (1585, 1942)}
GOAL_GAIN = 0.25   # the goal: >= 25 % faster with 10 streams
ROW_KEYS = ("seed", "experiment", "theirs", "ours", "ratio", "goal", "met",
            "note")


def log(msg):
    print(f"seed000_farm: {msg}", file=sys.stderr, flush=True)


def build_dir():
    return os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))


def farm_exe(mpi):
    d = os.environ.get("SDP_BENCH_BIN_DIR",
                       os.path.join(build_dir(), "bench"))
    return os.path.join(d, f"farm-{mpi}")


def run_farm(a, mpi, size, fanout, loss, mode, streams, job, sg=""):
    tasks = a.tasks_small if size <= 65536 else a.tasks_large
    smap = "off" if streams == 1 else mode
    cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", mpi,
           "-np", str(a.np), "--fabric", "bridge", "--job", job,
           "--timeout", str(a.timeout), "--stream-map", smap,
           "--env", "UCX_SCTP_DPDK_STREAMS=11",
           "--env", "UCX_SCTP_DPDK_STATS=y"]
    if a.mtu:
        cmd += ["--mtu", str(a.mtu)]
    lossy = (f"{a.netem_extra} loss {loss}%" if loss > 0 else
             a.netem_extra).strip()
    clean = a.netem_extra.strip() or "delay 0ms"
    # --loss-to: which links lose frames (a port's impairment acts on the
    # frames going TO its host; host 0 is the manager: sdp-mpirun
    # --bottleneck sets its port alone)
    netem, mgr = {"all": (lossy, None), "workers": (lossy, clean),
                  "manager": (clean, lossy)}[a.loss_to]
    if netem:
        cmd += ["--netem", netem]
    if mgr:
        cmd += ["--bottleneck", mgr]
    if a.rndv_thresh:
        cmd += ["--env", f"UCX_RNDV_THRESH={a.rndv_thresh}"]
    env = list(a.env)
    if sg:  # the variant's SG tokens, after any of --env's
        old = [e for e in env if e.startswith("UCX_SCTP_DPDK_SG=")]
        env = [e for e in env if not e.startswith("UCX_SCTP_DPDK_SG=")]
        env.append("UCX_SCTP_DPDK_SG=" + " ".join(
            [e.split("=", 1)[1] for e in old] + [sg]))
    for kv in env:
        cmd += ["--env", kv]
    cmd += [farm_exe(mpi), "--mode", mode, "--tasks", str(tasks),
            "--size", str(size), "--fanout", str(fanout),
            "--outstanding", str(a.outstanding), "--types", "10"]
    if a.work_us:
        cmd += ["--work-us", str(a.work_us)]
    if a.type_per != "request":
        cmd += ["--type-per", a.type_per]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=a.timeout + 180)
    wall = time.time() - t0
    res = None
    for line in r.stdout.splitlines():
        if line.startswith("{") and '"tasks_per_s"' in line:
            res = json.loads(line)
    if r.returncode != 0 or res is None or res.get("bad", 1) != 0:
        raise RuntimeError(f"{' '.join(cmd)}: rc {r.returncode}\n"
                           f"{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    stats = [json.loads(s) for s in STATS_RE.findall(r.stderr)]
    us = [s.get("usrsctp", {}) for s in stats]
    res.update({
        "mpi": mpi, "loss_pct": loss, "streams": streams, "netem": netem,
        "loss_to": a.loss_to,
        "loadavg": round(os.getloadavg()[0], 1),
        "stream_map": smap, "wall_s": round(wall, 2),
        "retrans_chunks": sum(u.get("retrans_chunks", 0) for u in us),
        "fast_retrans_chunks": sum(u.get("fast_retrans_chunks", 0)
                                   for u in us),
        "t3_timeouts": sum(u.get("t3_timeouts", 0) for u in us),
        # nr_sack: NR-SACK chunks received (all ranks; 0 unless both ends
        # of an association offered it) and those with NR gap blocks
        # (data freed from the sender's buffer before the cumulative ack)
        "nr_sacks_in": sum(s.get("nr_sack", {}).get("in", 0)
                           for s in stats),
        "nr_sacks_nr_gaps": sum(s.get("nr_sack", {}).get("nr_gaps", 0)
                                for s in stats),
        "mapped_msgs": sum(s.get("streams", {}).get("mapped_msgs", 0)
                           for s in stats),
        # rendezvous: the workers' GETs on an RTS's stream, and the
        # streams of the manager's GET replies (the task data)
        "gets_mapped": sum(s.get("streams", {}).get("rndv", {}).get(
            "gets_mapped", 0) for s in stats),
        "rep_streams_by_manager": max((len(s.get("streams", {}).get(
            "rndv", {}).get("rep_msgs", {})) for s in stats), default=0),
        # the manager sends the tasks: the rank that mapped the most
        "streams_used_by_manager": len(max(
            stats, key=lambda s: s.get("streams", {}).get("mapped_msgs", 0),
            default={}).get("streams", {}).get("tx_msgs", {})),
        # the manager's messages per stream (all its eps): does the map
        # spread the tasks?
        "manager_tx_msgs_by_stream": max(
            stats, key=lambda s: s.get("streams", {}).get("mapped_msgs", 0),
            default={}).get("streams", {}).get("tx_msgs", {}),
        "mtu": a.mtu or 9000, "work_us": a.work_us,
        "type_per": a.type_per,
        # per rank (the order the ranks printed them): which side of the
        # association timed out
        "usrsctp_by_rank": [dict({"ip": st.get("ip", "")}, **{
            k: st.get("usrsctp", {}).get(k, 0) for k in (
                "t3_timeouts", "fast_retrans_chunks", "retrans_chunks",
                "data_chunks_out", "t3_window_probes")})
            for st in stats],
    })
    return res


def table_rows(out):
    """One row per cell and mapping mode for bench/seeds.py's table: the
    gain 1 - t(10 streams) / t(1 stream) against the seed's."""
    rows = []
    for c in out["cells"]:
        for key, gain in c["gain_10_vs_1"].items():
            if "/" not in key:  # older files: {"comm": gain}
                key = f"{key}/10"
            mode = key.split("/")[0]
            sgk = key.split(":", 1)[1] if ":" in key else ""
            t1 = c["median_s"].get(f"{mode}/1:{sgk}") if sgk else None
            t1 = t1 or c["median_s"].get(f"{mode}/1")
            t10 = c["median_s"][key]
            if t1 is None:
                continue
            seed = SEED_HOL.get((c["size"], c["loss_pct"])) \
                if c["fanout"] == 10 else None
            sg = 1 - seed[0] / seed[1] if seed else None
            idle = c.get("worker_idle_frac", {})
            rows.append(dict(zip(ROW_KEYS, (
                "000f",
                f"farm {c['mpi']} {c['size'] // 1000} KB F={c['fanout']} "
                f"{c['loss_pct']}% loss"
                + (f" (frames to the {c['loss_to']} only)"
                   if c.get("loss_to", "all") != "all" else "")
                + f" {c.get('netem_extra', '') or 'no delay'}"
                + (f" MTU {out['mtu']}" if out.get("mtu", 9000) != 9000
                   else "")
                + (f" {' '.join(c['env'])}" if c.get("env") else "")
                + ", "
                f"{mode} map: 10 streams vs 1"
                + (f" ({key.split(':', 1)[1]})" if ":" in key else ""),
                (f"{seed[1]} -> {seed[0]} s = {sg:+.0%}" if seed else
                 "not measured (seed: F=10 only)"),
                f"{t1:.2f} -> {t10:.2f} s = {gain:+.0%} (median of "
                f"{c.get('reps', '?')}; workers idle "
                f"{idle.get(f'{mode}/1', 0):.0%} / {idle.get(key, 0):.0%})",
                round(gain / sg, 2) if sg and sg > 0 else "-",
                f">= +{GOAL_GAIN:.0%}", "yes" if gain >= GOAL_GAIN else "no",
                "gain = 1 - t(10 streams) / t(1 stream)"))))
    return rows


def breakdown(paths, plot_path=None):
    """Per variant of each file, the median run time and where
    a task's time goes: its mean latency (send to receive), the part of
    it in-order delivery would add (farm.c "inorder_ms": the
    head-of-line wait the streams removed), the T3 timeouts of the
    manager (data direction) and of the workers, fast retransmits, and
    workers' idle share.  Prints a markdown table; plots latency against
    the in-order cost."""
    rows = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        by = {}
        for r in d["runs"]:
            by.setdefault((r["size"], r["fanout"], r["loss_pct"],
                           r["variant"]), []).append(r)
        for (_, _, _, key), rs in by.items():
            def med(fn):
                return statistics.median(fn(r) for r in rs)

            def mgr(r):  # the rank that sent the most DATA: the manager
                u = r.get("usrsctp_by_rank") or [{}]
                return max(u, key=lambda x: x.get("data_chunks_out", 0))

            def wrk_t3(r):
                u = r.get("usrsctp_by_rank") or []
                return sum(x.get("t3_timeouts", 0) for x in u) - \
                    mgr(r).get("t3_timeouts", 0)
            rows.append({
                "file": os.path.basename(p), "variant": key,
                "size": rs[0]["size"], "fanout": rs[0]["fanout"],
                "loss": rs[0]["loss_pct"],
                "mtu": rs[0].get("mtu", 9000),
                "work_us": rs[0].get("work_us", 0),
                "type_per": rs[0].get("type_per", "request"),
                "env": " ".join(d.get("env", [])), "n": len(rs),
                "seconds": med(lambda r: r["seconds"]),
                "lat_mean_ms": med(lambda r: r["lat_ms"]["mean"]),
                "inorder_mean_ms": med(lambda r: r.get(
                    "inorder_ms", {}).get("mean", float("nan"))),
                "inorder_max_ms": med(lambda r: r.get(
                    "inorder_ms", {}).get("max", float("nan"))),
                "inorder_frac": med(lambda r: r.get("inorder_frac",
                                                    float("nan"))),
                "inorder_wall_frac": med(lambda r: r.get(
                    "inorder_wall_s", float("nan")) / r["seconds"]),
                "t3_mgr": med(lambda r: mgr(r).get("t3_timeouts",
                                                   float("nan"))),
                "t3_workers": med(wrk_t3),
                "fast_rtx": med(lambda r: r["fast_retrans_chunks"]),
                "idle": med(lambda r: r["worker_idle_frac"]),
                "load": med(lambda r: r["loadavg"]),
            })
    print("| file | task | F | loss | work | types | variant | n | run s | "
          "latency mean ms | in-order cost mean ms | share | max ms | "
          "withheld wall / run | T3 mgr/workers | fast rtx | idle | load |")
    print("|" + "---|" * 18)
    for r in rows:
        print(f"| {r['file']} | {r['size'] // 1000} KB | {r['fanout']} | "
              f"{r['loss']}% | "
              f"{r['work_us'] // 1000} ms | {r['type_per']} | "
              f"{r['variant']} | {r['n']} | {r['seconds']:.2f} | "
              f"{r['lat_mean_ms']:.0f} | {r['inorder_mean_ms']:.1f} | "
              f"{r['inorder_frac']:.1%} | {r['inorder_max_ms']:.0f} | "
              f"{r['inorder_wall_frac']:.1%} | "
              f"{r['t3_mgr']:g}/{r['t3_workers']:g} | {r['fast_rtx']:g} | "
              f"{r['idle']:.0%} | {r['load']:g} |")
    if plot_path:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ten = [r for r in rows if not r["variant"].split(":")[0]
               .endswith("/1") and r["inorder_mean_ms"] ==
               r["inorder_mean_ms"]]
        fig, ax = plt.subplots(1, 2, figsize=(13, 6.5))
        lab = [f"{r['size'] // 1000} KB F={r['fanout']}"
               + (f" work {r['work_us'] // 1000} ms" if r["work_us"]
                  else "")
               + (" type/task" if r["type_per"] == "task" else "")
               + ("\nrcvbuf only 220K" if "sndbuf" not in r["env"] and
                  "rcvbuf" in r["env"] else
                  "\n220 KB bufs" if "sndbuf" in r["env"] else "\n4 MB bufs")
               + ("\nrto_min 1 s" if "rto_min_ms=1000" in r["variant"]
                  else "\nrto_min 100 ms")
               + (" FCFS" if "stream_sched=5" in r["variant"] else "")
               + (f" MTU {r['mtu']}" if r["mtu"] != 1500 else "")
               + (f"\n{r['loss']}% loss" if r["loss"] != 2 else "")
               for r in ten]
        x = range(len(ten))
        ax[0].bar([i - 0.2 for i in x], [r["lat_mean_ms"] for r in ten],
                  0.4, label="task latency (send to receive), mean")
        ax[0].bar([i + 0.2 for i in x], [r["inorder_mean_ms"] for r in
                                        ten], 0.4,
                  label="of which 1 stream would add (in-order cost)")
        ax[0].set_xticks(list(x))
        ax[0].set_xticklabels(lab, fontsize=6, rotation=90)
        ax[0].set_ylabel("ms per task (10-stream runs, median)")
        ax[0].set_yscale("log")
        ax[0].legend(fontsize=7)
        ax[0].set_title("Where a task's time goes (10 streams)", fontsize=9)
        cells = {}
        for r in rows:
            base = r["variant"].split("/")[0]
            sg = r["variant"].split(":", 1)[1] if ":" in r["variant"] else ""
            k = (r["file"], r["size"], r["fanout"], r["loss"], base, sg)
            n = int(r["variant"].split("/")[1].split(":")[0])
            cells.setdefault(k, {})[n] = r
        for k, v in cells.items():  # 10 streams with SG tokens the
            if k[5] and 1 not in v:  # 1-stream runs lack: against theirs
                one = cells.get(k[:5] + ("",), {}).get(1)
                if one:
                    v[1] = one
        pairs = [(k, v) for k, v in cells.items() if 1 in v and 10 in v]
        g = [1 - v[10]["seconds"] / v[1]["seconds"] for _, v in pairs]
        ax[1].bar(range(len(pairs)), [100 * y for y in g],
                  color=["C2" if y >= 0.25 else "C7" for y in g])
        ax[1].axhline(25, color="r", ls="--", lw=1, label="goal +25%")
        ax[1].axhline(0, color="k", lw=0.5)
        ax[1].set_xticks(range(len(pairs)))
        ax[1].set_xticklabels([f"{v[1]['size'] // 1000} KB F={v[1]['fanout']}"
                               + (f" w{v[1]['work_us'] // 1000}ms"
                                  if v[1]["work_us"] else "")
                               + (" t/task" if v[1]["type_per"] == "task"
                                  else "")
                               + ("\nrto 1 s" if "rto_min_ms=1000" in k[5]
                                  else "\nrto 100ms")
                               + (" FCFS" if "stream_sched=5" in k[5] else "")
                               + (f"\nMTU {v[1]['mtu']}" if v[1]["mtu"] !=
                                  1500 else "")
                               + ("\n220K bufs" if "sndbuf" in v[1]["env"]
                                  else "\nrcvbuf 220K" if "rcvbuf" in
                                  v[1]["env"] else "\n4M bufs")
                               + (f"\n{v[1]['loss']}% loss" if
                                  v[1]["loss"] != 2 else "")
                               for k, v in pairs], fontsize=6, rotation=90)
        ax[1].set_ylabel("gain 1 - t(10)/t(1), % (medians)")
        ax[1].set_title("10 streams vs 1: run time", fontsize=9)
        ax[1].legend(fontsize=7)
        fig.suptitle("Seed 000 farm, the seed's conditions (no delay, MTU "
                     "1500, 2% loss, 4 ranks, load 11-18)", fontsize=10)
        fig.tight_layout()
        fig.savefig(plot_path, dpi=120)
        log(f"plot: {plot_path}")
    return rows


def plot(out, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = out["cells"]
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(cells)), 4.5))
    keys = [f"{m}/{n}" for m, n in VARIANTS]
    keys += sorted({k for c in cells for k in c["median_s"]} - set(keys))
    keys = [k for k in keys if any(k in c["median_s"] for c in cells)]
    width = 0.8 / max(1, max(len(c["median_s"]) for c in cells))
    colors = {k: f"C{j}" for j, k in enumerate(keys)}
    for key in keys:
        xs, ys = [], []
        for i, c in enumerate(cells):
            here = [k for k in keys if k in c["median_s"]]
            if key in here:  # centred among the cell's own variants
                xs.append(i + (here.index(key) - (len(here) - 1) / 2) *
                          width)
                ys.append(c["median_s"][key])
        mode, rest = key.split("/", 1)
        n = int(rest.split(":")[0])
        ax.bar(xs, ys, width, color=colors[key],
               label=f"{mode}, {n} stream"
               + ("s" if n > 1 else "")
               + (f", {rest.split(':', 1)[1]}" if ":" in rest else ""))
    ax.set_xticks(range(len(cells)))
    ax.set_xticklabels([f"{c['mpi']}\n{c['size'] // 1000} KB F={c['fanout']}"
                        f"\n{c['loss_pct']}% loss"
                        + ("\neager" if c.get("rndv_thresh",
                                               out.get("rndv_thresh"))
                           == "inf" else "")
                        + (f"\n{c['netem_extra']}" if c.get("netem_extra")
                           else "")
                        + "".join("\n" + "\n".join(
                            e.split("=", 1)[1].split())
                                  for e in c.get("env", []))
                        for c in cells],
                       fontsize=7)
    ax.set_ylabel("run time, s (median)")
    ax.set_title("Seed 000 Bulk Processor Farm over sctp_dpdk: 10 streams "
                 "vs 1")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    log(f"plot: {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mpi", default="openmpi,mpich")
    ap.add_argument("--np", type=int, default=4,
                    help="ranks: 1 manager + workers (default 4)")
    ap.add_argument("--sizes", default="30000,300000")
    ap.add_argument("--fanouts", default="1,10")
    ap.add_argument("--losses", default="1,2", help="percent")
    ap.add_argument("--variants", default="comm/1,comm/10,tag/1,tag/10")
    ap.add_argument("--reps", type=int,
                    help="runs of each variant per cell, interleaved "
                    "(default 1)")
    ap.add_argument("--tasks-small", type=int, default=2000)
    ap.add_argument("--tasks-large", type=int, default=300)
    ap.add_argument("--outstanding", type=int, default=10)
    ap.add_argument("--mtu", type=int, default=0,
                    help="IP MTU of the testbed (sdp-mpirun --mtu; default "
                    "its 9000; the seed's GbE: 1500)")
    ap.add_argument("--work-us", type=int, default=0,
                    help="worker compute per task, us of busy loop "
                    "(farm --work-us; default 0: the seed gives none)")
    ap.add_argument("--type-per", choices=["request", "task"],
                    default="request",
                    help="farm --type-per: one task type per request "
                    "(default) or a type drawn per task")
    ap.add_argument("--rndv-thresh", default="",
                    help="UCX_RNDV_THRESH (e.g. inf: 300 KB tasks eager)")
    ap.add_argument("--netem-extra", default="delay 10ms",
                    help="impairment before 'loss P%%' on every host link "
                    "(default 'delay 10ms', one way: the smaller delay of "
                    "the seed's ch. 3 TCP study; its farm (ch. 5) ran "
                    "with loss only: '' for none)")
    ap.add_argument("--loss-to", choices=["all", "workers", "manager"],
                    default="all",
                    help="which direction loses frames: all links (the "
                    "seed's), only frames to the workers (tasks, GET "
                    "replies) or only frames to the manager (requests, "
                    "results, GET requests); the delay stays on all")
    ap.add_argument("--env", action="append", default=[],
                    help="extra KEY=VALUE for every rank (e.g. "
                    "UCX_SCTP_DPDK_SG=rto_min_ms=20)")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--quick", action="store_true",
                    help="openmpi, 30 KB, fanout 10, 2%% loss, comm/1 vs "
                    "comm/10, 400 tasks, 1 rep unless --reps")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--replot", nargs="+", metavar="JSON",
                    help="only plot the cells of these result files into "
                    "--plot (and merge them into --json)")
    ap.add_argument("--breakdown", nargs="+", metavar="JSON",
                    help="print where the tasks' time went per variant of "
                    "these result files (and plot it into --plot)")
    a = ap.parse_args()
    if a.breakdown:
        breakdown(a.breakdown, a.plot)
        return 0
    if a.replot:
        out = {"merged_from": a.replot, "cells": [], "runs": []}
        for p in a.replot:
            with open(p) as f:
                d = json.load(f)
            for c in d["cells"]:
                c["rndv_thresh"] = d.get("rndv_thresh", "default")
                c["netem_extra"] = d.get("netem_extra", "")
                c["env"] = d.get("env", [])
            out["cells"] += d["cells"]
            out["runs"] += d["runs"]
        out["table"] = table_rows(out)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
        if a.plot:
            plot(out, a.plot)
        return 0
    if a.quick:
        a.mpi, a.sizes, a.fanouts, a.losses = "openmpi", "30000", "10", "2"
        a.variants, a.tasks_small = "comm/1,comm/10", 400
    if a.reps is None:
        a.reps = 1
    if os.geteuid() != 0:
        log("needs root (testbed namespaces, DPDK ports): skipped")
        return 77
    mpis = [m for m in a.mpi.split(",") if m]
    for m in mpis:
        if not os.access(farm_exe(m), os.X_OK):
            log(f"{farm_exe(m)} missing (build the tree): skipped")
            return 77
    # mode/streams[:SG tokens]: e.g. comm/10:stream_sched=5
    variants = [(v.split("/")[0], int(v.split("/")[1].split(":")[0]),
                 v.split(":", 1)[1] if ":" in v else "")
                for v in a.variants.split(",")]
    out = {"host": platform.node(), "np": a.np,
           "command": " ".join([os.path.relpath(os.path.abspath(
               sys.argv[0]), ROOT)] + sys.argv[1:]),
           "loadavg_start": os.getloadavg(),
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "rndv_thresh": a.rndv_thresh or "default",
           "netem_extra": a.netem_extra, "env": a.env, "runs": [],
           "mtu": a.mtu or 9000, "work_us": a.work_us,
           "type_per": a.type_per,
           "cells": []}
    job_n = 0
    failed = 0
    for mpi in mpis:
        for size in [int(s) for s in a.sizes.split(",")]:
            for fanout in [int(f) for f in a.fanouts.split(",")]:
                for loss in [float(x) for x in a.losses.split(",")]:
                    loss = int(loss) if loss == int(loss) else loss
                    times, runs = {}, {}
                    for rep in range(a.reps):
                        for mode, streams, sg in variants:
                            key = f"{mode}/{streams}" + (f":{sg}" if sg
                                                         else "")
                            job_n += 1
                            job = f"fm{os.getpid() % 100:02d}{job_n % 10000:04d}"
                            try:
                                r = run_farm(a, mpi, size, fanout, loss,
                                             mode, streams, job, sg)
                            except (RuntimeError,
                                    subprocess.TimeoutExpired) as e:
                                log(f"FAILED: {e}")
                                failed += 1
                                continue
                            r["rep"] = rep
                            out["runs"].append(r)
                            r["variant"] = key
                            times.setdefault(key,
                                             []).append(r["seconds"])
                            runs.setdefault(key,
                                            []).append(r)
                            log(f"{mpi} {size} B F={fanout} {loss}% "
                                f"{key}: {r['seconds']:.2f} s "
                                f"(rtx {r['retrans_chunks']}, t3 "
                                f"{r['t3_timeouts']}, manager streams "
                                f"{r['streams_used_by_manager']}, GET "
                                f"reply streams "
                                f"{r['rep_streams_by_manager']}, fast rtx "
                                f"{r['fast_retrans_chunks']}, nr-sacks "
                                f"{r['nr_sacks_in']}/"
                                f"{r['nr_sacks_nr_gaps']}, task latency "
                                f"p50/p99 {r['lat_ms']['p50']:.0f}/"
                                f"{r['lat_ms']['p99']:.0f} ms, in-order "
                                f"cost mean/max "
                                f"{r.get('inorder_ms', {}).get('mean', 0):.0f}"
                                f"/{r.get('inorder_ms', {}).get('max', 0):.0f}"
                                f" ms, workers "
                                f"idle {r['worker_idle_frac']:.0%}, load "
                                f"{r['loadavg']})")
                    med = {k: statistics.median(v) for k, v in
                           times.items()}
                    # every many-stream variant against its mode's 1 stream
                    gain = {}
                    for k, t in med.items():
                        # against the 1-stream run with the same SG
                        # tokens where there is one (comm/1:X), else
                        # against mode/1
                        sgk = k.split(":", 1)[1] if ":" in k else ""
                        one = med.get(k.split("/")[0] + "/1"
                                      + (f":{sgk}" if sgk else "")) or \
                            med.get(k.split("/")[0] + "/1")
                        if not k.split(":")[0].endswith("/1") and one:
                            gain[k] = round(1 - t / one, 3)
                    def mrun(f):
                        return {k: round(statistics.median(f(r) for r in
                                                           v), 3)
                                for k, v in runs.items()}
                    cell = {"mpi": mpi, "size": size, "fanout": fanout,
                            "loss_pct": loss, "reps": a.reps,
                            "netem_extra": a.netem_extra, "env": a.env,
                            "loss_to": a.loss_to,
                            "median_s": med,
                            "t3_timeouts": mrun(lambda r: r["t3_timeouts"]),
                            "fast_retrans_chunks": mrun(
                                lambda r: r["fast_retrans_chunks"]),
                            "retrans_chunks": mrun(
                                lambda r: r["retrans_chunks"]),
                            "worker_idle_frac": mrun(
                                lambda r: r["worker_idle_frac"]),
                            "lat_p50_ms": mrun(lambda r: r["lat_ms"]["p50"]),
                            "lat_p99_ms": mrun(lambda r: r["lat_ms"]["p99"]),
                            "loadavg": mrun(lambda r: r["loadavg"]),
                            "gain_10_vs_1": gain,
                            "goal_25pct_met": {m: g >= 0.25 for m, g in
                                               gain.items()}}
                    out["cells"].append(cell)
                    log(f"cell {mpi} {size} F={fanout} {loss}%: "
                        f"{json.dumps(med)} gain {json.dumps(gain)}")
    out["loadavg_end"] = os.getloadavg()
    out["table"] = table_rows(out)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
        log(f"json: {a.json}")
    if a.plot and out["cells"]:
        plot(out, a.plot)
    print(json.dumps({"cells": out["cells"], "failed_runs": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
