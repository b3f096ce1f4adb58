/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_port.c - opening and closing the dataplane port: find the ethdev the
 * EAL probed from dev=, size and create the mempool and rings on the port's
 * NUMA socket, set the MTU, detect offloads once (logging each decision),
 * start the port and wait for its link with a deadline.
 *
 * Everything allocated here is released by dp_port_close() in reverse
 * order; dp_port_open() unwinds through the same ladder on failure.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <rte_alarm.h>
#include <rte_ethdev.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_eal_memconfig.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_pci.h>

#include <rte_version.h>

#include "dp_internal.h"

/* The device name of @devargs: everything before the first comma. */
static void devargs_name(const char *devargs, char *name, size_t len)
{
	const char *comma = strchr(devargs, ',');
	size_t n = comma ? (size_t)(comma - devargs) : strlen(devargs);

	if (n >= len)
		n = len - 1;
	memcpy(name, devargs, n);
	name[n] = '\0';
}

/*
 * The ethdev of @name, exactly: ethdev names are the vdev names
 * (net_memif1) and, for PCI devices, the full address (0000:3b:02.0),
 * which a short form (3b:02.0) is compared with as an address.
 * @return the port id or RTE_MAX_ETHPORTS.
 */
static uint16_t lookup_port(const char *name, bool is_pci)
{
	struct rte_pci_addr want, have;
	char pname[RTE_ETH_NAME_MAX_LEN];
	uint16_t pid;

	if (rte_eth_dev_get_port_by_name(name, &pid) == 0)
		return pid;
	if (!is_pci || rte_pci_addr_parse(name, &want) != 0)
		return RTE_MAX_ETHPORTS;
	RTE_ETH_FOREACH_DEV(pid) {
		if (rte_eth_dev_get_name_by_port(pid, pname) == 0 &&
		    rte_pci_addr_parse(pname, &have) == 0 &&
		    rte_pci_addr_cmp(&want, &have) == 0)
			return pid;
	}
	return RTE_MAX_ETHPORTS;
}

/*
 * Find the port of cfg->devargs, probing (hot-plugging) the device when
 * the EAL has not: the first port's devargs usually went to rte_eal_init
 * (--vdev / -a), every further port of the process is probed here, in the
 * caller's network namespace (dp_port_open entered the port's).  Never
 * "the only port": with several ports that would be another port's.
 * @return 0 and the port id; -ENODEV (logged) when no such port appears.
 */
static int find_port(const struct dp_config *cfg, uint16_t *pid_p,
		     bool *probed_p)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	int rc;

	*probed_p = false;
	devargs_name(cfg->devargs, name, sizeof(name));
	*pid_p = lookup_port(name, cfg->is_pci);
	if (*pid_p != RTE_MAX_ETHPORTS)
		return 0;
	rc = rte_dev_probe(cfg->devargs);
	if (rc != 0 && rc != -EEXIST) {
		SDP_LOG(ERR, DP, "config: dev=%s: probing the device failed: "
			"%s: check the driver name and its devargs (is the "
			"PMD installed? dpdk package)%s", cfg->devargs,
			rte_strerror(-rc),
			cfg->is_pci ? "; a PCI device must be bound to "
				      "vfio-pci and the EAL started without "
				      "--no-pci" : "");
		return -ENODEV;
	}
	*probed_p = rc == 0;
	*pid_p = lookup_port(name, cfg->is_pci);
	if (*pid_p == RTE_MAX_ETHPORTS) {
		SDP_LOG(ERR, DP, "config: dev=%s did not create a port named "
			"%s: check the driver name and its devargs",
			cfg->devargs, name);
		return -ENODEV;
	}
	return 0;
}

static uint32_t pow2_ge(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * The computed pool holds a frame for every descriptor and ring slot.  At
 * MTU 9000 that is 16383 mbufs, ~153 MB; above it the count is cut (to a
 * power of 2 less 1, at least 1023) so the pool stays within about that
 * many bytes: 16383 mbufs of 64 KiB would not fit the default mem=512.
 */
#define DP_POOL_AUTO_BYTES (160u << 20)

static uint32_t pool_cap_by_bytes(uint32_t nb_mbufs, uint16_t room)
{
	uint32_t cap = DP_POOL_AUTO_BYTES / room, p = 1024;

	while (p * 2 <= cap)
		p *= 2;
	return nb_mbufs < p - 1 ? nb_mbufs : p - 1;
}

/*
 * A zero-copy memif client (DPDK 22.11) keeps its RX ring stocked with
 * mbufs of our pool (rsize= slots, whatever rxd= says), keeps each mbuf it
 * sent until the peer has read it (up to a ring), and restocks the RX ring
 * all or nothing (rte_pktmbuf_alloc_bulk of every free slot: with fewer
 * mbufs free the ring stays empty and the peer cannot send).  It also
 * never returns the mbufs on its rings when the link goes down: each
 * reconnect (a peer that left and came back) strands up to a ring of them.
 * So count a ring each way, and one more for a restock or a reconnect.
 */
static void memif_zc_descs(const struct dp_config *cfg, uint32_t *rxd,
			   uint32_t *txd)
{
	uint32_t ring = dp_devargs_memif_ring(cfg->devargs);

	if (*rxd < ring)
		*rxd = ring;
	if (*txd < ring)
		*txd = ring;
	*rxd += ring;
}

/*
 * Drivers whose transmit reads the packet's bytes with the CPU through the
 * mbuf's virtual address (memcpy into shared memory, a socket, a UMEM, or
 * a pointer hand-over within the process) and never gives its IOVA to a
 * device.  Only for them may a packet carry a segment outside DPDK's
 * memory, which has no IOVA: a PCI NIC would DMA from RTE_BAD_IOVA, and a
 * virtio-user port hands the address to its vhost backend, which can read
 * only the memory this process shared with it.  A memif zero-copy client
 * hands the peer offsets into its own pool, so it is no such driver.
 */
static bool tx_copies_with_cpu(const struct dp_port *port,
			       const char *driver)
{
	static const char *const drivers[] = {
		"net_memif", "net_af_packet", "net_af_xdp", "net_tap",
		"net_ring",
	};
	unsigned int i;

	if (port->memif_zc)
		return false;
	for (i = 0; i < RTE_DIM(drivers); i++)
		if (strcmp(driver, drivers[i]) == 0)
			return true;
	return false;
}

static void detect_offloads(struct dp_port *port,
			    const struct rte_eth_dev_info *info,
			    struct rte_eth_conf *conf)
{
	uint64_t tx = info->tx_offload_capa, rx = info->rx_offload_capa;
	bool sctp_tx = tx & RTE_ETH_TX_OFFLOAD_SCTP_CKSUM;
	bool sctp_rx = rx & RTE_ETH_RX_OFFLOAD_SCTP_CKSUM;

	port->ip_cksum_tx_offload = tx & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	port->ip_cksum_rx_offload = rx & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
	if (port->ip_cksum_tx_offload)
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	if (port->ip_cksum_rx_offload)
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
	if (sctp_tx)
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_SCTP_CKSUM;
	if (sctp_rx)
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCTP_CKSUM;
	port->crc_rx_offload = sctp_rx;
	/* chained TX needs both: multi-segment packets, and a driver that
	 * copies them with the CPU (buffers without an IOVA) */
	port->tx_ext = (tx & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) &&
		       tx_copies_with_cpu(port, info->driver_name);
	if (port->tx_ext)
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	SDP_LOG(INFO, DP, "port %u (%s): ipv4 cksum tx %s rx %s; sctp crc32c "
		"tx %s rx %s; multi-seg tx %s; chained tx of external buffers "
		"%s", port->port_id, info->driver_name,
		port->ip_cksum_tx_offload ? "hw" : "sw",
		port->ip_cksum_rx_offload ? "hw" : "sw",
		sctp_tx ? "offload available" : "not offered",
		sctp_rx ? "offload available" : "not offered",
		(tx & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) ? "yes" : "no",
		port->tx_ext ? "on (the driver copies with the cpu)"
		: !(tx & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
			? "off (no multi-seg tx): packets are copied"
			: "off (the device reads by iova; external buffers "
			  "have none): packets are copied");
}

static int choose_crc(struct dp_port *port, const struct dp_config *cfg,
		      const struct rte_eth_dev_info *info)
{
	bool hw = (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_SCTP_CKSUM) &&
		  !cfg->udp_encap;

	switch (cfg->crc) {
	case DP_CRC_AUTO:
		/* memif: both ends are our dataplanes, which agree on
		 * crc=auto; shared memory has no wire to corrupt bits */
		port->crc = port->memif ? DP_CRC_NONE
			    : hw	? DP_CRC_OFFLOAD
					: DP_CRC_ISAL;
		break;
	case DP_CRC_NONE:
		if (!port->memif) {
			SDP_LOG(ERR, DP, "config: crc=none (zero checksum, "
				"RFC 9653) but port %u (%s) is no memif port: "
				"there is a wire whose bit errors only CRC32c "
				"catches; use crc=auto or crc=isal",
				port->port_id, info->driver_name);
			return -EINVAL;
		}
		port->crc = DP_CRC_NONE;
		break;
	case DP_CRC_OFFLOAD:
		if (!hw) {
			SDP_LOG(ERR, DP, "config: crc=offload but port %u (%s)"
				" %s: use crc=auto or crc=isal",
				port->port_id, info->driver_name,
				cfg->udp_encap ? "cannot offload the CRC of "
						 "UDP-encapsulated SCTP"
					       : "does not advertise "
						 "RTE_ETH_TX_OFFLOAD_SCTP_CKSUM");
			return -EINVAL;
		}
		port->crc = DP_CRC_OFFLOAD;
		break;
	default:
		port->crc = cfg->crc;
		break;
	}
	SDP_LOG(INFO, DP, "port %u: sctp crc32c back-end %s%s", port->port_id,
		dp_crc_name(port->crc),
		port->crc == DP_CRC_OFFLOAD ? " (nic)"
		: port->crc == DP_CRC_NONE
			? " (zero checksum, RFC 9653: nonzero ones verified)"
			: " (software)");
	return 0;
}

/*
 * memif and af_packet report a 1518-byte maximum frame (RTE_ETHER_MAX_LEN
 * in their dev_infos_get, DPDK 22.11 and 24.11 alike), yet
 * carry larger frames: memif chains its shared-memory buffers (bsize=),
 * af_packet is bounded by its TPACKET frame (framesz=) and the kernel
 * interface MTU.  For those two the ethdev MTU stays at what they report
 * and the IP MTU (what we send) is the configured one.  Any other driver
 * must accept the MTU.
 */
static bool carries_jumbo_anyway(const char *driver)
{
	return strcmp(driver, "net_memif") == 0 ||
	       strcmp(driver, "net_af_packet") == 0;
}

static int choose_mtu(struct dp_port *port, const struct dp_config *cfg,
		      const struct rte_eth_dev_info *info,
		      struct rte_eth_conf *conf)
{
	uint32_t max_frame = info->max_rx_pktlen;
	uint32_t want = (uint32_t)cfg->mtu + DP_ETH_OVERHEAD;

	if (cfg->mtu >= info->min_mtu && cfg->mtu <= info->max_mtu &&
	    want <= max_frame) {
		conf->rxmode.mtu = cfg->mtu;
		return 0;
	}
	if (carries_jumbo_anyway(info->driver_name) &&
	    max_frame > DP_ETH_OVERHEAD) {
		conf->rxmode.mtu = max_frame - DP_ETH_OVERHEAD;
		SDP_LOG(INFO, DP, "port %u: %s reports a %u-byte maximum frame;"
			" it carries larger ones (%s), so ip mtu %u is used "
			"above ethdev mtu %u", port->port_id,
			info->driver_name, max_frame,
			strcmp(info->driver_name, "net_memif") == 0
				? "chained buffers, bsize= devarg"
				: "framesz= devarg and interface mtu",
			cfg->mtu, conf->rxmode.mtu);
		return 0;
	}
	SDP_LOG(ERR, DP, "config: mtu=%u not supported by port %u (%s allows "
		"mtu %u..%u, frames up to %u bytes): lower mtu=",
		cfg->mtu, port->port_id, info->driver_name, info->min_mtu,
		info->max_mtu, max_frame);
	return -EINVAL;
}

/*
 * A memif client cannot start before its server has created the socket.
 * Retry until the link deadline, so the two processes of a pair may start
 * in any order.
 */
static int start_port(uint16_t pid, const struct rte_eth_dev_info *info,
		      uint32_t wait_ms)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	uint32_t waited = 0;
	int rc;

	for (;;) {
		rc = rte_eth_dev_start(pid);
		if (rc == 0 || strcmp(info->driver_name, "net_memif") != 0 ||
		    waited >= wait_ms)
			return rc;
		nanosleep(&ts, NULL);
		waited += 50;
	}
}

/*
 * A memif server creates its socket when the EAL probes it but accepts a
 * client's id only once the port is started: a client that connects in
 * between is told "ID not found" and disconnected, and DPDK's memif never
 * retries.  So a memif client whose link is still down after
 * MEMIF_RECONNECT_MS restarts the port (which connects again).
 */
#define MEMIF_RECONNECT_MS 500

/*
 * DPDK 22.11's memif runs its side of the connection protocol, teardown
 * included, on the EAL interrupt thread (memif_intr_handler ->
 * memif_msg_receive_* / memif_disconnect), with nothing against dev_stop,
 * dev_start or dev_close on the calling thread, which change the same
 * state (link status, flags, control channel, regions):
 *   - closing while the peer leaves, both freed the regions (SIGSEGV in
 *     eal-intr-thread at exit);
 *   - a client restarted by wait_link while its interrupt thread is
 *     finishing the previous handshake (read in the source, not seen):
 *     memif_connect can mark the link up after the stop marked it down
 *     and freed the regions, and the thread's teardown of the old channel
 *     then takes the new one (pmd->cc) with it.
 * The interrupt thread runs its callbacks one at a time and EAL alarms are
 * among them: memif ports are stopped, restarted and closed from an alarm,
 * so these never overlap memif's own handling.
 *
 * virtio_user as a vhost-user server (the vhost fabric: the switch is the
 * client and reconnects at once when the port stops) accepts and drops
 * connections on the interrupt thread too (virtio_user_dev_server_reconnect,
 * the delayed disconnect handler).  A close on the calling thread while it
 * handled the switch's reconnect freed an fd the thread then put back into
 * its epoll set: "PANIC in eal_intr_thread_main(): Error adding fd ...
 * epoll_ctl, Bad file descriptor" at a rank's exit (MPICH, 4 ranks).  Its
 * ports are closed from an alarm as well.
 */
#define INTR_OP_WAIT_MS 10000

enum intr_op_kind { INTR_OP_CLOSE, INTR_OP_RESTART };

struct intr_op {
	uint16_t port_id;
	enum intr_op_kind kind;
	int rc;
	uint32_t done;		/* __atomic */
};

static int intr_op_run(uint16_t port_id, enum intr_op_kind kind)
{
	int rc;

	rte_eth_dev_stop(port_id);
	/* a zero-copy memif client's disconnect closed the EAL's memory
	 * file: put it back before anything takes its number */
	dp_memif_zc_restore();
	if (kind == INTR_OP_CLOSE) {
		rc = rte_eth_dev_close(port_id);
		dp_memif_zc_restore();
		return rc;
	}
	return rte_eth_dev_start(port_id);
}

static void intr_op_cb(void *arg)
{
	struct intr_op *op = arg;

	op->rc = intr_op_run(op->port_id, op->kind);
	__atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
}

/* Run @kind on the interrupt thread for a driver that handles its
 * connection there (memif, virtio_user: see above); others here.  @return what dev_start / dev_close returned. */
static int port_intr_op(uint16_t port_id, bool on_intr,
			enum intr_op_kind kind)
{
	struct intr_op op = { .port_id = port_id, .kind = kind, .done = 0 };
	struct timespec ts = { 0, 200 * 1000 };
	uint64_t end;
	int rc;

	if (!on_intr)
		return intr_op_run(port_id, kind);
	rc = rte_eal_alarm_set(1, intr_op_cb, &op);
	if (rc != 0) {
		SDP_LOG(WARN, DP, "port %u: cannot reach the interrupt thread "
			"(alarm: %s): stopping the port here", port_id,
			rte_strerror(-rc));
		return intr_op_run(port_id, kind);
	}
	end = dp_tsc() + dp_ms_to_tsc(INTR_OP_WAIT_MS);
	while (!__atomic_load_n(&op.done, __ATOMIC_ACQUIRE) && dp_tsc() < end)
		nanosleep(&ts, NULL);
	if (__atomic_load_n(&op.done, __ATOMIC_ACQUIRE))
		return op.rc;
	/* cancel waits for a running callback; one that never started is
	 * ours to run */
	if (rte_eal_alarm_cancel(intr_op_cb, &op) > 0 &&
	    !__atomic_load_n(&op.done, __ATOMIC_ACQUIRE)) {
		SDP_LOG(WARN, DP, "port %u: the interrupt thread did not run "
			"within %u ms: stopping the port here", port_id,
			INTR_OP_WAIT_MS);
		return intr_op_run(port_id, kind);
	}
	return op.rc;
}

/*
 * virtio_user writes its vhost-user messages with sendmsg() without
 * MSG_NOSIGNAL: a message to a switch that already closed the connection
 * (a port stopping at exit while the switch resets it) raised SIGPIPE and
 * killed the rank (Open MPI, 4 ranks on the vhost fabric: "exited on
 * signal 13").  Where the process still has SIGPIPE's default action it
 * is ignored, so the write fails with EPIPE, which the driver handles; an
 * application's own handler is left alone.
 */
static void virtio_user_no_sigpipe(uint16_t port_id)
{
	struct sigaction old;

	if (sigaction(SIGPIPE, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
	    (old.sa_flags & SA_SIGINFO))
		return;
	signal(SIGPIPE, SIG_IGN);
	SDP_LOG(INFO, DP, "port %u (net_virtio_user): SIGPIPE ignored (was "
		"the default action): a write to a closed vhost-user socket "
		"fails with EPIPE instead of killing the process", port_id);
}

/* The link's speed in Mbit/s; 0 when the driver does not know it
 * (RTE_ETH_SPEED_NUM_UNKNOWN, e.g. virtio-user and vhost). */
static uint32_t link_mbps(const struct rte_eth_link *link)
{
	return link->link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ?
		       0 : link->link_speed;
}

static int wait_link(struct dp_port *port, const struct rte_eth_dev_info *info,
		     uint32_t wait_ms)
{
	struct rte_eth_link link;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint32_t waited = 0, since_start = 0, restarts = 0;

	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port->port_id, &link) != 0)
			link.link_status = RTE_ETH_LINK_DOWN; /* keep waiting */
		if (link.link_status == RTE_ETH_LINK_UP) {
			uint32_t mbps = link_mbps(&link);

			if (mbps != 0)
				SDP_LOG(INFO, DP, "port %u: link up, %u Mbit/s "
					"after %u ms%s", port->port_id, mbps,
					waited, restarts != 0 ?
						" (memif reconnected)" : "");
			else
				SDP_LOG(INFO, DP, "port %u: link up, speed "
					"unknown to the driver, after %u ms%s",
					port->port_id, waited, restarts != 0 ?
						" (memif reconnected)" : "");
			return (int)mbps;
		}
		if (waited >= wait_ms)
			break;
		if (since_start >= MEMIF_RECONNECT_MS &&
		    dp_port_is_memif_client(port)) {
			if (port_intr_op(port->port_id, true,
					 INTR_OP_RESTART) != 0 &&
			    start_port(port->port_id, info,
				       wait_ms - waited) != 0)
				break;
			since_start = 0;
			restarts++;
		}
		nanosleep(&ts, NULL);
		waited += 10;
		since_start += 10;
	}
	SDP_LOG(ERR, DP, "port %u: link still down after %u ms: check that "
		"the peer is running (memif: same socket path, one server and "
		"one client) or raise link_wait_ms=", port->port_id, wait_ms);
	return -ETIMEDOUT;
}

/* Remove a device dp_port_open hot-plugged, after its ethdev closed, so
 * the same devargs can be probed again by a later dp_port_open. */
static void port_unplug(struct dp_port *port)
{
	int rc;

	if (!port->probed || port->dev == NULL)
		return;
	rc = rte_dev_remove(port->dev);
	if (rc != 0)
		SDP_LOG(WARN, DP, "port %u: removing device %s: %s",
			port->port_id, port->cfg.devargs, rte_strerror(-rc));
}

/* "<what>_<port id>", unless a closed port of that id left its pool
 * behind (its mbufs were still referenced): then one not taken. */
static void pool_name(char *name, size_t len, const char *what, uint16_t pid)
{
	static unsigned int kept;

	snprintf(name, len, "%s_%u", what, pid);
	while (rte_mempool_lookup(name) != NULL)
		snprintf(name, len, "%s_%u_%u", what, pid, ++kept);
}

/*
 * RFC 6951: the destination UDP port of one frame travels with its mbuf,
 * in a dynamic field that is valid only while the dynamic flag is set
 * (ol_flags is reset when an mbuf is allocated or received, the field is
 * not).  Registration returns the same offset in every port and process.
 */
static int dp_udp_dport_register(struct dp_port *port)
{
	static const struct rte_mbuf_dynfield field = {
		.name = "sdp_dynfield_udp_dport",
		.size = sizeof(uint16_t),
		.align = __alignof__(uint16_t),
	};
	static const struct rte_mbuf_dynflag flag = {
		.name = "sdp_dynflag_udp_dport",
	};
	int off, bit;

	off = rte_mbuf_dynfield_register(&field);
	bit = rte_mbuf_dynflag_register(&flag);
	if (off < 0 || bit < 0) {
		SDP_LOG(ERR, DP, "port %u: cannot register the mbuf field of "
			"the UDP destination port: %s", port->port_id,
			rte_strerror(rte_errno));
		return -rte_errno;
	}
	port->udp_dport_off = off;
	port->udp_dport_flag = 1ull << bit;
	return 0;
}

static int port_open(const struct dp_config *cfg, struct dp_port **port_p)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct dp_port *port;
	char name[RTE_MEMZONE_NAMESIZE];
	uint16_t pid, nb_rxd = cfg->nb_rxd, nb_txd = cfg->nb_txd;
	uint32_t nb_mbufs;
	int socket, rc, speed;
	unsigned int i;
	bool probed;

	if (cfg->devargs[0] == '\0') {
		SDP_LOG(ERR, DP, "config: dev= is missing: give a vdev such as"
			" dev=net_memif0,role=server,socket=/run/sdp/x.sock"
			",socket-abstract=no or a PCI address");
		return -EINVAL;
	}
	if (cfg->ip_be == 0) {
		SDP_LOG(ERR, DP, "config: ip= is missing: give our address, "
			"e.g. ip=10.0.0.1/24");
		return -EINVAL;
	}
	if (dp_devargs_memif_zc(cfg->devargs) &&
	    !rte_mcfg_get_single_file_segments()) {
		SDP_LOG(ERR, DP, "config: dev=%s: memif zero-copy=yes needs an "
			"EAL started with --single-file-segments, and this "
			"process's EAL is up without it: open this port first "
			"(its own EAL adds it) or give the first port's config "
			"eal=--single-file-segments", cfg->devargs);
		return -EINVAL;
	}
	rc = find_port(cfg, &pid, &probed);
	if (rc != 0)
		return rc;
	socket = rte_eth_dev_socket_id(pid);
	if (socket < 0)
		socket = (int)rte_socket_id();
	port = rte_zmalloc_socket("dp_port", sizeof(*port),
				  RTE_CACHE_LINE_SIZE, socket);
	if (port == NULL)
		return -ENOMEM;
	port->cfg = *cfg;
	port->port_id = pid;
	port->probed = probed;
	port->mtu = cfg->mtu;
	port->udp_encap = cfg->udp_encap;
	port->udp_dport = cfg->udp_remote_port != 0 ? cfg->udp_remote_port
						    : cfg->udp_port;
	port->fctx.ip_be = cfg->ip_be;
	port->fctx.udp_port = cfg->udp_encap ? cfg->udp_port : 0;
	port->net_mask_be =
		rte_cpu_to_be_32(~((1u << (32 - cfg->prefix_len)) - 1));
	if (cfg->udp_encap) {
		rc = dp_udp_dport_register(port);
		if (rc != 0)
			goto err_free_port;
	}

	rc = rte_eth_dev_info_get(pid, &info);
	if (rc != 0)
		goto err_free_port;
	port->dev = info.device;
	port->memif = strcmp(info.driver_name, "net_memif") == 0;
	port->intr_ctl = port->memif ||
			 strcmp(info.driver_name, "net_virtio_user") == 0;
	if (strcmp(info.driver_name, "net_virtio_user") == 0)
		virtio_user_no_sigpipe(port->port_id);
	port->gated = port->memif &&
		      (cfg->memif_gate == 1 ||
		       (cfg->memif_gate == DP_MEMIF_GATE_AUTO &&
			cfg->pace_rate_bps == 0 &&
			cfg->pace_dest_rate_bps == 0));
	if (port->gated)
		dp_gate_install();
	port->memif_zc = port->memif && dp_port_is_memif_client(port) &&
			 dp_devargs_memif_zc(cfg->devargs);
	if (port->memif_zc) {
		rc = dp_memif_zc_hold(cfg->devargs);
		if (rc != 0) {
			port->memif_zc = false;
			goto err_free_port;
		}
	}
	memset(&conf, 0, sizeof(conf));
	detect_offloads(port, &info, &conf);
	rc = choose_crc(port, cfg, &info);
	if (rc != 0)
		goto err_free_port;
	rc = choose_mtu(port, cfg, &info, &conf);
	if (rc != 0)
		goto err_free_port;
	rc = dp_queues_check(port, cfg, info.driver_name, info.max_rx_queues,
			     info.max_tx_queues);
	if (rc != 0)
		goto err_free_port;
	rc = dp_queues_create(port, socket);
	if (rc != 0) {
		rc = -ENOMEM;
		goto err_free_queues;
	}
	rc = rte_eth_dev_configure(pid, port->nb_queues, port->nb_queues,
				   &conf);
	if (rc != 0) {
		SDP_LOG(ERR, DP, "port %u: configure failed: %s", pid,
			rte_strerror(-rc));
		goto err_free_queues;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nb_rxd, &nb_txd);
	if (rc != 0)
		goto err_close;

	nb_mbufs = cfg->nb_mbufs;
	if (nb_mbufs == 0) {
		uint32_t rxd = nb_rxd, txd = nb_txd;

		if (port->memif_zc)
			memif_zc_descs(cfg, &rxd, &txd);
		nb_mbufs = pow2_ge(port->nb_queues *
					   (rxd + txd + cfg->rx_ring +
					    2u * DP_BURST) +
				   (port->nb_queues > 1 ? DP_HANDOFF_RING : 0) +
				   cfg->tx_hold + DP_ARP_HOLD +
				   6 * DP_BURST) - 1;
		nb_mbufs = pool_cap_by_bytes(nb_mbufs,
					     dp_mbuf_data_room(cfg->mtu));
	}
	pool_name(name, sizeof(name), "dp_pool", pid);
	port->pool = rte_pktmbuf_pool_create(name, nb_mbufs, 256, 0,
					     dp_mbuf_data_room(cfg->mtu), socket);
	if (port->pool == NULL) {
		SDP_LOG(ERR, DP, "port %u: cannot create %u mbufs of %u bytes"
			": %s: raise mem= or lower mbufs=/rx_ring=/tx_hold=",
			pid, nb_mbufs, dp_mbuf_data_room(cfg->mtu),
			rte_strerror(rte_errno));
		rc = -ENOMEM;
		goto err_close;
	}
	/* Chained TX (the sg layer's usrsctp chains): headers without data
	 * room for external buffers, as many as the pool has mbufs (a
	 * chained packet holds one of each per segment).  Optional. */
	if (port->tx_ext && !dp_memif_chained_tx_ok(cfg)) {
		SDP_LOG(INFO, DP, "port %u: memif bsize= at or above the mbuf "
			"data room (%u bytes): chained TX off (DPDK %d.%d's "
			"memif would merge frames after a chained one; drop "
			"bsize= to have one chosen)", pid,
			dp_mbuf_data_room(cfg->mtu) - RTE_PKTMBUF_HEADROOM,
			RTE_VER_YEAR, RTE_VER_MONTH);
		port->tx_ext = false;
	}
	if (port->tx_ext) {
		pool_name(name, sizeof(name), "dp_ext", pid);
		port->ext_pool = rte_pktmbuf_pool_create(name, nb_mbufs, 256,
							 0, 0, socket);
		if (port->ext_pool == NULL)
			SDP_LOG(WARN, DP, "port %u: cannot create %u mbufs "
				"for external buffers: %s: chained TX falls "
				"back to copies; raise mem=", pid, nb_mbufs,
				rte_strerror(rte_errno));
	}
	snprintf(name, sizeof(name), "dp_rx_%u", pid);
	port->rx_ring = rte_ring_create(name, cfg->rx_ring, socket,
					RING_F_SP_ENQ | RING_F_SC_DEQ |
						RING_F_EXACT_SZ);
	if (port->rx_ring == NULL) {
		rc = -ENOMEM;
		goto err_free_all;
	}
	rc = rte_eth_rx_queue_setup(pid, 0, nb_rxd, (unsigned int)socket,
				    NULL, port->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(pid, 0, nb_txd,
					    (unsigned int)socket, NULL);
	if (rc != 0) {
		SDP_LOG(ERR, DP, "port %u: queue setup (%u/%u descriptors) "
			"failed: %s", pid, nb_rxd, nb_txd, rte_strerror(-rc));
		goto err_free_all;
	}
	rc = dp_queues_setup(port, nb_rxd, nb_txd, socket);
	if (rc != 0)
		goto err_free_all;
	rc = start_port(pid, &info, cfg->link_wait_ms);
	if (rc != 0) {
		SDP_LOG(ERR, DP, "port %u: start failed: %s", pid,
			rte_strerror(-rc));
		goto err_free_all;
	}
	dp_afp_kick_setup(port, info.driver_name, info.if_index);
	rte_eth_macaddr_get(pid, &port->fctx.mac);
	if (cfg->own_mac || rte_is_zero_ether_addr(&port->fctx.mac) ||
	    (strcmp(info.driver_name, "net_memif") == 0 &&
	     strstr(cfg->devargs, "mac=") == NULL)) {
		/* Some vdevs have no address (net_ring, net_null) or a
		 * random one that two processes can draw alike (memif).  A
		 * locally administered address made from our IPv4 address
		 * is unique on the subnet and stable across restarts. */
		uint8_t *a = port->fctx.mac.addr_bytes;

		a[0] = 0x02;
		a[1] = 0x5d;
		memcpy(a + 2, &cfg->ip_be, 4);
		/* af_packet would set it on the kernel interface: keep the
		 * kernel's, so frames to us are PACKET_OTHERHOST there
		 * (dropped in ip_rcv before a route lookup; veth and the
		 * bridge deliver them to our packet socket all the same) */
		if (strcmp(info.driver_name, "net_af_packet") != 0)
			rte_eth_dev_default_mac_addr_set(pid,
							 &port->fctx.mac);
	}
	port->fctx.ip_cksum_checked = false; /* flags checked per packet */
	/* af_packet's tx_burst is a sendto(): one per poll, not per send */
	port->tx_batch = strcmp(info.driver_name, "net_af_packet") == 0;

	rc = dp_arp_table_init(&port->arp, dp_ms_to_tsc(cfg->arp_ttl_ms),
			       dp_ms_to_tsc(cfg->arp_retry_ms),
			       cfg->arp_retries);
	if (rc == 0)
		rc = dp_arp_table_set_max(&port->arp, cfg->arp_max);
	if (rc != 0)
		goto err_stop;
	for (i = 0; i < cfg->nb_static_arp; i++) {
		struct rte_ether_addr mac;

		memcpy(mac.addr_bytes, cfg->static_arp[i].mac, 6);
		rc = dp_arp_add_static(&port->arp, cfg->static_arp[i].ip_be,
				       &mac);
		if (rc != 0) {
			SDP_LOG(ERR, DP, "port %u: static arp= entry %u does "
				"not fit the neighbour cache (%u entries): "
				"give fewer arp= entries or raise arp_max=",
				pid, i, port->arp.max_entries);
			goto err_stop;
		}
	}
	port->tx_drain_tsc = dp_ms_to_tsc(1) * cfg->tx_drain_us / 1000;
	if (port->tx_drain_tsc == 0)
		port->tx_drain_tsc = 1;

	speed = wait_link(port, &info, cfg->link_wait_ms);
	if (speed < 0) {
		rc = speed;
		goto err_stop;
	}
	rc = dp_tx_pace_setup(port, (uint32_t)speed);
	if (rc != 0)
		goto err_stop;
	{
		char ip[16];

		SDP_LOG(INFO, DP, "port %u (%s): %s/%u mac "
			RTE_ETHER_ADDR_PRT_FMT " mtu %u rxd %u txd %u mbufs "
			"%u queues %u%s", pid, info.driver_name,
			dp_ip_str(cfg->ip_be, ip, sizeof(ip)), cfg->prefix_len,
			RTE_ETHER_ADDR_BYTES(&port->fctx.mac), cfg->mtu,
			nb_rxd, nb_txd, nb_mbufs, port->nb_queues,
			cfg->udp_encap ? " sctp-over-udp" : "");
	}
	*port_p = port;
	return 0;

err_stop:
	dp_afp_kick_release(port);
	rte_eth_dev_stop(pid);
err_free_all:
	/* The device first: closing it frees the mbufs its queues hold,
	 * which must happen before their pools (ours, the pacer's gap
	 * pool) go. */
	rte_eth_dev_close(pid);
	dp_out_release(port);
	dp_queues_free(port);
	rte_ring_free(port->rx_ring);
	rte_mempool_free(port->pool);
	rte_mempool_free(port->ext_pool);
	if (port->memif_zc)
		dp_memif_zc_release();
	dp_arp_table_fini(&port->arp);
	port_unplug(port);
	rte_free(port);
	return rc;
err_close:
	rte_eth_dev_close(pid);
err_free_queues:
	dp_queues_free(port);
err_free_port:
	if (port->memif_zc)
		dp_memif_zc_release();
	dp_arp_table_fini(&port->arp);
	port_unplug(port);
	rte_free(port);
	return rc;
}

static void port_close(struct dp_port *port)
{
	unsigned int held = 0, ext_held = 0;
	struct rte_mbuf *m;
	uint16_t i;

	if (port == NULL)
		return;
	dp_out_drain(port, dp_tsc());
	for (i = 1; i < port->nb_queues; i++)
		dp_port_flush_queue(port, i, dp_tsc());
	/* af_packet: what the kernel left in the TX ring goes now */
	if (port->afp_kick_tsc != 0)
		dp_afp_kick(port, dp_tsc());
	dp_afp_kick_release(port);
	/* a memif peer stops touching the rings before we go */
	dp_bye_leave(port);
	/* Stop and close the device before freeing any pool it may hold
	 * mbufs of: gap frames are indirect mbufs of the pacer's gap pool
	 * that sit in TX descriptors until the PMD frees them. */
	port_intr_op(port->port_id, port->intr_ctl, INTR_OP_CLOSE);
	if (port->memif_zc)
		dp_memif_zc_release();
	dp_out_release(port);
	dp_arp_port_release(port);
	dp_queues_free(port);
	while (rte_ring_sc_dequeue(port->rx_ring, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(port->rx_ring);
	if (port->memif_zc)
		/* DPDK 22.11's zero-copy memif keeps its ring's mbufs */
		SDP_LOG(DEBUG, DP, "port %u: %u mbufs still held at close "
			"(memif zero-copy rings and any the consumer kept)",
			port->port_id, rte_mempool_in_use_count(port->pool));
	else
		held = (unsigned int)rte_mempool_in_use_count(port->pool);
	if (port->ext_pool != NULL)
		ext_held = (unsigned int)rte_mempool_in_use_count(
			port->ext_pool);
	/* Someone still references them (received data usrsctp keeps,
	 * chained packets): freeing the pool would make their later frees
	 * write into freed memory.  The pool stays until exit instead. */
	if (held != 0 || ext_held != 0)
		SDP_LOG(WARN, DP, "port %u: %u mbufs and %u external-buffer "
			"mbufs still referenced at close (an endpoint or the "
			"application kept them: close sg endpoints before "
			"their port): the pools stay allocated until the "
			"process exits, so their late frees stay safe",
			port->port_id, held, ext_held);
	if (held == 0)
		rte_mempool_free(port->pool);
	if (ext_held == 0)
		rte_mempool_free(port->ext_pool);
	dp_arp_table_fini(&port->arp);
	port_unplug(port);
	rte_free(port);
}

int dp_port_open(const struct dp_config *cfg, struct dp_port **port_p)
{
	int ns_fd, rc;

	rc = dp_netns_enter(cfg->netns, &ns_fd);
	if (rc != 0)
		return rc;
	rc = port_open(cfg, port_p);
	dp_netns_leave(ns_fd);
	return rc;
}

void dp_port_close(struct dp_port *port)
{
	int ns_fd;

	if (port == NULL)
		return;
	if (port->users != 0) {
		if (port->close_deferred)
			return;
		SDP_LOG(ERR, DP, "port %u closed while %u endpoints still use "
			"it: close them first (sg_ep_close); the port closes "
			"when the last one lets go", port->port_id,
			port->users);
		port->close_deferred = true;
		dp_eal_hold(); /* dp_stop's dp_eal_fini keeps the EAL up */
		return;
	}
	if (port->gated)
		SDP_LOG(DEBUG, DP, "port %u: the memif burst gate has closed %"
			PRIu64 " times in this process (dp_gate.c)",
			port->port_id, dp_gate_closings());
	if (dp_netns_enter(port->cfg.netns, &ns_fd) != 0)
		SDP_LOG(WARN, DP, "port %u: closing outside its namespace %s",
			port->port_id, port->cfg.netns);
	port_close(port);
	dp_netns_leave(ns_fd);
}

void dp_port_hold(struct dp_port *port)
{
	port->users++;
}

void dp_port_unhold(struct dp_port *port)
{
	if (port->users == 0) {
		SDP_LOG(WARN, DP, "port %u: dp_port_unhold without a hold",
			port->port_id);
		return;
	}
	if (--port->users != 0 || !port->close_deferred)
		return;
	SDP_LOG(WARN, DP, "port %u: its last endpoint closed: closing the "
		"port now (its close was deferred)", port->port_id);
	port->close_deferred = false;
	dp_port_close(port);
	dp_eal_fini(); /* the reference the deferred close held */
}

int dp_start(const struct dp_config *cfg, struct dp_port **port_p)
{
	int rc = dp_eal_init(cfg);

	if (rc != 0)
		return rc;
	rc = dp_port_open(cfg, port_p);
	if (rc != 0)
		dp_eal_fini();
	return rc;
}

void dp_stop(struct dp_port *port)
{
	dp_port_close(port);
	dp_eal_fini();
}

bool dp_port_link_up(struct dp_port *port, uint32_t *speed_mbps_p)
{
	struct rte_eth_link link;
	int ns_fd;

	memset(&link, 0, sizeof(link));
	if (dp_netns_enter(port->cfg.netns, &ns_fd) != 0)
		return false;
	if (rte_eth_link_get_nowait(port->port_id, &link) != 0)
		memset(&link, 0, sizeof(link)); /* unknown: reported down */
	dp_netns_leave(ns_fd);
	if (speed_mbps_p != NULL)
		*speed_mbps_p = link_mbps(&link);
	return link.link_status == RTE_ETH_LINK_UP;
}

bool dp_port_is_memif(const struct dp_port *port)
{
	return port->memif;
}

bool dp_port_is_memif_server(const struct dp_port *port)
{
	return port->memif && !dp_port_is_memif_client(port);
}

uint32_t dp_port_ip(const struct dp_port *port)
{
	return port->fctx.ip_be;
}

void dp_port_mac(const struct dp_port *port, uint8_t mac[6])
{
	memcpy(mac, port->fctx.mac.addr_bytes, 6);
}

uint16_t dp_port_mtu(const struct dp_port *port)
{
	return port->mtu;
}

enum dp_crc_backend dp_port_crc(const struct dp_port *port)
{
	return port->crc;
}

uint16_t dp_port_id(const struct dp_port *port)
{
	return port->port_id;
}

void dp_port_stats(const struct dp_port *port, struct dp_stats *stats)
{
	uint16_t k;
	unsigned int d;

	*stats = port->st;
	dp_pace_stats(port, stats);
	dp_arp_lock((struct dp_port *)port);
	stats->arp_evictions = port->arp.evictions;
	stats->arp_evict_confirmed = port->arp.evictions_confirmed;
	stats->arp_learn_refused = port->arp.learn_refused;
	dp_arp_unlock((struct dp_port *)port);
	stats->memif_zc = port->memif_zc;
	stats->memif_gated = port->gated;
	stats->pool_in_use = rte_mempool_in_use_count(port->pool);
	for (k = 1; k < port->nb_queues; k++) {
		const struct dp_stats *q = &port->xq[k - 1].st;

		stats->rx_pkts += q->rx_pkts;
		stats->rx_bytes += q->rx_bytes;
		stats->tx_pkts += q->tx_pkts;
		stats->tx_bytes += q->tx_bytes;
		stats->delivered += q->delivered;
		stats->crc_sw += q->crc_sw;
		stats->crc_hw += q->crc_hw;
		stats->crc_zero_tx += q->crc_zero_tx;
		stats->crc_zero_rx += q->crc_zero_rx;
		for (d = 0; d < DP_DROP_MAX; d++)
			stats->drops[d] += q->drops[d];
	}
}

static const char *const drop_names[DP_DROP_MAX] = {
	[DP_DROP_SHORT] = "short",
	[DP_DROP_ETHERTYPE] = "ethertype",
	[DP_DROP_GAP_FRAME] = "gap_frame",
	[DP_DROP_IP_HDR] = "ip_hdr",
	[DP_DROP_IP_LEN] = "ip_len",
	[DP_DROP_IP_CKSUM] = "ip_cksum",
	[DP_DROP_IP_FRAG] = "ip_frag",
	[DP_DROP_NOT_FOR_US] = "not_for_us",
	[DP_DROP_PROTO] = "proto",
	[DP_DROP_UDP] = "udp",
	[DP_DROP_SCTP_LEN] = "sctp_len",
	[DP_DROP_SCTP_CRC] = "sctp_crc",
	[DP_DROP_ARP] = "arp",
	[DP_DROP_ARP_UNTRUSTED] = "arp_untrusted",
	[DP_DROP_RX_RING_FULL] = "rx_ring_full",
	[DP_DROP_TX_FULL] = "tx_full",
	[DP_DROP_HOLD_FULL] = "hold_full",
	[DP_DROP_ARP_TIMEOUT] = "arp_timeout",
	[DP_DROP_NO_MBUF] = "no_mbuf",
	[DP_DROP_HOOK] = "hook",
	[DP_DROP_SCTP_CRC_ZERO] = "sctp_crc_zero",
	[DP_DROP_ARP_SENDER] = "arp_sender",
	[DP_DROP_HOLD_DEST_FULL] = "hold_dest_full",
};

const char *dp_drop_name(enum dp_drop reason)
{
	if ((unsigned int)reason >= DP_DROP_MAX)
		return "?";
	return drop_names[reason];
}

void dp_stats_print(const struct dp_stats *s, FILE *f)
{
	unsigned int i;

	fprintf(f, "rx_pkts %" PRIu64 "\nrx_bytes %" PRIu64
		"\ntx_pkts %" PRIu64 "\ntx_bytes %" PRIu64
		"\ndelivered %" PRIu64 "\narp_rx %" PRIu64 "\narp_tx %" PRIu64
		"\ngap_frames %" PRIu64 "\npace_drops %" PRIu64
		"\npace_clamps %" PRIu64
		"\npace_late %" PRIu64
		"\ncrc_sw %" PRIu64 "\ncrc_hw %" PRIu64
		"\ntx_bursts %" PRIu64 "\ntx_held %" PRIu64
		"\nbye_rx %" PRIu64 "\ncrc_zero_tx %" PRIu64
		"\ncrc_zero_rx %" PRIu64 "\narp_evictions %" PRIu64
		"\narp_evict_confirmed %" PRIu64
		"\narp_learn_refused %" PRIu64 "\n",
		s->rx_pkts, s->rx_bytes, s->tx_pkts, s->tx_bytes,
		s->delivered, s->arp_rx, s->arp_tx, s->gap_frames,
		s->pace_drops, s->pace_clamps, s->pace_late, s->crc_sw,
		s->crc_hw, s->tx_bursts, s->tx_held, s->bye_rx,
		s->crc_zero_tx, s->crc_zero_rx, s->arp_evictions,
		s->arp_evict_confirmed, s->arp_learn_refused);
	for (i = 0; i < DP_DROP_MAX; i++)
		if (s->drops[i] != 0)
			fprintf(f, "drop_%s %" PRIu64 "\n",
				drop_names[i], s->drops[i]);
}

int dp_stats_json(const struct dp_stats *s, char *buf, size_t len)
{
	size_t n;
	unsigned int i;
	bool first = true;
	int w;

	w = snprintf(buf, len, "\"rx_pkts\": %" PRIu64 ", \"rx_bytes\": %"
		     PRIu64 ", \"tx_pkts\": %" PRIu64 ", \"tx_bytes\": %"
		     PRIu64 ", \"delivered\": %" PRIu64 ", \"arp_rx\": %"
		     PRIu64 ", \"arp_tx\": %" PRIu64 ", \"gap_frames\": %"
		     PRIu64 ", \"pace_drops\": %" PRIu64
		     ", \"pace_clamps\": %" PRIu64 ", \"pace_late\": %"
		     PRIu64 ", \"pace_rate_changes\": %" PRIu64
		     ", \"pace_dest_drops\": %" PRIu64
		     ", \"pace_dest_overflow\": %" PRIu64
		     ", \"crc_sw\": %" PRIu64 ", \"crc_hw\": %" PRIu64
		     ", \"pace_polls\": %" PRIu64 ", \"tx_bursts\": %" PRIu64
		     ", \"tx_held\": %" PRIu64 ", \"bye_rx\": %" PRIu64
		     ", \"memif_zc\": %" PRIu64 ", \"pool_in_use\": %" PRIu64
		     ", \"crc_zero_tx\": %" PRIu64 ", \"crc_zero_rx\": %" PRIu64
		     ", \"memif_gated\": %" PRIu64
		     ", \"afp_kicks\": %" PRIu64 ", \"afp_kick_bytes\": %"
		     PRIu64 ", \"arp_evictions\": %" PRIu64
		     ", \"arp_evict_confirmed\": %" PRIu64
		     ", \"arp_learn_refused\": %" PRIu64 ", \"drops\": {",
		     s->rx_pkts, s->rx_bytes, s->tx_pkts, s->tx_bytes,
		     s->delivered, s->arp_rx, s->arp_tx, s->gap_frames,
		     s->pace_drops, s->pace_clamps, s->pace_late,
		     s->pace_rate_changes, s->pace_dest_drops,
		     s->pace_dest_overflow, s->crc_sw, s->crc_hw,
		     s->pace_polls, s->tx_bursts, s->tx_held, s->bye_rx,
		     s->memif_zc, s->pool_in_use, s->crc_zero_tx,
		     s->crc_zero_rx, s->memif_gated, s->afp_kicks,
		     s->afp_kick_bytes, s->arp_evictions,
		     s->arp_evict_confirmed, s->arp_learn_refused);
	n = (size_t)w;
	for (i = 0; i < DP_DROP_MAX; i++) {
		if (s->drops[i] == 0)
			continue;
		w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0,
			     "%s\"%s\": %" PRIu64, first ? "" : ", ",
			     drop_names[i], s->drops[i]);
		n += (size_t)w;
		first = false;
	}
	w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "}");
	return (int)(n + (size_t)w);
}
