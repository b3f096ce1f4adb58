/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_config.c - each bad UCX_SCTP_DPDK_* value fails the iface open
 * (meson test uct-config).
 *
 *   config  every bad UCX_SCTP_DPDK_* value (one at a time, the rest
 *           valid) fails the iface open with UCS_ERR_INVALID_PARAM.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h.
 */
#include "uct_fixture.h"

#include <string.h>

static int test_config(void)
{
	static const struct {
		const char *var, *value;
	} bad[] = {
		{"UCX_SCTP_DPDK_IP", ""},
		{"UCX_SCTP_DPDK_IP", "10.77.9.300/24"},
		{"UCX_SCTP_DPDK_MTU", "99999"},
		{"UCX_SCTP_DPDK_STREAMS", "1"},
		{"UCX_SCTP_DPDK_SEG_SIZE", "512"},
		{"UCX_SCTP_DPDK_RX_DESCS", "3"},
		{"UCX_SCTP_DPDK_RATE", "fast"},
		{"UCX_SCTP_DPDK_DP", "bogus=1"},
		{"UCX_SCTP_DPDK_SG", "rto_min_ms=0"},
		{"UCX_SCTP_DPDK_SG", "streams=1"},
		{"UCX_SCTP_DPDK_IDLE_SLEEP_US", "200000"},
		{"UCX_SCTP_DPDK_PROGRESS", "background"},
		{"UCX_SCTP_DPDK_POLL_LCORE", "-5"},
		/* above the default 4 MiB send buffer */
		{"UCX_SCTP_DPDK_SEG_SIZE", "8m"},
		{"UCX_SCTP_DPDK_EXIT_TIMEOUT", "-1s"},
		/* above its range, then not below rto_min_ms (100 ms) */
		{"UCX_SCTP_DPDK_SACK_HOLD_US", "200000"},
		{"UCX_SCTP_DPDK_SACK_HOLD_US", "100000"},
		{"UCX_SCTP_DPDK_SG", "sack_hold_us=-1"},
		/* a size or inf, never auto */
		{"UCX_SCTP_DPDK_RX_QUEUE_BYTES", "auto"},
	};
	char prefix[96];
	size_t i;

	snprintf(prefix, sizeof(prefix), "sdp-%s-cfg", fx_job);
	for (i = 0; i < SDP_ARRAY_SIZE(bad); i++) {
		uct_iface_params_t p = {0};
		uct_iface_h iface;
		ucs_status_t st;
		env_t e;

		/* A valid configuration with one field broken. */
		fx_set_common_env("net_null0", "10.77.9.1/24", prefix);
		unsetenv("UCX_SCTP_DPDK_MTU");
		unsetenv("UCX_SCTP_DPDK_STREAMS");
		unsetenv("UCX_SCTP_DPDK_SEG_SIZE");
		unsetenv("UCX_SCTP_DPDK_RX_DESCS");
		unsetenv("UCX_SCTP_DPDK_RATE");
		unsetenv("UCX_SCTP_DPDK_DP");
		unsetenv("UCX_SCTP_DPDK_SG");
		unsetenv("UCX_SCTP_DPDK_PROGRESS");
		unsetenv("UCX_SCTP_DPDK_POLL_LCORE");
		unsetenv("UCX_SCTP_DPDK_EXIT_TIMEOUT");
		unsetenv("UCX_SCTP_DPDK_SACK_HOLD_US");
		unsetenv("UCX_SCTP_DPDK_RX_QUEUE_BYTES");
		setenv(bad[i].var, bad[i].value, 1);
		fx_env_open(&e);
		p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
			       UCT_IFACE_PARAM_FIELD_DEVICE;
		p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
		p.mode.device.tl_name = UCT_SCTP_DPDK_NAME;
		p.mode.device.dev_name = UCT_SCTP_DPDK_DEV_NAME;
		st = uct_iface_open(e.md, e.worker, &p, e.config, &iface);
		CHECK(st == UCS_ERR_INVALID_PARAM, "%s=%s: iface open %s",
		      bad[i].var, bad[i].value, ucs_status_string(st));
		if (st == UCS_OK)
			uct_iface_close(iface);
		fx_env_close(&e);
	}
	unsetenv("UCX_SCTP_DPDK_PROGRESS");
	unsetenv("UCX_SCTP_DPDK_POLL_LCORE");
	unsetenv("UCX_SCTP_DPDK_EXIT_TIMEOUT");
	unsetenv("UCX_SCTP_DPDK_SACK_HOLD_US");
	unsetenv("UCX_SCTP_DPDK_RX_QUEUE_BYTES");
	/* Valid values alone must not trip the cross-field checks. */
	{
		static char text[16384];
		/* static: ~48 KB (static ARP table), not for the stack. */
		static struct dp_config dp;
		struct sg_config sg;
		ucs_status_t st;
		env_t e;

		fx_set_common_env("net_null0", "10.77.9.1/24", prefix);
		setenv("UCX_SCTP_DPDK_SEG_SIZE", "1k", 1);
		setenv("UCX_SCTP_DPDK_RX_DESCS", "16", 1);
		setenv("UCX_SCTP_DPDK_SG", "rto_min_ms=2000 rto_initial_ms=3000 "
		       "rto_max_ms=4000", 1);
		fx_env_open(&e);
		st = uct_sctp_dpdk_config_build(
			ucs_derived_of(e.config, uct_sctp_dpdk_iface_config_t),
			&dp, &sg, text, sizeof(text));
		CHECK(st == UCS_OK && sg.rx_buf_bytes == 1024 &&
			      sg.rx_descs == 16 && sg.rto_min_ms == 2000,
		      "valid config rejected: %s", ucs_status_string(st));
		/* by default no SACK is held past the poll that owes it */
		CHECK(sg.sack_hold_us == 0,
		      "SACK_HOLD_US's default gave sack_hold_us=%u, not 0",
		      sg.sack_hold_us);
		fx_env_close(&e);
		setenv("UCX_SCTP_DPDK_SACK_HOLD_US", "auto", 1);
		fx_env_open(&e);
		st = uct_sctp_dpdk_config_build(
			ucs_derived_of(e.config, uct_sctp_dpdk_iface_config_t),
			&dp, &sg, text, sizeof(text));
		CHECK(st == UCS_OK &&
			      sg.sack_hold_us == UCT_SCTP_DPDK_SACK_HOLD_AUTO_US,
		      "SACK_HOLD_US=auto gave sack_hold_us=%u, not %u",
		      sg.sack_hold_us, UCT_SCTP_DPDK_SACK_HOLD_AUTO_US);
		fx_env_close(&e);
		/* SACK_HOLD_US wins over SG's; 0 turns the hold off */
		setenv("UCX_SCTP_DPDK_SG", "sack_hold_us=50", 1);
		setenv("UCX_SCTP_DPDK_SACK_HOLD_US", "0", 1);
		fx_env_open(&e);
		st = uct_sctp_dpdk_config_build(
			ucs_derived_of(e.config, uct_sctp_dpdk_iface_config_t),
			&dp, &sg, text, sizeof(text));
		CHECK(st == UCS_OK && sg.sack_hold_us == 0,
		      "SACK_HOLD_US=0 after SG sack_hold_us=50: %s, %u",
		      ucs_status_string(st), sg.sack_hold_us);
		fx_env_close(&e);
		unsetenv("UCX_SCTP_DPDK_SACK_HOLD_US");
	}
	/* The EAL was never started by a rejected config. */
	CHECK(uct_sctp_dpdk_ctx_peek() == NULL, "a context was created");
	printf("config: %zu bad values rejected: %s\n", SDP_ARRAY_SIZE(bad),
	       fx_failures ? "FAIL" : "ok");
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_config);
}
