#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""seeds - every seed's headline experiment over the real stack, in one
table: the seed's figure, ours, the ratio, and whether the goal is met.

  000  Table 5.1: MPI ping-pong of 30 KiB and 300 KiB at 0/1/2% loss (and
       with --delays, one-way delay), sctp_dpdk vs UCX tcp through the same
       impairment (the bridge with the user-space forwarder), throughput in
       bytes/s and the ratio.  sctp_dpdk runs twice: with the transport's
       defaults and with a candidate change of them given through
       UCX_SCTP_DPDK_SG (--alt-sg), so a change of defaults shows
       before/after in one run.
  001  pacing an all-to-all: bench/seed001.py, its unpaced vs B/N times
       (B/N-dest: each destination paced at B/N; the
       process-total B/N mode is the one the seed's topology defeats).
  003  multipath (hook): bench/seed003.py if present (the rails work).
  000f Bulk Processor Farm, streams vs one stream (hook): the script named
       in EXTERNAL if present (the streams work).
  004  what reliability costs: 4-byte round trip on a memif pair for the
       raw dataplane (sdp-ping), SCTP (sdp-perf) and MPI over sctp_dpdk;
       and the cost of a loss: the dataplane's drop= hook drops every Nth
       DATA packet each rank sends, in an MPI ping-pong (what a lost
       message costs) and in a stream of messages (what it does to the
       messages behind it).

External scripts (EXTERNAL below) are run with --json FILE (and --quick
with --quick); their JSON must hold "table": a list of rows with the keys
of ROW_KEYS.  A script that is absent gives a row "not run".

Every measurement is a median of --reps runs (1 with --quick), the
configurations interleaved.  Figures are printed next to a baseline
measured in the same run; nothing here passes or fails on timing (exit 1
only when a run fails or a message is wrong; 77 without root or
programs).

  bench/seeds.py [--quick] [--only 000,001,004] [--reps 3]
                 [--json out.json] [--plot-dir DIR]
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
sys.path.insert(0, APPS)
import sdp_launch  # noqa: E402

STATS_RE = re.compile(r"sctp_dpdk stats: (\{.*\})")
ROW_KEYS = ("seed", "experiment", "theirs", "ours", "ratio", "goal", "met",
            "note")
# (id, script, quick args, full args): run when the script exists.
EXTERNAL = [
    ("003", "seed003.py", ["--quick"], []),
    # the farm at the seed's smaller delay (10 ms on every link), F=10, 2%:
    # 10 streams vs 1 (comm map; and with usrsctp's first-come-first-served
    # stream scheduler), interleaved
    ("000f", "seed000_farm.py", ["--quick", "--reps", "2"],
     ["--mpi", "openmpi", "--fanouts", "10", "--losses", "2",
      "--variants", "comm/1,comm/10,comm/10:stream_sched=5", "--reps", "3",
      "--tasks-small", "1000", "--tasks-large", "300",
      "--netem-extra", "delay 10ms"]),
    # the farm at the seed's own conditions (ch. 5: no delay, GbE MTU
    # 1500, 220 KB buffers), 2%, F=1 (latency-bound: where streams pay)
    # and F=10 (sender-bound: the seed's head-of-line figure), 30 KB;
    # 1000 tasks even with --quick (runs of 400 are ~1 s, where a few T3
    # timeouts decide)
    ("000s", "seed000_farm.py",
     ["--mpi", "openmpi", "--fanouts", "1", "--sizes", "30000",
      "--losses", "2", "--variants", "comm/1,comm/10", "--reps", "2",
      "--tasks-small", "1000", "--netem-extra", "", "--mtu", "1500",
      "--env", "UCX_SCTP_DPDK_SG=rcvbuf=225280 sndbuf=225280"],
     ["--mpi", "openmpi", "--fanouts", "1,10", "--sizes", "30000",
      "--losses", "2", "--variants", "comm/1,comm/10", "--reps", "3",
      "--tasks-small", "1000", "--netem-extra", "", "--mtu", "1500",
      "--env", "UCX_SCTP_DPDK_SG=rcvbuf=225280 sndbuf=225280"]),
]
# Seed 000, Table 5.1 (bytes/s): {size: {loss: (SCTP, TCP)}}
SEED000 = {30720: {1: (54779, 1924), 2: (44614, 1030)},
           307200: {1: (5870, 1818), 2: (2825, 885)}}
SEED004_RTT_US = 32.0   # "latencies of about 32 us" (4 B ping-pong)
SEED004_REL_US = 3.5    # "reliability ... only about 3-4 us"
RAW_MIN_PROBES = 20000  # raw echo: memif's cold first ring lap must not count
# Another SCTP configuration measured beside the defaults (000's ping-pong,
# 004's loss cost): the sctp layer's RTO bounds, which were the transport's
# defaults before it took rto_min_ms=20 (rto_max_ms=1000 path_max_rxt=10)
# for busy-polling
# ranks (a lost last packet of a message waits one RTO): the 2-rank runs
# here busy-poll, so the table shows the old defaults as "with SG ...".
ALT_SG = "rto_min_ms=100 rto_max_ms=3000 path_max_rxt=5"

_job_n = 0


def log(msg):
    print(f"seeds: {msg}", file=sys.stderr, flush=True)


def job_id():
    global _job_n
    _job_n += 1
    return f"sd{os.getpid() % 10000:04d}{_job_n % 100:02d}"


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def json_lines(text):
    rows = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


class Ctx:
    def __init__(self, a):
        self.a = a
        self.build = os.environ.get("SDP_BUILD_DIR",
                                    os.path.join(ROOT, "build"))
        self.bench_bin = os.environ.get("SDP_BENCH_BIN_DIR",
                                        os.path.join(self.build, "bench"))
        self.mr = sdp_launch.load_mpirun()
        self.failed = []

    def prog(self, name):
        return os.path.join(self.bench_bin, name)

    def mpi(self, tls, fabric, prog_args, netem=None, env=(), timeout=600,
            tcp_cc=None):
        """One MPICH job of 2 ranks; returns (rc, json rows, stats, err).
        tcp_cc: the hosts' TCP congestion control (default: the
        machine's)."""
        env = ["UCX_SCTP_DPDK_STATS=y"] + list(env)
        opts = self.mr.options(
            mpi="mpich", tls=tls, mtu=self.a.mtu, rate=None,
            pace_coll=False, maxrate="1G", idle_sleep_us="auto", env=env,
            program=prog_args)
        with sdp_launch.Testbed(fabric, job=job_id(), hosts=2,
                                mtu=self.a.mtu, netem=netem,
                                kernel_ip=(tls == "tcp")) as tb:
            for i in range(2) if tcp_cc else ():
                subprocess.run(["ip", "netns", "exec", tb.env[f"SDP_NS_{i}"],
                                "sysctl", "-qw",
                                f"net.ipv4.tcp_congestion_control={tcp_cc}"],
                               check=True, timeout=30)
            env_dir = self.mr.write_env_files(opts, tb, 2)
            cmd = self.mr.mpi_command(opts, env_dir, 2)
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)
            tb.procs.append(p)
            rc, out, err = sdp_launch.finish(p, timeout)
        stats = []
        for m in STATS_RE.finditer(err or ""):
            try:
                stats.append(json.loads(m.group(1)))
            except ValueError:
                pass
        return rc, json_lines(out or ""), stats, err or ""


def usrsctp_sum(stats, key):
    vals = [s.get("usrsctp", {}).get(key) for s in stats]
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None


# ---------------------------------------------------------------- seed 000
def seed000(c):
    a = c.a
    prog = c.prog("seed-pingpong-mpich")
    sizes = [30720, 307200]
    losses = [int(x) for x in (a.losses or ("0,2" if a.quick else "0,1,2"))
              .split(",")]
    delays = ["0ms"] if a.quick else a.delays.split(",")
    # (name, tls, env, tcp congestion control)
    variants = [("tcp", "tcp", [], None)]
    if a.tcp_cc:
        variants.append((f"tcp {a.tcp_cc}", "tcp", [], a.tcp_cc))
    variants.append(("sctp_dpdk", "sctp_dpdk", [], None))
    if a.alt_sg:
        variants.append(("sctp_dpdk alt", "sctp_dpdk",
                         [f"UCX_SCTP_DPDK_SG={a.alt_sg}"], None))
    secs = 3 if a.quick else a.seconds
    # a job that outlives this is stopped and counted (rc 124): UCX tcp
    # under loss sometimes never completes (MPICH's finalize blocks
    # without progress while a flush waits)
    job_timeout = min(a.timeout, int(secs * len(sizes) * 4 + 90))
    runs = {}
    for rep in range(a.reps):
        for d in delays:
            for loss in losses:
                netem = f"delay {d} loss {loss}%"
                for name, tls, env, cc in variants:
                    args = [prog, "pingpong", "--sizes",
                            ",".join(map(str, sizes)), "--seconds",
                            str(secs), "--min-iters", "5"]
                    t0 = time.monotonic()
                    rc, rows, stats, err = c.mpi(tls, "bridge", args,
                                                 netem=netem, env=env,
                                                 timeout=job_timeout,
                                                 tcp_cc=cc)
                    key = f"{d}|{loss}|{name}"
                    # complete, verified results count even when the job
                    # then hangs in MPI_Finalize (seen with UCX tcp under
                    # loss); the hang is recorded
                    ok = len(rows) == len(sizes) and all(
                        r["verified"] for r in rows)
                    r = {"ok": ok, "rc": rc, "wall_s": time.monotonic() - t0,
                         "hung_after_results": ok and rc == 124,
                         "rows": rows,
                         "retrans": usrsctp_sum(stats, "retrans_chunks"),
                         "fast_retrans": usrsctp_sum(stats,
                                                     "fast_retrans_chunks"),
                         "t3_timeouts": usrsctp_sum(stats, "t3_timeouts")}
                    if not ok or rc != 0:
                        r["error"] = err[-1500:]
                    if not ok:
                        c.failed.append(f"000 {key}")
                    runs.setdefault(key, []).append(r)
                    log(f"000 delay {d} loss {loss}% {name} rep {rep + 1}: "
                        + (", ".join(f"{x['size']} B {x['throughput_Bps']:.0f}"
                                     f" B/s" for x in rows) if ok else
                           f"FAILED rc {rc}") +
                        (f" (then hung, rc {rc})" if ok and rc else "") +
                        (f", T3 {r['t3_timeouts']} fast retx "
                         f"{r['fast_retrans']}" if tls != "tcp" and ok
                         else ""))
    summary = {}
    for key, rs in runs.items():
        ok = [r for r in rs if r["ok"]]
        s = {"runs_ok": len(ok), "runs": len(rs),
             "hung_after_results": sum(1 for r in rs
                                       if r.get("hung_after_results"))}
        for size in sizes:
            vals = [x for r in ok for x in r["rows"] if x["size"] == size]
            s[str(size)] = {
                "throughput_Bps": med([x["throughput_Bps"] for x in vals]),
                "rtt_us_p50": med([x["rtt_us_p50"] for x in vals]),
                "rtt_us_max": med([x["rtt_us_max"] for x in vals]),
                "nslow": med([x["nslow"] for x in vals])}
        for k in ("retrans", "fast_retrans", "t3_timeouts"):
            s[k] = med([r[k] for r in ok])
        summary[key] = s
    res = {"machine_tcp_cc": open(
               "/proc/sys/net/ipv4/tcp_congestion_control").read().strip(),
           "sizes": sizes, "losses": losses, "delays": delays,
           "variants": [v[0] for v in variants], "seconds": secs,
           "alt_sg": a.alt_sg, "runs": runs, "summary": summary}
    return res, rows000(res)


def rows000(res):
    """The table rows of seed 000 from its results."""
    sizes, losses, delays = res["sizes"], res["losses"], res["delays"]
    summary, alt_sg = res["summary"], res.get("alt_sg")
    tcp_variants = [v for v in res["variants"] if v.startswith("tcp")]
    rows = []
    for d in delays:
        for loss in losses:
            for size in sizes:
                def tp(name):
                    s = summary.get(f"{d}|{loss}|{name}", {})
                    return (s.get(str(size)) or {}).get("throughput_Bps")
                sc, bf = tp("sctp_dpdk"), tp("sctp_dpdk alt")
                # the better TCP of the congestion controls run
                tcs = [(tp(v), v) for v in tcp_variants]
                tcs = [x for x in tcs if x[0]]
                tc, tname = max(tcs) if tcs else (None, "tcp")
                ours_ratio = sc / tc if sc and tc else None
                theirs = SEED000.get(size, {}).get(loss)
                th_ratio = theirs[0] / theirs[1] if theirs else None
                before = (f"; with SG {alt_sg}: {bf:,.0f} B/s "
                          f"({bf / tc:.2f}x)" if bf and tc else "")
                rows.append({
                    "seed": "000", "experiment":
                    f"ping-pong {size // 1024} KiB, loss {loss}%"
                    f"{', delay ' + d if d != '0ms' else ''}",
                    "theirs": (f"SCTP {theirs[0]:,} vs TCP {theirs[1]:,} B/s"
                               f" = {th_ratio:.1f}x" if theirs else
                               "-" if loss else "crossover ~22 KB"),
                    "ours": (f"sctp_dpdk {sc:,.0f} vs {tname} {tc:,.0f} B/s = "
                             f"{ours_ratio:.2f}x{before}"
                             if ours_ratio else "failed"),
                    "ratio": (f"{ours_ratio / th_ratio:.2f}" if ours_ratio
                              and th_ratio else "-"),
                    "goal": "sctp_dpdk >= tcp",
                    "met": ("yes" if ours_ratio and ours_ratio >= 1 else
                            "no" if ours_ratio else "?"),
                    "note": "; ".join(
                        [f"{v}: {s['runs'] - s['runs_ok']} of "
                         f"{s['runs']} runs failed or hung"
                         for v in res["variants"]
                         for s in [summary.get(f"{d}|{loss}|{v}") or
                                   {"runs": 0, "runs_ok": 0}]
                         if s["runs"] != s["runs_ok"]] +
                        [f"{v}: {s['hung_after_results']} of "
                         f"{s['runs']} hung in MPI_Finalize after their "
                         "results" for v in res["variants"]
                         for s in [summary.get(f"{d}|{loss}|{v}") or {}]
                         if s.get("hung_after_results")])})
    return rows


# ---------------------------------------------------------------- seed 001
S001_PACED = "B/N-dest"   # each destination at B/N


def seed001(c):
    a = c.a
    out = os.path.join(a.work_dir, "seeds_001.json")
    # relative to the checkout (run from there): seed001.py records its
    # command line in its JSON, which names no path of this machine
    cmd = [sys.executable, os.path.join(HERE, "seed001.py"), "--json",
           os.path.relpath(out, ROOT)]
    if a.quick:
        cmd += ["--np", "4", "--reps", "1", "--iters", "6",
                "--modes", "unpaced," + S001_PACED]
    else:
        cmd += ["--np", "4", "--iters", "15", "--reps", str(a.reps),
                "--modes", "unpaced," + S001_PACED]
    if a.plot_dir:
        cmd += ["--plot", os.path.relpath(os.path.abspath(
            os.path.join(a.plot_dir, "seeds_001.png")), ROOT)]
    log("001: " + " ".join(os.path.relpath(x, ROOT) if x.startswith(ROOT)
                           else x for x in cmd[1:]))
    r = subprocess.run(cmd, text=True, timeout=a.timeout * 10, cwd=ROOT)
    if r.returncode == 77:
        return {"skipped": True}, [row("001", "pacing all-to-all",
                                       "+35-130% (B/N vs unpaced, 10 ms)",
                                       "skipped", "-", "paced faster",
                                       "?", "seed001.py skipped")]
    try:
        res = json.load(open(out))
    except (OSError, ValueError):
        c.failed.append("001")
        return {"rc": r.returncode}, [row(
            "001", "pacing all-to-all", "+35-130%", "failed", "-",
            "paced faster", "?", f"seed001.py rc {r.returncode}")]
    if r.returncode != 0:
        c.failed.append("001")
    rows = []
    for cfg in res.get("configs", []):
        s = {k: v or {} for k, v in cfg.get("summary", {}).items()}
        u = s.get("unpaced", {}).get("total_s")
        p = s.get(S001_PACED, {}).get("total_s")
        gain = u / p - 1 if u and p else None
        rows.append(row(
            "001", f"all-to-all N={cfg['np']}, B={cfg['rate']}, delay "
            f"{cfg['delay']}", "B/N +35-130% vs unpaced (class B, 10 ms)",
            (f"{S001_PACED} {p:.2f} s vs unpaced {u:.2f} s = {gain * 100:+.0f}%"
             if gain is not None else "failed"),
            (f"{(gain * 100) / 35:.2f} (of +35%)" if gain is not None
             else "-"), "paced faster", "yes" if gain and gain > 0 else
            "no" if gain is not None else "?",
            ("all runs failed (seed001.py rc "
             f"{r.returncode}, see its log); " if gain is None else "") +
            f"retx {s.get('unpaced', {}).get('retrans')} vs "
            f"{s.get(S001_PACED, {}).get('retrans')}"))
    return res, rows


def row(*vals):
    return dict(zip(ROW_KEYS, vals))


# ---------------------------------------------------------------- external
def external(c, ident, script, quick_args, full_args):
    path = os.path.join(HERE, script)
    if not os.path.exists(path):
        return {"absent": script}, [row(ident, script, "-", "not run", "-",
                                        "-", "-", f"bench/{script} absent")]
    out = os.path.join(c.a.work_dir, f"seeds_{ident}.json")
    cmd = [sys.executable, path, "--json", out] + (
        quick_args if c.a.quick else full_args)
    r = subprocess.run(cmd, text=True, timeout=c.a.timeout * 10)
    try:
        res = json.load(open(out))
        rows = [row(*[x.get(k, "") for k in ROW_KEYS])
                for x in res.get("table", [])]
    except (OSError, ValueError):
        res, rows = {}, []
    if r.returncode not in (0, 77):
        c.failed.append(ident)
    if not rows:
        rows = [row(ident, script, "-", f"rc {r.returncode}, no table",
                    "-", "-", "?", "")]
    return res, rows


# ---------------------------------------------------------------- seed 004
def seed004(c):
    a = c.a
    prog = c.prog("seed-pingpong-mpich")
    count = 2000 if a.quick else 20000
    res = {"raw": [], "sctp": [], "mpi": [], "loss_pingpong": [],
           "loss_stream": [], "clean_stream": []}
    env_apps = dict(os.environ, SDP_BIN_DIR=os.path.join(c.build, "apps"))
    every_pp = 250 if a.quick else 500
    every_st = 200 if a.quick else 300
    pp_iters = 1000 if a.quick else 5000
    st_count = 1000 if a.quick else 3000
    # The raw echo's first lap of each memif ring (1024 slots each way)
    # writes into shared-memory pages never touched before: ~7 us per
    # probe instead of ~0.5.  With 2000 probes that lap was the median;
    # SCTP's exchanges (DATA and SACK each way) finish it within their
    # first 500.  So the raw run is long enough for the lap not to count.
    raw_count = max(count, RAW_MIN_PROBES)
    for rep in range(a.reps):
        r = subprocess.run([os.path.join(APPS, "sdp-ping"), "--fabric",
                            "memif", "--size", "32", "--count",
                            str(raw_count),
                            "--dp", "idle_sleep_us=0", "--job", job_id(),
                            "--json"], env=env_apps,
                           capture_output=True, text=True,
                           timeout=a.timeout)
        j = sdp_launch.last_json(r.stdout)
        res["raw"].append(j["client"]["rtt_us_p50"] if j else None)
        if not j:
            c.failed.append("004 sdp-ping")
            log(f"004 sdp-ping failed: {r.stderr[-800:]}")
        r = subprocess.run([os.path.join(APPS, "sdp-perf"), "--fabric",
                            "memif", "--test", "lat", "--size", "4",
                            "--count", str(count), "--busy", "--job",
                            job_id(), "--json"], env=env_apps,
                           capture_output=True,
                           text=True, timeout=a.timeout)
        j = sdp_launch.last_json(r.stdout)
        res["sctp"].append(j["latency_us_p50"] * 2 if j and
                           j.get("verified") else None)
        if not (j and j.get("verified")):
            c.failed.append("004 sdp-perf")
            log(f"004 sdp-perf failed: {r.stderr[-800:]}")
        rc, rows, _, err = c.mpi("sctp_dpdk", "memif", [
            prog, "pingpong", "--sizes", "4", "--seconds", "0",
            "--min-iters", str(count)], timeout=a.timeout)
        res["mpi"].append(rows[0]["rtt_us_p50"] if rc == 0 and rows
                          else None)
        if rc != 0 or not rows:
            c.failed.append("004 mpi")
            log(f"004 MPI failed: {err[-800:]}")
        log(f"004 rep {rep + 1}: 4 B round trip raw {res['raw'][-1]} us, "
            f"SCTP {res['sctp'][-1]} us, MPI {res['mpi'][-1]} us")
    # the cost of a loss: drop every Nth DATA packet each rank sends
    pp = ["pingpong", "--sizes", "4", "--seconds", "0", "--min-iters",
          str(pp_iters)]
    st = ["stream", "--size", "1024", "--count", str(st_count), "--gap-us",
          "1000", "--slow-x", "3"]
    alt = [f"UCX_SCTP_DPDK_SG={a.alt_sg}"] if a.alt_sg else None
    for kind, args, every, sg in (("loss_pingpong", pp, every_pp, []),
                                  ("loss_pingpong_alt", pp, every_pp, alt),
                                  ("clean_pingpong", pp, 0, []),
                                  ("loss_stream", st, every_st, []),
                                  ("clean_stream", st, 0, [])):
        if sg is None:
            continue
        env = [f"UCX_SCTP_DPDK_DP=drop=tx:every:{every}"] if every else []
        env += sg
        rc, rows, stats, err = c.mpi("sctp_dpdk", "memif", [prog] + args,
                                     env=env, timeout=a.timeout)
        x = rows[0] if rc == 0 and rows else None
        if x is None or not x.get("verified"):
            c.failed.append(f"004 {kind}")
            log(f"004 {kind} failed: {err[-800:]}")
        res[kind] = {"every": every, "result": x,
                     "t3_timeouts": usrsctp_sum(stats, "t3_timeouts"),
                     "fast_retrans": usrsctp_sum(stats,
                                                 "fast_retrans_chunks"),
                     "retrans": usrsctp_sum(stats, "retrans_chunks"),
                     "hook_drops": sum(s.get("dp", {}).get("drops", {})
                                       .get("hook", 0) for s in stats)}
        log(f"004 {kind}: {json.dumps(res[kind])[:600]}")
    res.update(every_pp=every_pp, every_st=every_st, alt_sg=a.alt_sg)
    rows = rows004(res)
    if res.get("baseline_error"):
        c.failed.append("004 baseline")
        log(f"004: {res['baseline_error']}")
    return res, rows


def rows004(res):
    """The table rows of seed 004 from its results."""
    every_pp, every_st = res.get("every_pp", 500), res.get("every_st", 300)
    raw, sc, mp = med(res["raw"]), med(res["sctp"]), med(res["mpi"])
    res["median"] = {"raw_rtt_us": raw, "sctp_rtt_us": sc,
                     "mpi_rtt_us": mp}
    rows = []
    res.pop("baseline_error", None)
    if raw and sc and mp and not raw < sc < mp:
        # Each layer runs on the one below it (MPI over SCTP over the
        # dataplane), so a layer measured faster than the layer below
        # means a baseline measured something else: refuse the row.
        res["baseline_error"] = (
            f"round trips raw {raw:.1f} / SCTP {sc:.1f} / MPI {mp:.1f} us "
            "are not increasing: a baseline is wrong (cold memif rings? "
            "too few probes?)")
        rows.append(row(
            "004", "4 B round trip, memif (raw / SCTP / MPI)",
            f"~{SEED004_RTT_US:.0f} us MPI", "INVALID BASELINE", "-",
            "MPI below 32 us", "?", res["baseline_error"]))
    elif raw and sc and mp:
        rows.append(row(
            "004", "4 B round trip, memif (raw / SCTP / MPI)",
            f"~{SEED004_RTT_US:.0f} us MPI (ADI), raw U-Net ~21 us",
            f"raw {raw:.1f} / SCTP {sc:.1f} / MPI {mp:.1f} us",
            f"{mp / SEED004_RTT_US:.2f}", "MPI below 32 us",
            "yes" if mp < SEED004_RTT_US else "no",
            "sdp-ping's smallest probe is 32 B"))
        rows.append(row(
            "004", "cost of reliability (SCTP - raw)",
            f"{SEED004_REL_US:.1f} us of {SEED004_RTT_US:.0f} "
            f"({SEED004_REL_US / SEED004_RTT_US * 100:.0f}%)",
            f"{sc - raw:.1f} us of MPI's {mp:.1f} "
            f"({(sc - raw) / mp * 100:.0f}%); UCX+MPI {mp - sc:.1f} us",
            f"{(sc - raw) / SEED004_REL_US:.2f}", "report", "-",
            "SCTP includes usrsctp, CRC32c and the socket API"))
    # The cost of a loss.  On a loaded machine whole round trips stall for
    # ms (scheduling), so elapsed-time differences between runs mean
    # nothing; what a loss did is read from the counters (which timer
    # repaired it) and from the round trips near the RTO.
    def pp_row(kind, label):
        x = res.get(kind) or {}
        r = x.get("result")
        if not r or not x.get("hook_drops"):
            return None
        near_rto = sorted(v for _, v in r["slow"] if v >= 15e3)
        return (f"{label}: {x['hook_drops']} drops, {x['t3_timeouts']} T3 "
                f"timeouts, {x['fast_retrans']} fast retransmits; round "
                f"trips >= 15 ms: {len(near_rto)} (median "
                f"{(med(near_rto) or 0) / 1e3:.0f} ms) of the first "
                f"{len(r['slow'])} slow ones listed")
    base = pp_row("loss_pingpong", "defaults")
    if base:
        alt = pp_row("loss_pingpong_alt", f"SG {res.get('alt_sg')}")
        clean = res.get("clean_pingpong") or {}
        cr = clean.get("result") or {}
        rows.append(row(
            "004", f"a lost packet in a 4 B ping-pong (every "
            f"{every_pp}th DATA packet dropped by the dataplane hook)",
            "not measured (retransmit timer clamped at 0.1 s suggested)",
            base, "-", "report", "-",
            (f"{alt}; " if alt else "") +
            f"clean run: T3 {clean.get('t3_timeouts')}, round trips >= 80 "
            f"ms: {sum(1 for _, v in cr.get('slow', []) if v >= 80e3)}"))
    ls = (res.get("loss_stream") or {}).get("result")
    cs = (res.get("clean_stream") or {}).get("result")
    x = res.get("loss_stream") or {}
    if ls and cs and x.get("hook_drops"):
        rows.append(row(
            "004", f"a lost packet in a stream of 1 KiB messages, one per "
            f"ms (every {every_st}th DATA packet dropped)", "not measured",
            f"{x['hook_drops']} drops: {x['fast_retrans']} fast "
            f"retransmits, {x['t3_timeouts']} T3 (clean run "
            f"{res['clean_stream']['t3_timeouts']}); one-way p50/p99 "
            f"{ls['oneway_us_p50'] / 1e3:.1f}/{ls['oneway_us_p99'] / 1e3:.1f}"
            f" ms vs {cs['oneway_us_p50'] / 1e3:.1f}/"
            f"{cs['oneway_us_p99'] / 1e3:.1f} without drops", "-", "report",
            "-", "the delay a loss adds is below this run's scheduling "
            "noise" if ls["oneway_us_p50"] > 1e3 else ""))
    return rows


# ---------------------------------------------------------------- output
def print_table(rows):
    cols = ("seed", "experiment", "theirs", "ours", "ratio", "met")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(k, "")) for k in cols) + " |")


def plots(res, d):
    os.makedirs(d, exist_ok=True)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s0 = res.get("000")
    if s0 and s0.get("summary"):
        delays = s0["delays"]
        fig, axes = plt.subplots(len(delays), 2, squeeze=False,
                                 figsize=(12, 4 * len(delays)))
        colors = {"tcp": "tab:red", "sctp_dpdk": "tab:blue",
                  "sctp_dpdk alt": "tab:gray", "tcp cubic": "tab:orange"}
        for di, dl in enumerate(delays):
            for si, size in enumerate(s0["sizes"]):
                ax = axes[di][si]
                nv = len(s0["variants"])
                for vi, v in enumerate(s0["variants"]):
                    ys = [((s0["summary"].get(f"{dl}|{l}|{v}") or {}).get(
                        str(size)) or {}).get("throughput_Bps") or 0
                        for l in s0["losses"]]
                    ax.bar([i + vi / (nv + 1) for i in
                            range(len(s0["losses"]))], ys,
                           width=1 / (nv + 1), color=colors.get(v),
                           label=v)
                ax.set_xticks([i + (nv - 1) / (2 * (nv + 1)) for i in
                               range(len(s0["losses"]))])
                ax.set_xticklabels([f"{l}% loss" for l in s0["losses"]])
                ax.set_yscale("log")
                ax.set_ylabel("ping-pong throughput (bytes/s)")
                ax.set_title(f"seed 000: {size // 1024} KiB ping-pong, "
                             f"delay {dl}")
                ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(d, "seeds_000.png"), dpi=100)
    s4 = res.get("004")
    if s4 and s4.get("median"):
        fig, ax = plt.subplots(1, 2, figsize=(12, 4))
        m = s4["median"]
        names = ["raw dataplane\n(sdp-ping, 32 B)", "SCTP\n(sdp-perf, 4 B)",
                 "MPI sctp_dpdk\n(4 B)", "seed 004\nMPI on U-Net"]
        vals = [m["raw_rtt_us"] or 0, m["sctp_rtt_us"] or 0,
                m["mpi_rtt_us"] or 0, SEED004_RTT_US]
        ax[0].bar(names, vals, color=["tab:gray", "tab:green", "tab:blue",
                                      "tab:orange"])
        ax[0].set_ylabel("round trip p50 (us)")
        ax[0].set_title("seed 004: 4-byte round trip, memif")
        ls = (s4.get("loss_stream") or {}).get("result")
        if ls and ls.get("trace_us"):
            f0 = ls["trace_first"]
            ax[1].plot(range(f0, f0 + len(ls["trace_us"])),
                       [t / 1e3 for t in ls["trace_us"]], ".-")
            ax[1].set_yscale("log")
            ax[1].set_xlabel("message index")
            ax[1].set_ylabel("one-way time (ms)")
            ax[1].set_title("stream of 1 KiB messages 1 ms apart, "
                            "around the first slow one", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(d, "seeds_004.png"), dpi=100)


def rebuild(a):
    out = json.load(open(a.from_json))
    res = out["results"]
    builders = {"000": rows000, "004": rows004}
    rows, done = [], set()
    for r in out["table"]:
        ident = r["seed"]
        if ident in builders and ident in res:
            if ident not in done:
                rows += builders[ident](res[ident])
                done.add(ident)
        else:
            rows.append(r)
    out["table"] = rows
    print_table(rows)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    if a.plot_dir:
        plots(res, a.plot_dir)
    bad = [i for i in builders if isinstance(res.get(i), dict) and
           res[i].get("baseline_error")]
    for i in bad:
        log(f"{i}: {res[i]['baseline_error']}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="short version (meson test --benchmark)")
    ap.add_argument("--only", default="000,001,003,000f,000s,004")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--seconds", type=float, default=10,
                    help="000: seconds per size and configuration")
    ap.add_argument("--delays", default="0ms,10ms",
                    help="000: one-way delays (comma separated)")
    ap.add_argument("--alt-sg", default=ALT_SG,
                    help="000, 004: UCX_SCTP_DPDK_SG of a candidate change "
                    "of the defaults, run beside them ('' to skip it)")
    ap.add_argument("--losses", help="000: loss percentages (default "
                    "0,1,2; 0,2 with --quick)")
    ap.add_argument("--tcp-cc", default="",
                    help="000: also run UCX tcp with this congestion control "
                    "in the hosts' namespaces (the kernel must allow it in "
                    "net.ipv4.tcp_allowed_congestion_control; the plain tcp "
                    "run keeps the machine's)")
    ap.add_argument("--mtu", type=int, default=sdp_launch.DEFAULT_MTU)
    ap.add_argument("--timeout", type=int, default=600,
                    help="per MPI job, seconds")
    ap.add_argument("--json")
    ap.add_argument("--plot-dir")
    ap.add_argument("--from-json", help="rebuild the table (and with "
                    "--plot-dir the plots) from a JSON this script wrote, "
                    "without running anything")
    a = ap.parse_args()
    if a.from_json:
        if a.plot_dir:
            sdp_launch.need_matplotlib("seeds", __file__, "--plot-dir")
        return rebuild(a)
    if a.reps is None:
        a.reps = 1 if a.quick else 3
    if a.plot_dir:
        sdp_launch.need_matplotlib("seeds", __file__, "--plot-dir")
    if os.geteuid() != 0:
        log("needs root (testbeds): skipped")
        return 77
    c = Ctx(a)
    for p in ("seed-pingpong-mpich",):
        if not os.access(c.prog(p), os.X_OK) or not os.path.exists(
                os.path.join(c.build, "ucx-tl", "libuct_sctp_dpdk.so")):
            log(f"{c.prog(p)} or the transport is not built: skipped")
            return 77
    os.environ.setdefault("SDP_BUILD_DIR", c.build)
    a.work_dir = os.path.dirname(os.path.abspath(a.json)) if a.json else \
        os.path.join(c.build, "bench")
    os.makedirs(a.work_dir, exist_ok=True)
    sdp_launch.install_signal_handlers()
    only = a.only.split(",")
    t0 = time.monotonic()
    load0 = os.getloadavg()
    res, rows = {}, []
    steps = [("000", seed000), ("001", seed001)]
    steps += [(i, lambda c, i=i, s=s, q=q, f=f: external(c, i, s, q, f))
              for i, s, q, f in EXTERNAL]
    steps += [("004", seed004)]
    def write(final):
        out = {"machine": {"nproc": os.cpu_count(),
                           "kernel": platform.release(),
                           "loadavg_start": load0,
                           "loadavg_end": os.getloadavg(),
                           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")},
               "command": " ".join([os.path.relpath(os.path.abspath(
                   sys.argv[0]), ROOT)] + sys.argv[1:]),
               "quick": a.quick, "reps": a.reps, "complete": final,
               "wall_s": time.monotonic() - t0, "table": rows,
               "results": res, "failed": c.failed}
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
        return out

    for ident, fn in steps:
        if ident not in only:
            continue
        log(f"--- seed {ident} ---")
        try:
            r, rs = fn(c)
        except (KeyError, TypeError, ValueError, AttributeError,
                IndexError, OSError, subprocess.SubprocessError) as e:
            # one experiment's surprise must not lose the others' results
            log(f"seed {ident}: {type(e).__name__}: {e}")
            c.failed.append(ident)
            r, rs = {"error": f"{type(e).__name__}: {e}"}, [row(
                ident, "-", "-", f"error: {type(e).__name__}", "-", "-",
                "?", str(e)[:200])]
        res[ident] = r
        rows += rs
        write(False)
    print_table(rows)
    print(f"(load average {load0[0]:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end, {os.cpu_count()} CPUs)")
    write(True)
    if a.json:
        log(f"results written to {a.json}")
    if a.plot_dir:
        plots(res, a.plot_dir)
        log(f"plots written to {a.plot_dir}")
    if c.failed:
        log("failed: " + ", ".join(c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
