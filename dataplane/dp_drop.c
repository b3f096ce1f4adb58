/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_drop.c - the drop= hook: deterministic loss of chosen SCTP DATA
 * packets, on receive or on send, for tests and for measuring what a loss
 * costs (seed 004 "simulated packet losses by dropping packets inside the
 * receive function").
 *
 *   drop=rx:3,17,40     drop the 3rd, 17th and 40th received packet that
 *                       carries a DATA (or I-DATA) chunk
 *   drop=tx:every:100   drop every 100th sent packet that carries DATA
 *
 * Only packets with a DATA chunk are counted, so handshakes, SACKs,
 * heartbeats and ARP do not shift the indices; a SACK bundled with DATA
 * counts.  A dropped packet is counted as drops["hook"] (DP_DROP_HOOK); a
 * dropped send still returns 0, as a lossy wire would.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dp_internal.h"

#define CFG_ERR(...) SDP_LOG(ERR, DP, "config: " __VA_ARGS__)
#define DROP_EVERY_MIN 2
#define DROP_EVERY_MAX 1000000000u

static int parse_index(const char *val, const char *tok, uint64_t lo,
		       uint64_t hi, uint64_t *v_p)
{
	uint64_t v;

	if (sdp_parse_u64(tok, 0, &v) != 0 || v < lo || v > hi) {
		CFG_ERR("drop='%s': '%s' is not a number in %" PRIu64
			"..%" PRIu64 ": use drop=rx:3,17,40 or "
			"drop=tx:every:100", val, tok, lo, hi);
		return -EINVAL;
	}
	*v_p = v;
	return 0;
}

static int parse_list(const char *val, char *list, struct dp_drop_spec *sp)
{
	char *tok, *save = NULL;
	uint64_t v;

	for (tok = strtok_r(list, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (parse_index(val, tok, 1, UINT64_MAX / 2, &v) != 0)
			return -EINVAL;
		if (sp->nb == DP_DROP_LIST_MAX) {
			CFG_ERR("drop='%s': more than %u indices: use at most "
				"%u, or drop=DIR:every:N", val,
				DP_DROP_LIST_MAX, DP_DROP_LIST_MAX);
			return -EINVAL;
		}
		if (sp->nb != 0 && v <= sp->list[sp->nb - 1]) {
			CFG_ERR("drop='%s': index %" PRIu64 " is not above "
				"%" PRIu64 ": list the indices in ascending "
				"order, each once", val, v,
				sp->list[sp->nb - 1]);
			return -EINVAL;
		}
		sp->list[sp->nb++] = v;
	}
	if (sp->nb == 0) {
		CFG_ERR("drop='%s': no index: use drop=rx:3,17,40 or "
			"drop=tx:every:100", val);
		return -EINVAL;
	}
	return 0;
}

int dp_drop_parse(const char *val, struct dp_drop_spec *rx,
		  struct dp_drop_spec *tx)
{
	char buf[1024];
	struct dp_drop_spec *sp, tmp;
	uint64_t v;

	if (strlen(val) >= sizeof(buf)) {
		CFG_ERR("drop: value longer than %zu characters: drop fewer "
			"packets or use drop=DIR:every:N", sizeof(buf) - 1);
		return -EINVAL;
	}
	if (strncmp(val, "rx:", 3) == 0)
		sp = rx;
	else if (strncmp(val, "tx:", 3) == 0)
		sp = tx;
	else {
		CFG_ERR("drop='%s': the direction must be rx: or tx:, e.g. "
			"drop=rx:3,17,40 or drop=tx:every:100", val);
		return -EINVAL;
	}
	if (dp_drop_active(sp)) {
		CFG_ERR("drop='%s': a second drop= for %.2s: give one token "
			"per direction", val, val);
		return -EINVAL;
	}
	memset(&tmp, 0, sizeof(tmp));
	strcpy(buf, val + 3);
	if (strncmp(buf, "every:", 6) == 0) {
		if (parse_index(val, buf + 6, DROP_EVERY_MIN, DROP_EVERY_MAX,
				&v) != 0)
			return -EINVAL;
		tmp.every = (uint32_t)v;
	} else if (parse_list(val, buf, &tmp) != 0) {
		return -EINVAL;
	}
	*sp = tmp;
	return 0;
}

bool dp_sctp_has_data(const uint8_t *sctp, size_t len)
{
	struct dp_chunk_walk w;
	struct dp_chunk c;

	dp_chunk_walk_init(&w, sctp, len, DP_CHUNK_ALL);
	return dp_chunk_find_data(&w, &c); /* false after a length below 4 */
}

bool dp_drop_decide(struct dp_drop_state *st, const struct dp_drop_spec *sp)
{
	uint64_t n = ++st->seen;

	if (sp->every != 0)
		return n % sp->every == 0;
	while (st->next < sp->nb && sp->list[st->next] < n)
		st->next++;
	if (st->next < sp->nb && sp->list[st->next] == n) {
		st->next++;
		return true;
	}
	return false;
}
