/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp.h - helpers shared by every sctp-dpdk component: the logging front end
 * SDP_LOG, debug-only invariants SDP_ASSERT, and small utilities.
 *
 * Logging goes to a sink.  Until a component installs one (dataplane/ points
 * it at rte_log once the EAL is up) messages go to stderr, so DPDK-free unit
 * tests and tools still see them.  The sink is process-wide and installed
 * from the control thread before any data-path thread starts.
 */
#ifndef SDP_H
#define SDP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sdp_log_level {
	SDP_LOG_ERR = 1,
	SDP_LOG_WARN = 2,
	SDP_LOG_INFO = 3,
	SDP_LOG_DEBUG = 4,
};

/* Components that log; each maps to its own rte_log type (sdp.dp, ...). */
enum sdp_log_comp {
	SDP_COMP_DP = 0,
	SDP_COMP_SCTP,
	SDP_COMP_PACE,
	SDP_COMP_UCT,
	SDP_COMP_APP,
	SDP_COMP_MAX,
};

typedef void (*sdp_log_sink_t)(enum sdp_log_level level,
			       enum sdp_log_comp comp, const char *msg);

/**
 * Install the process-wide log sink; NULL restores the stderr sink.
 */
void sdp_log_set_sink(sdp_log_sink_t sink);

/**
 * Messages above this level are discarded before formatting.  The default is
 * SDP_LOG_INFO, or the value of the environment variable SDP_LOG_LEVEL
 * (1..4) when it is set.
 */
void sdp_log_set_level(enum sdp_log_level level);
enum sdp_log_level sdp_log_get_level(void);

/** Name of a component as used in messages ("dp", "sctp", ...). */
const char *sdp_log_comp_name(enum sdp_log_comp comp);

void sdp_log(enum sdp_log_level level, enum sdp_log_comp comp,
	     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * SDP_LOG(ERR, DP, "port %u: mtu %u above limit %u", ...).  Not for the hot
 * path above DEBUG: per-packet events are counted, not logged.
 */
#define SDP_LOG(level, comp, ...)                                             \
	sdp_log(SDP_LOG_##level, SDP_COMP_##comp, __VA_ARGS__)

#ifdef SDP_DEBUG
#define SDP_ASSERT(cond)                                                      \
	do {                                                                  \
		if (!(cond))                                                  \
			sdp_assert_fail(#cond, __FILE__, __LINE__);           \
	} while (0)
#else
#define SDP_ASSERT(cond) ((void)0)
#endif

void sdp_assert_fail(const char *expr, const char *file, int line)
	__attribute__((noreturn));

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#define SDP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * Parse an unsigned decimal integer with an optional binary/SI suffix
 * (k, K, m, M, g, G: powers of 1000 when si is nonzero, else of 1024).
 * @return 0, or -EINVAL when the text is not a number or overflows.
 */
int sdp_parse_u64(const char *text, int si, uint64_t *value_p);

/** Called by sdp_kv_parse() for each token; @return 0 or -EINVAL. */
typedef int (*sdp_kv_apply_t)(void *arg, const char *key, const char *val);

/**
 * Split @text into whitespace-separated "key=value" tokens and hand each to
 * @apply.  Every token is tried (so each bad one is reported); a token
 * without '=' is logged under @comp with @example as the fix.
 * @return 0; -EINVAL when any token was malformed or rejected; -ENOMEM.
 */
int sdp_kv_parse(const char *text, enum sdp_log_comp comp,
		 const char *example, sdp_kv_apply_t apply, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* SDP_H */
