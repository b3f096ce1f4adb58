/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_map.c - a small open-addressing hash map from a non-zero u32 key to a
 * u64 value: peers by IPv4 address, associations by usrsctp id.
 *
 * Linear probing in a power-of-2 table kept at most half full, so a lookup
 * touches few slots; deletion shifts later entries of the probe run back
 * (no tombstones), so the table never degrades with association churn.
 * All memory is allocated at init: no allocation on the hot path.
 */
#include <errno.h>
#include <stdlib.h>

#include "sg_internal.h"

static inline uint32_t slot_of(const struct sg_map *map, uint32_t key)
{
	return (key * 0x9e3779b1u) & map->mask;
}

int sg_map_init(struct sg_map *map, uint32_t limit)
{
	uint32_t slots = 16;

	while (slots < 2 * limit)
		slots <<= 1;
	map->keys = calloc(slots, sizeof(*map->keys));
	map->vals = calloc(slots, sizeof(*map->vals));
	if (map->keys == NULL || map->vals == NULL) {
		sg_map_free(map);
		return -ENOMEM;
	}
	map->mask = slots - 1;
	map->count = 0;
	map->limit = limit;
	return 0;
}

void sg_map_free(struct sg_map *map)
{
	free(map->keys);
	free(map->vals);
	map->keys = NULL;
	map->vals = NULL;
	map->count = 0;
}

bool sg_map_get(const struct sg_map *map, uint32_t key, uint64_t *val_p)
{
	uint32_t i = slot_of(map, key);

	while (map->keys[i] != 0) {
		if (map->keys[i] == key) {
			*val_p = map->vals[i];
			return true;
		}
		i = (i + 1) & map->mask;
	}
	return false;
}

int sg_map_put(struct sg_map *map, uint32_t key, uint64_t val)
{
	uint32_t i = slot_of(map, key);

	SDP_ASSERT(key != 0);
	while (map->keys[i] != 0) {
		if (map->keys[i] == key) {
			map->vals[i] = val;
			return 0;
		}
		i = (i + 1) & map->mask;
	}
	if (map->count >= map->limit)
		return -ENOSPC;
	map->keys[i] = key;
	map->vals[i] = val;
	map->count++;
	return 0;
}

bool sg_map_del(struct sg_map *map, uint32_t key)
{
	uint32_t i = slot_of(map, key), j, home;

	while (map->keys[i] != key) {
		if (map->keys[i] == 0)
			return false;
		i = (i + 1) & map->mask;
	}
	/* Backward shift: move each later entry of the run into the hole
	 * when its home slot does not lie cyclically in (hole, entry]. */
	j = i;
	for (;;) {
		j = (j + 1) & map->mask;
		if (map->keys[j] == 0)
			break;
		home = slot_of(map, map->keys[j]);
		if (((j - home) & map->mask) >= ((j - i) & map->mask)) {
			map->keys[i] = map->keys[j];
			map->vals[i] = map->vals[j];
			i = j;
		}
	}
	map->keys[i] = 0;
	map->count--;
	return true;
}
