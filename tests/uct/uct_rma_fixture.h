/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uct_rma_fixture.h - RMA on top of uct_fixture.h: a forked peer process
 * (memif server at 10.77.7.1) that registers two regions and serves
 * control commands, and the initiator's helpers (one op with retry and
 * completion wait, flush, a command to the peer).
 *
 *   region A  RMA_BIG bytes between two RMA_GUARD-byte guards (0xa5, 0x5a)
 *   region B  RMA_SMALL bytes filled with seed 77, deregistered by 'D'
 *
 * fx_rma_start forks the peer, opens this side (memif client 10.77.7.2)
 * and reads the peer's addresses and rma_info_t.  Every wait has the
 * RMA_DEADLINE_S deadline.
 */
#ifndef SDP_TESTS_UCT_RMA_FIXTURE_H
#define SDP_TESTS_UCT_RMA_FIXTURE_H

#include "uct_fixture.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RMA_BIG (16u << 20)   /* region A, bytes */
#define RMA_GUARD 4096	      /* guard bytes around region A */
#define RMA_SMALL 65536	      /* region B (deregistered on request) */
#define RMA_DEADLINE_S 120

/* What the peer hands over: the two regions and their packed rkeys. */
typedef struct {
	uint64_t a_addr, b_addr;
	uint8_t a_rkey[64], b_rkey[64];
} rma_info_t;

/* Control commands from the test to the peer (socketpair). */
typedef struct {
	char op;	 /* F fill, V verify, R refused count, D dereg B,
			  * C PUT bytes placed (region 0) / copied (1),
			  * P probe counts, S GET replies sent on stream
			  * offset, G GET requests received on stream
			  * offset, Q quit */
	uint8_t region;	 /* 0: A, 1: B */
	uint32_t seed;
	uint64_t offset, length;
} rma_cmd_t;

typedef struct {
	uct_completion_t super;
	int done;
} rma_comp_t;

typedef struct {
	const uint8_t *src;
	uint8_t *dst;
	size_t len;
} rma_pack_t;

enum { RMA_PUT_SHORT, RMA_PUT_BCOPY, RMA_PUT_ZCOPY, RMA_GET_BCOPY,
       RMA_GET_ZCOPY };
/* The payload of an ordering probe AM (FX_RMA_PROBE_AM_ID): the peer's
 * handler checks that [offset, offset + length) of region A holds the
 * pattern @seed, i.e. that a PUT sent before the AM on the same ep (and
 * fenced) was written before the handler ran.  Counted; command 'P'. */
#define FX_RMA_PROBE_AM_ID 11
typedef struct {
	uint64_t offset, length;
	uint32_t seed;
} fx_rma_probe_t;

extern const char *const fx_rma_names[]; /* by the enum above */

extern int fx_rma_fd;	    /* control socket to the peer */
extern env_t *fx_rma_env;   /* the test's context (progress while waiting) */

/** Byte @i of the pattern @seed. */
uint8_t fx_rma_byte(uint32_t seed, uint64_t i);
void fx_rma_fill(uint8_t *p, uint64_t len, uint32_t seed);
/** Index of the first byte that is not the pattern @seed, or -1. */
int64_t fx_rma_check(const uint8_t *p, uint64_t len, uint32_t seed);
/** A peer's side (memif server 10.77.7.1, EAL prefix sdp-<job>-r0): open
 * @e and its iface @t. */
void fx_rma_peer_open(env_t *e, iface_t *t);
/** One command of a peer's control channel: fill the (zeroed) @reply
 * for @cmd; nonzero: stop serving once the reply is written. */
typedef int (*fx_rma_serve_fn)(const void *cmd, void *reply, void *arg);
/**
 * A peer's command loop: progress @e's worker and read commands of
 * @cmd_len bytes from @fd (made non-blocking) until the socket closes,
 * @serve asks to stop, or the time fx_now_s() is past @deadline; each
 * command gets its @reply_len-byte reply.  exit(1) when a reply cannot be
 * written (the test went).
 */
void fx_rma_serve(env_t *e, int fd, double deadline, size_t cmd_len,
		  size_t reply_len, fx_rma_serve_fn serve, void *arg);
/** The peer (forked by fx_rma_start); exits when the socket closes. */
void fx_rma_peer_main(int fd) __attribute__((noreturn));
/**
 * One control command: F fill / V verify (reply: 1 + first bad byte, 0
 * good, UINT64_MAX a guard changed) @region at @offset for @length with
 * @seed; R the peer's refusal count; D deregister B; P probes seen << 32 |
 * probes that ran before their PUT's data was there; C the PUT data bytes
 * the peer wrote straight from usrsctp (@region 0) or copied from a
 * receive descriptor (1); S the GET reply
 * messages the peer sent on stream @offset (UINT64_MAX: no such stream);
 * Q deregister A, quit.
 * exit(1) when the peer is gone.
 */
uint64_t fx_rma_cmd(char op, uint8_t region, uint32_t seed, uint64_t offset,
		    uint64_t length);
void fx_rma_comp_init(rma_comp_t *c);
/** Wait for @c after an op returned @st.  @return the op's status. */
ucs_status_t fx_rma_wait(rma_comp_t *c, ucs_status_t st);
/** Flush @ep (retrying NO_RESOURCE) and wait; a failure is counted. */
void fx_rma_flush(uct_ep_h ep);
/** Issue one op of @kind (RMA_PUT_SHORT..RMA_GET_ZCOPY), retrying on
 * back-pressure; wait for its completion.  @return its status. */
ucs_status_t fx_rma_op(uct_ep_h ep, int kind, uint8_t *local, size_t len,
		       uint64_t raddr, uct_rkey_t rkey);
/** Fork the peer, open @e and @t, read the peer's addresses into @dev,
 * @ifa and its regions into @info.  @return 0, or -1 (reason printed). */
int fx_rma_start(env_t *e, iface_t *t, uint8_t *dev, uint8_t *ifa,
		 rma_info_t *info);
/** fx_rma_start with UCX_SCTP_DPDK_SG=@sg (NULL: as set), region A's
 * rkey unpacked into @a_rk, an ep to the peer, and one put_short of
 * @first_len bytes of @first at A's start (the association is up).
 * @return the ep, or NULL (reason printed). */
uct_ep_h fx_rma_connect(env_t *e, iface_t *t, rma_info_t *info,
			uct_rkey_bundle_t *a_rk, const char *sg,
			const uint8_t *first, size_t first_len);

/** Close @t; after a passing test let the peer deregister and exit (else
 * the exit cleanup kills it); close @e. */
void fx_rma_stop(env_t *e, iface_t *t);

#ifdef __cplusplus
}
#endif

#endif /* SDP_TESTS_UCT_RMA_FIXTURE_H */
