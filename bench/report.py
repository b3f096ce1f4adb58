#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""report - keep docs/BENCHMARKS.md in step with the code: re-run a
section's benchmark (or all of them), check every row's baseline, and
rewrite that section's table, plot, command and "measured" line between
its markers

  <!-- report:KEY -->  ...generated...  <!-- /report:KEY -->

Everything between a section's markers is generated; the prose around it
(what is measured, why a number is what it is) is written by hand.

  bench/report.py --list                     sections, their commands, run time
  bench/report.py mpi pacing                 re-measure those sections, rewrite
  bench/report.py all                        every section (about 2 hours)
  bench/report.py --render all               measure nothing: re-render every
                                             table from the stored results and
                                             check the baselines (seconds)

Where the results live: each section's data files in bench/results/, and
bench/results/report.json: per section, the data files and when, where and
from which commit they were measured.  A re-run replaces the section's data
files and its entry.

Baselines: every section has a check of its rows (e.g. the raw dataplane
echo must be faster than SCTP over it, which must be faster than MPI over
SCTP; UCX tcp's latency must be positive and its bandwidth plausible).  A
row that fails its check stops the run with exit 1 and leaves the page
unchanged: a wrong baseline never reaches the page.

Run as root from the repository root after `ninja -C build`; sections
that need the testbed say so by failing with the script's own message.
Exit: 0 done, 1 a benchmark or a baseline check failed, 2 usage.
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
DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")
META = os.path.join(HERE, "results", "report.json")
PY = "/usr/bin/python3"  # Debian's, with matplotlib for the plots


def log(msg):
    print(f"report: {msg}", file=sys.stderr, flush=True)


class BaselineError(Exception):
    pass


def need(cond, what):
    if not cond:
        raise BaselineError(what)


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return json.load(f)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def size_name(n):
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


# ------------------------------------------------------------ dataplane
def render_dataplane(files):
    r = subprocess.run([PY, os.path.join(HERE, "ping_vs_testpmd.py"),
                        "--from-json", os.path.join(ROOT, files[0])],
                       capture_output=True, text=True, check=True)
    for x in load(files[0])["results"]:
        m = x["median"]
        need(all(m.get(k) for k in ("ours_rtt_p50", "tp_rtt_p50",
                                    "ours_pps", "tp_pps", "raw_rx_pps")),
             f"dataplane {x['fabric']}: a run is missing: {m}")
        need(m["raw_rx_pps"] > m["ours_pps"],
             f"dataplane {x['fabric']}: the open-loop raw ceiling "
             f"({m['raw_rx_pps']:.0f} pps) is below the closed loop "
             f"({m['ours_pps']:.0f} pps): the raw run measured something "
             "else")
    return r.stdout.strip()


# ------------------------------------------------------------ sctp
def render_sctp(files):
    r = subprocess.run([PY, os.path.join(HERE, "perf_vs_tcp.py"),
                        "--from-json", os.path.join(ROOT, files[0])],
                       capture_output=True, text=True, check=True)
    text = r.stdout.strip()
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| (.+?) \| ([\d.]+)x? \| ([\d.]+)x? \|", line)
        if m:
            rows[m.group(1).strip()] = (float(m.group(2)),
                                        float(m.group(3)))
    for k in ("bw 64 KiB Gbit/s, kernel TCP veth",
              "bw 64 KiB Gbit/s, usrsctp loop, ISA-L CRC",
              "8 B one-way p50 us, sdp-perf memif"):
        need(k in rows and min(rows[k]) > 0, f"sctp: row {k!r} missing "
             "or zero: a baseline run failed")
    lat_loop = rows.get("8 B one-way p50 us, usrsctp loop, no CRC")
    lat_memif = rows.get("8 B one-way p50 us, sdp-perf memif")
    if lat_loop and lat_memif:
        for i, mtu in enumerate((1500, 9000)):
            need(lat_loop[i] < lat_memif[i] * 1.5,
                 f"sctp MTU {mtu}: usrsctp alone in one process "
                 f"({lat_loop[i]} us) is far slower than over two "
                 f"processes and the dataplane ({lat_memif[i]} us)")
    return "\n".join(line for line in text.splitlines()
                     if line.startswith("|"))


# ------------------------------------------------------------ mpi
MPI_LAT = (8, 2048, 8192, 16384)
MPI_BW = (65536, 1 << 20, 4 << 20)


RELEASE_NAMES = {"bookworm": "Debian 12 (bookworm)",
                 "trixie": "Debian 13 (trixie)"}


def render_mpi(files):
    out = []
    for path in files:
        d = load(path)
        tcp = d["tcp"]
        fabrics = list(d["sctp_dpdk"])
        mpi = d['mpi'].upper() if d['mpi'] == 'mpich' else 'Open MPI'
        if "release" in d:
            v = d["versions"]
            rel = RELEASE_NAMES.get(d["release"], d["release"])
            out.append(f"{rel}: UCX {v['ucx']}, DPDK {v['dpdk']}, "
                       f"{mpi} {v['mpich']}, its own UCX tcp; MTU "
                       f"{d['mtu']}, medians of {d['reps']} sweeps:")
        else:
            out.append(f"{mpi}, MTU {d['mtu']}, medians of {d['reps']} "
                       "sweeps:")
        out.append("")
        hdr = "| size | " + " | ".join(
            f"sctp_dpdk {f} | x tcp" for f in fabrics) + " | UCX tcp |"
        out.append(hdr)
        out.append("|---:|" + "---:|---:|" * len(fabrics) + "---:|")
        for kind, sizes, key, unit in (
                ("latency", MPI_LAT, "latency_us_p50", "µs"),
                ("bandwidth", MPI_BW, "bw_mbps", "MB/s")):
            for s in sizes:
                t = (tcp.get(str(s)) or {}).get(key)
                if t is None:
                    continue
                need(t > 0, f"mpi {path}: UCX tcp {kind} at "
                     f"{size_name(s)} is {t}: the baseline did not run")
                if kind == "latency":
                    need(t < 1000, f"mpi {path}: UCX tcp latency "
                         f"{t} us at {size_name(s)}: not a latency")
                cells = []
                for f in fabrics:
                    x = (d["sctp_dpdk"][f].get(str(s)) or {})
                    need(x.get("verified", True), f"mpi {path}: {f} "
                         f"{size_name(s)} not verified")
                    v = x.get(key)
                    cells.append(f"{v:.2f} {unit} | {v / t:.2f}x"
                                 if kind == "latency" else
                                 f"{v:.0f} {unit} | {v / t:.2f}x")
                tv = f"{t:.2f} {unit}" if kind == "latency" else \
                    f"{t:.0f} {unit}"
                out.append(f"| {size_name(s)} {kind} | " +
                           " | ".join(cells) + f" | {tv} |")
        out.append("")
    return "\n".join(out).strip()


# ------------------------------------------------------------ perftest
def render_perftest(files):
    d = load(files[0])
    cases = []
    for r in d["runs"]:
        if r["case"] not in cases:
            cases.append(r["case"])
    out = ["| ucx_perftest case | sctp_dpdk (memif) | UCX tcp (veth) | "
           "ratio |", "|---|---:|---:|---:|"]
    for c in cases:
        runs = [r for r in d["runs"] if r["case"] == c]
        lat = runs[0]["lat"]
        s = med([r["value"] for r in runs if r["tl"] == "sctp_dpdk"])
        t = med([r["value"] for r in runs if r["tl"] == "tcp"])
        unit = "µs" if lat else "MB/s"
        fmt = (lambda v: f"{v:.2f} {unit}") if lat else \
            (lambda v: f"{v:.0f} {unit}")
        need(s is not None, f"perftest {c}: no sctp_dpdk result")
        if t is not None:
            need(t > 0, f"perftest {c}: tcp baseline {t}")
        out.append(f"| {c} | {fmt(s)} | {fmt(t) if t else '(none)'} | "
                   f"{(f'{s / t:.2f}x' if t else '-')} |")
    return "\n".join(out)


# ------------------------------------------------------------ pacing
def render_pacing(files):
    d = load(files[0])
    by = {}
    for r in d:
        by.setdefault(r["rate"], {})[r["limiter"]] = r
    out = ["| target | pacer: rate error | pacer: gap error p50 / p99 | "
           "pacer: largest burst | token bucket: rate error | token "
           "bucket: gap error p99 | token bucket: largest burst |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for rate, x in by.items():
        p, t = x.get("pace"), x.get("tb")
        need(p and t, f"pacing {rate}: pacer or token bucket missing")
        for r in (p, t):
            rx = [run for run in r.get("runs", []) if run.get("role") == "rx"]
            lost = sum(run.get("lost", 0) for run in rx)
            sent = sum(run.get("lost", 0) + run.get("received", 0)
                       for run in rx)
            # a token bucket's bursts may overflow the receiver now and
            # then; beyond 1% the gaps measure the losses, not the sender
            need(sent > 0 and lost <= sent / 100,
                 f"pacing {rate} {r['limiter']}: {lost} of {sent} frames "
                 "lost: the receiver's gaps are not the sender's")
        name = rate.replace("M", " Mbit/s").replace("G", " Gbit/s")
        out.append(
            f"| {name} | {p['rate_error_pct']:+.3f}% | "
            f"{p['gap_err_us_p50']:.2f} / {p['gap_err_us_p99']:.1f} µs | "
            f"{p['max_burst']} | {t['rate_error_pct']:+.2f}% | "
            f"{t['gap_err_us_p99']:.1f} µs | {t['max_burst']} |")
    return "\n".join(out)


# ------------------------------------------------------------ rails
def render_rails(files):
    d = load(files[0])
    sizes = [int(x) for x in d["sizes_mb"].split(",")]
    big = str(max(sizes))
    out = ["| transport | rails | " + " | ".join(f"{s} MB" for s in sizes)
           + f" | speed-up at {big} MB | Mbit/s at {big} MB |",
           "|---|---:|" + "---:|" * (len(sizes) + 2)]
    for tls in d["tls"]:
        s = d["summary"][tls]
        base = s["median_ms"].get("1", {})
        need(base.get(big), f"rails {tls}: no one-rail baseline")
        for n in d["rails"]:
            t = s["median_ms"].get(str(n))
            if not t:
                out.append(f"| {tls} | {n} | failed |")
                continue
            sp = base[big] / t[big]
            need(sp <= n * 1.15, f"rails {tls}: {n} rails {sp:.2f}x "
                 "faster than one: more than the rails can carry, the "
                 "one-rail baseline is wrong")
            out.append(f"| {tls} | {n} | " + " | ".join(
                f"{t[str(x)]:.0f}" for x in sizes) +
                f" | {sp:.2f}x | {int(big) * 8e6 / (t[big] / 1e3) / 1e6:.0f} |")
    seed = d["seed003_ms"]
    out.append(f"| seed 003 (simulation) | 1 / 2 / 3 | " +
               " | ".join("" for _ in sizes[:-1]) +
               f" | {seed['1'][big]:.2f} / {seed['2'][big]:.2f} / "
               f"{seed['3'][big]:.2f} ms | "
               f"{seed['1'][big] / seed['2'][big]:.2f}x / "
               f"{seed['1'][big] / seed['3'][big]:.2f}x | |")
    return "\n".join(out)


# ------------------------------------------------------------ seeds
def seed_rows(path):
    """The ROW_KEYS rows of a seeds.py, seed003.py or seed000_farm.py
    JSON; seeds.py's rows are rebuilt from its results, with its baseline
    checks."""
    d = load(path)
    if "results" in d and "table" in d:
        tmp = f"/tmp/report-seeds-{os.getpid()}.json"
        r = subprocess.run([PY, os.path.join(HERE, "seeds.py"),
                            "--from-json", os.path.join(ROOT, path),
                            "--json", tmp], capture_output=True, text=True)
        try:
            need(r.returncode == 0, f"seeds {path}: " + (
                r.stderr.strip().splitlines() or ["rebuild failed"])[-1])
            with open(tmp) as f:
                return json.load(f)["table"]
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    if "table" not in d and "summary" in d:   # seed003.py's older JSON
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "seed003", os.path.join(HERE, "seed003.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.table_rows(d)
    return d["table"]


def render_seeds(files):
    """Rows of every file; a seed that a later file has replaces the
    earlier files' rows of that seed."""
    per_file = [seed_rows(p) for p in files]
    last = {}
    for i, rows in enumerate(per_file):
        for r in rows:
            if "no table" not in str(r["ours"]):
                last[r["seed"]] = i
    keep = [r for i, rows in enumerate(per_file) for r in rows
            if last.get(r["seed"]) == i]
    for r in keep:
        need("INVALID" not in str(r["ours"]),
             f"seed {r['seed']}: {r['note']}")
    order = {"000": 0, "000f": 1, "000s": 2, "001": 3, "003": 4, "004": 5}
    keep.sort(key=lambda r: order.get(r["seed"], 9))
    out = ["| seed | experiment | theirs | ours | met |",
           "|---|---|---|---|---|"]
    for r in keep:
        out.append(f"| {r['seed']} | {r['experiment']} | {r['theirs']} | "
                   f"{r['ours']} | {r['met']} |")
    return "\n".join(out)


# ------------------------------------------------------------ apps
def render_apps(files):
    rows = load(files[0])
    need(rows, "apps: no rows: every case failed")
    before = all("ratio_before" in r for r in rows)
    out = ["| case | MPI | layout | sctp_dpdk | UCX tcp | ratio | "
           "comm sctp_dpdk | comm tcp | comm ratio |" +
           (" before: ratio | before: comm ratio |" if before else ""),
           "|---|---|---|---:|---:|---:|---:|---:|---:|" +
           ("---:|---:|" if before else "")]
    for r in rows:
        for t in ("sctp_dpdk", "tcp"):
            need(r[f"{t}_time_s"] > 0, f"apps: {r['case']} {r['layout']}: "
                 f"{t} time {r[f'{t}_time_s']}: a run measured nothing")
        comm = " | | |"
        if "ratio_comm" in r:
            comm = (f" {r['sctp_dpdk_comm_s'] * 1e3:.2f} ms | "
                    f"{r['tcp_comm_s'] * 1e3:.2f} ms | "
                    f"{r['ratio_comm']:.2f}x |")
        name = r["case"]
        if name == "hpcc":
            name += (f" (HPL {r['ratio_hpl_speed']:.2f}x, FFT "
                     f"{r['ratio_fft_speed']:.2f}x tcp's speed)")
        line = (f"| {name} | {r['mpi']} | {r['layout']} | "
                f"{r['sctp_dpdk_time_s']:.3f} s | {r['tcp_time_s']:.3f} s "
                f"| {r['ratio_time']:.2f}x |{comm}")
        if before:
            line += (f" {r['ratio_before']:.2f}x | " +
                     (f"{r['ratio_comm_before']:.2f}x |"
                      if "ratio_comm_before" in r else " |"))
        out.append(line)
    return "\n".join(out)


# ------------------------------------------------------------ scale
def render_scale(files):
    sys.path.insert(0, HERE)
    import scale
    rows = load(files[0])
    need(rows, "scale: no rows")
    for r in rows:
        if "failed" in r:
            continue  # shown as failed, with its reason
        need(r["init_s"] > 0 and r["a2a_ms"] > 0 and r["hwm_mib_mean"] > 0,
             f"scale: {r['fabric']} {r['ranks']} ranks: a zero figure "
             f"(init {r['init_s']}, a2a {r['a2a_ms']}, rss "
             f"{r['hwm_mib_mean']}): the job measured nothing")
        need(r["shmem_mib_mean"] <= r["hwm_mib_max"],
             f"scale: {r['fabric']} {r['ranks']}: shared part above the "
             "peak RSS")
    return scale.table(rows)


# ------------------------------------------------------------ vhost
def render_vhost(files):
    sys.path.insert(0, HERE)
    import vhost_vs_tcp
    d = load(files[0])
    for size, row in d["compare"]["tcp"].items():
        need(row["latency_us_p50"] > 0 and row["verified"],
             f"vhost: UCX tcp at {size} B: latency {row['latency_us_p50']}, "
             f"verified {row['verified']}")
    for f, rows in d["compare"]["sctp_dpdk"].items():
        need(all(r["verified"] for r in rows.values()),
             f"vhost: sctp_dpdk over {f}: a size not verified")
    return vhost_vs_tcp.table(d)


# ------------------------------------------------------------ registry
SECTIONS = {
    "apps": dict(
        title="Applications and proxy patterns, sctp_dpdk vs UCX tcp",
        minutes=30,
        files=["bench/results/apps_vs_tcp.json"],
        plots=["docs/img/apps_vs_tcp.png"],
        commands=[[PY, "bench/apps_vs_tcp.py", "--rounds", "3",
                   "--json", "bench/results/apps_vs_tcp.json",
                   "--plot", "docs/img/apps_vs_tcp.png"]],
        render=render_apps),
    "releases": dict(
        title="MPI on Debian 12 and Debian 13, sctp_dpdk vs each one's UCX tcp",
        minutes=20,
        files=["bench/results/releases_bookworm.json",
               "bench/results/releases_trixie.json"],
        plots=[],
        commands=[[PY, "bench/releases.py", "--root",
                   "/var/tmp/sdp-trixie-dev", "--rounds", "3"]],
        render=render_mpi),
    "mpi": dict(
        title="MPI latency and bandwidth, sctp_dpdk vs UCX tcp",
        minutes=25,
        files=["bench/results/mpi_compare_mpich.json",
               "bench/results/mpi_compare_openmpi.json"],
        plots=["docs/img/mpi_compare_mpich.png",
               "docs/img/mpi_compare_openmpi.png"],
        commands=[["apps/sdp-mpi-compare", "--mpi", "mpich", "--reps", "5",
                   "--fabrics", "memif,bridge",
                   "--json", "bench/results/mpi_compare_mpich.json",
                   "--plot", "docs/img/mpi_compare_mpich.png"],
                  ["apps/sdp-mpi-compare", "--mpi", "openmpi", "--reps", "5",
                   "--fabrics", "memif,bridge",
                   "--json", "bench/results/mpi_compare_openmpi.json",
                   "--plot", "docs/img/mpi_compare_openmpi.png"]],
        render=render_mpi),
    "perftest": dict(
        title="UCX level: ucx_perftest, sctp_dpdk vs UCX tcp",
        minutes=5,
        files=["bench/results/perftest_vs_tcp.json"], plots=[],
        commands=[[PY, "bench/perftest_vs_tcp.py", "--reps", "3",
                   "--json", "bench/results/perftest_vs_tcp.json"]],
        render=render_perftest),
    "sctp": dict(
        title="SCTP over the dataplane vs usrsctp alone vs kernel TCP",
        minutes=2,
        files=["bench/results/perf_vs_tcp.json"],
        plots=["docs/img/perf_vs_tcp.png"],
        commands=[[PY, "bench/perf_vs_tcp.py",
                   "--json", "bench/results/perf_vs_tcp.json",
                   "--plot", "docs/img/perf_vs_tcp.png"]],
        render=render_sctp),
    "dataplane": dict(
        title="Dataplane vs dpdk-testpmd",
        minutes=2,
        files=["bench/results/ping_vs_testpmd.json"],
        plots=["docs/img/ping_vs_testpmd.png"],
        commands=[[PY, "bench/ping_vs_testpmd.py",
                   "--json", "bench/results/ping_vs_testpmd.json",
                   "--plot", "docs/img/ping_vs_testpmd.png"]],
        render=render_dataplane),
    "pacing": dict(
        title="Pacer accuracy vs a token bucket",
        minutes=3,
        files=["bench/results/pace_accuracy.json"],
        plots=["docs/img/pace_accuracy.png"],
        commands=[[PY, "bench/pace_accuracy.py", "--repeat", "3",
                   "--json", "bench/results/pace_accuracy.json",
                   "--plot", "docs/img/pace_accuracy.png"]],
        render=render_pacing),
    "rails": dict(
        title="Multi-rail: one transfer over 1, 2 and 3 rails",
        minutes=15,
        files=["bench/results/seed003.json"],
        plots=["docs/img/seed003.png"],
        commands=[[PY, "bench/seed003.py", "--tls", "sctp_dpdk,tcp",
                   "--rails", "1,2,3", "--json", "bench/results/seed003.json",
                   "--plot", "docs/img/seed003.png"]],
        render=render_rails),
    "scale": dict(
        title="Job size: start-up, memory, all-to-all, 2..128 ranks",
        minutes=15,
        files=["bench/results/scale.json"],
        plots=["docs/img/scale.png"],
        commands=[[PY, "bench/scale.py", "--json",
                   "bench/results/scale.json", "--plot",
                   "docs/img/scale.png"]],
        render=render_scale),
    "vhost": dict(
        title="The vhost fabric vs UCX tcp on the bridge",
        minutes=3,
        files=["bench/results/vhost_vs_tcp.json"],
        plots=["docs/img/vhost_vs_tcp.png"],
        commands=[[PY, "bench/vhost_vs_tcp.py", "--mpi", "openmpi",
                   "--reps", "3", "--json", "bench/results/vhost_vs_tcp.json",
                   "--plot", "docs/img/vhost_vs_tcp.png"]],
        render=render_vhost),
    "seeds": dict(
        title="The seeds' experiments",
        minutes=60,
        files=["bench/results/seeds.json"],
        plots=["docs/img/seeds_000.png", "docs/img/seeds_004.png"],
        commands=[[PY, "bench/seeds.py", "--reps", "3", "--delays", "0ms",
                   "--seconds", "4", "--json", "bench/results/seeds.json",
                   "--plot-dir", "docs/img"]],
        render=render_seeds),
}


def machine():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}"


def commit():
    def git(*a):
        return subprocess.run(["git", "-C", ROOT, *a], capture_output=True,
                              text=True).stdout.strip()
    c = git("rev-parse", "--short", "HEAD")
    return c + ("-dirty" if git("status", "--porcelain", "--",
                                "dataplane", "sctp", "pacing", "ucx-tl",
                                "apps", "bench", "common") else "")


def block(key, sec, meta):
    m = meta[key]
    files = m["files"]
    table = sec["render"](files)
    lines = [f"<!-- report:{key} -->", table, ""]
    for p in m.get("plots", sec["plots"]):
        if os.path.exists(os.path.join(ROOT, p)):
            lines += [f"![{sec['title']}]({os.path.relpath(p, 'docs')})", ""]
    cmds = [" ".join(c).replace(PY + " ", "") for c in sec["commands"]]
    lines.append(f"Regenerate: `bench/report.py {key}` (about "
                 f"{sec['minutes']} min: `" + "`; `".join(cmds) + "`).  ")
    if m.get("commands"):
        lines.append("These figures came from `" +
                     "`; `".join(m["commands"]) + "`.  ")
    lines.append(f"Measured {m['date']} on {m['machine']}, load "
                 f"{m['load']}, code {m['commit']}.  Data: " +
                 ", ".join(f"`{f}`" for f in files) + ".")
    lines.append(f"<!-- /report:{key} -->")
    return "\n".join(lines)


def rewrite(doc, key, text):
    pat = re.compile(rf"<!-- report:{re.escape(key)} -->.*?"
                     rf"<!-- /report:{re.escape(key)} -->", re.S)
    if not pat.search(doc):
        raise SystemExit(f"report: docs/BENCHMARKS.md has no markers "
                         f"<!-- report:{key} --> ... <!-- /report:{key} "
                         "-->: add them where the section's table goes")
    return pat.sub(lambda _: text, doc)


def measure(key, sec):
    load0 = os.getloadavg()[0]
    for cmd in sec["commands"]:
        log(f"{key}: {' '.join(cmd)}")
        r = subprocess.run(cmd, cwd=ROOT)
        if r.returncode != 0:
            raise SystemExit(f"report: {key}: {' '.join(cmd)} exited "
                             f"{r.returncode}: the page is unchanged")
    return {"files": sec["files"], "plots": sec["plots"],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": machine(),
            "load": f"{load0:.1f}-{os.getloadavg()[0]:.1f}",
            "commit": commit()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("sections", nargs="*", help="section keys, or all")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--render", action="store_true",
                    help="measure nothing: re-render from stored results")
    a = ap.parse_args()
    if a.list:
        for k, s in SECTIONS.items():
            print(f"{k:10s} ~{s['minutes']:>3} min  {s['title']}")
            for c in s["commands"]:
                print(f"{'':17s}{' '.join(c)}")
        return 0
    keys = list(SECTIONS) if a.sections == ["all"] else a.sections
    bad = [k for k in keys if k not in SECTIONS]
    if not keys or bad:
        ap.error(f"sections: {', '.join(bad) or 'none given'}; known: "
                 f"{', '.join(SECTIONS)}, all")
    meta = json.load(open(META)) if os.path.exists(META) else {}
    for k in keys:
        sec = SECTIONS[k]
        if not a.render:
            if os.geteuid() != 0:
                log("needs root (testbed namespaces)")
                return 1
            meta[k] = measure(k, sec)
        elif k not in meta:
            log(f"{k}: no stored results (bench/results/report.json): "
                f"run bench/report.py {k}")
            return 1
    # read after the measurements (minutes): edits made to the page
    # meanwhile, outside the report's markers, are kept
    doc = open(DOC).read()
    for k in keys:
        sec = SECTIONS[k]
        try:
            doc = rewrite(doc, k, block(k, sec, meta))
        except BaselineError as e:
            log(f"{k}: BASELINE CHECK FAILED: {e}; docs/BENCHMARKS.md "
                "left unchanged")
            return 1
        except (OSError, KeyError, ValueError,
                subprocess.CalledProcessError) as e:
            log(f"{k}: cannot render from {meta[k]['files']}: "
                f"{type(e).__name__}: {e}")
            return 1
        log(f"{k}: table rewritten")
    with open(DOC, "w") as f:
        f.write(doc)
    with open(META, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
