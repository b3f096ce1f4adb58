/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_eal.c - bringing the DPDK EAL up and down for one process.
 *
 * Each process (MPI rank) is its own DPDK primary process with its own
 * --file-prefix, so any number of them run side by side on one host.  The
 * EAL is initialised once per process (rte_eal_init cannot run twice) and
 * reference-counted; the last dp_eal_fini() cleans the EAL up and removes
 * its runtime directory (/var/run/dpdk/<prefix>), which DPDK itself leaves
 * behind.  After that the EAL cannot be brought up again in this process.
 *
 * Also here: the SDP_LOG sink that forwards to rte_log (types sdp.dp,
 * sdp.sctp, sdp.pace, sdp.uct, sdp.app), TSC helpers and the idle back-off.
 */
/* rte_intr_instance_alloc and its accessors are experimental in 22.11 */
#define ALLOW_EXPERIMENTAL_API 1

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/prctl.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_interrupts.h>
#include <rte_log.h>

#include "dp_internal.h"

#define EAL_MAX_ARGS 64

enum eal_state { EAL_DOWN = 0, EAL_UP, EAL_GONE };

static enum eal_state eal_state;
static unsigned int eal_refs;
static char eal_prefix[64];
static char eal_runtime_dir[PATH_MAX];
static int log_types[SDP_COMP_MAX];

static void rte_log_sink(enum sdp_log_level level, enum sdp_log_comp comp,
			 const char *msg)
{
	static const uint32_t lvl[] = {
		[SDP_LOG_ERR] = RTE_LOG_ERR,
		[SDP_LOG_WARN] = RTE_LOG_WARNING,
		[SDP_LOG_INFO] = RTE_LOG_INFO,
		[SDP_LOG_DEBUG] = RTE_LOG_DEBUG,
	};

	rte_log(lvl[level], (uint32_t)log_types[comp], "sdp.%s: %s\n",
		sdp_log_comp_name(comp), msg);
}

static void log_types_register(void)
{
	char name[32];
	int i, t;

	for (i = 0; i < SDP_COMP_MAX; i++) {
		snprintf(name, sizeof(name), "sdp.%s",
			 sdp_log_comp_name((enum sdp_log_comp)i));
		t = rte_log_register_type_and_pick_level(name, RTE_LOG_INFO);
		log_types[i] = t < 0 ? RTE_LOGTYPE_USER1 : t;
		/* SDP_LOG filters by its own level first */
		rte_log_set_level((uint32_t)log_types[i], RTE_LOG_DEBUG);
	}
	sdp_log_set_sink(rte_log_sink);
}

/* Split @extra at commas into argv entries (modifies @extra). */
static int add_extra(char *extra, char **argv, int argc)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(extra, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (argc >= EAL_MAX_ARGS - 1) {
			SDP_LOG(ERR, DP, "config: eal= has too many arguments "
				"(limit %d): pass fewer", EAL_MAX_ARGS / 2);
			return -EINVAL;
		}
		argv[argc++] = tok;
	}
	return argc;
}

int dp_eal_init(const struct dp_config *cfg)
{
	char *argv[EAL_MAX_ARGS];
	char lcore[16], mem[16], prefix[80], extra[256];
	int argc = 0, rc, ns_fd;

	if (eal_state == EAL_UP) {
		if (strcmp(cfg->file_prefix, eal_prefix) != 0)
			SDP_LOG(WARN, DP, "eal already up with prefix %s; "
				"ignoring prefix=%s", eal_prefix,
				cfg->file_prefix);
		eal_refs++;
		return 0;
	}
	if (eal_state == EAL_GONE) {
		SDP_LOG(ERR, DP, "eal was cleaned up in this process and "
			"cannot be initialised again: keep one reference "
			"until exit");
		return -EALREADY;
	}
	snprintf(lcore, sizeof(lcore), "%d", cfg->lcore);
	snprintf(mem, sizeof(mem), "%u", cfg->mem_mb);
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", cfg->file_prefix);
	argv[argc++] = (char *)"sdp";
	argv[argc++] = (char *)"-l";
	argv[argc++] = lcore;
	argv[argc++] = prefix;
	argv[argc++] = (char *)"-m";
	argv[argc++] = mem;
	if (!cfg->huge)
		argv[argc++] = (char *)"--no-huge";
	argv[argc++] = (char *)"--no-telemetry";
	argv[argc++] = (char *)"--log-level=lib.eal:warning";
	if (cfg->devargs[0] != '\0') {
		if (cfg->is_pci) {
			argv[argc++] = (char *)"-a";
		} else {
			argv[argc++] = (char *)"--no-pci";
			argv[argc++] = (char *)"--vdev";
		}
		argv[argc++] = (char *)(uintptr_t)cfg->devargs;
	} else {
		argv[argc++] = (char *)"--no-pci";
	}
	/* DPDK 22.11's memif refuses zero-copy=yes unless the EAL was told
	 * --single-file-segments ("Zero-copy doesn't support multi-file
	 * segments"), even with --no-huge, whose one memfd is exactly that */
	if (dp_devargs_memif_zc(cfg->devargs) &&
	    strstr(cfg->eal_extra, "--single-file-segments") == NULL)
		argv[argc++] = (char *)"--single-file-segments";
	snprintf(extra, sizeof(extra), "%s", cfg->eal_extra);
	argc = add_extra(extra, argv, argc);
	if (argc < 0)
		return argc;
	argv[argc] = NULL;

	/* vdevs are probed inside rte_eal_init: in the port's namespace */
	rc = dp_netns_enter(cfg->netns, &ns_fd);
	if (rc != 0)
		return rc;
	rc = rte_eal_init(argc, argv);
	dp_netns_leave(ns_fd);
	if (rc < 0) {
		int err = rte_errno;

		SDP_LOG(ERR, DP, "rte_eal_init failed: %s (prefix=%s dev=%s "
			"lcore=%d mem=%u): check the dev= devargs and "
			"eal= arguments; a stale /var/run/dpdk/%s may need "
			"removing", rte_strerror(err), cfg->file_prefix,
			cfg->devargs, cfg->lcore, cfg->mem_mb,
			cfg->file_prefix);
		/* EAL init failed half-way; it cannot be retried. */
		eal_state = EAL_GONE;
		return err == EINVAL ? -EINVAL : -EIO;
	}
	snprintf(eal_prefix, sizeof(eal_prefix), "%s", cfg->file_prefix);
	snprintf(eal_runtime_dir, sizeof(eal_runtime_dir), "%s",
		 rte_eal_get_runtime_dir());
	eal_state = EAL_UP;
	eal_refs = 1;
	log_types_register();
	SDP_LOG(INFO, DP, "eal up: prefix %s lcore %d mem %u MB %s tsc %"
		PRIu64 " Hz", cfg->file_prefix, cfg->lcore, cfg->mem_mb,
		cfg->huge ? "hugepages" : "no-huge", rte_get_tsc_hz());
	return 0;
}

/* Remove the files DPDK leaves in its runtime dir, then the dir. */
static void remove_runtime_dir(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *d;
	DIR *dh;

	if (dir[0] == '\0')
		return;
	dh = opendir(dir);
	if (dh == NULL)
		return;
	while ((d = readdir(dh)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (unlink(path) != 0)
			SDP_LOG(WARN, DP, "cannot remove %s: %m", path);
	}
	closedir(dh);
	if (rmdir(dir) != 0)
		SDP_LOG(WARN, DP, "cannot remove %s: %m", dir);
}

/* Where DPDK 22.11 keeps the runtime dirs (eal_create_runtime_dir):
 * /var/run/dpdk for root, else $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk. */
static void runtime_root(char *buf, size_t len)
{
	const char *base = "/var/run";

	if (getuid() != 0) {
		base = getenv("XDG_RUNTIME_DIR");
		if (base == NULL)
			base = "/tmp";
	}
	snprintf(buf, len, "%s/dpdk", base);
}

/* One plain file name: no '/', no "." or "..", not empty. */
static int prefix_ok(const char *prefix)
{
	return prefix != NULL && prefix[0] != '\0' && prefix[0] != '.' &&
	       strchr(prefix, '/') == NULL && strlen(prefix) < NAME_MAX;
}

/* Whether a live EAL owns @dir: this process's own, or another primary
 * that holds its write lock on 'config' (rte_eal_config_create). */
static int runtime_dir_in_use(const char *dir, const char *prefix)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[PATH_MAX + 16];
	int fd, busy;

	if (eal_state == EAL_UP && strcmp(prefix, eal_prefix) == 0)
		return 1;
	snprintf(path, sizeof(path), "%s/config", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no config: an EAL that never got that far */
	busy = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	close(fd);
	return busy;
}

int dp_eal_runtime_dir_remove(const char *prefix)
{
	char root[PATH_MAX - NAME_MAX - 2], dir[PATH_MAX];
	struct stat st;

	if (!prefix_ok(prefix)) {
		SDP_LOG(ERR, DP, "runtime dir of prefix '%s': not one file "
			"name: give the exact --file-prefix of the process",
			prefix != NULL ? prefix : "(null)");
		return -EINVAL;
	}
	runtime_root(root, sizeof(root));
	snprintf(dir, sizeof(dir), "%s/%s", root, prefix);
	if (stat(dir, &st) != 0)
		return 0;
	if (runtime_dir_in_use(dir, prefix))
		return -EBUSY;
	remove_runtime_dir(dir);
	return stat(dir, &st) == 0 ? -EIO : 0;
}

int dp_eal_runtime_dirs_remove(const char *stem)
{
	char root[PATH_MAX - NAME_MAX - 2];
	int removed = 0, rc = 0;
	size_t n;
	struct dirent *d;
	DIR *dh;

	if (!prefix_ok(stem)) {
		SDP_LOG(ERR, DP, "runtime dirs of stem '%s': not one file "
			"name: give the job's own prefix start, e.g. "
			"sdp-<job>-", stem != NULL ? stem : "(null)");
		return -EINVAL;
	}
	n = strlen(stem);
	runtime_root(root, sizeof(root));
	dh = opendir(root);
	if (dh == NULL)
		return 0;
	while ((d = readdir(dh)) != NULL) {
		if (strncmp(d->d_name, stem, n) != 0)
			continue;
		rc = dp_eal_runtime_dir_remove(d->d_name);
		if (rc == 0)
			removed++;
	}
	closedir(dh);
	return rc < 0 && removed == 0 ? rc : removed;
}

/*
 * DPDK 22.11's rte_eal_cleanup unmaps all EAL memory (rte_eal_memory_detach)
 * while the EAL interrupt thread keeps running, and memif never
 * unregisters its listener socket's callback: that source's handle, an
 * rte_malloc copy, stays on the thread's list.  Whatever wakes the thread
 * after the unmap -- the rebuild of its wait list that every unregister
 * asks for (rte_eal_cleanup's own alarm cleanup among them, after our
 * close used an alarm) or a connection to the listener -- reads it: a
 * memif server died by SIGSEGV in eal-intr-thread at exit under load.
 * So before the cleanup the thread is parked for good in a callback of
 * ours: it has run everything queued before, and runs nothing after.
 */
#define INTR_PARK_WAIT_MS 5000

static uint32_t intr_parked;	/* __atomic */
/* The parking callback's source: it stays registered (the thread never
 * returns from the callback), so it is kept where leak checkers see it
 * reachable (the fuzz harnesses' LeakSanitizer reported it at exit). */
static struct rte_intr_handle *intr_park_ih;

static void intr_park_cb(void *arg)
{
	RTE_SET_USED(arg);
	__atomic_store_n(&intr_parked, 1, __ATOMIC_RELEASE);
	for (;;)
		pause(); /* until the process exits */
}

static void intr_thread_park(void)
{
	struct timespec ts = { 0, 200 * 1000 };
	struct rte_intr_handle *ih;
	uint64_t one = 1, end;
	int efd;

	ih = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	intr_park_ih = ih;
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ih == NULL || efd < 0 || rte_intr_fd_set(ih, efd) != 0 ||
	    rte_intr_type_set(ih, RTE_INTR_HANDLE_EXT) != 0 ||
	    rte_intr_callback_register(ih, intr_park_cb, NULL) != 0 ||
	    write(efd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
		SDP_LOG(WARN, DP, "cannot park the EAL interrupt thread "
			"before cleanup: %m");
		return; /* handle and fd stay: the process is exiting */
	}
	end = dp_tsc() + dp_ms_to_tsc(INTR_PARK_WAIT_MS);
	while (!__atomic_load_n(&intr_parked, __ATOMIC_ACQUIRE) &&
	       dp_tsc() < end)
		nanosleep(&ts, NULL);
	if (!__atomic_load_n(&intr_parked, __ATOMIC_ACQUIRE))
		SDP_LOG(WARN, DP, "the EAL interrupt thread did not park within "
			"%u ms: cleaning up anyway", INTR_PARK_WAIT_MS);
}

void dp_eal_hold(void)
{
	if (eal_state == EAL_UP)
		eal_refs++;
}

void dp_eal_fini(void)
{
	if (eal_state != EAL_UP) {
		SDP_LOG(WARN, DP, "dp_eal_fini without dp_eal_init");
		return;
	}
	if (--eal_refs > 0)
		return;
	intr_thread_park();
	sdp_log_set_sink(NULL);
	rte_eal_cleanup();
	remove_runtime_dir(eal_runtime_dir);
	eal_state = EAL_GONE;
}

uint64_t dp_tsc_hz(void)
{
	return rte_get_tsc_hz();
}

uint64_t dp_tsc(void)
{
	return rte_rdtsc();
}

uint64_t dp_ms_to_tsc(uint64_t ms)
{
	return ms * rte_get_tsc_hz() / 1000;
}

