#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The per-rank environment of apps/sdp-mpirun with --rails N, without a
testbed: a Testbed object is filled with the KEY=VALUE lines sdp-testbed
prints (the layout its own test checks) and rank_env() is asked for each
rank.  --rails 1 must give exactly the single-path environment (the same
keys and values as before rails existed); --rails N one port entry per
rail, in rail order, with the multi-rail settings of UCX."""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.join(HERE, "..", "..", "apps")
sys.path.insert(0, APPS)
import sdp_launch  # noqa: E402


MR = sdp_launch.load_mpirun()
AFP = "blocksz=36864,framesz=9216,qdisc_bypass=1"


def bridge_env(job, rails):
    env = {"SDP_KIND": "bridge", "SDP_JOB": job, "SDP_RUN_DIR": "/x",
           "SDP_HOSTS": "2", "SDP_JOB_OCTET": "99"}
    for i in range(2):
        env[f"SDP_NS_{i}"] = f"sdp-{job}-h{i}"
        env[f"SDP_DP_IP_{i}"] = f"10.99.1.{i + 1}"
        env[f"SDP_VDEV_{i}"] = f"net_af_packet0,iface=sdpnet0,{AFP}"
        if rails > 1:
            for r in range(rails):
                env[f"SDP_DP_IP_{i}_{r}"] = f"10.99.{2 * r + 1}.{i + 1}"
                env[f"SDP_VDEV_{i}_{r}"] = (f"net_af_packet{r},iface=sdpnet{r},"
                                            f"{AFP}")
    if rails > 1:
        env["SDP_RAILS"] = str(rails)
    return env


def memif_env(job, rails):
    s = f"/run/sdp/{job}"
    env = {"SDP_KIND": "memif", "SDP_JOB": job, "SDP_RUN_DIR": s,
           "SDP_VDEV_0": f"net_memif0,role=server,id=0,socket={s}/memif0.sock,socket-abstract=no",
           "SDP_VDEV_1": f"net_memif0,role=client,id=0,socket={s}/memif0.sock,socket-abstract=no"}
    if rails > 1:
        env["SDP_RAILS"] = str(rails)
        for r in range(rails):
            for v, role in ((0, "server"), (1, "client")):
                env[f"SDP_VDEV_{v}_{r}"] = (f"net_memif{r},role={role},id=0,"
                                            f"socket={s}/memif{r}.sock,"
                                            "socket-abstract=no")
    return env


def vhost_env(job, rails):
    d = f"/run/sdp/{job}/ovs"
    env = {"SDP_KIND": "vhost", "SDP_JOB": job, "SDP_RUN_DIR": f"/run/sdp/{job}",
           "SDP_HOSTS": "2", "SDP_JOB_OCTET": "99", "SDP_OVS_DIR": d}
    for i in range(2):
        env[f"SDP_DP_IP_{i}"] = f"10.99.1.{i + 1}"
        env[f"SDP_VDEV_{i}"] = (f"net_virtio_user0,path={d}/vhu{i},"
                                f"mac=02:5d:0a:63:01:{i + 1:02x}")
        if rails > 1:
            for r in range(rails):
                port = f"vhu{i}" if r == 0 else f"vhu{i}r{r}"
                env[f"SDP_DP_IP_{i}_{r}"] = f"10.99.{2 * r + 1}.{i + 1}"
                env[f"SDP_VDEV_{i}_{r}"] = (
                    f"net_virtio_user{r},path={d}/{port},"
                    f"mac=02:5d:0a:63:{2 * r + 1:02x}:{i + 1:02x}")
    if rails > 1:
        env["SDP_RAILS"] = str(rails)
    return env


def testbed(fabric, rails):
    tb = sdp_launch.Testbed(fabric, job="t1", rails=rails)
    tb.env = {"memif": memif_env, "bridge": bridge_env,
              "vhost": vhost_env}[fabric]("t1", rails)
    return tb


def opts(tls="sctp_dpdk", rails=1, env=()):
    return argparse.Namespace(mpi="mpich", tls=tls, mtu=9000, rate=None,
                              pace_coll=False, maxrate="1G",
                              idle_sleep_us="auto", env=list(env),
                              rails=rails, stream_map="comm")


class RankEnv(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        os.makedirs(os.path.join(self.tmp.name, "ucx-tl"))
        open(os.path.join(self.tmp.name, "ucx-tl",
                          "libuct_sctp_dpdk.so"), "w").close()
        os.environ["SDP_BUILD_DIR"] = self.tmp.name
        os.environ.pop("MALLOC_PERTURB_", None)
        self.lib = os.path.join(self.tmp.name, "ucx-tl", "libuct_sctp_dpdk.so")

    def tearDown(self):
        self.tmp.cleanup()

    def test_one_rail_is_the_single_path_environment(self):
        ncpu = os.cpu_count() or 1
        for fabric in ("memif", "bridge"):
            tb = testbed(fabric, 1)
            for r in (0, 1):
                want = {
                    "SDP_RANK_NS": "",
                    "LD_PRELOAD": self.lib,
                    "UCX_TLS": "sctp_dpdk,self",
                    "UCX_SCTP_DPDK_DEVARGS": tb.env[f"SDP_VDEV_{r}"],
                    "UCX_SCTP_DPDK_IP": (f"10.77.1.{r + 1}/24" if fabric == "memif"
                                         else f"10.99.1.{r + 1}/24"),
                    "UCX_SCTP_DPDK_MTU": "9000",
                    "UCX_SCTP_DPDK_PREFIX": f"sdp-t1-r{r}",
                    "UCX_SCTP_DPDK_LCORE": str(r % ncpu),
                    "UCX_SCTP_DPDK_IDLE_SLEEP_US": "auto",
                    "UCX_SCTP_DPDK_STREAM_TAG_MASK": "mpich-comm",
                }
                if fabric == "bridge":
                    want["UCX_SCTP_DPDK_DP"] = f"netns=sdp-t1-h{r} own_mac=1"
                elif not MR.ucx_proto_v2(()):
                    # zero-copy rendezvous data (TX_ZCOPY_MIN), with
                    # UCX's v1 protocol selection only
                    want["UCX_RNDV_SCHEME"] = "put_zcopy"
                self.assertEqual(MR.rank_env(opts(), tb, r), want,
                                 f"{fabric} rank {r}")
        tb = testbed("bridge", 1)
        self.assertEqual(MR.rank_env(opts("tcp"), tb, 1),
                         {"SDP_RANK_NS": "sdp-t1-h1", "UCX_TLS": "tcp,self",
                          "UCX_NET_DEVICES": "sdpnet0"})

    def test_memif_rendezvous_by_put_unless_overridden(self):
        # put_zcopy with UCX's v1 protocol selection only: the v2 one
        # (UCX >= 1.16) would send every tagged message by rendezvous
        tb = testbed("memif", 1)
        v1 = ["UCX_PROTO_ENABLE=n"]
        self.assertEqual(MR.rank_env(opts(env=v1), tb, 0)["UCX_RNDV_SCHEME"],
                         "put_zcopy")
        self.assertNotIn("UCX_RNDV_SCHEME", MR.rank_env(
            opts(env=["UCX_PROTO_ENABLE=y"]), tb, 0))
        e = MR.rank_env(opts(env=v1 + ["UCX_RNDV_SCHEME=get_zcopy"]), tb, 0)
        self.assertEqual(e["UCX_RNDV_SCHEME"], "get_zcopy")
        self.assertNotIn("UCX_RNDV_SCHEME",
                         MR.rank_env(opts(), testbed("bridge", 1), 0))

    def test_rails_one_port_entry_per_rail(self):
        sep = MR.PORT_LIST_SEP
        tb = testbed("bridge", 3)
        e = MR.rank_env(opts(rails=3), tb, 1)
        self.assertEqual(e["UCX_SCTP_DPDK_DEVARGS"].split(sep),
                         [f"net_af_packet{k},iface=sdpnet{k},{AFP}"
                          for k in range(3)])
        self.assertEqual(e["UCX_SCTP_DPDK_IP"].split(sep),
                         ["10.99.1.2/24", "10.99.3.2/24", "10.99.5.2/24"])
        self.assertEqual((e["UCX_MAX_EAGER_RAILS"], e["UCX_MAX_RNDV_RAILS"]),
                         ("3", "3"))
        self.assertEqual(e["UCX_SCTP_DPDK_DP"], "netns=sdp-t1-h1 own_mac=1")
        self.assertEqual(e["UCX_SCTP_DPDK_PREFIX"], "sdp-t1-r1")
        self.assertEqual(e["UCX_SCTP_DPDK_MEM"], str(3 * MR.MEM_MB_PER_RAIL))
        tb = testbed("memif", 2)
        for r, role in ((0, "server"), (1, "client")):
            e = MR.rank_env(opts(rails=2), tb, r)
            devs = e["UCX_SCTP_DPDK_DEVARGS"].split(sep)
            self.assertEqual([d.split(",")[:2] for d in devs],
                             [["net_memif0", f"role={role}"],
                              ["net_memif1", f"role={role}"]])
            self.assertIn("memif1.sock", devs[1])
            self.assertEqual(e["UCX_SCTP_DPDK_IP"].split(sep),
                             [f"10.77.1.{r + 1}/24", f"10.77.2.{r + 1}/24"])

    def test_vhost_rails_one_virtio_user_port_per_rail(self):
        sep = MR.PORT_LIST_SEP
        e = MR.rank_env(opts(rails=2), testbed("vhost", 2), 1)
        self.assertEqual(
            e["UCX_SCTP_DPDK_DEVARGS"].split(sep),
            ["net_virtio_user0,path=/run/sdp/t1/ovs/vhu1,mac=02:5d:0a:63:01:02",
             "net_virtio_user1,path=/run/sdp/t1/ovs/vhu1r1,mac=02:5d:0a:63:03:02"])
        self.assertEqual(e["UCX_SCTP_DPDK_IP"].split(sep),
                         ["10.99.1.2/24", "10.99.3.2/24"])
        # one EAL memfd shared with every port's vhost device
        self.assertEqual(e["UCX_SCTP_DPDK_DP"], sdp_launch.VHOST_DP)
        self.assertEqual(e["UCX_SCTP_DPDK_MEM"], str(2 * MR.MEM_MB_PER_RAIL))
        self.assertEqual(e["UCX_MAX_RNDV_RAILS"], "2")

    def test_vhost_refuses_impairment_and_memif_rail_events(self):
        def refused(*args):
            r = subprocess.run([os.path.join(APPS, "sdp-mpirun"), *args,
                                "-np", "2", "true"], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 2, r.stderr)
            return r.stderr
        self.assertIn("--fabric bridge",
                      refused("--fabric", "vhost", "--bottleneck", "rate 1mbit"))
        self.assertIn("--fabric bridge",
                      refused("--fabric", "vhost", "--rails", "2",
                              "--netem-rail", "1", "rate 1mbit"))
        self.assertIn("bridge or vhost",
                      refused("--fabric", "memif", "--rails", "2",
                              "--rail-event", "1:down:1"))
        r = subprocess.run([os.path.join(APPS, "sdp-ping"), "--fabric",
                            "vhost", "--netem", "loss 1%"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--fabric bridge", r.stderr)

    def test_rails_tcp_lists_every_rail_device(self):
        e = MR.rank_env(opts("tcp", rails=2), testbed("bridge", 2), 0)
        self.assertEqual(e["UCX_NET_DEVICES"], "sdpnet0,sdpnet1")
        self.assertEqual(e["UCX_MAX_RNDV_RAILS"], "2")
        self.assertNotIn("UCX_SCTP_DPDK_DEVARGS", e)

    def test_env_overrides_the_rail_settings(self):
        e = MR.rank_env(opts(rails=2, env=["UCX_MAX_EAGER_RAILS=1"]),
                        testbed("bridge", 2), 0)
        self.assertEqual(e["UCX_MAX_EAGER_RAILS"], "1")

    def test_separator_inside_an_entry_is_refused(self):
        with self.assertRaises(ValueError):
            MR.port_list(["a" + MR.PORT_LIST_SEP + "b", "c"])


if __name__ == "__main__":
    unittest.main()
