#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""DMA rules over the vhost fabric's switch: tests/test_sg_dma.cc with both
of its processes as virtio_user ports on two vhost-user ports of the vhost
testbed's Open vSwitch (SDP_SG_DMA_SOCKS).  The switch reads every packet
through the memory each process shared with it (its EAL's memfd), as a NIC
behind an IOMMU would: a packet with a segment outside DPDK memory (a
chained usrsctp buffer, a zero-copy sender's heap) cannot be read there,
its association stalls, and the test fails at its deadline.  Both the
copied and the zero-copy send must arrive whole (every byte echoed and
checked), and the sender must have chained nothing.

Needs root and Debian's openvswitch-switch-dpdk (fails naming it)."""

import os
import re
import subprocess

import harness
from harness import check, run

TEST_BIN = os.path.join(os.environ.get("SDP_BUILD_DIR", ""), "tests",
                        "test_sg_dma")
OVS = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"


def test_over_switch():
    check(os.access(TEST_BIN, os.X_OK), f"{TEST_BIN} missing (SDP_BUILD_DIR)")
    with harness.sdp_launch.Testbed("vhost", hosts=2) as tb:
        env = dict(os.environ)
        env["SDP_SG_DMA_SOCKS"] = ",".join(
            tb.env[f"SDP_VDEV_{i}"].split("path=")[1].split(",")[0]
            for i in (0, 1))
        r = subprocess.run([TEST_BIN], capture_output=True, text=True,
                           timeout=300, env=env)
    out = r.stdout + r.stderr
    check(r.returncode == 0, f"test_sg_dma over the switch: rc "
          f"{r.returncode}\n{out[-4000:]}")
    passed = re.search(r"\[  PASSED  \] (\d+) tests?", out)
    check(passed and passed.group(1) == "2",
          f"expected both cases (copied and zero-copy send) to pass\n"
          f"{out[-3000:]}")
    ports = len(re.findall(r"port \d+ \(net_virtio_user\): ", out))
    check(ports >= 4, f"{ports} virtio_user ports opened, expected 4 (two "
          f"per case): the switch was not in the path\n{out[-2000:]}")
    for m in re.finditer(r"^sender \(virtio-user\): (\d+) packets out, "
                         r"(\d+) chained", out, re.M):
        print(f"    sender: {m.group(1)} packets out, {m.group(2)} chained")


if __name__ == "__main__":
    harness.require_root()
    if not os.access(OVS, os.X_OK):
        print(f"{OVS} missing: the vhost fabric needs Open vSwitch with "
              "DPDK (apt-get install -y openvswitch-switch-dpdk; "
              "scripts/setup.sh installs it)")
        print("0 passed, 1 failed")
        raise SystemExit(1)
    run("sg-dma over Open vSwitch: every packet from DPDK memory (copied "
        "and zero-copy sends)", test_over_switch)
    harness.done()
