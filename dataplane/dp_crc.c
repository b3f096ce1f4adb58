/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_crc.c - CRC32c (Castagnoli) back-ends for SCTP's checksum.
 *
 * All back-ends compute the same function: reflected polynomial 0x82F63B78,
 * initial value and final xor 0xFFFFFFFF; "123456789" -> 0xE3069283.
 * ISA-L's crc32_iscsi and the SSE4.2 crc32 instruction both return the
 * register *without* the final xor when seeded with ~0, so we complement.
 *
 * SCTP (RFC 4960 appendix B) stores the final CRC in the checksum field in
 * little-endian byte order: the first byte on the wire is the CRC's low
 * byte.  The field is zero while the CRC is computed.
 *
 * intel-ipsec-mb's IMB_CRC32_SCTP is a different CRC (MSB-first, init 0, no
 * final xor) and must not be used here.
 *
 * DP_CRC_NONE is RFC 9653's zero checksum, for memif only (shared memory
 * between two processes of one host: no wire to corrupt bits, as Linux's
 * lo and veth, which skip the checksum the same way).  The sender stores 0
 * and computes nothing; the receiver accepts a packet whose checksum field
 * is 0 without computing anything and still verifies every other value
 * (ISA-L), so a peer that computes CRCs interoperates and corruption of a
 * CRC-carrying packet is still caught.  A corrupted zero-checksum packet
 * is not detected: by design, as over lo.
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_byteorder.h>
#include <rte_hash_crc.h>
#include <rte_sctp.h>

#include "dp_internal.h"

static const char *const crc_names[DP_CRC_MAX] = {
	[DP_CRC_AUTO] = "auto",	  [DP_CRC_OFFLOAD] = "offload",
	[DP_CRC_ISAL] = "isal",	  [DP_CRC_SSE42] = "sse42",
	[DP_CRC_TABLE] = "table", [DP_CRC_NONE] = "none",
};

const char *dp_crc_name(enum dp_crc_backend be)
{
	if ((unsigned int)be >= DP_CRC_MAX)
		return "?";
	return crc_names[be];
}

int dp_crc_parse(const char *name, enum dp_crc_backend *be_p)
{
	unsigned int i;

	for (i = 0; i < DP_CRC_MAX; i++)
		if (strcmp(name, crc_names[i]) == 0) {
			*be_p = (enum dp_crc_backend)i;
			return 0;
		}
	return -EINVAL;
}

/* Byte-wise table, built on first use; the portable reference. */
static uint32_t crc_table[256];
static bool crc_table_ready;

static void crc_table_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
		crc_table[i] = c;
	}
	crc_table_ready = true;
}

static uint32_t crc_table_run(const uint8_t *p, size_t len)
{
	uint32_t c = 0xFFFFFFFFu;

	if (unlikely(!crc_table_ready))
		crc_table_init();
	while (len-- > 0)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

/*
 * The SSE4.2 crc32 instruction over any buffer.  Not rte_hash_crc(): it
 * loads 8-byte words through a uint64_t pointer, undefined behaviour on the
 * misaligned data it gets here (an SCTP packet starts 34 or 42 bytes into
 * a frame); found by tests/fuzz (UBSan).  memcpy compiles to the same
 * unaligned load, defined.
 */
static uint32_t crc_sse42_update(const void *buf, size_t len, uint32_t c)
{
	const uint8_t *p = buf;

	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, sizeof(w));
		c = rte_hash_crc_8byte(w, c);
	}
	for (; len > 0; p++, len--)
		c = rte_hash_crc_1byte(*p, c);
	return c;
}

static uint32_t crc_sse42_run(const void *buf, size_t len)
{
	return ~crc_sse42_update(buf, len, 0xFFFFFFFFu);
}

/*
 * ISA-L's crc32_iscsi, leaving the vector registers' upper halves clean.
 *
 * On CPUs with AVX-512 and VPCLMULQDQ, ISA-L dispatches to
 * crc32_iscsi_by16_10, which works in zmm registers and returns without
 * VZEROUPPER.  The dirty upper state then stays with the thread, and the
 * application's legacy-SSE code (a Debian package's x86-64 baseline build,
 * e.g. LAMMPS' pair loops) runs with a false dependency on every register
 * it writes: without the VZEROUPPER below, LAMMPS' PairLJCut::compute
 * takes 2-3x longer over af_packet (software CRC) than over memif (no CRC)
 * on an AVX-512 AMD EPYC.  It costs one instruction per call and runs only
 * where AVX exists (tests/test_dp_crc.cc reads XINUSE to check it).
 */
static bool crc_isal_avx;	/* CPU has AVX: VZEROUPPER is valid */
static bool crc_isal_probed;

static uint32_t isal_crc(const void *buf, int len, uint32_t c)
{
	c = crc32_iscsi((unsigned char *)(uintptr_t)buf, len, c);
	if (unlikely(!crc_isal_probed)) {
		crc_isal_avx = __builtin_cpu_supports("avx");
		crc_isal_probed = true;
	}
	if (crc_isal_avx)
		__asm__ volatile("vzeroupper");
	return c;
}

static uint32_t crc_isal_run(const void *buf, size_t len)
{
	uint32_t c = 0xFFFFFFFFu;
	const uint8_t *p = buf;

	/* crc32_iscsi takes an int length and does not write the buffer */
	while (len > INT32_MAX) {
		c = isal_crc(p, INT32_MAX, c);
		p += INT32_MAX;
		len -= INT32_MAX;
	}
	return ~isal_crc(p, (int)len, c);
}

uint32_t dp_crc32c(enum dp_crc_backend be, const void *buf, size_t len)
{
	switch (be) {
	case DP_CRC_SSE42:
		return crc_sse42_run(buf, len);
	case DP_CRC_TABLE:
		return crc_table_run(buf, len);
	case DP_CRC_ISAL:
	default:
		return crc_isal_run(buf, len);
	}
}

/* The CRC register (before the final xor) carried over @len bytes. */
static uint32_t crc_update(enum dp_crc_backend be, uint32_t c, const void *buf,
			   size_t len)
{
	const uint8_t *p = buf;

	switch (be) {
	case DP_CRC_SSE42:
		return crc_sse42_update(buf, len, c);
	case DP_CRC_TABLE:
		if (unlikely(!crc_table_ready))
			crc_table_init();
		while (len-- > 0)
			c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
		return c;
	case DP_CRC_ISAL:
	default:
		/* SCTP packets and segments are below 64 KiB: within
		 * crc32_iscsi's int */
		return isal_crc(buf, (int)len, c);
	}
}

/*
 * CRC of an SCTP packet with its checksum field taken as zero, without
 * writing the (possibly shared) buffer: CRC the common header with a zeroed
 * copy of its checksum, then continue over the chunks.
 */
static uint32_t sctp_crc(enum dp_crc_backend be, const void *sctp, size_t len)
{
	struct rte_sctp_hdr h;
	uint32_t c;

	memcpy(&h, sctp, sizeof(h));
	h.cksum = 0;
	c = crc_update(be, 0xFFFFFFFFu, &h, sizeof(h));
	c = crc_update(be, c, (const uint8_t *)sctp + sizeof(h),
		       len - sizeof(h));
	return ~c;
}

void dp_sctp_crc_fill(enum dp_crc_backend be, void *sctp, size_t len)
{
	struct rte_sctp_hdr *h = sctp;

	if (len < sizeof(*h))
		return;
	if (be == DP_CRC_NONE)
		h->cksum = 0;
	else
		h->cksum = rte_cpu_to_le_32(sctp_crc(be, sctp, len));
}

/*
 * A chained packet (sg's usrsctp chains: header segment, then external
 * buffers that are usrsctp's, never written): the CRC runs segment by
 * segment; only the first segment, ours, gets the checksum.
 */
void dp_sctp_crc_fill_segs(enum dp_crc_backend be, struct rte_mbuf *m)
{
	struct rte_sctp_hdr *h = rte_pktmbuf_mtod(m, struct rte_sctp_hdr *);
	uint32_t c = 0xFFFFFFFFu;
	struct rte_mbuf *s;

	if (rte_pktmbuf_data_len(m) < sizeof(*h))
		return;
	h->cksum = 0;
	if (be == DP_CRC_NONE)
		return;
	for (s = m; s != NULL; s = s->next)
		c = crc_update(be, c, rte_pktmbuf_mtod(s, const void *),
			       rte_pktmbuf_data_len(s));
	h->cksum = rte_cpu_to_le_32(~c);
}

bool dp_sctp_crc_ok(enum dp_crc_backend be, const void *sctp, size_t len)
{
	return dp_sctp_crc_check(be, sctp, len) <= DP_CRC_RX_ZERO;
}

enum dp_crc_rx dp_sctp_crc_check(enum dp_crc_backend be, const void *sctp,
				 size_t len)
{
	struct rte_sctp_hdr h;

	if (len < sizeof(h))
		return DP_CRC_RX_BAD;
	memcpy(&h, sctp, sizeof(h));
	if (be == DP_CRC_NONE) {
		if (h.cksum == 0)
			return DP_CRC_RX_ZERO;
		be = DP_CRC_ISAL;
	}
	if (rte_le_to_cpu_32(h.cksum) == sctp_crc(be, sctp, len))
		return DP_CRC_RX_OK;
	return h.cksum == 0 ? DP_CRC_RX_BAD_ZERO : DP_CRC_RX_BAD;
}
