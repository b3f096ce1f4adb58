/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_bigseg.c - SEG_SIZE above 64 KiB carries whole AMs (meson
 * test uct-bigseg).
 *
 *   bigseg  SEG_SIZE=256k: 200 KiB bcopy AMs arrive whole and intact.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define BIG_MSGS 60
#define BIG_LEN (200 << 10)

static size_t big_pack(void *dest, void *arg)
{
	return fx_seq_pack(dest, BIG_LEN, *(uint32_t *)arg);
}

static int test_bigseg(void)
{
	uint8_t dev[64], ifa[64];
	uint32_t want = BIG_MSGS, report[4] = {0, 0, 0, 0}, seq;
	double deadline;
	ssize_t n;
	iface_t a;
	int fd;
	uct_ep_h ep;
	uct_iface_attr_t attr;
	env_t e;

	setenv("UCX_SCTP_DPDK_SEG_SIZE", "256k", 1);
	setenv("UCX_SCTP_DPDK_RX_DESCS", "64", 1);
	fd = fx_fork_client(fx_seq_peer_main);
	if (fd < 0)
		return 1;
	{
		struct timeval tv = {90, 0}; /* the peer reports by then */

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	CHECK_OK(uct_iface_query(a.iface, &attr), "query");
	CHECK(attr.cap.am.max_bcopy >= BIG_LEN, "max_bcopy %zu",
	      attr.cap.am.max_bcopy);
	if (fx_seq_peer_addr(fd, dev, ifa, want) != 0)
		return 1;
	ep = fx_ep_to(&a, dev, ifa);
	deadline = fx_now_s() + 60;
	for (seq = 0; seq < BIG_MSGS && fx_now_s() < deadline;) {
		n = uct_ep_am_bcopy(ep, SEQ_AM_ID, big_pack, &seq, 0);
		if (n == BIG_LEN) {
			seq++;
			continue;
		}
		CHECK(n == UCS_ERR_NO_RESOURCE, "am_bcopy returned %zd", n);
		if (n != UCS_ERR_NO_RESOURCE)
			break;
		uct_worker_progress(e.worker);
	}
	while (uct_ep_flush(ep, 0, NULL) == UCS_INPROGRESS &&
	       fx_now_s() < deadline)
		uct_worker_progress(e.worker);
	if (fx_seq_peer_report(fd, want, report, 90 * 1000) != 0)
		CHECK(0, "no report from the peer");
	CHECK(report[0] == BIG_MSGS && report[1] == 0 && report[3] == 0,
	      "peer got %u of %u 200 KiB AMs, %u out of order, %u corrupted",
	      report[0], BIG_MSGS, report[1], report[3]);
	printf("bigseg: SEG_SIZE=256k, %u AMs of %u bytes sent, peer got %u "
	       "(%u corrupted): %s\n", seq, BIG_LEN, report[0], report[3],
	       fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep);
	uct_iface_close(a.iface);
	fx_env_close(&e);
	close(fd);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_bigseg);
}
