/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sg_map.c - a small open-addressing hash map from a non-zero u32 key to a
 * u64 value: peers by IPv4 address, associations by usrsctp id.
 *
 * Linear probing in a power-of-2 table kept at most half full, so a lookup
 * touches few slots; deletion shifts later entries of the probe run back
 * (no tombstones), so the table never degrades with association churn.
 *
 * The table starts small and doubles when an insertion would fill more
 * than half of it, up to @limit entries: a process that talks to a few
 * peers keeps a few hundred bytes, one that talks to thousands pays
 * SG_MAP_SLOT_BYTES * 2..4 per entry.  A doubling allocates and rehashes
 * (O(count), amortised O(1) per insertion); it happens only when a new
 * key arrives (a new peer or association), never on a lookup.
 *
 * Key 0 marks an empty slot, so it can never be a key: sg_map_put and
 * sg_map_add refuse it with -EINVAL and sg_map_get never finds it, in
 * every build (keys come from the wire: a packet from 0.0.0.0 must not
 * corrupt the table).
 */
#include <errno.h>
#include <stdlib.h>

#include "sg_internal.h"

static inline uint32_t slot_of(const struct sg_map *map, uint32_t key)
{
	return (key * 0x9e3779b1u) & map->mask;
}

static int sg_map_alloc(struct sg_map *map, uint32_t slots)
{
	map->keys = calloc(slots, sizeof(*map->keys));
	map->vals = calloc(slots, sizeof(*map->vals));
	if (map->keys == NULL || map->vals == NULL) {
		free(map->keys);
		free(map->vals);
		map->keys = NULL;
		map->vals = NULL;
		return -ENOMEM;
	}
	map->mask = slots - 1;
	return 0;
}

int sg_map_init(struct sg_map *map, uint32_t limit)
{
	int rc;

	if (limit == 0 || limit > SG_MAP_LIMIT_MAX)
		return -EINVAL;
	rc = sg_map_alloc(map, SG_MAP_SLOTS_MIN);
	if (rc != 0)
		return rc;
	map->count = 0;
	map->limit = limit;
	return 0;
}

/* Double the table and reinsert every entry. @return 0 or -ENOMEM (the
 * map is unchanged then). */
static int sg_map_grow(struct sg_map *map)
{
	struct sg_map old = *map;
	uint32_t i;

	if (sg_map_alloc(map, 2 * (old.mask + 1)) != 0) {
		*map = old;
		return -ENOMEM;
	}
	for (i = 0; i <= old.mask; i++) {
		uint32_t j;

		if (old.keys[i] == 0)
			continue;
		j = slot_of(map, old.keys[i]);
		while (map->keys[j] != 0)
			j = (j + 1) & map->mask;
		map->keys[j] = old.keys[i];
		map->vals[j] = old.vals[i];
	}
	free(old.keys);
	free(old.vals);
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

	if (unlikely(key == 0))
		return false;
	while (map->keys[i] != 0) {
		if (map->keys[i] == key) {
			*val_p = map->vals[i];
			return true;
		}
		i = (i + 1) & map->mask;
	}
	return false;
}

/* Insert or (@replace) overwrite. */
static int sg_map_insert(struct sg_map *map, uint32_t key, uint64_t val,
			 bool replace)
{
	uint32_t i = slot_of(map, key);

	if (unlikely(key == 0))
		return -EINVAL;
	while (map->keys[i] != 0) {
		if (map->keys[i] == key) {
			if (!replace)
				return -EEXIST;
			map->vals[i] = val;
			return 0;
		}
		i = (i + 1) & map->mask;
	}
	if (map->count >= map->limit)
		return -ENOSPC;
	if (2 * (map->count + 1) > map->mask + 1) {
		if (sg_map_grow(map) != 0)
			return -ENOMEM;
		i = slot_of(map, key);
		while (map->keys[i] != 0)
			i = (i + 1) & map->mask;
	}
	map->keys[i] = key;
	map->vals[i] = val;
	map->count++;
	return 0;
}

int sg_map_put(struct sg_map *map, uint32_t key, uint64_t val)
{
	return sg_map_insert(map, key, val, true);
}

int sg_map_add(struct sg_map *map, uint32_t key, uint64_t val)
{
	return sg_map_insert(map, key, val, false);
}

bool sg_map_del(struct sg_map *map, uint32_t key)
{
	uint32_t i = slot_of(map, key), j, home;

	if (unlikely(key == 0))
		return false;
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
