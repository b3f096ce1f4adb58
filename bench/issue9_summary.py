#!/usr/bin/env python3
"""issue9_summary.py - issue 9's 1 MiB figures of one session from its raw
results (bench/results/*_<tag>.json[l]), as a table of medians and ratios,
and a plot: per series, sctp_dpdk over UCX tcp of the same run.

  bench/issue9_summary.py --tag s8 [--plot docs/img/issue9_s8.png]

Series read (each optional; missing files are skipped and said so):
  mpi_1mib_ab_<tag>.jsonl       bench/mpi_compare_ab.py: short interleaved
                                pairs (MPICH, memif vs tcp)
  mpi_1mib_long_<tag>.jsonl     long pairs (4 GiB each)
  mpi_compare_medians_<tag>.json
  mpi_compare_openmpi_<tag>.json  sdp-mpi-compare sweeps (memif, bridge)
  mpi_compare_mtus_<tag>.json   MTU series (memif)
"""
import argparse
import json
import os
import statistics as st
import sys

RES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
MIB = "1048576"


def load(name):
    p = os.path.join(RES, name)
    if not os.path.exists(p):
        print(f"(no {name})")
        return None
    if name.endswith(".jsonl"):
        with open(p) as f:
            return [json.loads(l) for l in f if l.strip()]
    with open(p) as f:
        return json.load(f)


def series(tag):
    """[(label, sctp_dpdk MB/s, tcp MB/s, note)]"""
    out = []
    ab = load(f"mpi_1mib_ab_{tag}.jsonl")
    if ab:
        s = [r["sctp_dpdk_MBps"] for r in ab]
        t = [r["tcp_MBps"] for r in ab]
        per = st.median(a / b for a, b in zip(s, t))
        out.append((f"MPICH memif, {len(ab)} short pairs", st.median(s),
                    st.median(t), f"per-pair median {per:.2f}"))
    lg = load(f"mpi_1mib_long_{tag}.jsonl")
    if lg:
        s = [r["MBps"] for r in lg if r["variant"].startswith("sctp")]
        t = [r["MBps"] for r in lg if r["variant"].startswith("tcp")]
        out.append((f"MPICH memif, {len(s)} long pairs", st.median(s),
                    st.median(t), "4 GiB each"))
    for mpi in ("medians", "openmpi"):
        sw = load(f"mpi_compare_{mpi}_{tag}.json")
        if not sw:
            continue
        name = "Open MPI" if sw["mpi"] == "openmpi" else "MPICH"
        t = sw["tcp"][MIB]["bw_mbps"]
        for fab, rows in sw["sctp_dpdk"].items():
            what = "af_packet" if fab == "bridge" else fab
            out.append((f"{name} {what}, sweep ({sw['reps']} runs)",
                        rows[MIB]["bw_mbps"], t, ""))
    mt = load(f"mpi_compare_mtus_{tag}.json")
    if mt:
        best = max(v["tcp"][MIB]["bw_mbps"] for k, v in mt["by_mtu"].items()
                   if int(k) in (1500, 9000))
        for k, v in sorted(mt["by_mtu"].items(), key=lambda x: int(x[0])):
            out.append((f"MPICH memif MTU {k}, MTU series ({mt['reps']})",
                        v["sctp_dpdk"]["memif"][MIB]["bw_mbps"], best,
                        "vs tcp's best of 1500/9000"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tag", required=True)
    ap.add_argument("--plot")
    a = ap.parse_args()
    rows = series(a.tag)
    if not rows:
        sys.exit(f"issue9_summary: no results tagged {a.tag} in {RES}")
    print("| series | sctp_dpdk MB/s | tcp MB/s | ratio | |")
    print("|---|---:|---:|---:|---|")
    for label, s, t, note in rows:
        print(f"| {label} | {s:.0f} | {t:.0f} | {s / t:.2f}x | {note} |")
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.2))
        labels = [r[0] for r in rows][::-1]
        ratios = [r[1] / r[2] for r in rows][::-1]
        colors = ["tab:green" if ("af_packet" in l and x >= 0.8) or
                  ("af_packet" not in l and x >= 1.2) else "tab:red"
                  for l, x in zip(labels, ratios)]
        ax.barh(labels, ratios, color=colors)
        ax.axvline(1.2, ls="--", c="k", lw=1, label="memif target 1.2x")
        ax.axvline(0.8, ls=":", c="k", lw=1, label="af_packet target 0.8x")
        for i, x in enumerate(ratios):
            ax.text(x + 0.02, i, f"{x:.2f}x", va="center", fontsize=8)
        ax.set_xlabel("1 MiB MPI bandwidth, sctp_dpdk / UCX tcp (same run)")
        ax.set_title(f"Issue 9, 1 MiB bandwidth ratios ({a.tag})")
        ax.set_xlim(0, max(ratios) * 1.12)
        fig.legend(loc="lower center", ncol=2, fontsize=8)
        fig.tight_layout(rect=(0, 0.05, 1, 1))
        fig.savefig(a.plot, dpi=110)
        print(f"plot: {a.plot}")


if __name__ == "__main__":
    main()
