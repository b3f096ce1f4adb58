/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_uct_plugin.c - the transport is loadable the way UCX (from 1.22)
 * loads third-party transports from UCX_PLUGIN_PATH (meson test
 * uct-plugin).
 *
 * This program does not link libuct_sctp_dpdk.so.  It does what UCX
 * 1.22's module loader (ucs_module_load_from_dir in src/ucs/sys/module.c)
 * does with one directory of UCX_PLUGIN_PATH, against the UCX installed
 * here:
 *   - the extension <ext> is that of the libucs this process runs with,
 *     from its first '.' ("libucs.so.0" -> ".so.0");
 *   - a file is a candidate when its name is "libuct_" + <module> + <ext>
 *     and <module> has no '_' (UCX skips the others);
 *   - each candidate is dlopen()ed RTLD_LAZY | RTLD_LOCAL.
 * Then uct_query_components() must list the component "sctp_dpdk", which
 * it did not before the loading: the file the loader takes is our
 * transport and opening it registers the component.
 *
 * Usage: test_uct_plugin DIR   (the build's ucx-tl directory)
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <ucs/type/status.h>
#include <uct/api/uct.h>

#define COMPONENT "sctp_dpdk"

static int has_component(const char *name)
{
	uct_component_attr_t attr;
	uct_component_h *comps;
	unsigned n, i;
	int found = 0;

	if (uct_query_components(&comps, &n) != UCS_OK) {
		fprintf(stderr, "FAIL uct_query_components failed\n");
		return -1;
	}
	for (i = 0; i < n; i++) {
		attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
		if (uct_component_query(comps[i], &attr) == UCS_OK &&
		    strcmp(attr.name, name) == 0)
			found = 1;
	}
	uct_release_component_list(comps);
	return found;
}

/* The extension UCX's loader requires: libucs's file name from its first
 * '.' on. */
static int ucs_extension(char *ext, size_t len)
{
	const char *base, *dot;
	Dl_info info;

	if (dladdr((void *)ucs_status_string, &info) == 0 ||
	    info.dli_fname == NULL) {
		fprintf(stderr, "FAIL dladdr(ucs_status_string): %s\n",
			dlerror());
		return -1;
	}
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	dot = strchr(base, '.');
	snprintf(ext, len, "%s", dot ? dot : ".so");
	printf("libucs: %s, module extension \"%s\"\n", info.dli_fname, ext);
	return 0;
}

int main(int argc, char **argv)
{
	static const char prefix[] = "libuct_";
	size_t plen = sizeof(prefix) - 1, elen, nlen;
	char ext[64], path[4096], module[256];
	struct dirent *e;
	int before, after, loaded = 0;
	DIR *dir;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	if (ucs_extension(ext, sizeof(ext)) < 0)
		return 1;
	before = has_component(COMPONENT);
	if (before != 0) {
		fprintf(stderr, "FAIL component %s present before loading "
			"(%d): this program must not link the transport\n",
			COMPONENT, before);
		return 1;
	}

	dir = opendir(argv[1]);
	if (dir == NULL) {
		fprintf(stderr, "FAIL opendir %s: %m\n", argv[1]);
		return 1;
	}
	elen = strlen(ext);
	while ((e = readdir(dir)) != NULL) {
		nlen = strlen(e->d_name);
		if (nlen <= plen + elen || strncmp(e->d_name, prefix, plen) ||
		    strcmp(e->d_name + nlen - elen, ext))
			continue;
		snprintf(module, sizeof(module), "%.*s",
			 (int)(nlen - plen - elen), e->d_name + plen);
		if (strchr(module, '_') != NULL) {
			printf("skipped %s (module name \"%s\" has '_')\n",
			       e->d_name, module);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		if (dlopen(path, RTLD_LAZY | RTLD_LOCAL) == NULL) {
			fprintf(stderr, "FAIL dlopen %s: %s\n", path,
				dlerror());
			closedir(dir);
			return 1;
		}
		printf("loaded %s (module \"%s\")\n", e->d_name, module);
		loaded++;
	}
	closedir(dir);

	after = has_component(COMPONENT);
	if (loaded == 0 || after != 1) {
		fprintf(stderr, "FAIL %d file(s) of %s loadable as "
			"libuct_<module>%s; component %s %s: UCX_PLUGIN_PATH=%s "
			"would not load the transport\n", loaded, argv[1], ext,
			COMPONENT, after == 1 ? "registered" : "not registered",
			argv[1]);
		return 1;
	}
	printf("ok   component %s registered by the loader's rules\n",
	       COMPONENT);
	return 0;
}
