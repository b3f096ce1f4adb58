/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_mismatch.c - peers with different SEG_SIZE refuse each other (meson
 * test uct-mismatch).
 *
 *   mismatch  a peer process with another SEG_SIZE is not reachable
 *           and ep create refuses it (the error names the variable).
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <unistd.h>

/* The sequence peer with another SEG_SIZE. */
static void mismatch_peer_main(int fd)
{
	setenv("UCX_SCTP_DPDK_SEG_SIZE", "128k", 1);
	fx_seq_peer_main(fd);
}

static int test_mismatch(void)
{
	uint8_t dev[64], ifa[64];
	uct_ep_params_t p = {0};
	ucs_status_t st;
	uct_ep_h ep;
	iface_t a;
	int fd;
	env_t e;

	fd = fx_fork_client(mismatch_peer_main);
	if (fd < 0)
		return 1;
	fx_env_open(&e);
	fx_iface_open(&e, &a, 0);
	if (fx_read_addr(fd, dev, ifa) != 0) {
		fprintf(stderr, "FAIL: peer did not start\n");
		return 1;
	}
	CHECK(!uct_iface_is_reachable(a.iface, (uct_device_addr_t *)dev,
				      (uct_iface_addr_t *)ifa),
	      "a peer with SEG_SIZE=128k is reachable from 64k");
	p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
		       UCT_EP_PARAM_FIELD_IFACE_ADDR;
	p.iface = a.iface;
	p.dev_addr = (const uct_device_addr_t *)dev;
	p.iface_addr = (const uct_iface_addr_t *)ifa;
	st = uct_ep_create(&p, &ep);
	CHECK(st == UCS_ERR_UNREACHABLE, "ep create to a peer with another "
	      "SEG_SIZE: %s", ucs_status_string(st));
	if (st == UCS_OK)
		uct_ep_destroy(ep);
	printf("mismatch: peer SEG_SIZE=128k vs 64k refused (is_reachable 0, "
	       "ep create %s): %s\n", ucs_status_string(st),
	       fx_failures ? "FAIL" : "ok");
	uct_iface_close(a.iface);
	fx_env_close(&e);
	close(fd);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_mismatch);
}
