/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_rma_orphan.c - an iface closed while a put_zcopy cancelled by
 * ep destroy still has its data referenced by usrsctp (meson test
 * uct-rma-orphan).
 *
 *   orphan  iface O puts 16 MiB by reference (TX_ZCOPY_MIN) to the peer,
 *           destroys its ep at once (the op is cancelled but must wait
 *           for usrsctp: an orphan) and closes O without progressing.
 *           The association lives on in the device context, so when
 *           uct_iface_close returns usrsctp must reference nothing of the
 *           buffer (sg_zc_held() 0) and the op's completion must have run
 *           once with UCS_ERR_CANCELED: the caller then unmaps the buffer,
 *           and anything the stack still sent from it would fault.  The
 *           other iface's ep to the same peer then puts and gets intact.
 *
 * Fixture: uct_fixture.h, RMA peer: uct_rma_fixture.h.
 */
#include "uct_rma_fixture.h"

#include <string.h>
#include <sys/mman.h>

static int test_rma_orphan(void)
{
	uint8_t dev[64], ifa[64], *buf, *check;
	uct_rkey_bundle_t a_rk;
	uint64_t held_before, held_after;
	fx_comp_t comp;
	rma_info_t info;
	ucs_status_t st;
	uct_ep_h ep, ep_t;
	uct_iov_t iov;
	double t0;
	iface_t t, o;
	env_t e;

	if (fx_rma_start(&e, &t, dev, ifa, &info) != 0)
		return 1;
	CHECK_OK(uct_rkey_unpack(e.comp, info.a_rkey, &a_rk), "unpack A");
	buf = mmap(NULL, RMA_BIG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check = malloc(65536);
	if (buf == MAP_FAILED || check == NULL)
		return 1;
	memset(buf, 0x3c, RMA_BIG);
	ep_t = fx_ep_to(&t, dev, ifa);
	fx_rma_fill(check, 4096, 21);
	st = fx_rma_op(ep_t, RMA_PUT_ZCOPY, check, 4096, info.a_addr,
		       a_rk.rkey);
	CHECK(st == UCS_OK, "first put: %s", ucs_status_string(st));

	fx_iface_open(&e, &o, 0);
	ep = fx_ep_to(&o, dev, ifa);
	fx_comp_init(&comp);
	iov = (uct_iov_t){.buffer = buf, .length = RMA_BIG, .count = 1,
			  .memh = UCT_MEM_HANDLE_NULL};
	t0 = fx_now_s();
	while ((st = uct_ep_put_zcopy(ep, &iov, 1, info.a_addr, a_rk.rkey,
				      &comp.super)) == UCS_ERR_NO_RESOURCE &&
	       fx_now_s() < t0 + RMA_DEADLINE_S)
		uct_worker_progress(e.worker);
	CHECK(st == UCS_INPROGRESS, "put_zcopy 16 MiB: %s",
	      ucs_status_string(st));
	uct_ep_destroy(ep);
	held_before = sg_zc_held();
	CHECK(held_before > 0, "nothing referenced at ep destroy: the case "
	      "under test did not arise (TX_ZCOPY_MIN?)");
	uct_iface_close(o.iface);
	held_after = sg_zc_held();
	CHECK(held_after == 0, "uct_iface_close returned while usrsctp still "
	      "referenced %" PRIu64 " sends of the cancelled put_zcopy's "
	      "buffer", held_after);
	CHECK(comp.calls == 1 && comp.status == UCS_ERR_CANCELED,
	      "cancelled put_zcopy at iface close: completion called %u "
	      "times, last status %s (want once, %s)", comp.calls,
	      ucs_status_string(comp.status),
	      ucs_status_string(UCS_ERR_CANCELED));
	/* The caller owns the buffer again. */
	munmap(buf, RMA_BIG);
	t0 = fx_now_s();
	while (fx_now_s() < t0 + 1.0)
		uct_worker_progress(e.worker);
	fx_rma_fill(check, 65536, 22);
	st = fx_rma_op(ep_t, RMA_PUT_ZCOPY, check, 65536, info.a_addr,
		       a_rk.rkey);
	fx_rma_flush(ep_t);
	CHECK(st == UCS_OK && fx_rma_cmd('V', 0, 22, 0, 65536) == 0,
	      "put from the other iface after the close: %s",
	      ucs_status_string(st));
	memset(check, 0, 65536);
	st = fx_rma_op(ep_t, RMA_GET_ZCOPY, check, 65536, info.a_addr,
		       a_rk.rkey);
	CHECK(st == UCS_OK && fx_rma_check(check, 65536, 22) < 0,
	      "get from the other iface after the close: %s",
	      ucs_status_string(st));
	printf("rma-orphan: %" PRIu64 " sends referenced at ep destroy, %"
	       PRIu64 " after iface close; completion %u x %s; other iface "
	       "put/get ok: %s\n", held_before, held_after, comp.calls,
	       ucs_status_string(comp.status), fx_failures ? "FAIL" : "ok");
	uct_ep_destroy(ep_t);
	uct_rkey_release(e.comp, &a_rk);
	fx_rma_stop(&e, &t);
	free(check);
	return fx_failures ? 1 : 0;
}

int main(void)
{
	return fx_run(test_rma_orphan);
}
