#!/usr/bin/env python3
"""mpi_env_ab.py - interleaved A/B of one MPI bandwidth size under several
environments (sdp-mpirun --env), for a loaded machine: every repetition
runs each variant once, in turn; the summary gives each variant's median
and the load average seen.

  bench/mpi_env_ab.py --reps 5 --out bench/results/x.jsonl \\
      --variant get: \\
      --variant put:UCX_RNDV_SCHEME=put_zcopy \\
      --variant put-copy:UCX_RNDV_SCHEME=put_zcopy,UCX_SCTP_DPDK_TX_ZCOPY_MIN=0

A variant is NAME:VAR=VALUE[,VAR=VALUE...] (nothing after the colon: the
launcher's defaults).  One line of JSON per run in --out.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_variant(text):
    name, _, rest = text.partition(":")
    env = {}
    for kv in filter(None, rest.split(",")):
        k, sep, v = kv.partition("=")
        if not sep:
            sys.exit(f"mpi_env_ab: --variant {text}: '{kv}' is not "
                     "VAR=VALUE (e.g. put:UCX_RNDV_SCHEME=put_zcopy)")
        env[k] = v
    return name, env


def run_once(a, env):
    cmd = [os.path.join(ROOT, "apps", "sdp-mpirun"), "--mpi", a.mpi,
           "--fabric", a.fabric, "-np", "2"]
    for k, v in env.items():
        cmd += ["--env", f"{k}={v}"]
    cmd += [os.path.join(ROOT, "build", "apps", f"sdp-mpi-bench-{a.mpi}"),
            "--min-size", str(a.size), "--max-size", str(a.size),
            "--iters", str(a.iters), "--window", "32",
            "--bw-mib", str(a.bw_mib)]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=a.timeout)
    m = re.search(rf"^\s*{a.size}\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)",
                  p.stdout, re.M)
    if p.returncode != 0 or m is None:
        sys.stderr.write(p.stdout[-2000:] + p.stderr[-2000:])
        return {"rc": p.returncode, "bw_MBps": None}
    return {"rc": 0, "bw_MBps": float(m.group(3)),
            "lat_p50_us": float(m.group(1)), "verified": m.group(4),
            "wall_s": round(time.time() - t0, 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mpi", default="mpich")
    ap.add_argument("--fabric", default="memif")
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--bw-mib", type=int, default=2000)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    variants = [parse_variant(v) for v in a.variant]
    res = {n: [] for n, _ in variants}
    loads = []
    with open(a.out, "a") as f:
        for rep in range(a.reps):
            for name, env in variants:
                load = os.getloadavg()[0]
                r = run_once(a, env)
                r.update({"variant": name, "env": env, "rep": rep,
                          "size": a.size, "load1": load})
                f.write(json.dumps(r) + "\n")
                f.flush()
                loads.append(load)
                if r["bw_MBps"] is not None:
                    res[name].append(r["bw_MBps"])
                print(f"rep {rep} {name}: {r['bw_MBps']} MB/s "
                      f"(load {load:.1f})", flush=True)
    for name, _ in variants:
        v = res[name]
        med = statistics.median(v) if v else None
        print(f"{name}: median {med} MB/s of {len(v)} runs {v}")
    print(f"load average (1 min) during the runs: median "
          f"{statistics.median(loads):.1f}, {min(loads):.1f}.."
          f"{max(loads):.1f}")


if __name__ == "__main__":
    main()
