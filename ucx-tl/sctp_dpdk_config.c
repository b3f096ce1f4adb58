/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp_dpdk_config.c - UCX_SCTP_DPDK_* settings -> validated dataplane and sctp
 * configurations.  Each variable becomes one key=value token that is
 * judged alone first, so an error names the variable that caused it; the
 * joined text is then parsed once more for cross-field checks, and kept to
 * compare the settings of later ifaces with the port's.
 *
 * Several ports: DEVARGS is a ';'-separated list, one UCT device per
 * entry (sdp0, sdp1, ...).  The per-port variables (DEVARGS, IP, MTU,
 * SCTP_PORT, RATE, DP) take one entry for every port or one per port;
 * ';' never occurs in DPDK devargs (',' and '=' do).  Device K's dp and
 * sg configurations are built from entry K of each.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/sys/string.h>
#include <ucs/debug/log.h>
#include <ucs/sys/math.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One configuration token and the variable it came from. */
/*
 * The transport's SCTP defaults, applied before the user's
 * UCX_SCTP_DPDK_SG (the sctp layer's own defaults suit a generic socket).
 * sack_delay_ms=5 (SACK every second DATA packet, the odd one after at
 * most 5 ms) with the sctp layer's sack_immediate=1: each message's last
 * packet carries the I bit (RFC 7053) and is SACKed at once, so neither a
 * sender's flush (waits for that SACK) nor a receiver's (sg_assoc_quiet:
 * no SACK owed) waits out the delay, while a bulk transfer sends
 * half the SACK packets of sack_delay_ms=0 (each one a dataplane packet
 * each way: mbuf, CRC, ring, usrsctp input).  5 ms is only the safety
 * net, and leaves an SG rto_min_ms down to 6 valid.
 *
 * rto_min_ms: MPI's request/response messages end in a packet with
 * nothing behind it to trigger a fast retransmit, so losing it costs a
 * whole RTO (>= rto_min; usrsctp 0.9.5 has no tail loss probe).  Where
 * every polling thread has a CPU of its own (IDLE_SLEEP_US resolves to 0,
 * busy polling), a peer acknowledges within a round trip and rto_min_ms=20
 * won seed 000's loss ping-pong on a quiet machine by 1.6-3.5x at 1-2%
 * loss and cost nothing measurable at 0% (docs/BENCHMARKS.md, "The
 * seeds' experiments").  Where ranks share CPUs
 * (back-off), a descheduled peer cannot acknowledge for tens of ms: 20 ms
 * gave 2-5x the T3 timeouts there (spurious ones even at 0% loss), so the
 * sctp layer's 100 ms stays.  With the lower minimum the timer backs off
 * from 20 ms, so a 1.5 s outage of a path (test `rails`, rail down/up
 * under a striped job) already cost 7-8 timeouts and path_max_rxt=7 or 8
 * ended the association ("Endpoint timeout"): path_max_rxt=10 with
 * rto_max_ms=1000 rides out ~5 s of outage and still declares a dead peer
 * after ~6.3 s (20+40+...+640 ms + 5 x 1 s), as the sctp layer's
 * 100/3000 ms with 5 retransmissions did (~6.1 s).
 *
 * sack_hold_us (SACK_HOLD_US): with SACKs at once, each one-way message
 * cost the receiver a second burst (on af_packet a second ~6 us sendto)
 * before its AM handler ran; held, the SACK leaves in the reply's burst,
 * after it.  A flush (sg_assoc_quiet) releases it at once, so a flush
 * still means "acknowledged and no SACK owed".
 */
#define UCT_SCTP_DPDK_SG_DEFAULTS                                             \
	"sack_delay_ms=5 sack_immediate=1 sack_hold_us="                     \
	UCS_PP_MAKE_STRING(UCT_SCTP_DPDK_SACK_HOLD_AUTO_US)
#define UCT_SCTP_DPDK_SG_DEFAULTS_BUSY                                        \
	"rto_min_ms=20 rto_max_ms=1000 path_max_rxt=10"

/* The transport's SCTP defaults for this configuration. */
static const char *
uct_sctp_dpdk_sg_defaults(const uct_sctp_dpdk_iface_config_t *config)
{
	return uct_sctp_dpdk_config_idle_sleep_us(config) == 0 ?
		       UCT_SCTP_DPDK_SG_DEFAULTS " "
		       UCT_SCTP_DPDK_SG_DEFAULTS_BUSY :
		       UCT_SCTP_DPDK_SG_DEFAULTS;
}

typedef struct {
	const char *var;   /* name after UCX_SCTP_DPDK_ */
	char text[640];	   /* "key=value" tokens; "" = not given */
} uct_sctp_dpdk_token_t;

enum { UCT_SCTP_DPDK_DP_TOKENS = 9, UCT_SCTP_DPDK_SG_TOKENS = 11 };

/* The per-port variables, in the order they are checked. */
static const char *const uct_sctp_dpdk_list_vars[] = {
	"DEVARGS", "IP", "MTU", "SCTP_PORT", "RATE", "DP",
};

static const char *
uct_sctp_dpdk_list_value(const uct_sctp_dpdk_iface_config_t *config,
			 const char *var)
{
	if (!strcmp(var, "DEVARGS"))
		return config->devargs;
	if (!strcmp(var, "IP"))
		return config->ip;
	if (!strcmp(var, "MTU"))
		return config->mtu;
	if (!strcmp(var, "SCTP_PORT"))
		return config->sctp_port;
	if (!strcmp(var, "RATE"))
		return config->rate;
	return config->dp_extra;
}

unsigned uct_sctp_dpdk_config_list_count(const char *list)
{
	unsigned n = 1;

	for (; *list != '\0'; list++)
		n += *list == UCT_SCTP_DPDK_LIST_SEP;
	return n;
}

void uct_sctp_dpdk_config_list_entry(const char *list, unsigned index,
				     char *buf, size_t len)
{
	const char *end;
	size_t n;

	/* One entry stands for every port. */
	if (uct_sctp_dpdk_config_list_count(list) == 1)
		index = 0;
	for (; index > 0 && list != NULL; index--) {
		list = strchr(list, UCT_SCTP_DPDK_LIST_SEP);
		if (list != NULL)
			list++;
	}
	if (list == NULL) {
		buf[0] = '\0';
		return;
	}
	end = strchr(list, UCT_SCTP_DPDK_LIST_SEP);
	n = end != NULL ? (size_t)(end - list) : strlen(list);
	if (n >= len)
		n = len - 1;
	memcpy(buf, list, n);
	buf[n] = '\0';
}

unsigned
uct_sctp_dpdk_config_num_ports(const uct_sctp_dpdk_iface_config_t *config)
{
	/* SELF_WIRE: one device made of a memif pair (sctp_dpdk_ctx.c) */
	return config->self_wire ? 1 :
				   uct_sctp_dpdk_config_list_count(config->devargs);
}

/* FAILOVER groups every port into the one device sdp0. */
unsigned
uct_sctp_dpdk_config_num_devs(const uct_sctp_dpdk_iface_config_t *config)
{
	return uct_sctp_dpdk_config_failover(config) ?
		       1 : uct_sctp_dpdk_config_num_ports(config);
}

/* Every list has one entry or one per port, none empty, IP one per port;
 * at most UCT_SCTP_DPDK_MAX_DEVS ports. */
static ucs_status_t
uct_sctp_dpdk_config_check_lists(const uct_sctp_dpdk_iface_config_t *config)
{
	unsigned ndevs = uct_sctp_dpdk_config_num_ports(config), n, k;
	char entry[UCT_SCTP_DPDK_CONFIG_TEXT_MAX];
	const char *var, *list;
	size_t i;

	if (ndevs > UCT_SCTP_DPDK_MAX_DEVS) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "DEVARGS lists %u "
			  "ports: at most %u are supported, give fewer",
			  ndevs, UCT_SCTP_DPDK_MAX_DEVS);
		return UCS_ERR_INVALID_PARAM;
	}
	for (i = 0; i < ucs_static_array_size(uct_sctp_dpdk_list_vars); i++) {
		var = uct_sctp_dpdk_list_vars[i];
		list = uct_sctp_dpdk_list_value(config, var);
		n = uct_sctp_dpdk_config_list_count(list);
		if (n != 1 && n != ndevs) {
			ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "%s has %u "
				  "';'-separated entries and " UCT_SCTP_DPDK_ENV
				  "DEVARGS %u ports: give one value for every "
				  "port or one per port", var, n, ndevs);
			return UCS_ERR_INVALID_PARAM;
		}
		if (!strcmp(var, "IP") && ndevs > 1 && n == 1) {
			ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "IP='%s' is "
				  "one address for %u ports: give one address "
				  "per port, e.g. 10.77.1.1/24;10.77.2.1/24",
				  list, ndevs);
			return UCS_ERR_INVALID_PARAM;
		}
		for (k = 0; n > 1 && k < n; k++) {
			uct_sctp_dpdk_config_list_entry(list, k, entry,
							sizeof(entry));
			if (entry[0] == '\0') {
				ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "%s "
					  "entry %u is empty ('%s'): give a "
					  "value for every port", var, k,
					  list);
				return UCS_ERR_INVALID_PARAM;
			}
		}
	}
	return UCS_OK;
}

static void
uct_sctp_dpdk_tokens(const uct_sctp_dpdk_iface_config_t *config,
		     unsigned dev, uct_sctp_dpdk_token_t *dp,
		     uct_sctp_dpdk_token_t *sg)
{
	char e[600]; /* an entry; a token holds "key=" and it */
	unsigned long sctp_port;
	char *end;

	memset(dp, 0, sizeof(*dp) * UCT_SCTP_DPDK_DP_TOKENS);
	memset(sg, 0, sizeof(*sg) * UCT_SCTP_DPDK_SG_TOKENS);
	dp[0].var = "DEVARGS";
	uct_sctp_dpdk_config_list_entry(config->devargs, dev, e, sizeof(e));
	snprintf(dp[0].text, sizeof(dp[0].text), "dev=%s", e);
	dp[1].var = "IP";
	uct_sctp_dpdk_config_list_entry(config->ip, dev, e, sizeof(e));
	if (e[0] != '\0')
		snprintf(dp[1].text, sizeof(dp[1].text), "ip=%s", e);
	dp[2].var = "MTU";
	uct_sctp_dpdk_config_list_entry(config->mtu, dev, e, sizeof(e));
	snprintf(dp[2].text, sizeof(dp[2].text), "mtu=%s", e);
	dp[3].var = "PREFIX";
	if (config->prefix[0] != '\0')
		snprintf(dp[3].text, sizeof(dp[3].text), "prefix=%s",
			 config->prefix);
	dp[4].var = "LCORE";
	if (config->lcore >= 0)
		snprintf(dp[4].text, sizeof(dp[4].text), "lcore=%d",
			 config->lcore);
	dp[5].var = "MEM";
	snprintf(dp[5].text, sizeof(dp[5].text), "mem=%u", config->mem_mb);
	dp[6].var = "IDLE_SLEEP_US";
	if (config->idle_sleep_us != UCS_ULUNITS_AUTO)
		snprintf(dp[6].text, sizeof(dp[6].text), "idle_sleep_us=%zu",
			 config->idle_sleep_us);
	dp[7].var = "RATE";
	uct_sctp_dpdk_config_list_entry(config->rate, dev, e, sizeof(e));
	snprintf(dp[7].text, sizeof(dp[7].text), "rate=%s", e);
	dp[8].var = "DP";
	uct_sctp_dpdk_config_list_entry(config->dp_extra, dev, e, sizeof(e));
	snprintf(dp[8].text, sizeof(dp[8].text), "%s", e);

	sg[0].var = "SCTP_PORT";
	uct_sctp_dpdk_config_list_entry(config->sctp_port, dev, e, sizeof(e));
	/* One value for several ports: port K listens on value + K (one
	 * usrsctp socket per SCTP port in the process). */
	sctp_port = strtoul(e, &end, 10);
	if (uct_sctp_dpdk_config_list_count(config->sctp_port) == 1 &&
	    e[0] != '\0' && *end == '\0' && sctp_port + dev <= 65535)
		snprintf(sg[0].text, sizeof(sg[0].text), "port=%lu",
			 sctp_port + dev);
	else
		snprintf(sg[0].text, sizeof(sg[0].text), "port=%s", e);
	sg[1].var = "STREAMS";
	snprintf(sg[1].text, sizeof(sg[1].text), "streams=%u",
		 config->streams);
	sg[2].var = "RX_DESCS";
	snprintf(sg[2].text, sizeof(sg[2].text), "rx_descs=%u",
		 config->rx_descs);
	sg[3].var = "SEG_SIZE";
	snprintf(sg[3].text, sizeof(sg[3].text), "rx_buf=%zu",
		 config->seg_size);
	/* Messages are AMs: never above one segment, so one descriptor. */
	sg[4].var = "SEG_SIZE";
	snprintf(sg[4].text, sizeof(sg[4].text), "max_msg=%zu",
		 config->seg_size);
	sg[5].var = "SG";
	snprintf(sg[5].text, sizeof(sg[5].text), "rx_headroom=%u",
		 UCT_SCTP_DPDK_SG_HEADROOM_BYTES);
	/* The transport's SCTP defaults (uct_sctp_dpdk_sg_defaults); SG may
	 * say otherwise: it comes after. */
	sg[6].var = "SG";
	snprintf(sg[6].text, sizeof(sg[6].text), "%s",
		 uct_sctp_dpdk_sg_defaults(config));
	sg[7].var = "SG";
	snprintf(sg[7].text, sizeof(sg[7].text), "%s", config->sg_extra);
	sg[8].var = "SACK_HOLD_US";
	if (config->sack_hold_us != UCS_ULUNITS_AUTO)
		snprintf(sg[8].text, sizeof(sg[8].text), "sack_hold_us=%zu",
			 config->sack_hold_us);
	sg[9].var = "TX_CHAIN_MIN";
	if (config->tx_chain_min != UCS_MEMUNITS_AUTO)
		snprintf(sg[9].text, sizeof(sg[9].text), "tx_chain_min=%zu",
			 config->tx_chain_min);
	/* RX_EXT=n: off whatever SG says; y: SG's rx_ext (default 1) */
	sg[10].var = "RX_EXT";
	if (!config->rx_ext)
		snprintf(sg[10].text, sizeof(sg[10].text), "rx_ext=0");
}

/* " entry K" for a variable given as a list, "" otherwise. */
static const char *
uct_sctp_dpdk_entry_name(const uct_sctp_dpdk_iface_config_t *config,
			 const char *var, unsigned dev, char *buf, size_t len)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < ucs_static_array_size(uct_sctp_dpdk_list_vars); i++) {
		if (!strcmp(var, uct_sctp_dpdk_list_vars[i]) &&
		    uct_sctp_dpdk_config_list_count(
			    uct_sctp_dpdk_list_value(config, var)) > 1)
			snprintf(buf, len, " entry %u", dev);
	}
	return buf;
}

static void uct_sctp_dpdk_append(char *buf, size_t size, const char *token)
{
	size_t len = strlen(buf);

	snprintf(buf + len, size - len, "%s ", token);
}

/* Validate each dataplane token alone, so an error names its variable
 * (and list entry), and join them into @text.  The scratch config is
 * ~48 KB (the static ARP table): on the heap, not on the stack of the
 * thread opening the iface. */
static ucs_status_t
uct_sctp_dpdk_config_dp_tokens(const uct_sctp_dpdk_iface_config_t *config,
			       unsigned dev, const uct_sctp_dpdk_token_t *dp,
			       char *text, size_t size)
{
	char entry_name[32];
	struct dp_config *scratch;
	ucs_status_t status = UCS_OK;
	int i;

	scratch = ucs_malloc(sizeof(*scratch), "sctp_dpdk dp config scratch");
	if (scratch == NULL) {
		ucs_error("sctp_dpdk: no memory to check the dataplane "
			  "configuration (%zu bytes)", sizeof(*scratch));
		return UCS_ERR_NO_MEMORY;
	}
	for (i = 0; i < UCT_SCTP_DPDK_DP_TOKENS; i++) {
		if (dp[i].text[0] == '\0')
			continue;
		if (dp_config_parse(dp[i].text, scratch) != 0) {
			ucs_error("sctp_dpdk: invalid " UCT_SCTP_DPDK_ENV
				  "%s%s ('%s'; see the dataplane message "
				  "above)", dp[i].var,
				  uct_sctp_dpdk_entry_name(config, dp[i].var,
							   dev, entry_name,
							   sizeof(entry_name)),
				  dp[i].text);
			status = UCS_ERR_INVALID_PARAM;
		}
		uct_sctp_dpdk_append(text, size, dp[i].text);
	}
	ucs_free(scratch);
	return status;
}

ucs_status_t uct_sctp_dpdk_config_build(
	const uct_sctp_dpdk_iface_config_t *config, struct dp_config *dp_cfg,
	struct sg_config *sg_cfg, char *text, size_t len)
{
	return uct_sctp_dpdk_config_build_dev(config, 0, dp_cfg, sg_cfg, text,
					      len);
}

/* Validate each token alone, so an error names its variable, then join. */
ucs_status_t uct_sctp_dpdk_config_build_dev(
	const uct_sctp_dpdk_iface_config_t *config, unsigned dev,
	struct dp_config *dp_cfg, struct sg_config *sg_cfg, char *text,
	size_t len)
{
	char entry_name[32];
	uct_sctp_dpdk_token_t dp[UCT_SCTP_DPDK_DP_TOKENS];
	uct_sctp_dpdk_token_t sg[UCT_SCTP_DPDK_SG_TOKENS];
	char dp_text[UCT_SCTP_DPDK_CONFIG_TEXT_MAX] = "";
	char sg_text[UCT_SCTP_DPDK_CONFIG_TEXT_MAX] = "";
	struct sg_config sg_scratch;
	char one[sizeof(sg[0].text) + sizeof(UCT_SCTP_DPDK_SG_DEFAULTS) +
		 sizeof(UCT_SCTP_DPDK_SG_DEFAULTS_BUSY) + 16];
	ucs_status_t status = UCS_OK;
	int i;

	if (config->ip[0] == '\0') {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "IP is not set: "
			  "give this process's address on the port, e.g. "
			  UCT_SCTP_DPDK_ENV "IP=10.77.1.1/24");
		return UCS_ERR_INVALID_PARAM;
	}
	if (strcmp(config->progress, "inline") != 0 &&
	    strcmp(config->progress, "thread") != 0) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "PROGRESS='%s' is "
			  "unknown: use inline or thread", config->progress);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->poll_lcore < -1 || config->poll_lcore >= CPU_SETSIZE) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "POLL_LCORE=%d is out "
			  "of range: use -1 or a CPU number 0..%d",
			  config->poll_lcore, CPU_SETSIZE - 1);
		return UCS_ERR_INVALID_PARAM;
	}
	status = uct_sctp_dpdk_path_config_check(config);
	if (status != UCS_OK)
		return status;
	if (config->idle_sleep_us == UCS_ULUNITS_INF) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "IDLE_SLEEP_US=inf "
			  "is not a sleep: use auto or 0..100000");
		return UCS_ERR_INVALID_PARAM;
	}
	if (!(config->exit_timeout_s >= 0) || config->exit_timeout_s > 3600) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "EXIT_TIMEOUT=%gs is out "
			  "of range: use 0 (no wait at exit) .. 3600s",
			  config->exit_timeout_s);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->streams < 2) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "STREAMS=%u is too "
			  "small: stream 0 is reserved, use 2..%u",
			  config->streams, SG_STREAMS_MAX);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->seg_size < 1024 || config->seg_size > (16u << 20)) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SEG_SIZE=%zu is out "
			  "of range: use 1k..16m", config->seg_size);
		return UCS_ERR_INVALID_PARAM;
	}

	status = uct_sctp_dpdk_config_check_lists(config);
	if (status != UCS_OK)
		return status;
	uct_sctp_dpdk_tokens(config, dev, dp, sg);
	status = uct_sctp_dpdk_config_dp_tokens(config, dev, dp, dp_text,
						sizeof(dp_text));
	if (status == UCS_ERR_NO_MEMORY)
		return status;
	for (i = 0; i < UCT_SCTP_DPDK_SG_TOKENS; i++) {
		if (sg[i].text[0] == '\0')
			continue;
		/* Alone after the transport's defaults, with a max_msg every
		 * buffer size satisfies, so only this variable's own values
		 * are judged here (against the sctp layer's defaults alone, a
		 * valid SG rto_min_ms=10 tripped its sack_delay_ms=20). */
		snprintf(one, sizeof(one), "max_msg=1 %s %s",
			 uct_sctp_dpdk_sg_defaults(config), sg[i].text);
		if (sg_config_parse(one, &sg_scratch) != 0) {
			ucs_error("sctp_dpdk: invalid " UCT_SCTP_DPDK_ENV
				  "%s%s ('%s'; see the sctp message above)",
				  sg[i].var,
				  uct_sctp_dpdk_entry_name(config, sg[i].var,
							   dev, entry_name,
							   sizeof(entry_name)),
				  sg[i].text);
			status = UCS_ERR_INVALID_PARAM;
		}
		uct_sctp_dpdk_append(sg_text, sizeof(sg_text), sg[i].text);
	}
	if (status != UCS_OK)
		return status;
	if (dp_config_parse(dp_text, dp_cfg) != 0) {
		ucs_error("sctp_dpdk: the dataplane settings contradict each "
			  "other (see the message above): check "
			  UCT_SCTP_DPDK_ENV "RATE and " UCT_SCTP_DPDK_ENV "DP");
		return UCS_ERR_INVALID_PARAM;
	}
	/* LANES: lane k on the port's queue pair k (sctp_dpdk_lanes.c) */
	if (config->lanes > 1 && config->lanes <= DP_MAX_QUEUES)
		dp_cfg->nb_queues = (uint16_t)config->lanes;
	if (sg_config_parse(sg_text, sg_cfg) != 0) {
		ucs_error("sctp_dpdk: the sctp settings contradict each other "
			  "(see the message above): check " UCT_SCTP_DPDK_ENV
			  "RX_DESCS, " UCT_SCTP_DPDK_ENV "SEG_SIZE and "
			  UCT_SCTP_DPDK_ENV "SG");
		return UCS_ERR_INVALID_PARAM;
	}
	if (sg_cfg->streams < 2 || sg_cfg->max_msg_bytes > sg_cfg->rx_buf_bytes ||
	    sg_cfg->rx_headroom_bytes < UCT_SCTP_DPDK_SG_HEADROOM_BYTES) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SG overrides "
			  "streams, max_msg or rx_headroom: the transport needs "
			  "streams >= 2, max_msg <= rx_buf and rx_headroom >= "
			  "%u; set " UCT_SCTP_DPDK_ENV "STREAMS/SEG_SIZE "
			  "instead", UCT_SCTP_DPDK_SG_HEADROOM_BYTES);
		return UCS_ERR_INVALID_PARAM;
	}
	/* Every AM is one SCTP message: a segment above the send buffer
	 * could only go in pieces (sg_send -EINPROGRESS, caller's buffer
	 * held); one above half the receive buffer (sctp's partial delivery
	 * point) would be read in pieces and dropped. */
	if (config->seg_size > sg_cfg->sndbuf_bytes) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SEG_SIZE=%zu is above "
			  "the SCTP send buffer (" UCT_SCTP_DPDK_ENV "SG "
			  "sndbuf=%u): lower " UCT_SCTP_DPDK_ENV "SEG_SIZE or "
			  "raise sndbuf in " UCT_SCTP_DPDK_ENV "SG",
			  config->seg_size, sg_cfg->sndbuf_bytes);
		return UCS_ERR_INVALID_PARAM;
	}
	if (config->seg_size > sg_cfg->rcvbuf_bytes / 2) {
		ucs_error("sctp_dpdk: " UCT_SCTP_DPDK_ENV "SEG_SIZE=%zu is above "
			  "half the SCTP receive buffer (" UCT_SCTP_DPDK_ENV
			  "SG rcvbuf=%u): lower " UCT_SCTP_DPDK_ENV "SEG_SIZE or "
			  "raise rcvbuf in " UCT_SCTP_DPDK_ENV "SG to at least "
			  "twice it", config->seg_size, sg_cfg->rcvbuf_bytes);
		return UCS_ERR_INVALID_PARAM;
	}
	snprintf(text, len, "%s| %s", dp_text, sg_text);
	return UCS_OK;
}

/* Ranks on this node, from the launcher's environment; 0 when unknown. */
static unsigned uct_sctp_dpdk_local_ranks(const char **var_p)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_LOCAL_SIZE", /* Open MPI */
		"MPI_LOCALNRANKS",	      /* MPICH (hydra) */
		"PMIX_LOCAL_SIZE",	      /* PMIx launchers */
		"PMI_LOCAL_SIZE",
	};
	const char *v;
	unsigned i;
	long n;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		v = getenv(vars[i]);
		if (v == NULL)
			continue;
		n = strtol(v, NULL, 10);
		if (n > 0) {
			*var_p = vars[i];
			return (unsigned)n;
		}
	}
	*var_p = "none of OMPI_COMM_WORLD_LOCAL_SIZE/MPI_LOCALNRANKS/"
		 "PMIX_LOCAL_SIZE/PMI_LOCAL_SIZE";
	return 0;
}

unsigned
uct_sctp_dpdk_config_idle_sleep_us(const uct_sctp_dpdk_iface_config_t *config)
{
	static int logged;
	unsigned ranks, cpus, threads, sleep_us;
	const char *var;
	cpu_set_t set;

	if (config->idle_sleep_us != UCS_ULUNITS_AUTO)
		return (unsigned)config->idle_sleep_us; /* range-checked */
	ranks = uct_sctp_dpdk_local_ranks(&var);
	cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) :
							      1;
	/* PROGRESS=thread: a polling thread besides each worker thread. */
	threads = ucs_max(ranks, 1) *
		  (strcmp(config->progress, "thread") == 0 ? 2 : 1);
	sleep_us = threads <= cpus ? 0 : UCT_SCTP_DPDK_IDLE_SLEEP_AUTO_US;
	if (!logged) {
		logged = 1;
		ucs_diag("sctp_dpdk: " UCT_SCTP_DPDK_ENV "IDLE_SLEEP_US=auto: "
			 "%u polling threads (%u ranks on this node from %s) on "
			 "%u CPUs: %s", threads, ucs_max(ranks, 1), var, cpus,
			 sleep_us == 0 ? "busy poll" :
					 "back off " UCS_PP_MAKE_STRING(
						 UCT_SCTP_DPDK_IDLE_SLEEP_AUTO_US)
						 " us per idle poll");
	}
	return sleep_us;
}
