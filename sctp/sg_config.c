/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_config.c - the SCTP layer's configuration: whitespace-separated
 * "key=value" tokens, validated one field at a time, then the relations
 * between fields.  A value out of range is an error that names the key, the
 * value, the limit and the fix; nothing is clamped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sg_internal.h"

#define CFG_ERR(...) SDP_LOG(ERR, SCTP, "config: " __VA_ARGS__)

static const char help_text[] =
	"sctp configuration: whitespace-separated key=value tokens\n"
	"  port=N             local SCTP port, 1..65535 (default 5000)\n"
	"  streams=N          streams each way, 1..65535 (default 10)\n"
	"  rto_initial_ms=N   initial RTO, 1..600000 (default 1000)\n"
	"  rto_min_ms=N       minimum RTO, 1..600000 (default 100)\n"
	"  sack_delay_ms=N    delayed SACK, 0..500, below rto_min_ms "
	"(default 20; 0 = SACK every packet)\n"
	"  rto_max_ms=N       maximum RTO, 1..600000 (default 3000)\n"
	"  hb_interval_ms=N   heartbeat interval, 0 = off, 0..3600000 "
	"(default 5000)\n"
	"  path_max_rxt=N     retransmissions before the peer is declared "
	"lost, 1..100 (default 5)\n"
	"  nodelay=0|1        disable Nagle (default 1)\n"
	"  sndbuf=B           socket send buffer, 64K..1G (default 4M)\n"
	"  rcvbuf=B           socket receive buffer, 64K..1G (default 4M)\n"
	"  rx_descs=N         receive descriptors, 16..1048576 (default 512)\n"
	"  rx_buf=B           bytes per descriptor, 1K..16M (default 64K)\n"
	"  rx_headroom=B      free bytes in front of received data, 0..4096 "
	"(default 128)\n"
	"  max_msg=B          largest message, 1..1G and at most "
	"rx_descs*rx_buf (default 16M)\n"
	"  max_peers=N        peer addresses at most, 1..16777216; tables grow "
	"as peers arrive (default 1048576)\n"
	"  pending_peers=N    peers without an association (strangers: "
	"packets from new\n"
	"                     sources) at most, 128..16777216; a new one "
	"replaces the least\n"
	"                     recently heard (default 1024; max_peers "
	"bounds all peers)\n"
	"  pending_ms=T       a stranger silent T ms is forgotten, "
	"10..3600000 (default 5000)\n"
	"  event_queue=N      event queue entries, 16..65536 (default 1024)\n"
	"  max_burst=N        packets one output may send beyond those in "
	"flight, 0 = no limit, 0..1024 (default 0)\n"
	"  sack_hold_us=N     on ports that batch TX (af_packet), hold the "
	"SACKs of a poll\n"
	"                     that delivered messages up to N us for the "
	"reply's burst,\n"
	"                     0..100000, below rto_min_ms (default 0 = off)\n"
	"  stream_sched=N     usrsctp's SCTP_SS_*: 0 round-robin (default), 1 "
	"in stream order,\n"
	"                     2 per packet, 3 priority, 4 fair bandwidth, 5 "
	"send order\n"
	"  sack_immediate=0|1 ask the peer to SACK each message's last "
	"packet at once\n"
	"                     (I bit, RFC 7053; default 1)\n"
	"  tx_chain_min=B     packets with DATA of at least B bytes leave as "
	"usrsctp's own\n"
	"                     buffers, chained (no copy of the payload), "
	"0..65535;\n"
	"                     0 = off: each packet is written into one mbuf "
	"(default 1024)\n"
	"  rx_ext=0|1         usrsctp keeps received packets in their DPDK "
	"mbufs, no copy\n"
	"                     (up to a quarter of the mbuf pool; default 1)\n"
	"  peer_gone_ms=T     memif ports down T ms (the peer process left):"
	" abort the\n"
	"                     associations at once; 0 = wait for heartbeats "
	"(default 1000)\n"
	"  nr_sack=0|1|2      non-renegable SACK when the peer has it too: 1 "
	"delivered data,\n"
	"                     2 also reordered data (process-wide; default 0 "
	"= off)\n"
	"  tx_cluster=B       send buffers of up to B bytes, 0 or 2048..16M; "
	"0 = 2048-byte\n"
	"                     clusters (process-wide, last endpoint opened; "
	"default 64k)\n";

const char *sg_config_help(void)
{
	return help_text;
}

void sg_config_defaults(struct sg_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port = 5000;
	cfg->streams = 10;
	cfg->rto_initial_ms = 1000;
	cfg->rto_min_ms = 100;
	cfg->rto_max_ms = 3000;
	cfg->hb_interval_ms = 5000;
	/* below rto_min_ms: a 200 ms delayed SACK (usrsctp's default) under
	 * a 100 ms minimum RTO times out the last packet of every message
	 * whose SACK is delayed */
	cfg->sack_delay_ms = 20;
	cfg->path_max_rxt = 5;
	cfg->nodelay = true;
	cfg->sndbuf_bytes = 4u << 20;
	cfg->rcvbuf_bytes = 4u << 20;
	cfg->rx_descs = 512;
	cfg->rx_buf_bytes = 64u << 10;
	cfg->rx_headroom_bytes = 128;
	cfg->max_msg_bytes = 16u << 20;
	cfg->max_peers = 1048576;
	/* a stranger's peer object is needed for one round trip (INIT ACK
	 * -> COOKIE ECHO); pending_ms covers an INIT retransmitted at
	 * rto_initial_ms and its backed-off repeats */
	cfg->pending_peers = 1024;
	cfg->pending_ms = 5000;
	cfg->event_queue = 1024;
	/* No burst limit.  usrsctp's default (4) cuts the congestion window
	 * to flight + 4 MTUs at every output, so after any pause (a rank
	 * computing between exchanges) a message leaves 4 packets at once
	 * and the rest only as SACKs come back, which a user-space stack
	 * processes only while the application is inside the MPI library:
	 * the rest of the message waits out the sender's next computation.
	 * Bursts on shared links are the pacer's job (RATE). */
	cfg->max_burst = 0;
	/* a flush waits for the last packet's SACK: never the delayed one */
	cfg->sack_immediate = true;
	/* the payload of full-sized packets by reference; small ones are
	 * cheaper to copy than to chain */
	cfg->tx_chain_min_bytes = 1024;
	cfg->rx_ext = true;
	/* a memif link goes down only when the peer closed or died */
	cfg->peer_gone_ms = 1000;
	/* a DATA chunk's payload in one piece, not one per 2048 bytes */
	cfg->tx_cluster_bytes = 64u << 10;
}

/* Range of each numeric field; one table for parsing and checking. */
struct field {
	const char *key;
	uint64_t lo, hi;
	size_t off;
	uint8_t size; /* bytes of the field */
	bool bytes;   /* accepts k/M/G suffixes (powers of 1024) */
};

/* pending_peers' minimum: above the strangers two input rounds can
 * hear (sg_link_peer_rx), so a new source always finds a slot. */
#define SG_PENDING_PEERS_MIN 128
_Static_assert(SG_PENDING_PEERS_MIN > 2 * SG_BURST,
	       "pending_peers must exceed two input rounds of packets");

#define F(k, lo, hi, member, b)                                               \
	{ k, lo, hi, offsetof(struct sg_config, member),                      \
	  sizeof(((struct sg_config *)0)->member), b }

static const struct field fields[] = {
	F("port", 1, 65535, port, false),
	F("streams", 1, SG_STREAMS_MAX, streams, false),
	F("rto_initial_ms", 1, 600000, rto_initial_ms, false),
	F("rto_min_ms", 1, 600000, rto_min_ms, false),
	F("rto_max_ms", 1, 600000, rto_max_ms, false),
	F("hb_interval_ms", 0, 3600000, hb_interval_ms, false),
	F("sack_delay_ms", 0, 500, sack_delay_ms, false),
	F("path_max_rxt", 1, 100, path_max_rxt, false),
	F("nodelay", 0, 1, nodelay, false),
	F("sndbuf", 64u << 10, 1u << 30, sndbuf_bytes, true),
	F("rcvbuf", 64u << 10, 1u << 30, rcvbuf_bytes, true),
	F("rx_descs", 16, 1u << 20, rx_descs, false),
	F("rx_buf", 1u << 10, 16u << 20, rx_buf_bytes, true),
	F("rx_headroom", 0, 4096, rx_headroom_bytes, false),
	F("max_msg", 1, 1u << 30, max_msg_bytes, true),
	F("max_peers", 1, 16777216, max_peers, false),
	F("pending_peers", SG_PENDING_PEERS_MIN, 16777216, pending_peers,
	  false),
	F("pending_ms", 10, 3600000, pending_ms, false),
	F("event_queue", 16, 65536, event_queue, false),
	F("max_burst", 0, 1024, max_burst, false),
	F("sack_hold_us", 0, 100000, sack_hold_us, false),
	F("stream_sched", 0, 5, stream_sched, false),
	F("sack_immediate", 0, 1, sack_immediate, false),
	F("tx_chain_min", 0, 65535, tx_chain_min_bytes, true),
	F("rx_ext", 0, 1, rx_ext, false),
	F("peer_gone_ms", 0, 3600000, peer_gone_ms, false),
	F("nr_sack", 0, 2, nr_sack, false),
	F("tx_cluster", 0, 16u << 20, tx_cluster_bytes, true),
};
#undef F

static uint64_t field_get(const struct sg_config *cfg, const struct field *f)
{
	const uint8_t *p = (const uint8_t *)cfg + f->off;

	switch (f->size) {
	case 1:
		return *(const uint8_t *)p; /* bool */
	case 2:
		return *(const uint16_t *)p;
	default:
		return *(const uint32_t *)p;
	}
}

static void field_set(struct sg_config *cfg, const struct field *f,
		      uint64_t v)
{
	uint8_t *p = (uint8_t *)cfg + f->off;

	switch (f->size) {
	case 1:
		*(bool *)p = v != 0;
		break;
	case 2:
		*(uint16_t *)p = (uint16_t)v;
		break;
	default:
		*(uint32_t *)p = (uint32_t)v;
		break;
	}
}

static int check_field(const struct field *f, uint64_t v)
{
	if (v < f->lo || v > f->hi) {
		CFG_ERR("%s=%" PRIu64 " is out of range: use %" PRIu64
			"..%" PRIu64, f->key, v, f->lo, f->hi);
		return -EINVAL;
	}
	return 0;
}

static int apply(void *arg, const char *key, const char *val)
{
	struct sg_config *cfg = arg;
	size_t i;
	uint64_t v;

	for (i = 0; i < SDP_ARRAY_SIZE(fields); i++) {
		const struct field *f = &fields[i];

		if (strcmp(key, f->key) != 0)
			continue;
		if (sdp_parse_u64(val, 0, &v) != 0 ||
		    (!f->bytes && strspn(val, "0123456789") != strlen(val))) {
			CFG_ERR("%s='%s' is not a number: use %s=N with N in "
				"%" PRIu64 "..%" PRIu64 "%s", key, val, key,
				f->lo, f->hi, f->bytes ? " (k/M/G allowed)" : "");
			return -EINVAL;
		}
		if (check_field(f, v) != 0)
			return -EINVAL;
		field_set(cfg, f, v);
		return 0;
	}
	CFG_ERR("unknown key '%s': see the list of keys in sg_config_help() "
		"(port, streams, rto_initial_ms, ...)", key);
	return -EINVAL;
}

int sg_config_check(const struct sg_config *cfg)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < SDP_ARRAY_SIZE(fields); i++)
		if (check_field(&fields[i], field_get(cfg, &fields[i])) != 0)
			rc = -EINVAL;
	if (rc != 0)
		return rc;
	if (cfg->rto_min_ms > cfg->rto_initial_ms) {
		CFG_ERR("rto_min_ms=%u is above rto_initial_ms=%u: lower "
			"rto_min_ms or raise rto_initial_ms", cfg->rto_min_ms,
			cfg->rto_initial_ms);
		rc = -EINVAL;
	}
	if (cfg->sack_delay_ms >= cfg->rto_min_ms) {
		CFG_ERR("sack_delay_ms=%u is not below rto_min_ms=%u: the "
			"peer's delayed SACK would time out our last packets; "
			"lower sack_delay_ms or raise rto_min_ms",
			cfg->sack_delay_ms, cfg->rto_min_ms);
		rc = -EINVAL;
	}
	if (cfg->sack_hold_us >= (uint64_t)cfg->rto_min_ms * 1000) {
		CFG_ERR("sack_hold_us=%u is not below rto_min_ms=%u (in us): "
			"a held SACK would time out the peer's packets; lower "
			"sack_hold_us or raise rto_min_ms", cfg->sack_hold_us,
			cfg->rto_min_ms);
		rc = -EINVAL;
	}
	if (cfg->tx_cluster_bytes != 0 && cfg->tx_cluster_bytes < 2048) {
		CFG_ERR("tx_cluster=%u is below usrsctp's 2048-byte cluster: "
			"give 0 (the clusters) or 2048..16M",
			cfg->tx_cluster_bytes);
		rc = -EINVAL;
	}
	if (cfg->rto_initial_ms > cfg->rto_max_ms) {
		CFG_ERR("rto_initial_ms=%u is above rto_max_ms=%u: lower "
			"rto_initial_ms or raise rto_max_ms",
			cfg->rto_initial_ms, cfg->rto_max_ms);
		rc = -EINVAL;
	}
	if ((uint64_t)cfg->max_msg_bytes >
	    (uint64_t)cfg->rx_descs * cfg->rx_buf_bytes) {
		CFG_ERR("max_msg=%u is above rx_descs*rx_buf=%" PRIu64
			": a message must fit the receive descriptors; raise "
			"rx_descs or rx_buf, or lower max_msg",
			cfg->max_msg_bytes,
			(uint64_t)cfg->rx_descs * cfg->rx_buf_bytes);
		rc = -EINVAL;
	}
	return rc;
}

int sg_config_parse(const char *text, struct sg_config *cfg)
{
	int rc;

	sg_config_defaults(cfg);
	rc = sdp_kv_parse(text, SDP_COMP_SCTP, "streams=10", apply, cfg);
	if (rc == -ENOMEM)
		return rc;
	if (rc == 0)
		rc = sg_config_check(cfg);
	return rc;
}
