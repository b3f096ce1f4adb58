/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_path.c - failover beneath one association: the per-peer path state
 * machine (pure logic: time is an argument, in ms) and its configuration.
 *
 * usrsctp over AF_CONN cannot multihome (its INIT carries no AF_CONN
 * address list), so an association has one address, the peer's sg_peer
 * object; the link below it may reach that peer over several dataplane
 * ports ("paths": path 0 the primary, then the backups in order).  Each
 * path of a peer is alive while something was heard from the peer on it
 * within dead_ms and its port's link is up; both ends send a small probe
 * on every path that carried nothing of theirs for probe_ms, so an idle
 * path is still heard (SCTP's heartbeat; dead_ms plays path.max.retrans x
 * RTO).  Traffic goes on the active path; when it dies the first alive
 * path in order takes over (failover), and once the primary has been
 * alive again for return_ms the traffic goes back (failback; return_ms 0:
 * stay).  SCTP retransmits what was lost on the dead path on the new one.
 *
 *   alive --(nothing heard for dead_ms, or link down)--> dead
 *   dead  --(heard, link up)--> alive (alive_since = now)
 *   active dead          -> first alive path heard within 2 x probe_ms
 *                           (failovers++; a peer silent everywhere is
 *                           not polling, not a path failure)
 *   active != 0, primary alive >= return_ms -> 0    (failbacks++)
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "sg_internal.h"

#define CFG_ERR(...) SDP_LOG(ERR, SCTP, "failover config: " __VA_ARGS__)

static const char help_text[] =
	"failover configuration: n (off), y (on, defaults) or "
	"whitespace-separated key=value tokens (on)\n"
	"  probe_ms=N   probe a path that carried nothing for N ms, "
	"1..10000 (default 10)\n"
	"  dead_ms=N    a path heard nothing from the peer for N ms is dead, "
	"2..600000, at least 2 x probe_ms (default 50)\n"
	"  return_ms=N  go back to the primary once it was alive again for "
	"N ms, 0 = stay on the backup, 0..3600000 (default 1000)\n";

const char *sg_path_config_help(void)
{
	return help_text;
}

void sg_path_config_defaults(struct sg_path_config *cfg)
{
	cfg->on = false;
	cfg->probe_ms = 10;
	cfg->dead_ms = 50;
	cfg->return_ms = 1000;
}

static int apply(void *arg, const char *key, const char *val)
{
	struct sg_path_config *cfg = arg;
	uint64_t v, lo, hi;
	uint32_t *field;

	if (strcmp(key, "probe_ms") == 0) {
		field = &cfg->probe_ms;
		lo = 1;
		hi = 10000;
	} else if (strcmp(key, "dead_ms") == 0) {
		field = &cfg->dead_ms;
		lo = 2;
		hi = 600000;
	} else if (strcmp(key, "return_ms") == 0) {
		field = &cfg->return_ms;
		lo = 0;
		hi = 3600000;
	} else {
		CFG_ERR("unknown key '%s': use probe_ms, dead_ms or return_ms",
			key);
		return -EINVAL;
	}
	if (val[0] == '\0' || strspn(val, "0123456789") != strlen(val) ||
	    sdp_parse_u64(val, 0, &v) != 0) {
		CFG_ERR("%s='%s' is not a number: use %s=N with N in %" PRIu64
			"..%" PRIu64, key, val, key, lo, hi);
		return -EINVAL;
	}
	if (v < lo || v > hi) {
		CFG_ERR("%s=%" PRIu64 " is out of range: use %" PRIu64
			"..%" PRIu64, key, v, lo, hi);
		return -EINVAL;
	}
	*field = (uint32_t)v;
	return 0;
}

int sg_path_config_parse(const char *text, struct sg_path_config *cfg)
{
	int rc;

	sg_path_config_defaults(cfg);
	if (text == NULL || text[0] == '\0' || strcmp(text, "n") == 0 ||
	    strcmp(text, "no") == 0 || strcmp(text, "0") == 0)
		return 0;
	cfg->on = true;
	if (strcmp(text, "y") == 0 || strcmp(text, "yes") == 0 ||
	    strcmp(text, "1") == 0)
		return 0;
	rc = sdp_kv_parse(text, SDP_COMP_SCTP, "dead_ms=50", apply, cfg);
	if (rc != 0)
		return rc;
	if (cfg->dead_ms < 2 * cfg->probe_ms) {
		CFG_ERR("dead_ms=%u is below 2 x probe_ms=%u: a live path "
			"would die between two probes; raise dead_ms or lower "
			"probe_ms", cfg->dead_ms, cfg->probe_ms);
		return -EINVAL;
	}
	return 0;
}

void sg_paths_init(struct sg_paths *ps, unsigned int nb, uint64_t now_ms)
{
	unsigned int k;

	memset(ps, 0, sizeof(*ps));
	ps->nb = (uint8_t)(nb < 1 ? 1 : nb > SG_PATHS_MAX ? SG_PATHS_MAX : nb);
	for (k = 0; k < SG_PATHS_MAX; k++) {
		/* A new path gets one dead_ms of grace to be heard. */
		ps->p[k].heard_ms = now_ms;
		ps->p[k].alive_since_ms = now_ms;
		ps->p[k].alive = true;
	}
	ps->switch_ms = now_ms;
}

void sg_paths_heard(struct sg_paths *ps, unsigned int k, uint64_t now_ms)
{
	struct sg_path *p;

	if (k >= ps->nb)
		return;
	p = &ps->p[k];
	p->heard_ms = now_ms;
	if (!p->alive && !p->link_down) {
		p->alive = true;
		p->alive_since_ms = now_ms;
	}
}

void sg_paths_link(struct sg_paths *ps, unsigned int k, bool up)
{
	if (k >= ps->nb)
		return;
	ps->p[k].link_down = !up;
	if (!up)
		ps->p[k].alive = false;
}

int sg_paths_tick(struct sg_paths *ps, const struct sg_path_config *cfg,
		  uint64_t now_ms)
{
	unsigned int k;

	if (ps->nb < 2)
		return -1;
	for (k = 0; k < ps->nb; k++) {
		struct sg_path *p = &ps->p[k];

		if (p->alive && (p->link_down ||
				 now_ms - p->heard_ms >= cfg->dead_ms))
			p->alive = false;
	}
	if (!ps->p[ps->active].alive) {
		/* Move only to a path the peer was heard on within two
		 * probe intervals: a peer silent on every path (not polling:
		 * descheduled, or computing outside MPI) is not a path
		 * failure, and its last probe on a backup may be a few ms
		 * younger than its last packet on the active path. */
		for (k = 0; k < ps->nb; k++) {
			if (k == ps->active || !ps->p[k].alive ||
			    now_ms - ps->p[k].heard_ms >= 2 * cfg->probe_ms)
				continue;
			ps->active = (uint8_t)k;
			ps->switch_ms = now_ms;
			ps->failovers++;
			return (int)k;
		}
		return -1; /* nothing better: stay (SCTP keeps retrying) */
	}
	if (ps->active != 0 && cfg->return_ms != 0 && ps->p[0].alive &&
	    now_ms - ps->p[0].alive_since_ms >= cfg->return_ms) {
		ps->active = 0;
		ps->switch_ms = now_ms;
		ps->failbacks++;
		return 0;
	}
	return -1;
}

bool sg_paths_probe_due(const struct sg_paths *ps,
			const struct sg_path_config *cfg, unsigned int k,
			uint64_t now_ms)
{
	return k < ps->nb && now_ms - ps->p[k].tx_ms >= cfg->probe_ms;
}

void sg_paths_sent(struct sg_paths *ps, unsigned int k, uint64_t now_ms)
{
	if (k < ps->nb)
		ps->p[k].tx_ms = now_ms;
}
