#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""scale - what a job's size costs: MPI jobs of 2..128 ranks over
UCX_TLS=sctp_dpdk on the bridge (af_packet ports on veths) and on the vhost
fabric (virtio_user ports on the job's own Open vSwitch with DPDK), and
UCX_TLS=tcp on the bridge's veths (fabric "tcp", the kernel's path), one
job per (fabric, ranks), each an all-to-all with every byte checked
(apps/sdp_mpi_proxy.c --pattern alltoall).

Per job:
  up_s       sdp-testbed up (namespaces and veths, or the switch and its
             ports), as sdp-mpirun reports it
  init_s     the slowest rank's MPI_Init (launcher, EAL, port, usrsctp)
  first_s    the slowest rank's first MPI_Alltoall: UCX connects the
             ranks on first use, so this is every association's set-up
  a2a_ms     the slowest rank's median MPI_Alltoall over the other steps
  wall_s     the whole sdp-mpirun, testbed up and down included
  rss        per rank after the steps (/proc/self/status): peak RSS
             (VmHWM), mean and largest, and the rank's own part of it:
             anonymous memory (RssAnon) and shared memory (RssShmem: the
             EAL's memfd, the mbuf pool; ranks use no hugepages); the
             rest is the libraries' pages, shared by all ranks
  switch     the vhost switch's hugepages (sdp-testbed vhost sizes them
             from the ranks and MTU, SDP_TESTBED_OVS_MEM_MB overrides;
             sdp-mpirun reports them)

  bench/scale.py [--ranks 2,8,...] [--fabrics bridge,vhost,tcp] [--mpi openmpi]
                 [--size B] [--steps N] [--json F] [--plot F]
  bench/scale.py --render F --plot P   plot stored results only

Run as root after `ninja -C build`; a job that fails is a row naming
its error, the larger sizes of its fabric are skipped, and the run exits
1.  Each job runs once: the largest ones take the whole
machine for minutes.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))
MPIRUN = os.path.join(ROOT, "apps", "sdp-mpirun")
LOG_DIR = "/tmp"  # --log-dir: the whole output of a failed job
UP_RE = re.compile(r"testbed for (\d+) ranks up in ([\d.]+) s")
SWITCH_RE = re.compile(r"switch (\d+) MiB of hugepages")


def mem_available_mib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 0


# Never start a job the machine cannot hold (it is shared): the next size
# needs ranks x the largest peak RSS per rank measured so far, plus this
# margin (the launcher, the switch, the other users).
MEM_MARGIN_MIB = 3072


def job(fabric, mpi, n, size, steps, timeout, per_rank_mib=0):
    need = n * per_rank_mib + MEM_MARGIN_MIB
    if per_rank_mib and mem_available_mib() < need:
        raise SystemExit(f"scale: {fabric} {n} ranks needs ~{need} MiB "
                         f"({per_rank_mib:.0f} MiB per rank measured at a "
                         f"smaller size, plus {MEM_MARGIN_MIB}) and "
                         f"{mem_available_mib()} MiB are available: stop "
                         "at a smaller --ranks or free memory")
    prog = os.path.join(BUILD, "apps", f"sdp-mpi-proxy-{mpi}")
    if not os.access(prog, os.X_OK):
        sys.exit(f"scale: {prog} missing: ninja -C build first")
    jid = f"sc{os.getpid() % 1000}{n}"[:8]
    # tcp: UCX's own tcp transport over the bridge's veths, the kernel's
    # path, for comparison (sdp-mpirun --tls tcp)
    fab = ["--fabric", "bridge", "--tls", "tcp"] if fabric == "tcp" \
        else ["--fabric", fabric]
    cmd = [MPIRUN, "--mpi", mpi] + fab + ["-np", str(n),
           "--job", jid, "--timeout", str(timeout), prog,
           "--pattern", "alltoall", "--size", str(size), "--steps",
           str(steps), "--compute-us", "0", "--label", f"{fabric}-{n}"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=timeout + 300)
    wall = time.monotonic() - t0
    out = p.stdout + p.stderr
    objs = [json.loads(l) for l in p.stdout.splitlines()
            if l.startswith("{")]
    cost = [o for o in objs if "init_s_max" in o]
    res = [o for o in objs if o.get("verified")]
    up = UP_RE.search(p.stderr)
    sw = SWITCH_RE.search(p.stderr)
    if p.returncode != 0 or not cost or not res or not up:
        log = os.path.join(LOG_DIR, f"scale-{fabric}-{n}.log")
        with open(log, "w") as f:
            f.write(" ".join(cmd) + "\n" + out)
        errs = [l for l in out.splitlines()
                if re.search(r"error|MPI_ERR|failed|timed out|abort", l, re.I)]
        print(f"scale: {fabric} {n} ranks FAILED (rc {p.returncode}, "
              f"{wall:.0f} s), whole output in {log}; first errors:\n" +
              "\n".join(errs[:12]), file=sys.stderr, flush=True)
        return {"fabric": fabric, "mpi": mpi, "ranks": n,
                "failed": f"rc {p.returncode} after {wall:.0f} s: " +
                (errs[0].strip()[:160] if errs else "no result line"),
                "log": log}
    c, r = cost[-1], res[-1]
    row = {"fabric": fabric, "mpi": mpi, "ranks": n, "size": size,
           "steps": steps, "up_s": float(up.group(2)),
           "init_s": c["init_s_max"], "first_s": c["first_step_s_max"],
           "a2a_ms": r["comm_us_median"] / 1e3, "wall_s": round(wall, 2),
           "hwm_mib_mean": c["hwm_kib_mean"] / 1024,
           "hwm_mib_max": c["hwm_kib_max"] / 1024,
           "shmem_mib_mean": c["shmem_kib_mean"] / 1024,
           "anon_mib_mean": c["anon_kib_mean"] / 1024,
           "switch_huge_mib": int(sw.group(1)) if sw else 0}
    print(f"scale: {fabric:6s} {n:4d} ranks: up {row['up_s']:.1f} s, "
          f"init {row['init_s']:.1f} s, first a2a {row['first_s']:.2f} s, "
          f"a2a {row['a2a_ms']:.2f} ms, wall {wall:.1f} s, rss "
          f"{row['hwm_mib_mean']:.0f}/{row['hwm_mib_max']:.0f} MiB",
          file=sys.stderr, flush=True)
    return row


def table(rows):
    out = ["| fabric | ranks | testbed up | MPI_Init | first all-to-all "
           "(connects) | all-to-all median | job wall | RSS per rank mean "
           "(max) | of it the rank's own: anonymous + shared (mbuf pool) | "
           "switch hugepages |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "failed" in r:
            out.append(f"| {r['fabric']} | {r['ranks']} | failed: "
                       f"{r['failed']} |||||||")
            continue
        out.append(f"| {r['fabric']} | {r['ranks']} | {r['up_s']:.1f} s | "
                   f"{r['init_s']:.1f} s | {r['first_s']:.2f} s | "
                   f"{r['a2a_ms']:.2f} ms | {r['wall_s']:.0f} s | "
                   f"{r['hwm_mib_mean']:.0f} ({r['hwm_mib_max']:.0f}) MiB | "
                   f"{r['anon_mib_mean'] + r['shmem_mib_mean']:.0f} MiB "
                   f"({r['anon_mib_mean']:.0f} + {r['shmem_mib_mean']:.0f}) | "
                   f"{r['switch_huge_mib']} MiB |")
    return "\n".join(out)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(1, 3, figsize=(13, 4))
    for fabric, mark in (("bridge", "o-"), ("vhost", "s-"), ("tcp", "^--")):
        rs = sorted((r for r in rows if r["fabric"] == fabric and
                     "failed" not in r),
                    key=lambda r: r["ranks"])
        if not rs:
            continue
        x = [r["ranks"] for r in rs]
        axs[0].plot(x, [r["up_s"] + r["init_s"] + r["first_s"] for r in rs],
                    mark, label=f"{fabric}: up + init + connect")
        axs[0].plot(x, [r["init_s"] for r in rs], mark, alpha=0.5,
                    label=f"{fabric}: MPI_Init")
        axs[1].plot(x, [r["hwm_mib_mean"] for r in rs], mark,
                    label=f"{fabric}: peak RSS")
        axs[1].plot(x, [r["anon_mib_mean"] + r["shmem_mib_mean"]
                        for r in rs], mark, alpha=0.5,
                    label=f"{fabric}: own (anonymous + mbuf pool)")
        axs[2].plot(x, [r["a2a_ms"] for r in rs], mark, label=fabric)
    titles = ("start-up (s)", "memory per rank (MiB)",
              f"all-to-all median (ms, {rows[0]['size']} B per pair)")
    for ax, t in zip(axs, titles):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ranks")
        ax.set_title(t)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    axs[2].set_yscale("log")
    fig.suptitle("MPI_Alltoall jobs, sctp_dpdk (bridge, vhost) and UCX tcp: "
                 "cost of the job's size (2 CPUs, all ranks on "
                 "one host)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ranks", default="2,8,32,64,128")
    ap.add_argument("--fabrics", default="bridge,vhost,tcp")
    ap.add_argument("--mpi", choices=["openmpi", "mpich"], default="openmpi")
    ap.add_argument("--size", type=int, default=4096,
                    help="bytes per pair per all-to-all (default 4096)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--timeout", type=int, default=1200)
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--render", help="stored results: table and plot only")
    ap.add_argument("--log-dir", default="/tmp",
                    help="where a failed job's whole output goes")
    ap.add_argument("--only", action="append", default=[],
                    metavar="FABRIC:RANKS", help="measure only these jobs "
                    "and merge them into --json (replacing its rows)")
    a = ap.parse_args()
    global LOG_DIR
    LOG_DIR = a.log_dir
    if a.render:
        rows = json.load(open(a.render))
    else:
        if os.geteuid() != 0:
            print("scale: needs root (testbeds)", file=sys.stderr)
            return 77
        rows = []
        failed = 0
        plan = [(f, int(n)) for f in a.fabrics.split(",")
                for n in a.ranks.split(",")]
        if a.only:
            plan = [(o.split(":")[0], int(o.split(":")[1])) for o in a.only]
            if a.json and os.path.exists(a.json):
                rows = [r for r in json.load(open(a.json))
                        if (r["fabric"], r["ranks"]) not in plan]
        for fabric, n in plan:
            if any(r["fabric"] == fabric and "failed" in r for r in rows
                   if not a.only):
                continue  # a smaller job of this fabric failed
            known = [r["hwm_mib_max"] for r in rows
                     if r["fabric"] == fabric and "failed" not in r]
            rows.append(job(fabric, a.mpi, n, a.size, a.steps, a.timeout,
                            max(known, default=0)))
            failed += "failed" in rows[-1]
            rows.sort(key=lambda r: (r["fabric"], r["ranks"]))
            if a.json:  # keep what was measured if a later job fails
                with open(a.json, "w") as f:
                    json.dump(rows, f, indent=1)
                    f.write("\n")
    print(table(rows))
    if a.plot:
        plot(rows, a.plot)
    return 1 if not a.render and failed else 0


if __name__ == "__main__":
    sys.exit(main())
