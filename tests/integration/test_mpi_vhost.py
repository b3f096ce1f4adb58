#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""MPI over the vhost fabric: every rank's virtio_user port on a
vhost-user port of the job's own Open vSwitch with DPDK (sdp-testbed
vhost, apps/sdp-mpirun --fabric vhost); no kernel networking in the path.

  - Open MPI and MPICH, 4 ranks: tests/mpi/mpi_check.c (ping-pong 0 B..
    4 MiB, collectives, ANY_SOURCE, ordering; every byte checked); every
    rank's port must be a virtio_user port (no fallback to another
    fabric or transport).
  - Both MPIs, 4 ranks: tests/mpi/mpi_rma.c (one-sided, every rank's
    transport served puts and gets).
  - The switch's br0 forwards by static flows (a host's MAC -> its
    port), not by MAC learning.
  - The switch is gone after the job, also after a job that failed, one
    past its --timeout, one interrupted by Ctrl-C and one whose launcher
    was killed by SIGKILL (the switch's guard): no daemon of the job, no
    run directory, the job's hugepages given back.

Needs root and Debian's openvswitch-switch-dpdk; without them the test
fails naming the missing piece."""

import os
import re
import signal
import subprocess
import time

import harness
from harness import check, run

APPS = harness.APPS
BIN = os.environ.get("SDP_MPI_TEST_DIR", "")
TESTBED = os.path.join(APPS, "sdp-testbed")
OVS = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
# the virtqueue size the testbed gives every port (sdp-testbed --queue-size)
QSIZE = os.environ.get("SDP_TESTBED_VHOST_QUEUE_SIZE", "256")


def hugepages():
    with open("/proc/sys/vm/nr_hugepages") as f:
        return int(f.read())


def job_pids(job):
    """PIDs whose command line names the job's switch directory, and the
    switch's guard."""
    needles = (f"/run/sdp/{job}/ovs/", f"vhost guard --job {job} ")
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{d}/status") as f:
                zombie = re.search(r"^State:\s+Z", f.read(), re.M)
        except OSError:
            continue
        if any(n in cmd for n in needles) and not zombie:
            pids.append(int(d))
    return pids


def check_gone(job, pages_before):
    r = subprocess.run([TESTBED, "status", "--job", job],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 3, f"job {job} left state behind:\n{r.stdout}")
    check(not job_pids(job), f"switch processes of job {job} still run: "
          f"{job_pids(job)}")
    # other engineers' jobs may reserve pages meanwhile: ours must not stay
    check(hugepages() <= pages_before, f"hugepages {hugepages()} after the "
          f"job, {pages_before} before: the switch's were not given back")


def mpirun(impl, np, job, prog_argv, timeout=300, env=()):
    cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", impl, "--fabric",
           "vhost", "-np", str(np), "--job", job, "--timeout",
           str(timeout)]
    for kv in env:
        cmd += ["--env", kv]
    cmd += prog_argv
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout + 180)


def test_mpi_check(impl, np=4):
    exe = os.path.join(BIN, f"mpi_check_{impl}")
    check(os.access(exe, os.X_OK), f"{exe} missing (SDP_MPI_TEST_DIR)")
    job = f"v{impl[0]}{os.getpid() % 100000}"
    before = hugepages()
    r = mpirun(impl, np, job, [exe, "--max-size", str(4 << 20), "--iters",
                               "2"])
    out = r.stdout + r.stderr
    m = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    check(r.returncode == 0 and m and m.group(2) == "0" and
          m.group(1) == "5", f"{impl} -np {np} over vhost: rc "
          f"{r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    ports = len(re.findall(r"sdp\.dp: port \d+ \(net_virtio_user\): ", out))
    check(ports >= np, f"only {ports} of {np} ranks opened a virtio_user "
          f"port\n{out[-2000:]}")
    eps = len(re.findall(r"sdp\.sctp: endpoint on SCTP port", out))
    check(eps >= np, f"only {eps} of {np} ranks opened an sctp_dpdk "
          "endpoint")
    print("    " + " | ".join(l for l in r.stdout.splitlines()
                              if l.startswith(("ok", "FAIL"))))
    check_gone(job, before)


def test_one_sided(impl, np=4):
    """Put/Get/Accumulate 1 B..1 MiB through the transport's RMA path."""
    exe = os.path.join(BIN, f"mpi_rma_{impl}")
    check(os.access(exe, os.X_OK), f"{exe} missing (SDP_MPI_TEST_DIR)")
    job = f"w{impl[0]}{os.getpid() % 100000}"
    before = hugepages()
    r = mpirun(impl, np, job, [exe, "--max-size", str(1 << 20)],
               env=["UCX_SCTP_DPDK_STATS=y"])
    out = r.stdout + r.stderr
    m = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    check(r.returncode == 0 and m and m.group(2) == "0" and
          m.group(1) == "5", f"{impl} one-sided -np {np} over vhost: rc "
          f"{r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    rma = re.findall(r'"rma": \{"put_msgs": (\d+), "get_reqs": (\d+), '
                     r'"refused": (\d+)[,}]', out)
    check(len(rma) == np, f"{len(rma)} of {np} ranks printed rma stats")
    check(all(int(p) > 0 and int(g) > 0 and f == "0" for p, g, f in rma),
          f"put msgs/get reqs/refused per rank {rma}: one-sided MPI did "
          "not go over sctp_dpdk's RMA path, or accesses were refused")
    print("    rma stats per rank (put msgs, get reqs, refused): " +
          ", ".join("/".join(x) for x in rma))
    check_gone(job, before)


def test_static_flows(hosts=3):
    """br0 forwards by the testbed's static flows: host i's MAC (in its
    virtio_user devargs) and ARP requests for its address -> OpenFlow port
    i+1 (vhu<i>), the rest flooded;
    no MAC learning (NORMAL), whose datapath flows match both MACs."""
    job = f"vs{os.getpid() % 100000}"
    before = hugepages()
    script = ('set -e; env | grep -E "^SDP_(MAC|VDEV|DP_IP)_" | sort; '
              'ovs-ofctl dump-flows "unix:$SDP_OVS_DIR/br0.mgmt"; '
              f'for ((i = 0; i < {hosts}; i++)); do echo "ofport $i '
              '$(ovs-vsctl --db="unix:$SDP_OVS_DIR/db.sock" get Interface '
              'vhu$i ofport)"; done')
    r = subprocess.run([TESTBED, "run", "--job", job, "--timeout", "120",
                        "vhost", "--hosts", str(hosts), "--", "bash", "-c",
                        script], capture_output=True, text=True, timeout=180)
    out = r.stdout
    check(r.returncode == 0, f"sdp-testbed run vhost: rc {r.returncode}\n"
          f"{r.stderr[-2000:]}")
    env = dict(l.split("=", 1) for l in out.splitlines()
               if l.startswith("SDP_"))
    check("NORMAL" not in out, f"br0 still has a NORMAL flow:\n{out}")
    for i in range(hosts):
        mac = env.get(f"SDP_MAC_{i}", "")
        check(re.fullmatch(r"02:5d:0a:[0-9a-f]{2}:01:%02x" % (i + 1), mac),
              f"host {i}: SDP_MAC_{i} {mac!r}")
        check(env.get(f"SDP_VDEV_{i}", "").endswith(f",mac={mac}"),
              f"host {i}: SDP_VDEV_{i} {env.get(f'SDP_VDEV_{i}')!r} does "
              "not give the port its MAC")
        check(f",queue_size={QSIZE}," in env.get(f"SDP_VDEV_{i}", ""),
              f"host {i}: SDP_VDEV_{i} {env.get(f'SDP_VDEV_{i}')!r} does "
              "not give the port the testbed's default virtqueue size")
        check(f"ofport {i} {i + 1}" in out, f"vhu{i} is not OpenFlow port "
              f"{i + 1}:\n{out}")
        check(re.search(rf"priority=20,dl_dst={mac} actions=output:"
                        rf"(\S*?){i + 1}\b", out),
              f"no flow dl_dst={mac} -> port {i + 1}:\n{out}")
        ip = env.get(f"SDP_DP_IP_{i}", "")
        check(ip and re.search(rf"priority=15,arp,arp_tpa={re.escape(ip)} "
                               rf"actions=output:(\S*?){i + 1}\b", out),
              f"ARP requests for {ip!r} are not sent to port {i + 1} only:"
              f"\n{out}")
    check(re.search(r"priority=0 actions=FLOOD", out) and
          re.search(r"priority=10,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00"
                    r" actions=FLOOD", out),
          f"broadcast/multicast and the rest are not flooded:\n{out}")
    check_gone(job, before)


def test_failed_job_tears_down():
    job = f"vf{os.getpid() % 100000}"
    before = hugepages()
    r = mpirun("mpich", 2, job, ["/bin/false"], timeout=60)
    check(r.returncode != 0, "a job whose ranks fail reported success")
    check_gone(job, before)


def test_timed_out_job_tears_down():
    """sdp-mpirun --timeout stops the ranks and takes the switch down."""
    job = f"vt{os.getpid() % 100000}"
    before = hugepages()
    r = mpirun("mpich", 2, job, ["sleep", "60"], timeout=5)
    check(r.returncode == 124, f"a job past --timeout exited {r.returncode}"
          f", not 124\n{r.stderr[-2000:]}")
    check_gone(job, before)


def start_job(job, seconds):
    """sdp-mpirun in its own process group (as a shell's foreground job),
    returned once its switch runs."""
    cmd = [os.path.join(APPS, "sdp-mpirun"), "--mpi", "mpich", "--fabric",
           "vhost", "-np", "2", "--job", job, "--timeout", "120",
           "sleep", str(seconds)]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(f"/run/sdp/{job}/vhost.env"):
        check(p.poll() is None and time.monotonic() < deadline,
              f"job {job}'s switch did not come up: rc {p.poll()}")
        time.sleep(0.2)
    time.sleep(1)   # the ranks start
    return p


def test_interrupted_job_tears_down():
    """Ctrl-C: SIGINT to the launcher's whole process group."""
    job = f"vi{os.getpid() % 100000}"
    before = hugepages()
    p = start_job(job, 60)
    os.killpg(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        raise
    check(p.returncode == 130, f"interrupted sdp-mpirun exited "
          f"{p.returncode}, not 130\n{err[-2000:]}")
    check_gone(job, before)


def test_killed_launcher_tears_down():
    """A launcher killed outright (SIGKILL: no trap runs) leaves its
    switch to the guard, which takes it down within seconds."""
    job = f"vk{os.getpid() % 100000}"
    before = hugepages()
    p = start_job(job, 15)
    os.kill(p.pid, signal.SIGKILL)
    p.communicate()
    deadline = time.monotonic() + 30
    while (job_pids(job) or os.path.exists(f"/run/sdp/{job}")) and \
            time.monotonic() < deadline:
        time.sleep(0.5)
    check_gone(job, before)


if __name__ == "__main__":
    harness.require_root()
    if not os.access(OVS, os.X_OK):
        print(f"{OVS} missing: the vhost fabric needs Open vSwitch with "
              "DPDK (apt-get install -y openvswitch-switch-dpdk; "
              "scripts/setup.sh installs it)")
        print("0 passed, 1 failed")
        raise SystemExit(1)
    impls = os.environ.get("SDP_MPI_IMPLS", "openmpi mpich").split()
    for impl in impls:
        run(f"{impl}: 4 ranks over Open vSwitch (vhost-user), all checks",
            lambda: test_mpi_check(impl))
        run(f"{impl}: 4 ranks, one-sided Put/Get/Accumulate over the switch",
            lambda: test_one_sided(impl))
    run("br0 forwards by static flows to each host's MAC, no MAC learning",
        test_static_flows)
    run("a failed job's switch is torn down", test_failed_job_tears_down)
    run("a job past --timeout: switch torn down", test_timed_out_job_tears_down)
    run("Ctrl-C (SIGINT to the launcher's group): switch torn down",
        test_interrupted_job_tears_down)
    run("launcher killed by SIGKILL: the guard tears the switch down",
        test_killed_launcher_tears_down)
    harness.done()
