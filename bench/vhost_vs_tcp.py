#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""vhost_vs_tcp - the vhost fabric (every rank's virtio_user port on the
job's own Open vSwitch with DPDK, no kernel) against UCX tcp over the veth
bridge (the kernel's path), in the same run; sctp_dpdk over the bridge's
af_packet ports alongside for reference.

  1. 2 ranks: apps/sdp-mpi-compare --fabrics vhost,bridge (latency and
     bandwidth, 0 B..4 MiB, every size verified, --reps medians; tcp on
     the bridge's kernel addresses).
  2. 8 ranks: MPI_Alltoall of --a2a-sizes bytes per pair
     (apps/sdp_mpi_proxy.c, every byte checked), interleaved
     vhost / bridge / tcp per repetition; the slowest rank's median.

  bench/vhost_vs_tcp.py [--mpi openmpi] [--reps 3] [--json F] [--plot F]
  bench/vhost_vs_tcp.py --render F     table from stored results

Run as root after `ninja -C build`.  Any failed job stops the run (exit 1).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))
APPS = os.path.join(ROOT, "apps")
CASES = [("sctp_dpdk", "vhost"), ("sctp_dpdk", "bridge"), ("tcp", "bridge")]


def compare(a):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [os.path.join(APPS, "sdp-mpi-compare"), "--mpi", a.mpi,
               "--fabrics", "vhost,bridge", "--reps", str(a.reps),
               "--json", f.name] + (["--plot", a.plot] if a.plot else [])
        print(f"vhost_vs_tcp: {' '.join(cmd)}", file=sys.stderr, flush=True)
        r = subprocess.run(cmd, text=True, capture_output=True)
        sys.stderr.write(r.stdout[-4000:])
        if r.returncode != 0:
            raise SystemExit(f"vhost_vs_tcp: sdp-mpi-compare exited "
                             f"{r.returncode}\n{r.stderr[-3000:]}")
        return json.load(open(f.name))


def alltoall(a, tls, fabric, size, ranks):
    prog = os.path.join(BUILD, "apps", f"sdp-mpi-proxy-{a.mpi}")
    cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", a.mpi, "--fabric",
           fabric, "--tls", tls, "-np", str(ranks), "--timeout", "600",
           prog, "--pattern", "alltoall", "--size", str(size), "--steps",
           str(a.steps), "--compute-us", "0"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    res = [json.loads(l) for l in r.stdout.splitlines()
           if l.startswith("{") and '"verified": true' in l]
    if r.returncode != 0 or not res:
        tail = "\n".join((r.stdout + r.stderr).splitlines()[-20:])
        raise SystemExit(f"vhost_vs_tcp: {' '.join(cmd)} failed (rc "
                         f"{r.returncode})\n{tail}")
    return res[-1]["comm_us_median"]


def table(d):
    out = []
    c = d["compare"]
    out.append(f"2 ranks ({d['mpi']}, MTU {c['mtu']}, medians of "
               f"{c['reps']} interleaved runs; every size verified):\n")
    out.append("| bytes | latency vhost | latency bridge (af_packet) | "
               "latency UCX tcp | vhost / tcp | MB/s vhost | MB/s bridge | "
               "MB/s UCX tcp | vhost / tcp |")
    out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    v, b, t = (c["sctp_dpdk"]["vhost"], c["sctp_dpdk"]["bridge"], c["tcp"])
    for size in sorted(t, key=int):
        if size not in v or size not in b:
            continue
        x, y, z = v[size], b[size], t[size]
        lr = x["latency_us_p50"] / z["latency_us_p50"]
        br = x["bw_mbps"] / z["bw_mbps"] if z["bw_mbps"] else 0
        out.append(f"| {int(size)} | {x['latency_us_p50']:.1f} us | "
                   f"{y['latency_us_p50']:.1f} us | "
                   f"{z['latency_us_p50']:.1f} us | {lr:.2f} | "
                   f"{x['bw_mbps']:.0f} | {y['bw_mbps']:.0f} | "
                   f"{z['bw_mbps']:.0f} | {br:.2f} |")
    out.append(f"\n{d['a2a_ranks']} ranks, MPI_Alltoall, the slowest "
               f"rank's median over {d['steps']} steps, median of "
               f"{d['reps']} interleaved runs (all-to-all data verified):\n")
    out.append("| bytes per pair | vhost | bridge (af_packet) | UCX tcp | "
               "vhost / tcp |")
    out.append("|---:|---:|---:|---:|---:|")
    for row in d["alltoall"]:
        m = {k: statistics.median(v) for k, v in row["us"].items()}
        out.append(f"| {row['size']} | {m['sctp_dpdk/vhost'] / 1e3:.2f} ms | "
                   f"{m['sctp_dpdk/bridge'] / 1e3:.2f} ms | "
                   f"{m['tcp/bridge'] / 1e3:.2f} ms | "
                   f"{m['sctp_dpdk/vhost'] / m['tcp/bridge']:.2f} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mpi", choices=["openmpi", "mpich"], default="openmpi")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--a2a-ranks", type=int, default=8)
    ap.add_argument("--a2a-sizes", default="4096,65536")
    ap.add_argument("--json")
    ap.add_argument("--plot", help="the 2-rank sweep's plot")
    ap.add_argument("--render")
    a = ap.parse_args()
    if a.render:
        print(table(json.load(open(a.render))))
        return 0
    if os.geteuid() != 0:
        print("vhost_vs_tcp: needs root (testbeds)", file=sys.stderr)
        return 77
    d = {"mpi": a.mpi, "reps": a.reps, "steps": a.steps,
         "a2a_ranks": a.a2a_ranks, "compare": compare(a), "alltoall": []}
    for size in [int(s) for s in a.a2a_sizes.split(",")]:
        row = {"size": size, "us": {f"{t}/{f}": [] for t, f in CASES}}
        for _ in range(a.reps):
            for tls, fabric in CASES:
                us = alltoall(a, tls, fabric, size, a.a2a_ranks)
                row["us"][f"{tls}/{fabric}"].append(us)
                print(f"vhost_vs_tcp: {a.a2a_ranks} ranks alltoall {size} B "
                      f"{tls}/{fabric}: {us / 1e3:.2f} ms", file=sys.stderr,
                      flush=True)
        d["alltoall"].append(row)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(d, f, indent=1)
            f.write("\n")
    print(table(d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
