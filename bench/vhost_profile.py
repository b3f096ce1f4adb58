#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""vhost_profile - where the CPU time of an all-to-all goes: one
`sdp-mpirun` job (apps/sdp_mpi_proxy.c, MPI_Alltoall, every byte checked)
sampled once a second from outside: the CPU time of the ranks (every
descendant of the launcher), of the vhost switch's PMD thread and its other
threads (/proc/<pid>/task/*/stat), the machine's (/proc/stat: user, system,
softirq, idle), the packets the switch's PMD received (pmd-stats-show),
the vhu ports' counters (the database's, refreshed every 5 s:
ovs_tx_failure_drops is a frame for a rank whose RX virtqueue was full)
and, at the end, the PMD's dpif-netdev/pmd-perf-show (the whole job).
The CPU shares are taken over the all-to-all's steady part: from when the
job's packets reached 10 % of its total to 90 % (the switch's received
packets over vhost; the ranks' CPU time over the bridge, which has no
switch to count), so MPI_Init and the connects stay out.  Machine-wide
figures: run it alone.

  bench/vhost_profile.py --fabric vhost -np 64 [--size 4096] [--steps 100]
                         [--perf-s 8] [--env K=V] [--testbed-env K=V]
                         [--json F]
  bench/vhost_profile.py --fabric vhost --bw 1048576,4194304 ...

--bw MIN,MAX: instead, 2 ranks' latency/bandwidth sweep of MIN..MAX bytes
(apps/sdp-mpi-bench, busy polling as in apps/sdp-mpi-compare), its
figures and the whole job's counters.

--perf-s S: `perf record -g` of the switch for S seconds once the
all-to-all runs (perf report --no-children summary printed).
--testbed-env K=V: set for the testbed (e.g. SDP_TESTBED_VHOST_QUEUE_SIZE=
256, SDP_TESTBED_OVS_PMD_RT=0, SDP_TESTBED_OVS_PMD_MAXSLEEP_US=0).
--env K=V: passed to sdp-mpirun --env (the ranks), e.g. UCX_SCTP_DPDK_STATS=y
(the transport's counters are summed over the ranks: retransmissions, T3).

Run as root after `ninja -C build`.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build"))
APPS = os.path.join(ROOT, "apps")
HZ = os.sysconf("SC_CLK_TCK")


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def task_ticks(pid):
    """{tid: (comm, utime+stime ticks)} of a process's threads."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tids:
        s = read(f"/proc/{pid}/task/{t}/stat")
        if not s:
            continue
        comm = s[s.index("(") + 1:s.rindex(")")]
        f = s[s.rindex(")") + 2:].split()
        out[t] = (comm, int(f[11]) + int(f[12]))
    return out


def descendants(root):
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        s = read(f"/proc/{p}/stat")
        if s:
            ppid = int(s[s.rindex(")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def proc_stat():
    f = read("/proc/stat").splitlines()[0].split()[1:]
    v = [int(x) for x in f]
    return {"user": v[0] + v[1], "system": v[2], "idle": v[3] + v[4],
            "irq": v[5], "softirq": v[6]}


class Sampler:
    def __init__(self, a, launcher, job):
        self.a, self.launcher, self.job = a, launcher, job
        self.ovs = f"/run/sdp/{job}/ovs"
        self.samples = []
        self.rank_ticks = {}   # tid -> last ticks seen (ranks exit)
        self.rank_comm = re.compile(r"sdp-mpi-(proxy|bench)")
        self.perf_started = False
        self.pmd_perf = ""
        self.stop = threading.Event()

    def switch_pid(self):
        p = read(f"{self.ovs}/ovs-vswitchd.pid").strip()
        return int(p) if p.isdigit() else 0

    def ports(self):
        """rx_packets: what the PMD received (pmd-stats-show, live); the
        vhu ports' counters summed (the database's statistics column,
        which the switch refreshes every 5 s: dpctl/show cannot read a
        vhost port's): db_<name>, e.g. db_ovs_tx_failure_drops."""
        r = subprocess.run(["ovs-appctl", "-t", f"{self.ovs}/ovs-vswitchd.ctl",
                            "--timeout=5", "dpif-netdev/pmd-stats-show"],
                           capture_output=True, text=True)
        m = re.search(r"packets received: (\d+)", r.stdout)
        if r.returncode != 0 or not m:
            return {}
        tot = {"rx_packets": int(m.group(1))}
        r = subprocess.run(
            ["ovs-vsctl", "--timeout=5", f"--db=unix:{self.ovs}/db.sock",
             "--format=json", "--columns=name,statistics", "list",
             "Interface"], capture_output=True, text=True)
        if r.returncode == 0:
            for name, st in json.loads(r.stdout)["data"]:
                if name.startswith("vhu"):
                    for k, v in st[1]:
                        tot["db_" + k] = tot.get("db_" + k, 0) + v
        return tot

    def sample(self):
        s = {"t": time.monotonic(), "stat": proc_stat()}
        for p in descendants(self.launcher):
            for tid, (comm, ticks) in task_ticks(p).items():
                if self.rank_comm.search(read(f"/proc/{p}/comm")):
                    self.rank_ticks[(p, tid)] = ticks
        s["ranks"] = sum(self.rank_ticks.values())
        s["nranks"] = len({p for p, _ in self.rank_ticks})
        sp = self.switch_pid()
        if sp:
            pmd = other = 0
            for comm, ticks in task_ticks(sp).values():
                if comm.startswith("pmd"):
                    pmd += ticks
                else:
                    other += ticks
            ports = self.ports()
            if ports:   # the switch answered: its figures are whole
                s["pmd"], s["switch_other"] = pmd, other
                s["ports"] = ports
            sh = f"{self.ovs}/ovs-vswitchd.ctl"
            if os.path.exists(sh):
                r = subprocess.run(["ovs-appctl", "-t", sh, "--timeout=5",
                                    "dpif-netdev/pmd-perf-show"],
                                   capture_output=True, text=True)
                if r.returncode == 0:
                    self.pmd_perf = r.stdout
        return s

    def run(self):
        while not self.stop.is_set():
            s = self.sample()
            self.samples.append(s)
            self.maybe_perf(s)
            self.stop.wait(1.0)

    def maybe_perf(self, s):
        a = self.a
        if not a.perf_s or self.perf_started or len(self.samples) < 3:
            return
        prev = self.samples[-2]
        sp = self.switch_pid()
        if not sp or "ports" not in s or "ports" not in prev:
            return
        rate = s["ports"].get("rx_packets", 0) - \
            prev["ports"].get("rx_packets", 0)
        if rate < a.perf_min_pps:
            return
        self.perf_started = True
        out = f"/tmp/vhost_profile.{os.getpid()}.perf.data"
        self.perf_out = out
        self.perf = subprocess.Popen(
            ["perf", "record", "-q", "-g", "-o", out, "-p", str(sp), "--",
             "sleep", str(a.perf_s)], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)


def window(samples, key):
    """The samples at 10 % and 90 % of the job's total of key()."""
    tot = key(samples[-1]) - key(samples[0])
    if tot <= 0:
        return samples[0], samples[-1]
    lo = next(s for s in samples if key(s) - key(samples[0]) >= 0.1 * tot)
    hi = next(s for s in samples if key(s) - key(samples[0]) >= 0.9 * tot)
    if hi["t"] - lo["t"] < 2:   # too short to tell: the whole job
        return samples[0], samples[-1]
    return lo, hi


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--fabric", choices=["vhost", "bridge"], default="vhost")
    ap.add_argument("--tls", default="sctp_dpdk")
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("-np", type=int, default=2)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--perf-s", type=int, default=0)
    ap.add_argument("--perf-min-pps", type=int, default=5000)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--testbed-env", action="append", default=[])
    ap.add_argument("--timeout", type=int, default=560)
    ap.add_argument("--bw")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.bw:
        a.np = 2

    job = f"vp{os.getpid() % 100000}"
    env = dict(os.environ)
    for kv in a.testbed_env:
        k, v = kv.split("=", 1)
        env[k] = v
    cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", a.mpi, "--fabric",
           a.fabric, "--tls", a.tls, "--job", job, "-np", str(a.np),
           "--timeout", str(a.timeout)]
    for kv in a.env:
        cmd += ["--env", kv]
    if a.bw:
        lo, hi = a.bw.split(",")
        cmd += ["--idle-sleep-us", "0",
                os.path.join(BUILD, "apps", f"sdp-mpi-bench-{a.mpi}"),
                "--json", "--min-size", lo, "--max-size", hi]
    else:
        cmd += [os.path.join(BUILD, "apps", f"sdp-mpi-proxy-{a.mpi}"),
                "--pattern", "alltoall", "--size", str(a.size), "--steps",
                str(a.steps), "--compute-us", "0"]
    print("vhost_profile: " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    sm = Sampler(a, p.pid, job)
    th = threading.Thread(target=sm.run, daemon=True)
    th.start()
    out, err = p.communicate(timeout=a.timeout + 60)
    sm.stop.set()
    th.join()
    res = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not res or \
            not all(r.get("verified", True) for r in res) or \
            not any(r.get("verified") for r in res):
        sys.stderr.write(out[-3000:] + err[-3000:])
        raise SystemExit(f"vhost_profile: job failed (rc {p.returncode})")

    S = [s for s in sm.samples if s["nranks"] > 0]
    if a.fabric == "vhost":
        S = [s for s in S if "ports" in s]
    if a.bw:
        lo, hi = S[0], S[-1]
    elif a.fabric == "vhost":
        lo, hi = window(S, lambda s: s.get("ports", {}).get("rx_packets", 0))
    else:
        lo, hi = window(S, lambda s: s["ranks"])
    dt = hi["t"] - lo["t"]
    cpu = lambda k: (hi[k] - lo[k]) / HZ / dt if k in hi and k in lo else None
    st = {k: (hi["stat"][k] - lo["stat"][k]) / HZ / dt for k in hi["stat"]}
    r = {"fabric": a.fabric, "tls": a.tls, "ranks": a.np, "size": a.size,
         "steps": a.steps, "testbed_env": a.testbed_env,
         "result": res if a.bw else {k: v for x in res for k, v in x.items()},
         "window_s": round(dt, 1),
         "cpus_ranks": cpu("ranks"), "cpus_pmd": cpu("pmd"),
         "cpus_switch_other": cpu("switch_other"),
         "cpus_machine": st}
    if "ports" in hi and "ports" in lo:
        pk = {k: hi["ports"].get(k, 0) - lo["ports"].get(k, 0)
              for k in hi["ports"]}
        r["ports_window"] = {k: v for k, v in pk.items() if v}
        r["ports_job"] = {k: v for k, v in S[-1]["ports"].items() if v and
                          ("drop" in k or "fail" in k or "retr" in k)}
        rx = pk.get("rx_packets", 0)   # what the switch received
        if rx:
            r["switch_pps"] = rx / dt
            r["pmd_us_per_packet"] = (hi["pmd"] - lo["pmd"]) / HZ / rx * 1e6
            r["ranks_us_per_packet"] = \
                (hi["ranks"] - lo["ranks"]) / HZ / rx * 1e6
    stats = [json.loads(l.split("sctp_dpdk stats: ", 1)[1])
             for l in err.splitlines() if "sctp_dpdk stats: " in l]
    if stats:
        agg = {}

        def add(prefix, d):
            for k, v in d.items():
                if isinstance(v, dict):
                    add(prefix + k + ".", v)
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    agg[prefix + k] = agg.get(prefix + k, 0) + v
        for s in stats:
            add("", s)
        r["transport_sum"] = {k: v for k, v in agg.items() if v}
    if sm.pmd_perf:
        r["pmd_perf_show"] = sm.pmd_perf
    if getattr(sm, "perf_out", None):
        sm.perf.wait()
        rep = subprocess.run(
            ["perf", "report", "-i", sm.perf_out, "--no-children",
             "--sort", "comm,dso,sym", "--stdio", "-g", "none",
             "--percent-limit", "1.5"], capture_output=True, text=True)
        r["perf_top"] = [l for l in rep.stdout.splitlines()
                         if l.strip() and not l.startswith("#")][:40]
        os.unlink(sm.perf_out)
    text = json.dumps(r, indent=1)
    print(text)
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
