/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_noerrh.c - the peer process dies while the iface has NO error
 * handler, as in ucx_perftest (meson test uct-noerrh).
 *
 * UCX itself reports an unhandled endpoint error only at debug level
 * (uct_iface_handle_ep_err), so such an application waited for its dead
 * peer without a word from the transport when the association was lost
 * by SCTP's own retransmissions (bridge fabrics: sg's memif peer_gone line
 * is the only other one, and only on memif).  The survivor must now log
 * one UCX warning naming the ep, the missing handler and the fix, within
 * NOERRH_S of the kill, exactly once for its one ep however long it goes
 * on progressing; a send on the ep fails at once; closing returns.
 *
 * Fixture: uct_fixture.h (the echo peer, killed by PID).
 */
#include "uct_fixture.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <ucs/debug/log.h>

#define NOERRH_S 10.0	/* peer_gone_ms 1000 + the memif link's down */
#define NOERRH_MSGS 64

static unsigned warn_lines;	/* "no error handler" warnings seen */

static ucs_log_func_rc_t
noerrh_log(const char *file, unsigned line, const char *function,
	   ucs_log_level_t level,
	   const ucs_log_component_config_t *comp_conf,
	   const char *message, va_list ap)
{
	char buf[512];

	(void)file;
	(void)line;
	(void)function;
	(void)comp_conf;
	if (level != UCS_LOG_LEVEL_WARN)
		return UCS_LOG_FUNC_RC_CONTINUE;
	vsnprintf(buf, sizeof(buf), message, ap);
	if (strstr(buf, "sctp_dpdk") != NULL &&
	    strstr(buf, "no error handler") != NULL &&
	    strstr(buf, "UCT_IFACE_PARAM_FIELD_ERR_HANDLER") != NULL)
		warn_lines++;
	return UCS_LOG_FUNC_RC_CONTINUE; /* printed as well */
}

static int test_noerrh(void)
{
	uint8_t dev[64], ifa[64], buf[64];
	double t_kill, t_warn = -1;
	unsigned sent = 0;
	ucs_status_t st;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	int fd;

	fd = fx_fork_client(fx_echo_peer_main);
	if (fd < 0)
		return 1;
	fx_env_open(&e);
	fx_iface_no_err_handler = 1;
	fx_iface_open(&e, &t, 0);
	if (fx_swap_addr(fd, &t, dev, ifa) != 0)
		return 1;
	ucs_log_push_handler(noerrh_log);
	ep = fx_ep_to(&t, dev, ifa);
	memset(buf, 0x33, sizeof(buf));
	/* echoed traffic first: the association is up both ways */
	for (sent = 0; sent < NOERRH_MSGS; sent++) {
		uint16_t id;

		memcpy(&id, t.iface_addr, 2);
		fx_send_am(&e, ep, (int)(sent % 4), rte_be_to_cpu_16(id),
			   (uint16_t)sent, 16 + 20 * sent);
	}
	CHECK(fx_wait_count(&e, &t, NOERRH_MSGS), "%u of %u echoes",
	      t.rx_count, NOERRH_MSGS);
	CHECK(warn_lines == 0, "warned before the peer died");
	kill(fx_peer_pid, SIGKILL);
	waitpid(fx_peer_pid, NULL, 0);
	fx_peer_pid = 0;
	t_kill = fx_now_s();
	/* keep progressing well past the warning: still one line */
	while (fx_now_s() < t_kill + NOERRH_S + 5) {
		uct_worker_progress(e.worker);
		if (warn_lines != 0 && t_warn < 0)
			t_warn = fx_now_s() - t_kill;
		if (t_warn >= 0 && fx_now_s() > t_kill + t_warn + 3)
			break;
	}
	printf("noerrh: %u warning(s), the first %.2f s after the kill\n",
	       warn_lines, t_warn);
	CHECK(t_warn >= 0 && t_warn < NOERRH_S, "no \"no error handler\" "
	      "warning within %.0f s of the peer's death (%.1f)", NOERRH_S,
	      t_warn);
	CHECK(warn_lines == 1, "%u warnings for one ep, want 1", warn_lines);
	st = uct_ep_am_short(ep, AM_ID, 0, buf, 8);
	CHECK(st != UCS_OK && st != UCS_ERR_NO_RESOURCE,
	      "am_short on the failed ep: %s", ucs_status_string(st));
	ucs_log_pop_handler();
	uct_ep_destroy(ep);
	uct_iface_close(t.iface);
	fx_env_close(&e);
	printf("noerrh: %s\n", fx_failures ? "FAIL" : "ok");
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_noerrh);
}
