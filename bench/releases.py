#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""releases - the README demo's MPI sweep on this machine's Debian release
and on the other one, on the same machine and kernel, interleaved.

  bench/releases.py --root DIR [--root-build build-trixie] [--rounds 3]

The other release runs in DIR, a root filesystem of it (chroot) in which
this checkout is bind-mounted at the same path and built into
--root-build (its own build: the release's UCX, DPDK and MPI).  Each round
runs the demo's sweep once on each side, the side that starts alternating
from round to round (a shared machine drifts; interleaving spreads the
drift over both): apps/sdp-mpi-compare --mpi mpich --max-size 4194304
--fabrics memif,bridge, i.e. sctp_dpdk over a memif pair and over the
af_packet bridge, and that release's own UCX tcp on the same veths.

Writes bench/results/releases_<codename>.json per side: sdp-mpi-compare's
JSON with the medians over the rounds, every run, and "release" and
"versions" (UCX, DPDK, MPICH as installed on that side).  Needs root.
Exit: 0 done, 1 a sweep failed, 2 usage.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENV = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"]
SWEEP = ["apps/sdp-mpi-compare", "--mpi", "mpich", "--max-size", "4194304",
         "--fabrics", "memif,bridge", "--reps", "1"]
VERSIONS = ("echo ucx=$(pkg-config --modversion ucx-uct) "
            "dpdk=$(pkg-config --modversion libdpdk) "
            "mpich=$(dpkg-query -W -f='${Version}' mpich); "
            ". /etc/os-release; echo release=$VERSION_CODENAME")


def compare_module():
    """apps/sdp-mpi-compare (no .py suffix), for its median_sweep."""
    path = os.path.join(ROOT, "apps", "sdp-mpi-compare")
    loader = importlib.machinery.SourceFileLoader("sdp_mpi_compare", path)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.join(ROOT, "apps"))
    loader.exec_module(mod)
    return mod


def side_cmd(side, script):
    """bash -c @script in the checkout, on this machine or in the root."""
    if side["root"] is None:
        return ["env", "-i"] + ENV + [f"SDP_BUILD_DIR={side['build']}",
                                      "bash", "-c", f"cd {ROOT} && {script}"]
    return ["chroot", side["root"], "/usr/bin/env", "-i"] + ENV + \
        [f"SDP_BUILD_DIR={side['build']}", "/bin/bash", "-c",
         f"cd {ROOT} && {script}"]


def versions(side):
    r = subprocess.run(side_cmd(side, VERSIONS), capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"releases: cannot read the versions on {side['name']}: "
                 f"{r.stderr.strip()}")
    return dict(kv.split("=", 1) for kv in r.stdout.split())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", required=True,
                    help="root filesystem of the other release")
    ap.add_argument("--root-build", default="build-trixie",
                    help="its build directory, relative to the checkout")
    ap.add_argument("--build", default="build",
                    help="this machine's build directory")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if not 1 <= a.rounds <= 20:
        ap.error(f"--rounds {a.rounds}: use 1..20")
    if os.geteuid() != 0:
        print("releases: needs root (testbed namespaces, chroot)",
              file=sys.stderr)
        return 2
    mine = os.path.join(a.root + ROOT, "apps", "sdp-mpi-compare")
    if not os.path.exists(mine):
        ap.error(f"--root {a.root}: no {mine}: bind-mount this checkout at "
                 f"{a.root}{ROOT} (mount --bind {ROOT} {a.root}{ROOT})")
    sides = [{"name": "host", "root": None,
              "build": os.path.join(ROOT, a.build)},
             {"name": a.root, "root": a.root,
              "build": os.path.join(ROOT, a.root_build)}]
    for s in sides:
        s["versions"] = versions(s)
        s["runs"] = None
        bench = os.path.join((s["root"] or "") + s["build"], "apps",
                             "sdp-mpi-bench-mpich")
        if not os.access(bench, os.X_OK):
            ap.error(f"{bench} missing: build {s['build']} on that side "
                     "(ninja -C ...)")
    if sides[0]["versions"]["release"] == sides[1]["versions"]["release"]:
        ap.error(f"--root {a.root} is the same release as this machine "
                 f"({sides[0]['versions']['release']})")
    cmp = compare_module()
    with tempfile.TemporaryDirectory(dir=a.root + "/tmp") as tmp:
        inside = tmp[len(a.root):]
        for rnd in range(a.rounds):
            order = sides if rnd % 2 == 0 else sides[::-1]
            for s in order:
                # one file, seen from outside and from inside the root
                out = os.path.join(tmp, "sweep.json")
                path = inside + "/sweep.json" if s["root"] else out
                print(f"releases: round {rnd + 1}/{a.rounds}: "
                      f"{s['versions']['release']}", file=sys.stderr,
                      flush=True)
                r = subprocess.run(side_cmd(s, " ".join(
                    SWEEP + ["--json", path])), timeout=3600)
                if r.returncode != 0:
                    print(f"releases: the sweep on "
                          f"{s['versions']['release']} failed "
                          f"(rc {r.returncode}; its output is above)",
                          file=sys.stderr)
                    return 1
                d = json.load(open(out))
                os.unlink(out)
                if s["runs"] is None:
                    s["first"], s["runs"] = d, d["runs"]
                else:
                    for k, v in d["runs"].items():
                        s["runs"][k] += v
    for s in sides:
        d = s["first"]
        d["reps"] = a.rounds
        d["runs"] = s["runs"]
        # JSON made the sizes strings; median_sweep compares them as ints
        as_int = {k: [{int(z): row for z, row in sw.items()} for sw in v]
                  for k, v in s["runs"].items()}
        d["sctp_dpdk"] = {f: cmp.median_sweep(as_int[f])
                          for f in as_int if f != "tcp"}
        d["tcp"] = cmp.median_sweep(as_int["tcp"])
        d["release"] = s["versions"]["release"]
        d["versions"] = s["versions"]
        path = os.path.join(HERE, "results",
                            f"releases_{s['versions']['release']}.json")
        with open(path, "w") as f:
            json.dump(d, f, indent=1)
        print(f"releases: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
