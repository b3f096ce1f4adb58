#!/usr/bin/env python3
"""perftest_env_ab.py - interleaved A/B of one ucx_perftest case over
sctp_dpdk (memif pair, as bench/perftest_vs_tcp.py runs it) under several
environments; medians and the load average seen.

  bench/perftest_env_ab.py --reps 5 --out bench/results/x.jsonl \\
      --case 'uct put_bw 1 MiB zcopy' \\
      --variant zc:UCX_SCTP_DPDK_TX_ZCOPY_MIN=16k \\
      --variant copy:UCX_SCTP_DPDK_TX_ZCOPY_MIN=0
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perftest_vs_tcp as pt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="uct put_bw 1 MiB zcopy",
                    help="a case name of perftest_vs_tcp.CASES")
    ap.add_argument("--variant", action="append", required=True,
                    help="NAME:VAR=VALUE[,VAR=VALUE...]")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    cases = {c[0]: c for c in pt.CASES}
    if a.case not in cases:
        sys.exit(f"perftest_env_ab: --case '{a.case}' unknown; one of: "
                 + ", ".join(cases))
    _, args, ucp, lat = cases[a.case]
    variants = []
    for v in a.variant:
        name, _, rest = v.partition(":")
        env = dict(kv.split("=", 1) for kv in filter(None, rest.split(",")))
        variants.append((name, env))
    res = {n: [] for n, _ in variants}
    loads = []
    with open(a.out, "a") as f:
        for rep in range(a.reps):
            for name, env in variants:
                saved = {k: os.environ.get(k) for k in env}
                os.environ.update(env)
                load = os.getloadavg()[0]
                try:
                    fin, _ = pt.run_sctp(args, ucp)
                finally:
                    for k, v in saved.items():
                        if v is None:
                            os.environ.pop(k, None)
                        else:
                            os.environ[k] = v
                # Final: iters p50 avg overall bw_avg bw_overall ...
                val = None if fin is None else (fin[1] if lat else fin[5])
                f.write(json.dumps({"case": a.case, "variant": name,
                                    "env": env, "rep": rep, "final": fin,
                                    "value": val, "load1": load}) + "\n")
                f.flush()
                loads.append(load)
                if val is not None:
                    res[name].append(val)
                print(f"rep {rep} {name}: {val} (load {load:.1f})",
                      flush=True)
    unit = "us p50" if lat else "MB/s overall"
    for name, _ in variants:
        v = res[name]
        print(f"{name}: median {statistics.median(v) if v else None} "
              f"{unit} of {len(v)} runs {v}")
    print(f"load average (1 min): median {statistics.median(loads):.1f}, "
          f"{min(loads):.1f}..{max(loads):.1f}")


if __name__ == "__main__":
    main()
