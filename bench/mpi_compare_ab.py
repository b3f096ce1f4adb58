#!/usr/bin/env python3
"""mpi_compare_ab.py - 1 MiB MPI bandwidth, sctp_dpdk beside UCX tcp in
every run, interleaved over variants and rounds (a noisy machine: the
figure is the median; one JSON line per run).

  bench/mpi_compare_ab.py OUT.jsonl SERIES ROUNDS VARIANT [VARIANT...]

A VARIANT is 'VAR=VALUE;VAR2=VALUE2' set in sdp-mpi-compare's environment
('V=new': nothing that matters; a UCX_* variable the launcher does not set
itself reaches the ranks).  Each round runs every variant once with
`apps/sdp-mpi-compare --mpi $AB_MPI (mpich) --reps 1` and $AB_ARGS (default:
--fabrics memif --min-size 1048576 --max-size 1048576); the summary prints
each variant's medians and their ratio.
"""
import json, os, subprocess, sys, tempfile, statistics as st

out, series, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
variants = sys.argv[4:]
extra = os.environ.get("AB_ARGS", "--fabrics memif --min-size 1048576 --max-size 1048576").split()
res = {v: [] for v in variants}
for r in range(1, rounds + 1):
    for v in variants:
        env = dict(os.environ)
        for kv in v.split(";"):
            if "=" in kv:
                k, val = kv.split("=", 1)
                env[k] = val
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            js = f.name
        p = subprocess.run(["apps/sdp-mpi-compare", "--mpi", os.environ.get("AB_MPI", "mpich"), "--reps", "1",
                            "--json", js] + extra, env=env, capture_output=True,
                           text=True, timeout=600)
        try:
            d = json.load(open(js))
            fab = [k for k in d["sctp_dpdk"]][0]
            s = d["sctp_dpdk"][fab]["1048576"]["bw_mbps"]
            t = d["tcp"]["1048576"]["bw_mbps"]
        except Exception as e:
            print("run failed", v, e, p.stderr[-500:], flush=True)
            continue
        load = os.getloadavg()[0]
        rec = {"series": series, "round": r, "variant": v, "tcp_MBps": t,
               "sctp_dpdk_MBps": s, "load": round(load, 2)}
        res[v].append((s, t))
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)
for v in variants:
    if res[v]:
        s = st.median(x[0] for x in res[v]); t = st.median(x[1] for x in res[v])
        print(f"{v:60s} n={len(res[v])} sctp {s:.0f} tcp {t:.0f} ratio {s/t:.2f}")
