/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdp_parse.c - number parsing shared by the configuration parsers of every
 * component, so that "1G", "9000" and "512k" mean the same everywhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sdp.h"

int sdp_parse_u64(const char *text, int si, uint64_t *value_p)
{
	unsigned long long v;
	uint64_t mult = 1, base = si ? 1000 : 1024;
	char *end;

	if (text == NULL || *text == '\0' || *text == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno != 0 || end == text)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mult = base;
		end++;
		break;
	case 'm':
	case 'M':
		mult = base * base;
		end++;
		break;
	case 'g':
	case 'G':
		mult = base * base * base;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end != '\0')
		return -EINVAL;
	if (v != 0 && mult > UINT64_MAX / v)
		return -EINVAL;
	*value_p = (uint64_t)v * mult;
	return 0;
}

int sdp_kv_parse(const char *text, enum sdp_log_comp comp,
		 const char *example, sdp_kv_apply_t apply, void *arg)
{
	char *copy, *tok, *save = NULL;
	int rc = 0;

	if (text == NULL || *text == '\0')
		return 0;
	copy = strdup(text);
	if (copy == NULL)
		return -ENOMEM;
	for (tok = strtok_r(copy, " \t\n", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL || eq == tok) {
			sdp_log(SDP_LOG_ERR, comp, "config: token '%s' is not "
				"key=value: write e.g. %s", tok, example);
			rc = -EINVAL;
			continue;
		}
		*eq = '\0';
		if (apply(arg, tok, eq + 1) != 0)
			rc = -EINVAL;
	}
	free(copy);
	return rc;
}
