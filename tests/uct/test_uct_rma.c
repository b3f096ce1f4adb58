/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma.c - put/get against a peer process over memif (meson
 * test uct-rma).
 *
 *   rma     put_short/bcopy/zcopy and get_bcopy/zcopy of 1 B..16 MiB to a
 *           forked peer process over a memif pair, every byte checked by
 *           the process that owns the memory; then accesses the peer must
 *           refuse (wrong key, before/after/across its registration, a
 *           deregistered key): each fails with UCS_ERR_INVALID_ADDR where
 *           it has a completion, the peer's memory (and its guard bytes)
 *           is unchanged and its refusal counter counts every one.
 *
 * Fixture (UCT context, forked memif peer, cleanup): uct_fixture.h, RMA peer:
 * uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <string.h>
#include <unistd.h>


static uct_ep_h rma_pending_ep;
static int rma_pending_done;

static ucs_status_t rma_pending_cb(uct_pending_req_t *self)
{
	uint64_t hdr = 0;
	ucs_status_t st;

	st = uct_ep_am_short(rma_pending_ep, AM_ID, hdr, &hdr, 8);
	if (st == UCS_OK)
		rma_pending_done = 1;
	return st;
}

static int test_rma(void)
{
	static const size_t sizes[] = {1, 7, 100, 1992, 4096, 65000, 65480,
				       65536 + 13, 300000, 1u << 20, RMA_BIG};
	uint8_t dev[64], ifa[64];
	uct_rkey_bundle_t a_rk, b_rk, bad_rk;
	uct_sctp_dpdk_rkey_t crafted;
	uct_iface_attr_t attr;
	rma_info_t info;
	uint64_t refused0, refused, want_refused = 0, bad;
	uint8_t *local;
	uint32_t seed = 1000;
	int kind, ops = 0;
	ucs_status_t st;
	uct_ep_h ep;
	iface_t t;
	env_t e;
	size_t i, len, max_kind_len[5];

	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_iface_query(t.iface, &attr), "query");
	CHECK((attr.cap.flags & (UCT_IFACE_FLAG_PUT_SHORT |
				 UCT_IFACE_FLAG_PUT_BCOPY |
				 UCT_IFACE_FLAG_PUT_ZCOPY |
				 UCT_IFACE_FLAG_GET_BCOPY |
				 UCT_IFACE_FLAG_GET_ZCOPY)) ==
		      (UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
		       UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_BCOPY |
		       UCT_IFACE_FLAG_GET_ZCOPY),
	      "put/get caps missing: 0x%" PRIx64, attr.cap.flags);
	CHECK(attr.cap.put.max_zcopy >= RMA_BIG &&
	      attr.cap.get.max_zcopy >= RMA_BIG,
	      "zcopy limits %zu/%zu below 16 MiB", attr.cap.put.max_zcopy,
	      attr.cap.get.max_zcopy);
	max_kind_len[RMA_PUT_SHORT] = attr.cap.put.max_short;
	max_kind_len[RMA_PUT_BCOPY] = attr.cap.put.max_bcopy;
	max_kind_len[RMA_PUT_ZCOPY] = attr.cap.put.max_zcopy;
	max_kind_len[RMA_GET_BCOPY] = attr.cap.get.max_bcopy;
	max_kind_len[RMA_GET_ZCOPY] = attr.cap.get.max_zcopy;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	CHECK_OK(uct_rkey_unpack(e.comp, info.b_rkey, &b_rk), "unpack B");
	ep = fx_ep_to(&t, dev, ifa);
	/* The association is still starting: an AM goes pending, and an
	 * iface flush now must say "in progress", not fail (UCP's worker
	 * flush, used by Open MPI's osc ucx fence, aborts on any error). */
	{
		uct_pending_req_t req = {.func = rma_pending_cb};
		double deadline = fx_now_s() + RMA_DEADLINE_S;
		uint64_t hdr = 0;

		rma_pending_ep = ep;
		st = uct_ep_am_short(ep, AM_ID, hdr, &hdr, 8);
		CHECK(st == UCS_ERR_NO_RESOURCE, "AM before the association "
		      "is up: %s", ucs_status_string(st));
		if (st == UCS_ERR_NO_RESOURCE) {
			CHECK_OK(uct_ep_pending_add(ep, &req, 0),
				 "pending add");
			st = uct_iface_flush(t.iface, 0, NULL);
			CHECK(st == UCS_INPROGRESS, "iface flush with a "
			      "pending AM: %s, expected in progress",
			      ucs_status_string(st));
			while (!rma_pending_done && fx_now_s() < deadline)
				uct_worker_progress(e.worker);
			CHECK(rma_pending_done, "pending AM never sent");
			while (uct_iface_flush(t.iface, 0, NULL) != UCS_OK &&
			       fx_now_s() < deadline)
				uct_worker_progress(e.worker);
		}
	}
	local = malloc(RMA_BIG);
	if (local == NULL)
		return 1;

	/* Every size each method supports; the offset in the region moves
	 * so that the ops do not all start aligned. */
	for (kind = 0; kind < 5; kind++) {
		for (i = 0; i < SDP_ARRAY_SIZE(sizes); i++) {
			uint64_t off;
			int64_t badi;

			len = sizes[i];
			if (len > max_kind_len[kind])
				continue;
			off = len == RMA_BIG ? 0 : (i * 4099) % (RMA_BIG - len);
			seed++;
			if (kind <= RMA_PUT_ZCOPY) {
				fx_rma_fill(local, len, seed);
				st = fx_rma_op(ep, kind, local, len,
					    info.a_addr + off, a_rk.rkey);
				CHECK(st == UCS_OK, "%s %zu: %s",
				      fx_rma_names[kind], len,
				      ucs_status_string(st));
				fx_rma_flush(ep);
				bad = fx_rma_cmd('V', 0, seed, off, len);
				CHECK(bad == 0, "%s %zu B: peer memory wrong "
				      "at byte %" PRId64, fx_rma_names[kind], len,
				      (int64_t)bad - 1);
			} else {
				fx_rma_cmd('F', 0, seed, off, len);
				memset(local, 0, len);
				st = fx_rma_op(ep, kind, local, len,
					    info.a_addr + off, a_rk.rkey);
				CHECK(st == UCS_OK, "%s %zu: %s",
				      fx_rma_names[kind], len,
				      ucs_status_string(st));
				badi = fx_rma_check(local, len, seed);
				CHECK(badi < 0, "%s %zu B: local memory wrong "
				      "at byte %" PRId64, fx_rma_names[kind], len,
				      badi);
			}
			ops++;
			if (fx_failures)
				goto out;
		}
	}
	printf("rma: %d put/get ops of 1 B..16 MiB verified byte by byte\n",
	       ops);

	/* Order: a GET, then (fence) a PUT into the range it reads.  The GET
	 * must not see the PUT, even though its 8 MiB reply exceeds the
	 * target's send buffer and waits (MPI_Get_accumulate(REPLACE) in
	 * Open MPI's osc ucx is a get then a put). */
	{
		size_t glen = 8u << 20;
		uint8_t newer[64];
		uct_iov_t giov = {.buffer = local, .length = glen, .count = 1};
		rma_comp_t gc;
		int64_t badi;

		seed++;
		fx_rma_cmd('F', 0, seed, 0, glen);
		memset(local, 0, glen);
		memset(newer, 0xee, sizeof(newer));
		fx_rma_comp_init(&gc);
		do {
			st = uct_ep_get_zcopy(ep, &giov, 1, info.a_addr,
					      a_rk.rkey, &gc.super);
			if (st == UCS_ERR_NO_RESOURCE)
				uct_worker_progress(e.worker);
		} while (st == UCS_ERR_NO_RESOURCE);
		CHECK(st == UCS_INPROGRESS, "get 8 MiB: %s",
		      ucs_status_string(st));
		CHECK_OK(uct_ep_fence(ep, 0), "fence");
		st = fx_rma_op(ep, RMA_PUT_SHORT, newer, sizeof(newer),
			    info.a_addr + glen - sizeof(newer), a_rk.rkey);
		CHECK(st == UCS_OK, "put after get: %s", ucs_status_string(st));
		st = fx_rma_wait(&gc, st == UCS_OK ? UCS_INPROGRESS : st);
		CHECK(st == UCS_OK, "get 8 MiB completion: %s",
		      ucs_status_string(st));
		badi = fx_rma_check(local, glen, seed);
		CHECK(badi < 0, "get overtaken by a later put: byte %" PRId64
		      " of 8 MiB is new data", badi);
		fx_rma_flush(ep);
		printf("rma: get 8 MiB then put into its range: the get saw "
		       "the old data: %s\n", fx_failures ? "FAIL" : "ok");
		if (fx_failures)
			goto out;
	}

	/* Accesses the peer must refuse.  Region A holds a known pattern
	 * throughout; every one of them must leave it as it is. */
	refused0 = fx_rma_cmd('R', 0, 0, 0, 0);
	seed = 4242;
	fx_rma_cmd('F', 0, seed, 0, RMA_BIG);
	fx_rma_fill(local, 4096, 99);
	{
		struct {
			const char *what;
			int kind;
			int bad_key;	/* use a crafted rkey */
			uint64_t addr;
			size_t len;
		} cases[] = {
			{"wrong key", RMA_PUT_ZCOPY, 1, info.a_addr, 4096},
			{"wrong key", RMA_PUT_SHORT, 1, info.a_addr, 64},
			{"wrong key", RMA_PUT_BCOPY, 1, info.a_addr, 4096},
			{"wrong key", RMA_GET_ZCOPY, 1, info.a_addr, 4096},
			{"before region", RMA_PUT_ZCOPY, 0, info.a_addr - 64,
			 64},
			{"across start", RMA_PUT_ZCOPY, 0, info.a_addr - 8,
			 64},
			{"across end", RMA_PUT_ZCOPY, 0,
			 info.a_addr + RMA_BIG - 100, 4096},
			{"after region", RMA_PUT_SHORT, 0,
			 info.a_addr + RMA_BIG, 16},
			{"length wraps", RMA_PUT_ZCOPY, 0, UINT64_MAX - 63, 64},
			{"across end", RMA_GET_BCOPY, 0,
			 info.a_addr + RMA_BIG - 10, 64},
			{"after region", RMA_GET_ZCOPY, 0,
			 info.a_addr + RMA_BIG + 4096, 64},
		};

		/* A crafted rkey: A's address and length, a key one off. */
		memcpy(&crafted, info.a_rkey, sizeof(crafted));
		crafted.key = rte_cpu_to_be_64(rte_be_to_cpu_64(crafted.key) ^
					       1);
		CHECK_OK(uct_rkey_unpack(e.comp, &crafted, &bad_rk),
			 "unpack crafted");
		for (i = 0; i < SDP_ARRAY_SIZE(cases); i++) {
			kind = cases[i].kind;
			st = fx_rma_op(ep, kind, local, cases[i].len,
				    cases[i].addr,
				    cases[i].bad_key ? bad_rk.rkey :
						       a_rk.rkey);
			/* put_short/bcopy complete locally; the refusal is
			 * counted at the target. */
			if (kind == RMA_PUT_SHORT || kind == RMA_PUT_BCOPY)
				CHECK(st == UCS_OK, "%s %s: %s",
				      cases[i].what, fx_rma_names[kind],
				      ucs_status_string(st));
			else
				CHECK(st == UCS_ERR_INVALID_ADDR,
				      "%s %s: %s, expected refusal",
				      cases[i].what, fx_rma_names[kind],
				      ucs_status_string(st));
			fx_rma_flush(ep);
			want_refused++;
		}
		uct_rkey_release(e.comp, &bad_rk);
	}
	/* A deregistered region: its key must not work any more. */
	fx_rma_cmd('D', 1, 0, 0, 0);
	st = fx_rma_op(ep, RMA_PUT_ZCOPY, local, 4096, info.b_addr, b_rk.rkey);
	CHECK(st == UCS_ERR_INVALID_ADDR, "put to deregistered region: %s",
	      ucs_status_string(st));
	st = fx_rma_op(ep, RMA_GET_ZCOPY, local, 4096, info.b_addr, b_rk.rkey);
	CHECK(st == UCS_ERR_INVALID_ADDR, "get from deregistered region: %s",
	      ucs_status_string(st));
	want_refused += 2;
	fx_rma_flush(ep);
	bad = fx_rma_cmd('V', 0, seed, 0, RMA_BIG);
	CHECK(bad == 0, "refused accesses changed region A or its guards "
	      "(first bad byte %" PRId64 ")", (int64_t)bad - 1);
	bad = fx_rma_cmd('V', 1, 77, 0, RMA_SMALL);
	CHECK(bad == 0, "put to the deregistered region B wrote byte %"
	      PRId64, (int64_t)bad - 1);
	refused = fx_rma_cmd('R', 0, 0, 0, 0) - refused0;
	CHECK(refused == want_refused, "peer counted %" PRIu64 " refusals, "
	      "expected %" PRIu64, refused, want_refused);
	printf("rma: %" PRIu64 " bad accesses refused (wrong key, out of "
	       "range, deregistered), peer memory untouched: %s\n", refused,
	       fx_failures ? "FAIL" : "ok");
	/* The association still works after the refusals. */
	fx_rma_fill(local, 4096, 5);
	st = fx_rma_op(ep, RMA_PUT_ZCOPY, local, 4096, info.a_addr, a_rk.rkey);
	fx_rma_flush(ep);
	CHECK(st == UCS_OK && fx_rma_cmd('V', 0, 5, 0, 4096) == 0,
	      "put after refusals: %s", ucs_status_string(st));
out:
	uct_rkey_release(e.comp, &a_rk);
	uct_rkey_release(e.comp, &b_rk);
	uct_ep_destroy(ep);
	free(local);
	fx_rma_stop(&e, &t);
	printf("rma: %s\n", fx_failures ? "FAIL" : "ok");
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rma);
}
