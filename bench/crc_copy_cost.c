/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc_copy_cost.c - crc-copy-cost: what one CRC32c pass and one copy cost
 * per byte of an SCTP packet, in TSC cycles, on this machine.
 *
 * The bulk path makes per packet one CRC32c pass on send (dp_out_frame,
 * ISA-L's crc32_iscsi: the default back-end without NIC offload) and one
 * on receive, and (before usrsctp-patches/0002) one more copy on send.
 * Packets of --size bytes (default: 8960, a full packet at MTU 9000, and
 * 1460 at MTU 1500), in a ring of --ring packets (default 16, 143 KB:
 * warm in L2 as a burst of packets is), each operation timed alone with
 * the TSC over --reps passes, operations interleaved pass by pass.  The
 * minimum is what the operation costs when nothing else runs (robust on a
 * loaded machine: a pass that was preempted is only ever slower); the
 * median is printed too.  No PMU on this VM, so cycles come from the TSC
 * (constant rate): cycles at the TSC's frequency, not the core's.
 *
 * Output: one JSON object per size on stdout.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include <isa-l/crc.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tsc_hz(void)
{
	double t0 = now_s(), t1;
	uint64_t c0 = __rdtsc(), c1;

	do
		t1 = now_s();
	while (t1 - t0 < 0.2);
	c1 = __rdtsc();
	return (double)(c1 - c0) / (t1 - t0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static volatile uint32_t sink;

int main(int argc, char **argv)
{
	unsigned int sizes[8] = { 8960, 1460 }, nb_sizes = 2;
	unsigned int ring = 16, reps = 4000, i, r, s;
	double hz = tsc_hz();

	for (i = 1; i < (unsigned int)argc; i++) {
		if (strcmp(argv[i], "--size") == 0 && i + 1 < (unsigned)argc) {
			if (nb_sizes == 2 && sizes[0] == 8960)
				nb_sizes = 0;
			if (nb_sizes < 8)
				sizes[nb_sizes++] =
					(unsigned int)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--ring") == 0 &&
			   i + 1 < (unsigned)argc) {
			ring = (unsigned int)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--reps") == 0 &&
			   i + 1 < (unsigned)argc) {
			reps = (unsigned int)atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: crc-copy-cost [--size B]... "
				"[--ring N] [--reps N]\n");
			return 2;
		}
	}
	if (ring == 0 || ring > 4096 || reps < 10 || reps > 1000000) {
		fprintf(stderr, "crc-copy-cost: --ring 1..4096, --reps "
			"10..1000000\n");
		return 2;
	}
	for (s = 0; s < nb_sizes; s++) {
		unsigned int len = sizes[s];
		uint8_t *src, *dst;
		uint64_t *t_crc, *t_cpy;

		if (len == 0 || len > (1u << 20)) {
			fprintf(stderr, "crc-copy-cost: --size 1..1048576\n");
			return 2;
		}
		src = aligned_alloc(64, (size_t)ring * len + 64);
		dst = aligned_alloc(64, (size_t)ring * len + 64);
		t_crc = calloc(reps, sizeof(*t_crc));
		t_cpy = calloc(reps, sizeof(*t_cpy));
		if (src == NULL || dst == NULL || t_crc == NULL ||
		    t_cpy == NULL) {
			fprintf(stderr, "crc-copy-cost: out of memory\n");
			return 1;
		}
		for (i = 0; i < ring * len; i++)
			src[i] = (uint8_t)(i * 2654435761u >> 11);
		memset(dst, 0, (size_t)ring * len);
		for (r = 0; r < reps; r++) {
			unsigned int k = r % ring;
			uint8_t *p = src + (size_t)k * len;
			uint64_t c0, c1, c2;

			_mm_lfence();
			c0 = __rdtsc();
			_mm_lfence();
			sink = crc32_iscsi(p, (int)len, 0xffffffffu);
			_mm_lfence();
			c1 = __rdtsc();
			_mm_lfence();
			memcpy(dst + (size_t)k * len, p, len);
			sink = dst[(size_t)k * len + len - 1];
			_mm_lfence();
			c2 = __rdtsc();
			t_crc[r] = c1 - c0;
			t_cpy[r] = c2 - c1;
		}
		qsort(t_crc, reps, sizeof(*t_crc), cmp_u64);
		qsort(t_cpy, reps, sizeof(*t_cpy), cmp_u64);
		printf("{\"tool\": \"crc-copy-cost\", \"size\": %u, \"ring\": "
		       "%u, \"reps\": %u, \"tsc_ghz\": %.3f, "
		       "\"crc_isal_cycles_min\": %" PRIu64 ", "
		       "\"crc_isal_cycles_p50\": %" PRIu64 ", "
		       "\"crc_isal_cycles_per_byte_min\": %.4f, "
		       "\"crc_isal_gbytes_per_s_max\": %.2f, "
		       "\"memcpy_cycles_min\": %" PRIu64 ", "
		       "\"memcpy_cycles_p50\": %" PRIu64 ", "
		       "\"memcpy_cycles_per_byte_min\": %.4f, "
		       "\"memcpy_gbytes_per_s_max\": %.2f}\n",
		       len, ring, reps, hz / 1e9, t_crc[0], t_crc[reps / 2],
		       (double)t_crc[0] / len, len * hz / t_crc[0] / 1e9,
		       t_cpy[0], t_cpy[reps / 2], (double)t_cpy[0] / len,
		       len * hz / t_cpy[0] / 1e9);
		free(src);
		free(dst);
		free(t_crc);
		free(t_cpy);
	}
	return 0;
}
