# SPDX-License-Identifier: BSD-3-Clause
"""sdp_launch - run both ends of a two-endpoint tool on a virtual testbed.

Used by sdp-ping, sdp-perf and sdp-pace: bring up the testbed with
apps/sdp-testbed (a memif pair, or namespaces on a bridge with af_packet
ports), start the server endpoint, then the client, collect their JSON, and
always tear everything down (also on errors and Ctrl-C).  Processes are
ended only by the PIDs we started; every wait has a deadline.
"""

import fcntl
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTBED = os.path.join(ROOT, "apps", "sdp-testbed")
MEMIF_NET = "10.77.1"  # memif links never touch the kernel: any net will do
# memif rail r (--rails N): 10.77.<r+1>.0/24 (rail 0 is MEMIF_NET)
MEMIF_RAIL_NET = "10.77.%d"
# Jumbo frames by default: HPC Ethernet fabrics run them, and memif and veth
# both carry 9000 (usrsctp moves ~1.7x more per CPU cycle at 9000 than at
# 1500; docs/BENCHMARKS.md, "SCTP").  af_xdp ports keep 1500: their UMEM chunks
# are 2 KiB, at most a page less headers, in DPDK's PMD (22.11 and 24.11
# alike: ETH_AF_XDP_FRAME_SIZE, max_rx_pktlen; queue set-up fails at MTU 3498
# on veth).
DEFAULT_MTU = 9000
# vhost fabric (sdp-testbed vhost): the vhost-user backend reads packets
# only from memory this process shared with it, which the EAL keeps in one
# memfd with --no-huge --single-file-segments.  The link comes up once the
# switch's PMD set the device's rings up; with more ranks than CPUs that
# took more than the default 5 s now and then, so ranks wait up to 30 s.
VHOST_DP = "eal=--single-file-segments link_wait_ms=30000"
# How long sdp-testbed gets to clean up after a TERM past its time limit
TESTBED_GRACE_S = 30
XDP_DEFAULT_MTU = 1500
# The largest MTU (dataplane DP_MTU_MAX, sdp-testbed --mtu): a frame fills
# one DPDK mbuf, whose size is 16-bit.
MIN_MTU = 576
MAX_MTU = 64000


def mtu_arg(text):
    """argparse type of --mtu: an MTU the dataplane carries."""
    import argparse
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number: use {MIN_MTU}..{MAX_MTU}")
    if v > MAX_MTU:
        raise argparse.ArgumentTypeError(
            f"{v} is above {MAX_MTU}, the largest MTU the DPDK dataplane "
            f"carries (a frame fills one mbuf, whose size is 16-bit): use "
            f"{MIN_MTU}..{MAX_MTU}")
    if v < MIN_MTU:
        raise argparse.ArgumentTypeError(f"{v} is below {MIN_MTU}: use "
                                         f"{MIN_MTU}..{MAX_MTU}")
    return v


def default_mtu(xdp=False):
    """The testbed MTU when none is asked for."""
    return XDP_DEFAULT_MTU if xdp else DEFAULT_MTU


def bin_dir():
    """Where the C endpoints are: $SDP_BIN_DIR, else <root>/build/apps."""
    d = os.environ.get("SDP_BIN_DIR") or os.path.join(
        os.environ.get("SDP_BUILD_DIR", os.path.join(ROOT, "build")), "apps")
    return d


def find_bin(name):
    path = os.path.join(bin_dir(), name)
    if not os.access(path, os.X_OK):
        sys.exit(f"{name} not found in {bin_dir()}: build first "
                 f"(scripts/setup.sh) or set SDP_BIN_DIR")
    return path


def default_job():
    return "j%d" % (os.getpid() % 10000000)

# DPDK's runtime dirs (root: /var/run/dpdk/<file prefix>).  sdp-testbed
# reads the same variable.
DPDK_RUN_ROOT = os.environ.get("SDP_TESTBED_DPDK_RUN_ROOT", "/var/run/dpdk")
PREFIX_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def dpdk_prefix(argv):
    """The DPDK file prefix a command line gives its EAL: a dataplane
    config token prefix=NAME (in --dp "...") or an EAL --file-prefix=NAME
    (testpmd); None when it names none (then the EAL picks its own)."""
    found = None
    for arg in argv:
        for tok in str(arg).split():
            for key in ("prefix=", "--file-prefix="):
                if tok.startswith(key):
                    found = tok[len(key):]
    return found


def remove_runtime_dir(prefix):
    """Remove /var/run/dpdk/@prefix, the runtime dir of an EAL that is gone.
    A process that exits cleanly removes its own (dp_eal_fini); one that
    died by a signal or was killed leaves it, and whoever started it calls
    this after reaping it.  Only that one exact prefix is touched, never a
    pattern, and never a dir whose EAL still runs: the primary process holds
    a lock on its 'config' file while it lives.  Returns True when the dir
    is gone."""
    if not prefix or not PREFIX_RE.match(prefix):
        raise ValueError(f"DPDK file prefix {prefix!r}: expected one name "
                         "of letters, digits, '_', '.', '-'")
    d = os.path.join(DPDK_RUN_ROOT, prefix)
    if not os.path.isdir(d):
        return True
    try:
        fd = os.open(os.path.join(d, "config"), os.O_RDWR)
    except OSError:
        fd = -1  # no config: an EAL that never got that far
    if fd >= 0:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print(f"sdp-launch: {d} is in use by a running DPDK process: "
                  "left in place", file=sys.stderr)
            return False
        finally:
            os.close(fd)
    shutil.rmtree(d, ignore_errors=True)
    return not os.path.exists(d)


def remove_runtime_dirs(stem):
    """remove_runtime_dir() for every prefix that begins with @stem, a
    job's own unique start (e.g. "sdp-fuzz-<job>-"); returns how many
    were removed."""
    if not PREFIX_RE.match(stem or ""):
        raise ValueError(f"DPDK file prefix stem {stem!r}: expected one "
                         "name of letters, digits, '_', '.', '-'")
    try:
        names = os.listdir(DPDK_RUN_ROOT)
    except OSError:
        return 0
    return sum(1 for n in sorted(names)
               if n.startswith(stem) and PREFIX_RE.match(n)
               and remove_runtime_dir(n))


def reaped(p):
    """After p (started by Testbed.start) has been waited for: remove the
    runtime dir a killed or crashed EAL left."""
    prefix = getattr(p, "sdp_prefix", None)
    if prefix and p.returncode is not None:
        remove_runtime_dir(prefix)


class Testbed:
    """A memif pair or a bridge of namespaces; a context manager."""

    def __init__(self, fabric, job=None, hosts=2, mtu=None, netem=None,
                 rate=None, kernel_ip=False, netem_hosts=None,
                 attach=False, xdp=False, rails=1, netem_rails=None,
                 memif_zc=False):
        if fabric not in ("memif", "bridge", "vhost"):
            raise ValueError(f"--fabric {fabric!r}: use memif, bridge or "
                             "vhost")
        self.fabric = fabric
        self.job = job or default_job()
        self.hosts = 2 if fabric == "memif" else hosts
        self.mtu = mtu if mtu else default_mtu(xdp)
        self.netem = netem
        self.netem_hosts = netem_hosts or {}
        # independent paths between the hosts (sdp-testbed --rails), and
        # the impairment of every port of one rail (--netem-rail)
        self.rails = rails
        self.netem_rails = netem_rails or {}
        if self.netem_rails and fabric != "bridge":
            raise ValueError("--netem-rail needs --fabric bridge (memif "
                             "links are shared memory and the vhost switch "
                             "has no impairment)")
        self.rate = rate
        # memif: the client (endpoint 1) in DPDK's zero-copy mode
        if memif_zc and fabric != "memif":
            raise ValueError("--memif-zc needs --fabric memif")
        self.memif_zc = memif_zc
        self.kernel_ip = kernel_ip
        # bridge: run endpoints in the host's namespace and open their
        # ports inside the host namespaces (dataplane key netns=)
        self.attach = attach
        # bridge: af_xdp ports instead of af_packet
        self.xdp = xdp
        self.env = {}
        self.procs = []
        # Which endpoint runs the server side of a tool.  On memif it is
        # endpoint 0 (the memif server); either order works, this one
        # avoids a retry.
        self.server_idx = 0 if fabric == "memif" else 1
        self.client_idx = 1 - self.server_idx

    def _tb(self, *args, timeout=120):
        """Run sdp-testbed in its own session: a Ctrl-C at the terminal
        reaches this process, not the testbed half-way through up or
        down.  Interrupted, up gets SIGTERM (its trap removes what it
        made) and down runs to its end; both are waited for, then the
        KeyboardInterrupt goes on (subprocess.run would SIGKILL the
        testbed and leave a half-made switch)."""
        p = subprocess.Popen([TESTBED] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        interrupted = timed_out = False
        deadline = time.monotonic() + timeout
        while True:
            try:
                out, err = p.communicate(
                    timeout=max(0.1, deadline - time.monotonic()))
                break
            except KeyboardInterrupt:
                interrupted = True
                if args[:1] != ("down",) and p.poll() is None:
                    p.terminate()
            except subprocess.TimeoutExpired:
                # TERM (its traps clean up), then KILL after a grace time
                if timed_out:
                    p.kill()
                else:
                    p.terminate()
                timed_out = True
                deadline = time.monotonic() + TESTBED_GRACE_S
        if interrupted:
            raise KeyboardInterrupt()
        if timed_out:
            raise RuntimeError(f"sdp-testbed {' '.join(args)} still ran "
                               f"after {timeout} s: stopped")
        if p.returncode != 0:
            raise RuntimeError(f"sdp-testbed {' '.join(args)} failed "
                               f"({p.returncode}): {err.strip()}")
        return out

    def __enter__(self):
        rails = ["--rails", str(self.rails)] if self.rails > 1 else []
        if self.fabric == "memif":
            zc = ["--memif-zc"] if self.memif_zc else []
            out = self._tb("memif", "up", "--job", self.job,
                           "--mtu", str(self.mtu), *rails, *zc)
        elif self.fabric == "vhost":
            if self.netem or self.netem_hosts or self.rate or \
                    self.kernel_ip or self.xdp:
                raise ValueError("--fabric vhost forwards by static flows "
                                 "in Open vSwitch, with no impairment, "
                                 "kernel addresses or af_xdp: use --fabric "
                                 "bridge for --netem, --bottleneck, --rate, "
                                 "--tls tcp and --xdp")
            try:
                out = self._tb("vhost", "up", "--job", self.job, "--hosts",
                               str(self.hosts), "--mtu", str(self.mtu),
                               *rails,
                               timeout=120 + self.hosts * self.rails)
            except BaseException:  # also KeyboardInterrupt (Ctrl-C, TERM)
                self._down()
                raise
        else:
            args = ["bridge", "up", "--job", self.job, "--hosts",
                    str(self.hosts), "--mtu", str(self.mtu)]
            if self.kernel_ip:
                args.append("--kernel-ip")
            if self.netem:
                args += ["--netem", self.netem]
            for k, v in self.netem_hosts.items():
                args += ["--netem-host", str(k), v]
            if self.rate:
                args += ["--rate", self.rate]
            args += rails
            for k, v in self.netem_rails.items():
                args += ["--netem-rail", str(k), v]
            try:
                out = self._tb(*args)
            except BaseException:  # also KeyboardInterrupt (Ctrl-C, TERM)
                self._down()
                raise
        for line in out.splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                self.env[k.strip()] = v.strip()
        return self

    def _down(self):
        try:
            self._tb("down", "--job", self.job, "--kill-procs")
        except Exception as e:  # report, never mask the original error
            print(f"sdp-launch: teardown: {e}", file=sys.stderr)

    def __exit__(self, *exc):
        # down runs whatever happens while the processes stop (a second
        # Ctrl-C included): the switch of a vhost job must not outlive it
        try:
            for p in self.procs:
                stop(p)
                if p.returncode is None:  # stop() gave up: it still runs
                    continue
                reaped(p)
        finally:
            self._down()
        return False

    def ip(self, i, rail=0):
        """DPDK address of endpoint i on a rail (rail 0: the only path)."""
        if self.fabric == "memif":
            return f"{MEMIF_RAIL_NET % (rail + 1)}.{i + 1}"
        if self.rails > 1:
            return self.env[f"SDP_DP_IP_{i}_{rail}"]
        return self.env[f"SDP_DP_IP_{i}"]

    def vdev(self, i, rail=0):
        """devargs of endpoint i's port on a rail."""
        key = "SDP_VDEV_XDP" if self.fabric == "bridge" and self.xdp \
            else "SDP_VDEV"
        if self.rails > 1:
            return self.env[f"{key}_{i}_{rail}"]
        return self.env[f"{key}_{i}"]

    def rail_down(self, rail, up=False):
        """Cut (or restore) one rail during a run (bridge, vhost)."""
        self._tb("rail-up" if up else "rail-down", "--job", self.job,
                 "--rail", str(rail))

    def kernel_ip_of(self, i):
        return self.env.get(f"SDP_KERNEL_IP_{i}")

    def dp_config(self, i, extra="", rail=0):
        """The dataplane config string for endpoint i (its port on a rail)."""
        ncpu = os.cpu_count() or 1
        dev = self.vdev(i, rail)
        if self.fabric == "memif":
            prefix = self.env.get(f"SDP_FILE_PREFIX_{i}",
                                  f"sdp-{self.job}-r{i}")
        else:
            prefix = self.env.get(f"SDP_FILE_PREFIX_{i}",
                                  f"sdp-{self.job}-h{i}")
        cfg = (f"dev={dev} ip={self.ip(i, rail)}/24 prefix={prefix} "
               f"mtu={self.mtu} lcore={i % ncpu}")
        if self.fabric == "vhost":
            cfg += " " + VHOST_DP
        if self.fabric == "bridge" and self.attach:
            cfg += f" netns={self.env[f'SDP_NS_{i}']}"
        return (cfg + " " + extra).strip()

    def wrap(self, i, argv):
        """Command line that runs argv as endpoint i."""
        if self.fabric == "bridge" and not self.attach:
            return ["ip", "netns", "exec", self.env[f"SDP_NS_{i}"]] + argv
        return argv

    def start(self, i, argv, **kw):
        p = subprocess.Popen(self.wrap(i, argv), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             start_new_session=True, preexec_fn=enable_cores,
                             **kw)
        p.sdp_argv0 = argv[0]
        # its EAL's runtime dir, removed once it is reaped (finish, stop,
        # kill, __exit__)
        p.sdp_prefix = dpdk_prefix(argv)
        self.procs.append(p)
        return p


def enable_cores():
    """Let this process and its children dump core on a crash (soft limit
    up to the hard one), without the shared memory (DPDK's memfd heap and
    memif regions: hundreds of MB; stacks and ELF headers are what a
    backtrace needs: coredump_filter 0x11).  Children inherit both."""
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        with open("/proc/self/coredump_filter", "w") as f:
            f.write("0x11")
    except (OSError, ValueError):
        pass


def signal_name(rc):
    """'SIGSEGV' for a subprocess return code -11 (None if not a signal)."""
    if rc is None or rc >= 0:
        return None
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def _core_candidates(pid, cwd):
    """Core files the kernel may have written for pid (core_pattern of
    the plain-file kind: 'core', 'core.%p', ...; a piped pattern leaves
    none here)."""
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
        with open("/proc/sys/kernel/core_uses_pid") as f:
            uses_pid = f.read().strip() == "1"
    except OSError:
        return [], "core_pattern unreadable"
    if pattern.startswith("|"):
        return [], f"core_pattern pipes cores to {pattern[1:].split()[0]}"
    name = pattern.replace("%p", str(pid)).replace("%%", "%")
    name = re.sub(r"%[a-zA-Z]", "*", name)
    if uses_pid and "%p" not in pattern:
        name += f".{pid}"
    if not os.path.isabs(name):
        name = os.path.join(cwd or os.getcwd(), name)
    return sorted(glob.glob(name)), None


def core_backtrace(core, exe=None, timeout=120):
    """gdb's view of a core: the signal, every thread's backtrace."""
    if shutil.which("gdb") is None:
        return "(gdb not installed: apt-get install gdb)"
    if exe is None:
        r = subprocess.run(["file", core], capture_output=True, text=True,
                           timeout=30)
        m = re.search(r"execfn: '([^']+)'", r.stdout)
        exe = m.group(1) if m else None
    cmd = ["gdb", "-batch", "-nx", "-ex", "info threads", "-ex",
           "thread apply all bt 30"] + ([exe] if exe else []) + [core]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"(gdb on {core} took over {timeout} s)"
    keep = [l for l in (r.stdout + r.stderr).splitlines()
            if not l.startswith(("warning: Can't open file",
                                 "warning: Section `.reg-xstate",
                                 "[New LWP", "Using host libthread_db",
                                 "[Thread debugging using"))
            and l.strip()]
    return "\n".join(keep)


def death_report(pid, rc, argv0="", cwd=None, remove=True):
    """What to print about a process that died by a signal: its name and,
    when it dumped core, gdb's backtrace (the core is removed after, as
    it is large).  Empty when rc is not a signal."""
    sig = signal_name(rc)
    if sig is None:
        return ""
    lines = [f"[{os.path.basename(argv0) or 'process'} pid {pid} died by "
             f"{sig}]"]
    cores, why = _core_candidates(pid, cwd)
    if why:
        lines.append(f"[no core: {why}]")
    elif not cores:
        lines.append("[no core file (RLIMIT_CORE "
                     f"{resource.getrlimit(resource.RLIMIT_CORE)[0]}, "
                     "core_pattern relative to the process's cwd)]")
    for c in cores:
        lines.append(f"[core {c}: backtrace]")
        lines.append(core_backtrace(c, argv0 if os.path.isabs(argv0)
                                    else None))
        if remove:
            try:
                os.unlink(c)
            except OSError:
                pass
    return "\n".join(lines)


def stop(p, grace=5.0):
    """End a process we started, by PID, with a deadline."""
    if p.poll() is not None:
        reaped(p)
        return
    try:
        os.killpg(p.pid, signal.SIGTERM)
    except ProcessLookupError:
        p.wait(timeout=grace)
        reaped(p)
        return
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=grace)
    reaped(p)


def kill(p, grace=10.0):
    """SIGKILL a process we started (a test's victim), by PID, reap it
    within @grace s and remove the runtime dir its EAL leaves."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait(timeout=grace)
    reaped(p)


def finish(p, timeout):
    """Wait for p with a deadline; return (rc, stdout, stderr)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(p)
        out, err = p.communicate()
        return 124, out, err + f"\n[sdp-launch: killed after {timeout} s]"
    reaped(p)
    if p.returncode < 0:
        # a signal: name it, and where it happened when a core was dumped
        # (the endpoint ran in our cwd; "ip netns exec" keeps it)
        # (the test harness sets SDP_KEEP_CORES=1: it fails the test on
        # the core it finds after)
        err += "\n" + death_report(
            p.pid, p.returncode, getattr(p, "sdp_argv0", ""),
            remove=os.environ.get("SDP_KEEP_CORES") != "1")
    return p.returncode, out, err


def last_json(text):
    """The last line of text that parses as a JSON object."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def install_signal_handlers():
    """Turn SIGTERM into KeyboardInterrupt so `with Testbed` cleans up."""
    def handler(sig, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, handler)


def run_pair(tb, server_argv, client_argv, timeout, server_grace=30):
    """Start the server endpoint, then the client; wait for both."""
    srv = tb.start(tb.server_idx, server_argv)
    time.sleep(0.2)
    cli = tb.start(tb.client_idx, client_argv)
    crc, cout, cerr = finish(cli, timeout)
    src, sout, serr = finish(srv, server_grace)
    return (crc, cout, cerr), (src, sout, serr)


def load_mpirun():
    """apps/sdp-mpirun as a module: its rank environment and mpirun line
    (benchmarks and tests build jobs the way the launcher does)."""
    import importlib.machinery
    import importlib.util
    path = os.path.join(ROOT, "apps", "sdp-mpirun")
    loader = importlib.machinery.SourceFileLoader("sdp_mpirun", path)
    spec = importlib.util.spec_from_loader("sdp_mpirun", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def need_matplotlib(tool, script, option="--plot"):
    """matplotlib may be installed only for the system interpreter
    (python3-matplotlib) while python3 on PATH is another one (pyenv):
    then re-run @script under /usr/bin/python3, before any testbed."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    syspy = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(syspy) and \
            os.access(syspy, os.X_OK) and subprocess.run(
                [syspy, "-c", "import matplotlib"], capture_output=True,
                timeout=60).returncode == 0:
        print(f"{tool}: matplotlib not importable from {sys.executable}; "
              f"re-running under {syspy}", file=sys.stderr, flush=True)
        os.execv(syspy, [syspy, os.path.abspath(script)] + sys.argv[1:])
    sys.exit(f"{tool}: {option} needs matplotlib "
             "(apt-get install python3-matplotlib)")
