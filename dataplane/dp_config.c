/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_config.c - the dataplane's configuration string: whitespace-separated
 * "key=value" tokens, validated one field at a time.  Defaults are safe for
 * a shared 2-core machine without NIC or hugepages.  Nothing is clamped
 * silently: a value out of range is an error that names the key, the value,
 * the limit and the fix.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <arpa/inet.h>

#include <rte_version.h>

#include "dp_internal.h"

#define CFG_ERR(...) SDP_LOG(ERR, DP, "config: " __VA_ARGS__)

static const char help_text[] =
	"dataplane configuration: whitespace-separated key=value tokens\n"
	"  dev=DEVARGS        vdev devargs (net_memif0,..., net_af_packet0,"
	"iface=eth0) or PCI address (required); memif zero-copy=yes needs "
	"huge=0\n"
	"  netns=NAME         open the port inside network namespace NAME "
	"(/var/run/netns/NAME); the process stays in its own\n"
	"  ip=A.B.C.D[/N]     our IPv4 address and on-link prefix (required;"
	" default /24)\n"
	"  mtu=N              IP MTU, 576..64000 (default 1500)\n"
	"  prefix=NAME        EAL --file-prefix (default sdp-<pid>)\n"
	"  mem=MB             EAL memory, 64..65536 (default 512)\n"
	"  huge=0|1           use hugepages (default 0: --no-huge)\n"
	"  lcore=N            CPU to run on (default: first allowed CPU)\n"
	"  eal=ARGS           extra EAL arguments, comma-separated\n"
	"  rxd=N, txd=N       descriptors, 64..16384 (default 1024)\n"
	"  queues=N           queue pairs, 1..8 (default 1); queue k reaches "
	"the peer's queue k: memif only (dp_port_*_queue)\n"
	"  mbufs=N            pool size, 0 = computed (default 0)\n"
	"  rx_ring=N          zero-copy RX ring entries, power of 2, "
	"64..65536 (default 4096)\n"
	"  tx_hold=N          pacing hold queue, power of 2, 64..65536 "
	"(default 4096)\n"
	"  tx_drain_us=N      buffered TX drain deadline, 1..100000 "
	"(default 100)\n"
	"  udp=0|1            SCTP over UDP, RFC 6951 (default 0)\n"
	"  own_mac=0|1        1: our MAC is 02:5d:<ip>, not the port's "
	"(default 0)\n"
	"  udp_port=N         encapsulation port (default 9899)\n"
	"  udp_remote_port=N  encapsulation port of a peer not heard from "
	"yet (default udp_port); a peer's replies go to its packets' source "
	"port\n"
	"  crc=auto|offload|isal|sse42|table|none  SCTP CRC32c (default "
	"auto: none on memif, else offload or isal); none: checksum 0, "
	"RFC 9653\n"
	"  arp=IP@MAC         static neighbour (repeatable, up to 4096)\n"
	"  arp_retries=N      ARP requests before giving up, 1..100 "
	"(default 5)\n"
	"  arp_retry_ms=N     between ARP requests, 1..60000 (default 200)\n"
	"  arp_ttl_ms=N       neighbour lifetime, 100..86400000 "
	"(default 60000)\n"
	"  arp_max=N          neighbours cached before the least recently "
	"used is evicted,\n"
	"                     16..16777216; the cache grows as they come "
	"(default 1048576)\n"
	"  idle_polls=N       empty polls before sleeping (default 256)\n"
	"  idle_sleep_us=N    sleep per idle poll, 0..100000; 0 = busy poll "
	"(default 20)\n"
	"  link_wait_ms=N     wait for link at start, 0..600000 "
	"(default 5000)\n"
	"  bye_wait_ms=N      memif close: wait for the peer to leave the "
	"rings, 0..60000; 0 = no handshake (default 1000)\n"
	"  memif_gate=0|1|auto  no memif burst while DPDK's interrupt thread "
	"has work (default auto: unpaced memif ports)\n"
	"  rate=BPS           pacing rate, e.g. 500M, 1G; 0 = unpaced\n"
	"  link=BPS           link rate for pacing; 0 = from link speed\n"
	"  pace=auto|deadline|gap  pacing mode (default auto)\n"
	"  pace_queue_us=N    paced: drop beyond this much queueing delay, "
	"100..10000000 (default 10000)\n"
	"  dest_rate=BPS      per-destination pacing rate of destinations "
	"without their own (dp_port_set_dest_rate); 0 = none (default)\n"
	"  pace_dests=N       destinations with their own pacing state, "
	"1..65536 (default 256)\n"
	"  drop=DIR:LIST      drop DATA packets of DIR (rx|tx) by 1-based "
	"index (up to 64), or DIR:every:N; counted as drop 'hook' (tests)\n";

const char *dp_config_help(void)
{
	return help_text;
}

static int first_allowed_cpu(void)
{
	cpu_set_t set;
	int i;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				return i;
	return 0;
}

void dp_config_defaults(struct dp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->file_prefix, sizeof(cfg->file_prefix), "sdp-%d",
		 (int)getpid());
	cfg->mem_mb = 512;
	cfg->lcore = first_allowed_cpu();
	cfg->prefix_len = 24;
	cfg->mtu = 1500;
	cfg->nb_rxd = 1024;
	cfg->nb_txd = 1024;
	cfg->rx_ring = 4096;
	cfg->tx_hold = 4096;
	cfg->tx_drain_us = 100;
	cfg->udp_port = DP_SCTP_UDP_PORT;
	cfg->crc = DP_CRC_AUTO;
	cfg->arp_retries = 5;
	cfg->arp_retry_ms = 200;
	cfg->arp_ttl_ms = 60000;
	cfg->arp_max = 1048576;
	cfg->idle_polls = 256;
	cfg->idle_sleep_us = 20;
	cfg->link_wait_ms = 5000;
	cfg->bye_wait_ms = 1000;
	cfg->memif_gate = DP_MEMIF_GATE_AUTO;
	cfg->pace_queue_us = 10000;
	cfg->pace_dests = 256;
	cfg->nb_queues = 1;
}

int dp_parse_ip(const char *text, uint32_t *ip_be_p)
{
	struct in_addr a;

	if (text == NULL || inet_pton(AF_INET, text, &a) != 1)
		return -EINVAL;
	*ip_be_p = a.s_addr;
	return 0;
}

const char *dp_ip_str(uint32_t ip_be, char *buf, size_t len)
{
	struct in_addr a = { .s_addr = ip_be };

	if (inet_ntop(AF_INET, &a, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

/* Parse an unsigned value of @key within [lo, hi]. */
static int parse_range(const char *key, const char *val, uint64_t lo,
		       uint64_t hi, uint64_t *v_p)
{
	uint64_t v;

	if (sdp_parse_u64(val, 0, &v) != 0) {
		CFG_ERR("%s='%s' is not a number: use %s=N with N in "
			"%" PRIu64 "..%" PRIu64, key, val, key, lo, hi);
		return -EINVAL;
	}
	if (v < lo || v > hi) {
		CFG_ERR("%s=%" PRIu64 " is out of range: use %" PRIu64
			"..%" PRIu64, key, v, lo, hi);
		return -EINVAL;
	}
	*v_p = v;
	return 0;
}

/* mtu=: above DP_MTU_MAX the reason is the mbuf, not a choice of ours */
static int parse_mtu(const char *val, uint16_t *mtu_p)
{
	uint64_t v;

	if (sdp_parse_u64(val, 0, &v) == 0 && v > DP_MTU_MAX) {
		CFG_ERR("mtu=%" PRIu64 " is above %u, the largest MTU whose "
			"frame fits one DPDK mbuf (16-bit buf_len; af_packet "
			"needs MTU + 84 bytes rounded up to 1 KiB): use "
			"mtu=%u..%u", v, DP_MTU_MAX, DP_MTU_MIN, DP_MTU_MAX);
		return -EINVAL;
	}
	if (parse_range("mtu", val, DP_MTU_MIN, DP_MTU_MAX, &v) != 0)
		return -EINVAL;
	*mtu_p = (uint16_t)v;
	return 0;
}

static int parse_bool(const char *key, const char *val, bool *b_p)
{
	if (strcmp(val, "1") == 0 || strcmp(val, "yes") == 0 ||
	    strcmp(val, "on") == 0 || strcmp(val, "true") == 0) {
		*b_p = true;
		return 0;
	}
	if (strcmp(val, "0") == 0 || strcmp(val, "no") == 0 ||
	    strcmp(val, "off") == 0 || strcmp(val, "false") == 0) {
		*b_p = false;
		return 0;
	}
	CFG_ERR("%s='%s' is not a boolean: use %s=0 or %s=1", key, val, key,
		key);
	return -EINVAL;
}

static int parse_pow2(const char *key, const char *val, uint32_t lo,
		      uint32_t hi, uint32_t *v_p)
{
	uint64_t v;

	if (parse_range(key, val, lo, hi, &v) != 0)
		return -EINVAL;
	if ((v & (v - 1)) != 0) {
		CFG_ERR("%s=%" PRIu64 " is not a power of 2: use e.g. %s=%u",
			key, v, key, 1u << (63 - __builtin_clzll(v)));
		return -EINVAL;
	}
	*v_p = (uint32_t)v;
	return 0;
}

static int parse_ip_prefix(struct dp_config *cfg, const char *val)
{
	char buf[32];
	char *slash;
	uint64_t plen = 24;

	if (strlen(val) >= sizeof(buf))
		goto bad;
	strcpy(buf, val);
	slash = strchr(buf, '/');
	if (slash != NULL) {
		*slash = '\0';
		if (parse_range("ip prefix length", slash + 1, 8, 30, &plen))
			return -EINVAL;
	}
	if (dp_parse_ip(buf, &cfg->ip_be) != 0 || cfg->ip_be == 0)
		goto bad;
	cfg->prefix_len = (uint8_t)plen;
	return 0;
bad:
	CFG_ERR("ip='%s' is not an IPv4 address: use ip=A.B.C.D or "
		"ip=A.B.C.D/N", val);
	return -EINVAL;
}

static int parse_mac(const char *text, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(text, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int parse_static_arp(struct dp_config *cfg, const char *val)
{
	char ip[32];
	const char *at = strchr(val, '@');
	struct dp_arp_static *s;

	if (cfg->nb_static_arp >= DP_MAX_STATIC_ARP) {
		CFG_ERR("arp: more than %u static entries: remove some",
			DP_MAX_STATIC_ARP);
		return -EINVAL;
	}
	s = &cfg->static_arp[cfg->nb_static_arp];
	if (at == NULL || (size_t)(at - val) >= sizeof(ip))
		goto bad;
	memcpy(ip, val, (size_t)(at - val));
	ip[at - val] = '\0';
	if (dp_parse_ip(ip, &s->ip_be) != 0 || parse_mac(at + 1, s->mac) != 0)
		goto bad;
	cfg->nb_static_arp++;
	return 0;
bad:
	CFG_ERR("arp='%s' is malformed: use arp=A.B.C.D@xx:xx:xx:xx:xx:xx",
		val);
	return -EINVAL;
}

static int parse_bps(const char *key, const char *val, uint64_t *bps_p)
{
	if (sdp_parse_u64(val, 1, bps_p) != 0) {
		CFG_ERR("%s='%s' is not a rate: use bits per second with an "
			"optional k/M/G suffix, e.g. %s=500M", key, val, key);
		return -EINVAL;
	}
	if (*bps_p > 400000000000ull) {
		CFG_ERR("%s=%" PRIu64 " is above 400G: use a rate in bit/s, "
			"e.g. %s=10G", key, *bps_p, key);
		return -EINVAL;
	}
	return 0;
}

static int copy_str(const char *key, const char *val, char *dst,
		    size_t size)
{
	size_t n = strlen(val);

	if (n == 0 || n >= size) {
		CFG_ERR("%s: length %zu must be 1..%zu", key, n, size - 1);
		return -EINVAL;
	}
	memcpy(dst, val, n + 1);
	return 0;
}

static int apply(void *arg, const char *key, const char *val)
{
	struct dp_config *cfg = arg;
	uint64_t v;
	int rc = 0;

#define RANGE(name, lo, hi, field)                                            \
	if (strcmp(key, name) == 0) {                                         \
		rc = parse_range(key, val, lo, hi, &v);                       \
		if (rc == 0)                                                  \
			cfg->field = (__typeof__(cfg->field))v;               \
		return rc;                                                    \
	}
	if (strcmp(key, "mtu") == 0)
		return parse_mtu(val, &cfg->mtu);
	RANGE("mem", 64, 65536, mem_mb)
	RANGE("lcore", 0, CPU_SETSIZE - 1, lcore)
	RANGE("rxd", 64, 16384, nb_rxd)
	RANGE("txd", 64, 16384, nb_txd)
	RANGE("mbufs", 0, 4194304, nb_mbufs)
	RANGE("tx_drain_us", 1, 100000, tx_drain_us)
	RANGE("udp_port", 1, 65535, udp_port)
	RANGE("udp_remote_port", 0, 65535, udp_remote_port)
	RANGE("arp_retries", 1, 100, arp_retries)
	RANGE("arp_retry_ms", 1, 60000, arp_retry_ms)
	RANGE("arp_ttl_ms", 100, 86400000, arp_ttl_ms)
	RANGE("arp_max", 16, 16777216, arp_max)
	RANGE("idle_polls", 1, 100000000, idle_polls)
	RANGE("idle_sleep_us", 0, 100000, idle_sleep_us)
	RANGE("link_wait_ms", 0, 600000, link_wait_ms)
	RANGE("bye_wait_ms", 0, 60000, bye_wait_ms)
	if (strcmp(key, "memif_gate") == 0 && strcmp(val, "auto") == 0) {
		cfg->memif_gate = DP_MEMIF_GATE_AUTO;
		return 0;
	}
	RANGE("memif_gate", 0, 1, memif_gate)
	RANGE("pace_queue_us", 100, 10000000, pace_queue_us)
	RANGE("pace_dests", 1, 65536, pace_dests)
	RANGE("queues", 1, DP_MAX_QUEUES, nb_queues)
#undef RANGE
	if (strcmp(key, "dev") == 0) {
		rc = copy_str(key, val, cfg->devargs, sizeof(cfg->devargs));
		/* A PCI address looks like [dddd:]bb:dd.f */
		cfg->is_pci = rc == 0 && strncmp(val, "net_", 4) != 0 &&
			      strchr(val, ':') != NULL &&
			      strchr(val, '.') != NULL;
		return rc;
	}
	if (strcmp(key, "ip") == 0)
		return parse_ip_prefix(cfg, val);
	if (strcmp(key, "prefix") == 0) {
		if (strchr(val, '/') != NULL) {
			CFG_ERR("prefix='%s' contains '/': use a plain name "
				"such as prefix=sdp-job-0", val);
			return -EINVAL;
		}
		return copy_str(key, val, cfg->file_prefix,
				sizeof(cfg->file_prefix));
	}
	if (strcmp(key, "netns") == 0) {
		if (strchr(val, '/') != NULL) {
			CFG_ERR("netns='%s' contains '/': give the name of a "
				"namespace in /var/run/netns", val);
			return -EINVAL;
		}
		return copy_str(key, val, cfg->netns, sizeof(cfg->netns));
	}
	if (strcmp(key, "eal") == 0)
		return copy_str(key, val, cfg->eal_extra,
				sizeof(cfg->eal_extra));
	if (strcmp(key, "huge") == 0)
		return parse_bool(key, val, &cfg->huge);
	if (strcmp(key, "udp") == 0)
		return parse_bool(key, val, &cfg->udp_encap);
	if (strcmp(key, "own_mac") == 0)
		return parse_bool(key, val, &cfg->own_mac);
	if (strcmp(key, "rx_ring") == 0)
		return parse_pow2(key, val, 64, 65536, &cfg->rx_ring);
	if (strcmp(key, "tx_hold") == 0)
		return parse_pow2(key, val, 64, 65536, &cfg->tx_hold);
	if (strcmp(key, "crc") == 0) {
		if (dp_crc_parse(val, &cfg->crc) != 0) {
			CFG_ERR("crc='%s' is unknown: use crc=auto, offload, "
				"isal, sse42, table or none", val);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "arp") == 0)
		return parse_static_arp(cfg, val);
	if (strcmp(key, "drop") == 0)
		return dp_drop_parse(val, &cfg->drop_rx, &cfg->drop_tx);
	if (strcmp(key, "rate") == 0)
		return parse_bps(key, val, &cfg->pace_rate_bps);
	if (strcmp(key, "link") == 0)
		return parse_bps(key, val, &cfg->link_bps);
	if (strcmp(key, "dest_rate") == 0)
		return parse_bps(key, val, &cfg->pace_dest_rate_bps);
	if (strcmp(key, "pace") == 0) {
		if (strcmp(val, "auto") == 0)
			cfg->pace_mode = DP_PACE_AUTO;
		else if (strcmp(val, "deadline") == 0)
			cfg->pace_mode = DP_PACE_DEADLINE;
		else if (strcmp(val, "gap") == 0)
			cfg->pace_mode = DP_PACE_GAP;
		else {
			CFG_ERR("pace='%s' is unknown: use pace=auto, "
				"deadline or gap", val);
			return -EINVAL;
		}
		return 0;
	}
	CFG_ERR("unknown key '%s': see the list of keys with --help "
		"(dev, ip, mtu, prefix, mem, ...)", key);
	return -EINVAL;
}

bool dp_devargs_is_memif(const char *devargs)
{
	return strncmp(devargs, "net_memif", 9) == 0;
}

/* The value of devargs key @key (up to the next comma) in @val. */
static bool devargs_value(const char *devargs, const char *key, char *val,
			  size_t len)
{
	size_t klen = strlen(key);
	const char *p = strchr(devargs, ',');

	while (p != NULL) {
		p++;
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, ",");

			if (n >= len)
				n = len - 1;
			memcpy(val, p + klen + 1, n);
			val[n] = '\0';
			return true;
		}
		p = strchr(p, ',');
	}
	return false;
}

/*
 * memif carries a frame in buffers of bsize= bytes (DPDK's default 2048)
 * and chains buffers for larger frames.  At mtu=9000 with 2048-byte
 * buffers, ucx_perftest's 1 MiB tag_bw over a memif pair whose devargs had
 * no bsize= received a million duplicate chunks (frames dropped as bad
 * ethertype/IP length, SACKs lost to a full TX ring) and moved 170-400
 * MB/s instead of 2150-2500 with bsize=10240.  Unless the devargs choose,
 * give memif buffers that hold a whole frame, as sdp-testbed does.
 *
 * Why chained frames break (read in DPDK 22.11's eth_memif_tx, copy mode,
 * and reproduced: 3200 frames of 8034/134 bytes over bsize=2048 arrived
 * as 274,377, with 776 dropped as bad ethertype; with bsize=10240, 3200):
 *   - a frame's first descriptor keeps the flags of the slot's previous
 *     use: a one-buffer frame on a slot that last carried a non-final
 *     piece of a chain still says "next", and is merged with the frame
 *     after it, which is lost;
 *   - a chain checks for a free slot before taking the next one but not
 *     for the one it is in: a frame that needs one slot more than is free
 *     writes into the slot the receiver reads next, and the free count,
 *     16-bit, wraps to 65535, so the rest of the burst overwrites unread
 *     slots and the ring's head runs more than a ring ahead: the receiver
 *     reads old buffers again (duplicates) and chain pieces as frames.
 * So a bsize= below a frame is refused.
 *
 * DPDK 24.11's eth_memif_tx has a second copy path, taken when every mbuf
 * of a burst comes from one pool whose data room (less headroom) is not
 * larger than bsize=: each mbuf segment goes into a slot of its own,
 * non-final ones marked "next", and no slot's flags are ever cleared
 * there.  A chained packet (the sg layer's chained TX: headers + payload
 * by reference) leaves "next" on its slots; when the ring comes round, a
 * one-segment frame on such a slot is merged with the frame after it, so
 * both are lost (meson test sg on Debian 13: chained-TX associations die,
 * ENOTCONN).  22.11 has no such path.  From DPDK 23.11 (24.11 read; 23.11
 * treated alike) the bsize= chosen here is below the pools' mbuf data
 * room (dp_mbuf_data_room, always above a frame), so the first path, which
 * copies a chain into one buffer, is the one taken; a bsize= given in the
 * devargs at or above it turns chained TX off on the port instead
 * (dp_memif_chained_tx_ok): one-segment packets never set "next".
 */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
#define DP_MEMIF_SEG_PER_SLOT_TX 1
#else
#define DP_MEMIF_SEG_PER_SLOT_TX 0
#endif

static int memif_bsize_fill(struct dp_config *cfg)
{
	uint32_t frame = (uint32_t)cfg->mtu + RTE_ETHER_HDR_LEN + 4, b;
	uint32_t mbuf_bytes =
		dp_mbuf_data_room(cfg->mtu) - RTE_PKTMBUF_HEADROOM;
	size_t len = strlen(cfg->devargs);
	char v[16];
	int n;

	if (!dp_devargs_is_memif(cfg->devargs))
		return 0;
	if (devargs_value(cfg->devargs, "bsize", v, sizeof(v))) {
		b = (uint32_t)strtoul(v, NULL, 0);
		if (b < frame) {
			CFG_ERR("dev=%s: memif bsize=%u is below a frame of "
				"mtu=%u (%u bytes): DPDK's memif corrupts "
				"frames chained over several buffers (lost, "
				"merged and replayed frames): "
				"give bsize=%u or more, or drop bsize= (one "
				"is chosen)", cfg->devargs, b, cfg->mtu, frame,
				(frame + 2047) / 2048 * 2048);
			return -EINVAL;
		}
		return 0;
	}
	if (DP_MEMIF_SEG_PER_SLOT_TX) {
		/* a frame, in whole cache lines if that stays below */
		b = (frame + 63) & ~63u;
		if (b >= mbuf_bytes)
			b = frame;
	} else {
		if (frame <= 2048)
			return 0;
		b = (frame + 2047) / 2048 * 2048;
		if (b > 65535)
			b = 65535;
	}
	n = snprintf(cfg->devargs + len, sizeof(cfg->devargs) - len,
		     ",bsize=%u", b);
	if (n < 0 || (size_t)n >= sizeof(cfg->devargs) - len) {
		cfg->devargs[len] = '\0';
		CFG_ERR("dev=%s: no room to add bsize=%u (memif buffers that "
			"hold a %u-byte frame at mtu=%u): shorten dev= or give "
			"bsize= yourself", cfg->devargs, b, frame, cfg->mtu);
		return -EINVAL;
	}
	SDP_LOG(INFO, DP, "config: memif bsize=%u added to dev= (a frame of "
		"mtu=%u in one buffer; give bsize= to choose)", b, cfg->mtu);
	return 0;
}

bool dp_memif_chained_tx_ok(const struct dp_config *cfg)
{
	char v[16];

	if (!DP_MEMIF_SEG_PER_SLOT_TX || !dp_devargs_is_memif(cfg->devargs) ||
	    !devargs_value(cfg->devargs, "bsize", v, sizeof(v)))
		return true;
	return strtoul(v, NULL, 0) <
	       (unsigned long)(dp_mbuf_data_room(cfg->mtu) -
			       RTE_PKTMBUF_HEADROOM);
}

bool dp_devargs_memif_zc(const char *devargs)
{
	char v[8];

	return dp_devargs_is_memif(devargs) &&
	       devargs_value(devargs, "zero-copy", v, sizeof(v)) &&
	       strcmp(v, "yes") == 0;
}

bool dp_devargs_memif_client(const char *devargs)
{
	char v[8];

	return devargs_value(devargs, "role", v, sizeof(v)) &&
	       strcmp(v, "client") == 0;
}

uint32_t dp_devargs_memif_ring(const char *devargs)
{
	char v[8];
	unsigned long log2 = 10;

	if (devargs_value(devargs, "rsize", v, sizeof(v)))
		log2 = strtoul(v, NULL, 10);
	return log2 >= 1 && log2 <= 15 ? 1u << log2 : 1024u;
}

/*
 * DPDK 22.11's zero-copy memif client (devargs zero-copy=yes) shows the
 * peer its DPDK memory (each memseg list a region) and points descriptors
 * at its mbufs, but it names region 1 for every buffer (rte_eth_memif.c:
 * "FIXME: get region index") and sizes a region by the segments allocated
 * in it.  With huge=0 that holds: one memseg list, all of mem= allocated
 * at start (and backed by a memfd the peer can map).  With hugepages the
 * pool can lie in another list or past the region's end, so refuse.
 */
static int memif_zc_check(const struct dp_config *cfg)
{
	if (!dp_devargs_memif_zc(cfg->devargs) || !cfg->huge)
		return 0;
	CFG_ERR("dev=%s: memif zero-copy=yes needs huge=0 (DPDK 22.11's "
		"zero-copy client maps all buffers to its first memory "
		"region, which holds only with --no-huge): drop huge=1 or "
		"zero-copy=yes", cfg->devargs);
	return -EINVAL;
}

int dp_config_parse(const char *text, struct dp_config *cfg)
{
	int rc;

	dp_config_defaults(cfg);
	rc = sdp_kv_parse(text, SDP_COMP_DP, "mtu=1500", apply, cfg);
	if (rc == -ENOMEM)
		return rc;
	if (cfg->pace_rate_bps != 0 && cfg->link_bps != 0 &&
	    cfg->pace_rate_bps > cfg->link_bps) {
		CFG_ERR("rate=%" PRIu64 " is above link=%" PRIu64
			": lower rate or raise link", cfg->pace_rate_bps,
			cfg->link_bps);
		rc = -EINVAL;
	}
	if (cfg->pace_dest_rate_bps != 0 && cfg->link_bps != 0 &&
	    cfg->pace_dest_rate_bps > cfg->link_bps) {
		CFG_ERR("dest_rate=%" PRIu64 " is above link=%" PRIu64
			": lower dest_rate or raise link",
			cfg->pace_dest_rate_bps, cfg->link_bps);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = memif_bsize_fill(cfg);
	if (rc == 0)
		rc = memif_zc_check(cfg);
	return rc;
}
