#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""apps_vs_tcp - real MPI applications and proxy patterns over sctp_dpdk
against UCX tcp, in the same run.

Each case runs once per transport per round, the transports interleaved
(sctp_dpdk, tcp, sctp_dpdk, tcp, ...) so that a load change on this shared
machine hits both; the table gives per-transport medians over --rounds and
the ratio sctp_dpdk / tcp (below 1: sctp_dpdk is faster).

  applications (from Debian's archive, Open MPI builds):
    lammps   the Lennard-Jones melt (bench/apps/in.lj, 32000 atoms, 600
             steps): loop time and LAMMPS' own Comm time; the thermo output
             (energies at every 100th step) must be identical across
             transports (same rank count: deterministic)
    hpcc     HPC Challenge (bench/apps/hpccinf.txt, N=2000): HPL (dense LU),
             MPI FFT (all-to-all), PTRANS, ring latency/bandwidth; its own
             residual checks must pass (Success=1, no FAILED)
  proxies (apps/sdp_mpi_proxy.c, every byte checked), Open MPI, and
  MPICH too for halo-160k-c4000 and allreduce-8:
    halo-<S>-c<C>   C us of computation, then 4 exchanges of S bytes
    alltoall, allreduce-<S>, small: see sdp_mpi_proxy.c

Layouts: 2 ranks on a memif pair (sctp_dpdk) vs 2 namespaces on the bridge
(tcp over the veths: the kernel path a user would take instead), 2 ranks
on the bridge (af_packet vs tcp), 4 ranks on the bridge (more ranks than
cores: both transports back off).

  bench/apps_vs_tcp.py [--quick] [--rounds N] [--cases lammps,halo...]
                       [--layouts memif2,bridge2,bridge4] [--json F]
                       [--plot F.png]

Exit status: 1 if a run failed or a correctness check did not hold (the
figures of a wrong answer are not printed), else 0.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MPIRUN = os.path.join(ROOT, "apps", "sdp-mpirun")
BUILD = os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))

LAYOUTS = {
    # name: (np, sctp_dpdk fabric, tcp fabric)
    "memif2": (2, "memif", "bridge"),
    "bridge2": (2, "bridge", "bridge"),
    "bridge4": (4, "bridge", "bridge"),
}


def log(msg):
    print(f"apps_vs_tcp: {msg}", file=sys.stderr, flush=True)


class CaseFailed(Exception):
    pass


# --baseline-build: the transport of another build directory (e.g. an
# older commit's), run as a third variant "before" in every round.
BEFORE_BUILD = None


def run_job(mpi, fabric, tls, np_, argv, cwd, timeout, env=()):
    penv = dict(os.environ)
    if tls == "before":
        tls = "sctp_dpdk"
        penv["SDP_BUILD_DIR"] = BEFORE_BUILD
    cmd = [MPIRUN, "--mpi", mpi, "--fabric", fabric, "--tls", tls,
           "-np", str(np_), "--timeout", str(timeout)]
    for e in env:
        cmd += ["--env", e]
    cmd += argv
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                       timeout=timeout + 120, env=penv)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        tail = "\n".join((p.stdout + p.stderr).splitlines()[-15:])
        raise CaseFailed(f"{' '.join(cmd)} exited {p.returncode}:\n{tail}")
    return p.stdout, p.stderr, wall


# --- LAMMPS -----------------------------------------------------------------
LMP_LOOP = re.compile(r"^Loop time of ([\d.]+) on (\d+) procs", re.M)
LMP_COMM = re.compile(r"^Comm\s*\|\s*[\d.]+\s*\|\s*([\d.]+)\s*\|", re.M)
LMP_THERMO = re.compile(r"^\s+(\d+)\s+(-?[\d.e+-]+\s+){4}-?[\d.e+-]+\s*$",
                        re.M)


def lammps(mpi, fabric, tls, np_, work, quick):
    steps = 200 if quick else 600
    out, _, _ = run_job(mpi, fabric, tls, np_,
                        ["lmp", "-in", os.path.join(HERE, "apps", "in.lj"),
                         "-var", "steps", str(steps), "-log", "none"],
                        work, 600)
    loop, comm = LMP_LOOP.search(out), LMP_COMM.search(out)
    thermo = [m.group(0).strip() for m in LMP_THERMO.finditer(out)]
    if not loop or not comm or len(thermo) < 2:
        raise CaseFailed(f"lammps: no loop time, Comm or thermo output:\n"
                         f"{out[-2000:]}")
    return {"time_s": float(loop.group(1)), "comm_s": float(comm.group(1)),
            "check": "\n".join(thermo)}


# --- HPCC -------------------------------------------------------------------
HPCC_KEYS = ["HPL_Tflops", "MPIFFT_Gflops", "PTRANS_GBs",
             "RandomlyOrderedRingLatency_usec",
             "RandomlyOrderedRingBandwidth_GBytes"]


def hpcc(mpi, fabric, tls, np_, work, quick):
    d = tempfile.mkdtemp(prefix="hpcc-", dir=work)
    try:
        # the process grid P x Q uses every rank: 1 x 2, 2 x 2
        p_ = 2 if np_ >= 4 else 1
        with open(os.path.join(HERE, "apps", "hpccinf.txt")) as f:
            inf = f.read()
        inf = re.sub(r"^1(\s+Ps)$", f"{p_}\\1", inf, flags=re.M)
        inf = re.sub(r"^2(\s+Qs)$", f"{np_ // p_}\\1", inf, flags=re.M)
        with open(os.path.join(d, "hpccinf.txt"), "w") as f:
            f.write(inf)
        _, _, wall = run_job(mpi, fabric, tls, np_, ["hpcc"], d, 900)
        with open(os.path.join(d, "hpccoutf.txt")) as f:
            text = f.read()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    vals = dict(re.findall(r"^(\w+)=(\S+)$", text, re.M))
    if vals.get("Success") != "1" or "FAILED" in text:
        raise CaseFailed(f"hpcc: its checks failed (Success="
                         f"{vals.get('Success')})")
    r = {"time_s": wall, "check": "Success=1"}
    for k in HPCC_KEYS:
        if k not in vals:
            raise CaseFailed(f"hpcc: {k} missing from hpccoutf.txt")
        r[k] = float(vals[k])
    # HPL's own time (its wall clock on the factorisation and solve)
    m = re.search(r"^HPL_time=(\S+)$", text, re.M)
    if m:
        r["hpl_s"] = float(m.group(1))
    return r


# --- proxies ----------------------------------------------------------------
def proxy(args):
    def run(mpi, fabric, tls, np_, work, quick):
        prog = os.path.join(BUILD, "apps", f"sdp-mpi-proxy-{mpi}")
        steps = "100" if quick else "300"
        out, _, _ = run_job(mpi, fabric, tls, np_,
                            [prog, "--steps", steps] + args, work, 300)
        line = [l for l in out.splitlines() if l.startswith("{")]
        if not line:
            raise CaseFailed(f"proxy {args}: no result line:\n{out[-1000:]}")
        r = json.loads(line[-1])
        if not r.get("verified"):
            raise CaseFailed(f"proxy {args}: not verified")
        return {"time_s": r["wall_s"], "comm_s": r["comm_us_mean"] * 1e-6,
                "check": "verified"}
    return run


CASES = {
    # name: (function, MPIs)
    "lammps": (lammps, ["openmpi"]),
    "hpcc": (hpcc, ["openmpi"]),
    "halo-16k-c1000": (proxy(["--pattern", "halo", "--size", "16384",
                              "--compute-us", "1000"]), ["openmpi"]),
    "halo-160k-c0": (proxy(["--pattern", "halo", "--size", "163840",
                            "--compute-us", "0"]), ["openmpi"]),
    "halo-160k-c1000": (proxy(["--pattern", "halo", "--size", "163840",
                               "--compute-us", "1000"]), ["openmpi"]),
    "halo-160k-c4000": (proxy(["--pattern", "halo", "--size", "163840",
                               "--compute-us", "4000"]), ["openmpi", "mpich"]),
    "alltoall-64k": (proxy(["--pattern", "alltoall", "--size", "65536",
                            "--compute-us", "1000"]), ["openmpi"]),
    "allreduce-8": (proxy(["--pattern", "allreduce", "--size", "8",
                           "--compute-us", "100"]), ["openmpi", "mpich"]),
    "allreduce-64k": (proxy(["--pattern", "allreduce", "--size", "65536",
                             "--compute-us", "1000"]), ["openmpi"]),
    "small-256": (proxy(["--pattern", "small", "--size", "256", "--msgs",
                         "32", "--compute-us", "500"]), ["openmpi"]),
}
QUICK_CASES = ["lammps", "halo-160k-c1000", "allreduce-8"]


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def plot(rows, path):
    try:
        import matplotlib
    except ImportError:
        sys.exit(f"apps_vs_tcp: --plot needs matplotlib (apt-get install "
                 f"python3-matplotlib; run with /usr/bin/python3)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{r['case']}\n{r['mpi']} {r['layout']}" for r in rows]
    wall = [r["ratio_time"] for r in rows]
    comm = [r.get("ratio_comm") or 0 for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(rows)), 4.5))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], wall, 0.4, label="wall time")
    ax.bar([i + 0.2 for i in x], comm, 0.4, label="communication time")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=70, fontsize=7)
    ax.set_ylabel("sctp_dpdk / UCX tcp (below 1: faster)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    log(f"plot written to {path}")


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="lammps (200 steps), one halo and one allreduce "
                    "proxy, 2 rounds")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--cases", help="comma-separated, from: " +
                    ",".join(CASES))
    ap.add_argument("--layouts", default="memif2,bridge2,bridge4",
                    help="comma-separated, from: " + ",".join(LAYOUTS))
    ap.add_argument("--mpi", help="only this MPI (openmpi or mpich)")
    ap.add_argument("--baseline-build", metavar="DIR",
                    help="also run the sctp_dpdk transport of build "
                    "directory DIR (another commit's) in every round, as "
                    "'before'")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    a = ap.parse_args()
    if os.geteuid() != 0:
        log("needs root (testbeds); skipped")
        return 77
    global BEFORE_BUILD
    rounds = a.rounds or (2 if a.quick else 3)
    variants = [("sctp_dpdk", 0), ("tcp", 1)]
    if a.baseline_build:
        lib = os.path.join(a.baseline_build, "ucx-tl",
                           "libuct_sctp_dpdk.so")
        if not os.path.exists(lib):
            sys.exit(f"apps_vs_tcp: --baseline-build: {lib} not found")
        BEFORE_BUILD = os.path.abspath(a.baseline_build)
        variants.append(("before", 0))
    cases = (a.cases.split(",") if a.cases else
             QUICK_CASES if a.quick else list(CASES))
    layouts = a.layouts.split(",")
    for c in cases:
        if c not in CASES:
            sys.exit(f"apps_vs_tcp: unknown case {c!r} (--cases: "
                     f"{','.join(CASES)})")
    for l in layouts:
        if l not in LAYOUTS:
            sys.exit(f"apps_vs_tcp: unknown layout {l!r} (--layouts: "
                     f"{','.join(LAYOUTS)})")
    for tool, case in (("lmp", "lammps"), ("hpcc", "hpcc")):
        if case in cases and shutil.which(tool) is None:
            sys.exit(f"apps_vs_tcp: {tool} not installed (apt-get install "
                     f"{'lammps' if tool == 'lmp' else tool}); or leave "
                     f"{case} out of --cases")
    work = tempfile.mkdtemp(prefix="sdp-apps-")
    rows, failed = [], 0
    try:
        for case in cases:
            fn, mpis = CASES[case]
            for mpi in mpis:
                if a.mpi and mpi != a.mpi:
                    continue
                for lay in layouts:
                    np_, fab_s, fab_t = LAYOUTS[lay]
                    res = {v: [] for v, _ in variants}
                    try:
                        for _ in range(rounds):
                            for tls, t in variants:
                                fab = fab_t if t else fab_s
                                res[tls].append(fn(mpi, fab, tls, np_, work,
                                                   a.quick))
                    except (CaseFailed, subprocess.TimeoutExpired) as e:
                        log(f"{case} {mpi} {lay}: FAILED: {e}")
                        failed += 1
                        continue
                    checks = {r["check"] for v in res.values() for r in v}
                    if len(checks) != 1:
                        log(f"{case} {mpi} {lay}: FAILED: the "
                            f"application's output differs between "
                            f"transports/runs:\n" + "\n---\n".join(checks))
                        failed += 1
                        continue
                    row = {"case": case, "mpi": mpi, "layout": lay,
                           "ranks": np_, "rounds": rounds}
                    for tls, v in res.items():
                        row[f"{tls}_time_s"] = median(
                            [r["time_s"] for r in v])
                        if "comm_s" in v[0]:
                            row[f"{tls}_comm_s"] = median(
                                [r["comm_s"] for r in v])
                        for k in HPCC_KEYS + ["hpl_s"]:
                            if k in v[0]:
                                row[f"{tls}_{k}"] = median([r[k] for r in v])
                    row["ratio_time"] = (row["sctp_dpdk_time_s"] /
                                         row["tcp_time_s"])
                    if "sctp_dpdk_comm_s" in row and row["tcp_comm_s"] > 0:
                        row["ratio_comm"] = (row["sctp_dpdk_comm_s"] /
                                             row["tcp_comm_s"])
                    if "before" in res:
                        row["ratio_before"] = (row["before_time_s"] /
                                               row["tcp_time_s"])
                        if "before_comm_s" in row and row["tcp_comm_s"] > 0:
                            row["ratio_comm_before"] = (row["before_comm_s"] /
                                                        row["tcp_comm_s"])
                    if case == "hpcc":
                        row["ratio_hpl_speed"] = (row["sctp_dpdk_HPL_Tflops"]
                                                  / row["tcp_HPL_Tflops"])
                        row["ratio_fft_speed"] = (
                            row["sctp_dpdk_MPIFFT_Gflops"] /
                            row["tcp_MPIFFT_Gflops"])
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    hdr = (f"{'case':<18}{'mpi':<8}{'layout':<8}{'sdp s':>9}{'tcp s':>9}"
           f"{'ratio':>7}{'sdp comm':>10}{'tcp comm':>10}{'ratio':>7}")
    print("(wall time in s: the application's loop time, the job's for hpcc, "
          "the proxy's steps; comm: LAMMPS' Comm section in ms, the proxy's "
          "time inside MPI per step in ms)")
    print(hdr)
    for r in rows:
        comm = ""
        if "ratio_comm" in r:
            comm = (f"{r['sctp_dpdk_comm_s'] * 1e3:>10.3f}"
                    f"{r['tcp_comm_s'] * 1e3:>10.3f}{r['ratio_comm']:>7.2f}")
        print(f"{r['case']:<18}{r['mpi']:<8}{r['layout']:<8}"
              f"{r['sctp_dpdk_time_s']:>9.3f}{r['tcp_time_s']:>9.3f}"
              f"{r['ratio_time']:>7.2f}{comm}")
        if "ratio_before" in r:
            print(f"{'':<26}before: {r['before_time_s']:>9.3f}"
                  f"{'':>9}{r['ratio_before']:>7.2f}" +
                  (f"{r['before_comm_s'] * 1e3:>10.3f}{'':>10}"
                   f"{r['ratio_comm_before']:>7.2f}"
                   if "ratio_comm_before" in r else ""))
        if r["case"] == "hpcc":
            print(f"{'':<34}HPL speed x{r['ratio_hpl_speed']:.2f}, "
                  f"FFT speed x{r['ratio_fft_speed']:.2f} (of tcp's)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.plot and rows:
        plot(rows, a.plot)
    if failed:
        log(f"{failed} case(s) failed (messages above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
