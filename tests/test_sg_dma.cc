/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sg_dma.cc - transmit over a port that reads packets by IOVA.
 *
 * A virtio-user port hands each descriptor's address to its vhost-user
 * backend, which translates it through the memory regions this process
 * shared (DPDK's memory, one memfd with --no-huge --single-file-segments):
 * a buffer outside them -- usrsctp's heap, a zero-copy sender's memory --
 * cannot be read there, as a NIC behind an IOMMU cannot DMA from memory
 * nobody mapped.  So every packet sent there must lie in DPDK memory.
 *
 *   sender child: net_virtio_user0 (10.78.1.2), sg defaults (tx_chain_min
 *                 1024: chained TX wherever the port allows it)
 *   echo child:   net_vhost0 (10.78.1.1, the socket's server)
 *
 * The sender sends messages of 64 KiB (full-sized packets with DATA, the
 * ones sg would chain) with a known pattern; the echo child checks each
 * and sends it back; the sender checks every echoed byte.  A packet
 * chained to an external buffer does not arrive (vhost cannot translate
 * its address; SCTP's retransmissions are chained again), and the test
 * fails at its deadline.
 *
 * Needs root (/run/sdp).  No hugepages: virtio-user shares --no-huge
 * memory when the EAL keeps it in one memfd (--single-file-segments).
 *
 * With SDP_SG_DMA_SOCKS=ECHO_SOCK,SENDER_SOCK both children are
 * virtio-user clients of those sockets, and whatever serves them carries
 * the frames (two ports of the vhost testbed's Open vSwitch, for a manual
 * run; the associations did not come up that way when last tried).
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dp_internal.h"
#include "sg_child_pair.h"
#include "sg_internal.h"

#define CHECK SG_CHILD_CHECK

namespace {

using sgpair::now_s;

const uint16_t SCTP_PORT = 7100;
const uint32_t MSGS = 64;
const uint32_t MSG_BYTES = 65536 - 64;
const double DEADLINE_S = 60;

std::string g_job, g_sockdir;
/* SDP_SG_DMA_SOCKS: the two vhost-user sockets of a switch (echo,
 * sender); empty: the echo child is the net_vhost backend itself */
std::string g_sock_echo, g_sock_sender;

bool via_switch()
{
	return !g_sock_echo.empty();
}

uint8_t pattern(uint32_t seq, uint32_t j)
{
	return (uint8_t)(seq * 13u + j * 7u + (j >> 8));
}

struct node {
	dp_port *port;
	sg_ep *ep;
	double end;
};

void node_up(node &n, bool vhost)
{
	char dpc[768];
	dp_config *dcfg = new dp_config;
	sg_config scfg;
	std::string dev;

	if (via_switch())
		dev = "net_virtio_user0,path=" +
		      (vhost ? g_sock_echo : g_sock_sender);
	else if (vhost)
		dev = "net_vhost0,iface=" + g_sockdir + "/vhost.sock";
	else
		dev = "net_virtio_user0,path=" + g_sockdir + "/vhost.sock";
	snprintf(dpc, sizeof(dpc),
		 "dev=%s ip=10.78.1.%d/24 prefix=sdp-%s-%s mem=256 "
		 "eal=--single-file-segments idle_sleep_us=20 "
		 "link_wait_ms=15000",
		 dev.c_str(), vhost ? 1 : 2, g_job.c_str(),
		 vhost ? "vhost" : "virtio");
	CHECK(dp_config_parse(dpc, dcfg) == 0);
	CHECK(dp_eal_init(dcfg) == 0);
	CHECK(dp_port_open(dcfg, &n.port) == 0);
	CHECK(sg_config_parse("port=7100", &scfg) == 0);
	CHECK(scfg.tx_chain_min_bytes != 0);
	CHECK(sg_ep_open(n.port, &scfg, &n.ep) == 0);
	n.end = now_s() + DEADLINE_S;
}

void node_poll(node &n)
{
	sg_event ev;

	CHECK(now_s() < n.end);
	sg_poll(n.ep, dp_tsc());
	while (sg_next_event(n.ep, &ev) == 0)
		CHECK(ev.type == SG_EV_UP);
}

/* A message as its receiver got it: one piece or several. */
bool msg_ok(const sg_msg_desc *m, uint32_t *seq_p)
{
	uint32_t off = 0, seq = 0;

	if (m->msg_len != MSG_BYTES)
		return false;
	for (const sg_msg_desc *d = m; d != nullptr; d = d->next) {
		for (uint32_t i = 0; i < d->len; i++, off++) {
			if (off < 4) {
				seq |= (uint32_t)d->data[i] << (8 * off);
				continue;
			}
			if (d->data[i] != pattern(seq, off))
				return false;
		}
	}
	*seq_p = seq;
	return off == MSG_BYTES;
}

void node_stats(node &n, const char *who)
{
	fprintf(stderr, "%s: %" PRIu64 " packets out, %" PRIu64 " chained "
		"(%" PRIu64 " payload bytes by reference), %" PRIu64
		" copied\n", who, n.ep->st.pkts_out, n.ep->st.tx_chain_pkts,
		n.ep->st.tx_chain_ref_bytes, n.ep->st.tx_copy_bytes);
}

void echo_main()
{
	node n;
	uint32_t got = 0;
	std::vector<sg_msg_desc *> backlog;

	node_up(n, true);
	while (got < MSGS || !backlog.empty()) {
		sg_msg_desc *msgs[16];
		unsigned int k, i;
		uint32_t seq;

		node_poll(n);
		k = sg_recv(n.ep, msgs, 16);
		for (i = 0; i < k; i++) {
			CHECK(msg_ok(msgs[i], &seq));
			backlog.push_back(msgs[i]);
			got++;
		}
		while (!backlog.empty()) {
			sg_msg_desc *m = backlog.front();
			std::vector<iovec> iov;
			int rc;

			for (sg_msg_desc *d = m; d != nullptr; d = d->next)
				iov.push_back({ d->data, d->len });
			rc = sg_send(n.ep, m->assoc, m->stream, 0, 0,
				     iov.data(), (int)iov.size());
			if (rc == -EAGAIN)
				break;
			CHECK(rc == 0);
			sg_msg_release(m);
			backlog.erase(backlog.begin());
		}
	}
	/* until the sender has every echo (it closes first) */
	while (dp_port_link_up(n.port, nullptr) && now_s() < n.end)
		sg_poll(n.ep, dp_tsc());
	node_stats(n, via_switch() ? "echo (virtio-user)" : "echo (vhost)");
	_exit(0);
}

bool g_zc;		/* the sender uses sg_send_zc */
uint32_t g_zc_done;	/* its completions with status 0 */

void zc_done(void *, int status)
{
	CHECK(status == 0);
	g_zc_done++;
}

void sender_main()
{
	node n;
	sg_assoc_t assoc = 0;
	uint32_t sent = 0, back = 0;
	std::vector<uint8_t> msg(MSG_BYTES);
	std::vector<uint8_t> seen(MSGS, 0);
	/* zero-copy: each message stays in its own heap buffer (outside
	 * DPDK memory) until its completion */
	std::vector<std::vector<uint8_t>> zbuf(MSGS);

	node_up(n, false);
	CHECK(sg_connect(n.ep, htonl(0x0a4e0101u), SCTP_PORT, &assoc) == 0);
	while (!sg_assoc_up(n.ep, assoc))
		node_poll(n);
	while (back < MSGS) {
		sg_msg_desc *msgs[16];
		unsigned int k, i;
		uint32_t seq;

		node_poll(n);
		while (sent < MSGS) {
			iovec iov = { msg.data(), msg.size() };
			int rc;

			if (g_zc) {
				zbuf[sent].resize(MSG_BYTES);
				iov.iov_base = zbuf[sent].data();
			}
			memcpy(iov.iov_base, &sent, 4);
			for (uint32_t j = 4; j < MSG_BYTES; j++)
				((uint8_t *)iov.iov_base)[j] = pattern(sent, j);
			if (g_zc)
				rc = sg_send_zc(n.ep, assoc,
						(uint16_t)(sent % 4), 0, 0,
						&iov, 1, 0, zc_done, nullptr);
			else
				rc = sg_send(n.ep, assoc,
					     (uint16_t)(sent % 4), 0, 0, &iov,
					     1);
			if (rc == -EAGAIN)
				break;
			CHECK(rc == 0);
			sent++;
		}
		k = sg_recv(n.ep, msgs, 16);
		for (i = 0; i < k; i++) {
			CHECK(msg_ok(msgs[i], &seq));
			CHECK(seq < MSGS && !seen[seq]);
			seen[seq] = 1;
			back++;
			sg_msg_release(msgs[i]);
		}
	}
	while (g_zc && g_zc_done < MSGS)
		node_poll(n);
	node_stats(n, "sender (virtio-user)");
	/* every packet it sent lies in DPDK memory */
	CHECK(n.ep->st.tx_chain_pkts == 0);
	_exit(0);
}

} /* namespace */

void run_pair(bool zc)
{
	sgpair::SgChildPair pair;

	const char *socks = getenv("SDP_SG_DMA_SOCKS");

	g_zc = zc;
	if (socks != nullptr && *socks != '\0') {
		std::string s(socks);
		size_t comma = s.find(',');

		ASSERT_NE(std::string::npos, comma)
			<< "SDP_SG_DMA_SOCKS='" << s << "': expected "
			<< "ECHO_SOCK,SENDER_SOCK";
		g_sock_echo = s.substr(0, comma);
		g_sock_sender = s.substr(comma + 1);
	}
	ASSERT_NO_FATAL_FAILURE(pair.setup(zc ? "dmazc" : "dma",
					   { "vhost", "virtio" }));
	g_job = pair.job;
	g_sockdir = pair.sockdir;
	/* net_vhost is the socket's server: the client needs it there; on a
	 * switch the switch is the server of both sockets (they exist) */
	pair.run(echo_main, via_switch() ? g_sock_echo : "vhost.sock",
		 sender_main, DEADLINE_S + 30);
	EXPECT_EQ(0, pair.rc_client)
		<< "sender (-1: killed at the deadline)";
	EXPECT_EQ(0, pair.rc_server)
		<< "echo child (-1: killed at the deadline)";
}

TEST(SgDma, VirtioUserPeerGetsEveryPacketFromDpdkMemory)
{
	run_pair(false);
}

/* sg_send_zc references the caller's heap buffers in usrsctp's mbufs: they
 * too must be copied into DPDK memory before a virtio-user port sees them. */
TEST(SgDma, ZeroCopySendFromHeapReachesAVirtioUserPeer)
{
	run_pair(true);
}
