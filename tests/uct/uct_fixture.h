/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uct_fixture.h - the shared fixture of the `sctp_dpdk` UCT API tests
 * (tests/uct/test_uct_<topic>.c, one program per meson test `uct-<topic>`).
 *
 * The transport is linked in (no LD_PRELOAD).  A test runs in this
 * process and, when it needs a peer, in a forked peer process joined to it
 * by a memif pair whose socket lives in fx_memif_dir (/run/sdp/<job>);
 * the two processes exchange addresses and commands over a socketpair.
 *
 *   test process (memif client, 10.77.x.2)    peer (memif server, 10.77.x.1)
 *   fx_fork_peer(peer_main) ---- fork ------> peer_main(fd)
 *   fx_read_addr(fd)         <--- dev, iface addr (fx_write_addr)
 *   ... AMs / RMA over memif ...   (the peer progresses until told or until
 *                                   its deadline; it never outlives the test)
 *
 * Ready-made peers: fx_echo_peer_main (echoes every AM_ID AM back to the
 * iface id the AM carries) and fx_seq_peer_main (counts SEQ_AM_ID AMs and
 * checks their order, reports on request).
 *
 * Every wait has a deadline; fx_run's exit handler kills the peer by PID
 * and removes the memif dir and the EAL runtime dirs (sdp-<job>-*).  A
 * program exits 0 on pass and 1 on failure, also when it cannot run (not
 * root): a test that cannot run fails with the reason.
 *
 * Names: fx_ for the fixture's functions and globals.
 */
#ifndef SDP_TESTS_UCT_FIXTURE_H
#define SDP_TESTS_UCT_FIXTURE_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sctp_dpdk.h"

#include <ucs/sys/math.h>
#include <ucs/async/async.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AM_ID 7		/* the AM id of fx_am_cb and the echo peer */
#define DEADLINE_S 20	/* default deadline of one wait, s */

#define SEQ_AM_ID 9	/* the AM id fx_seq_peer_main counts */
#define SEQ_LEN 1800	/* fx_seq_send payload: 4-byte seq + filler */

#define KEEP_MAX 64	/* descriptors fx_am_cb keeps */
#define ECHO_MAX 512	/* echoes queued by the echo peer */

extern int fx_failures;		/* CHECK failures so far */
extern char fx_memif_dir[128];	/* /run/sdp/<job> */
extern char fx_job[64];		/* uctt<pid>: names of dirs and prefixes */
extern pid_t fx_peer_pid;	/* killed at exit when > 0 */
extern uint8_t fx_peer_dev_addr[64];	/* peer mode: the other process */
extern uint8_t fx_peer_iface_addr[64];	/* peer mode: one of its ifaces */
extern unsigned fx_err_calls;		/* fx_err_handler calls */
extern ucs_status_t fx_err_seen;	/* the last status it saw */
extern int fx_seq_peer_client;	/* restart: n-th client incarnation */
extern int fx_iface_no_err_handler;	/* fx_iface_open sets none */

/* Count a failure and say where; the test goes on. */
#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,         \
				__LINE__, #cond);                             \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			fx_failures++;                                        \
		}                                                             \
	} while (0)

/* A call the test cannot go on without: exit(1) on failure. */
#define CHECK_OK(st, what)                                                    \
	do {                                                                  \
		ucs_status_t _s = (st);                                       \
		if (_s != UCS_OK) {                                           \
			fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__,     \
				__LINE__, what, ucs_status_string(_s));       \
			exit(1);                                              \
		}                                                             \
	} while (0)

/* One UCT context: component, md, worker, and (opened later) ifaces. */
typedef struct {
	ucs_async_context_t *async;
	uct_worker_h worker;
	uct_component_h comp;
	uct_md_h md;
	uct_iface_config_t *config;
} env_t;

typedef struct {
	uint16_t from;
	uint16_t len;
	uint8_t data[9000];
} echo_t;

typedef struct {
	uct_iface_h iface;
	uint8_t dev_addr[64];
	uint8_t iface_addr[64];
	unsigned rx_count;
	size_t rx_bytes;
	unsigned rx_bad;
	env_t *env;
	/* Descriptors kept by the handler (UCS_INPROGRESS), released later
	 * through uct_iface_release_desc. */
	void *kept[KEEP_MAX];
	unsigned nkept;
	size_t rx_headroom;
	/* Peer mode: AMs to send back, from the main loop. */
	int echo;
	echo_t *echo_q;
	unsigned echo_head, echo_tail;
	uct_ep_h echo_eps[UCT_SCTP_DPDK_MAX_IFACES];
} iface_t;

typedef struct {
	uint8_t *buf;
	size_t len;
} pack_arg_t;

/* A completion that counts its calls and keeps the last call's status
 * (a test checks that each op completes exactly once, and how). */
typedef struct {
	uct_completion_t super;
	unsigned calls;		/* completion calls seen */
	ucs_status_t status;	/* status of the last call */
} fx_comp_t;

/**
 * The program's main: checks root, names the job, installs the exit
 * cleanup and runs @test.  @return @test's result (0 pass, 1 fail).
 */
int fx_run(int (*test)(void));

double fx_now_s(void);
/** Open file descriptors of this process, -1 if /proc is unreadable. */
int fx_count_fds(void);

/** Arm @c for one completion: count 1, no call seen, status UCS_OK. */
void fx_comp_init(fx_comp_t *c);

/** Open component, md, worker and iface config (exit(1) on failure);
 * reads UCX_SCTP_DPDK_* from the environment as it is now. */
void fx_env_open(env_t *e);
void fx_env_close(env_t *e);

/* Payload: [u16 sender iface id][u16 seq][bytes: (seq + i) & 0xff]. */
void fx_fill(uint8_t *buf, size_t len, uint16_t from, uint16_t seq);
/** @return 1 if @buf holds what fx_fill wrote, else 0. */
int fx_verify(const uint8_t *buf, size_t len);

/** The AM_ID handler of fx_iface_open: counts, verifies, queues echoes in
 * peer mode and keeps every other descriptor (UCS_INPROGRESS). */
ucs_status_t fx_am_cb(void *arg, void *data, size_t length, unsigned flags);
void fx_release_kept(iface_t *t);
size_t fx_pack_cb(void *dest, void *arg); /* arg: pack_arg_t */
/** Peer mode: send the queued echoes back, while sends are accepted. */
void fx_echo_drain(iface_t *t);
/** The iface error handler: counts into fx_err_calls / fx_err_seen. */
ucs_status_t fx_err_handler(void *arg, uct_ep_h ep, ucs_status_t status);

/** Open an iface (device mode, fx_am_cb on AM_ID, fx_err_handler) and
 * read its addresses; exit(1) on failure. */
void fx_iface_open(env_t *e, iface_t *t, size_t rx_headroom);
/** An ep from @from to the given addresses (must be reachable). */
uct_ep_h fx_ep_to(iface_t *from, const uint8_t *dev_addr,
		  const uint8_t *iface_addr);
/**
 * Send one AM of @len bytes with method @m (0 short, 1 short_iov,
 * 2 bcopy, 3 zcopy), progressing on back-pressure until the deadline;
 * a failure is counted.
 */
void fx_send_am(env_t *e, uct_ep_h ep, int m, uint16_t from, uint16_t seq,
		size_t len);
/** Progress until @t received @want AMs or the deadline.  @return 1 if
 * it did. */
int fx_wait_count(env_t *e, iface_t *t, unsigned want);

/** UCX_SCTP_DPDK_DEVARGS, IP, PREFIX and IDLE_SLEEP_US=20. */
void fx_set_common_env(const char *devargs, const char *ip,
		       const char *prefix);
/** fx_set_common_env for a memif port in fx_memif_dir, @server or client,
 * address @ip, EAL prefix sdp-<job>-@name. */
void fx_memif_env(int server, const char *ip, const char *name);
/** Create fx_memif_dir.  @return 0, or -1 with the reason printed. */
int fx_memif_dir_create(void);
/**
 * Create fx_memif_dir and fork a peer running @peer_main(fd) (it must
 * exit, not return) over a socketpair; fx_peer_pid is set.
 * @return this side's socket, or -1 with the reason printed.
 */
int fx_fork_peer(void (*peer_main)(int fd));
/**
 * fx_fork_peer(@peer_main) for a peer that is the memif server
 * (10.77.8.1), then this process's environment as the memif client:
 * 10.77.8.2/24, EAL prefix sdp-<job>-r1 (after the fork: the peer keeps
 * its own).  @return this side's socket, or -1 with the reason printed.
 */
int fx_fork_client(void (*peer_main)(int fd));
/** Exchange addresses over the control socket (64 + 64 bytes).
 * @return 0, or -1 (the peer went). */
int fx_read_addr(int fd, uint8_t *dev, uint8_t *ifa);
int fx_write_addr(int fd, const iface_t *t);
/** fx_read_addr() into @dev, @ifa, then fx_write_addr() of @t; says
 * "FAIL: peer did not start" when either fails.  @return 0 or -1. */
int fx_swap_addr(int fd, const iface_t *t, uint8_t *dev, uint8_t *ifa);

/**
 * Echo peer: memif server at 10.77.8.1, sends its addresses, reads the
 * test's (fx_peer_*_addr), then echoes every AM back to the sender's
 * iface for 120 s or until killed.
 */
void fx_echo_peer_main(int fd) __attribute__((noreturn));

/* Bytes of @ep's association (sctp_dpdk ep) not yet acknowledged by
 * the peer; UINT64_MAX when the association is gone. */
uint64_t fx_ep_unacked(uct_ep_h ep);

/**
 * Sequence peer: memif server at 10.77.8.1 (or client with prefix
 * sdp-<job>-c<n> when fx_seq_peer_client is n > 0), sends its addresses,
 * reads a u32, counts SEQ_AM_ID AMs (order and payload checked) until a
 * second u32 (the final count) arrives and that many came, then writes
 * {received, out of order, first out of order, corrupted} and stays
 * until the socket closes.  60 s deadline.
 */
void fx_seq_peer_main(int fd) __attribute__((noreturn));
/** A sequence peer's addresses into @dev, @ifa, then its first u32
 * (@count); says "FAIL: peer did not start" when either fails.
 * @return 0 or -1. */
int fx_seq_peer_addr(int fd, uint8_t *dev, uint8_t *ifa, uint32_t count);
/** The closing exchange with a sequence peer: write its final count
 * @count, then wait up to @timeout_ms (-1: no limit) for its report
 * {received, out of order, first out of order, corrupted} into @report.
 * @return 0; -1 the write failed; -2 no report (timed out, peer gone). */
int fx_seq_peer_report(int fd, uint32_t count, uint32_t report[4],
		       int timeout_ms);
/** One SEQ_AM_ID am_short carrying @seq (no retry). */
ucs_status_t fx_seq_send(uct_ep_h ep, uint32_t seq);
/** fx_seq_send, progressing on back-pressure (20 s deadline). */
void fx_seq_send_one(env_t *e, uct_ep_h ep, uint32_t seq);
/** An am_bcopy payload of @len bytes fx_seq_peer_main checks: 8 zero
 * bytes (the header), @seq at 8, (seq * 7 + i) & 0xff from 12.
 * @return @len. */
size_t fx_seq_pack(void *dest, size_t len, uint32_t seq);

#ifdef __cplusplus
}
#endif

#endif /* SDP_TESTS_UCT_FIXTURE_H */
