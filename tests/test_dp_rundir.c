/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dp_rundir.c - the DPDK runtime dir of a killed process is removed
 * by whoever started it (meson test dp-rundir).
 *
 * A forked child brings its EAL up with its own --file-prefix and waits.
 * While it lives, dp_eal_runtime_dir_remove() must leave its dir
 * (-EBUSY: the primary holds its lock on 'config').  Once it is SIGKILLed
 * and reaped the dir is still there (DPDK removes nothing for a killed
 * process; dp_eal_fini does it only on a clean exit), and the call that
 * its starter makes removes it.  The stem form removes a job's dirs and
 * nobody else's; a name that is not one file name is refused.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dp.h"

#define RUN_ROOT "/var/run/dpdk"
#define UP_WAIT_MS 60000

static int failures;

/* Count a failed check and say what failed (printf-style @fmt). */
static void check(int ok, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	fprintf(stderr, "FAIL %s:%d: ", __FILE__, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CHECK(cond, ...) check(!!(cond), __LINE__, __VA_ARGS__)

static int dir_exists(const char *prefix)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), RUN_ROOT "/%s", prefix);
	return stat(path, &st) == 0;
}

/* Fork a child whose EAL runs with @prefix; return its pid once it is up
 * (-1 when it did not come up within UP_WAIT_MS). */
static pid_t eal_child(const char *prefix)
{
	struct pollfd pfd;
	char cfg_text[256], c;
	int p[2];
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct dp_config cfg;

		close(p[0]);
		alarm(120); /* never outlive a stuck parent for long */
		snprintf(cfg_text, sizeof(cfg_text),
			 "dev=net_null0 ip=10.77.11.1/24 mem=256 prefix=%s",
			 prefix);
		if (dp_config_parse(cfg_text, &cfg) != 0 ||
		    dp_eal_init(&cfg) != 0)
			_exit(1);
		if (write(p[1], "U", 1) != 1)
			_exit(1);
		for (;;)
			pause(); /* until killed */
	}
	close(p[1]);
	pfd.fd = p[0];
	pfd.events = POLLIN;
	if (pid < 0 || poll(&pfd, 1, UP_WAIT_MS) != 1 ||
	    read(p[0], &c, 1) != 1) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

static void kill_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	char a[80], b[80], other[64], stem[64];
	pid_t pa, pb, po;
	int rc;

	if (geteuid() != 0) {
		fprintf(stderr, "FAIL: needs root (the EAL's runtime dir in "
			RUN_ROOT "): run the test as root\n");
		return 1;
	}
	snprintf(stem, sizeof(stem), "sdp-rd%d-", (int)getpid());
	snprintf(a, sizeof(a), "%sa", stem);
	snprintf(b, sizeof(b), "%sb", stem);
	/* another job's prefix: not under this job's stem */
	snprintf(other, sizeof(other), "sdp-rd%dx-o", (int)getpid());

	pa = eal_child(a);
	CHECK(pa > 0, "child with prefix %s did not bring its EAL up", a);
	if (pa <= 0)
		return 1;
	CHECK(dir_exists(a), "a running EAL has no " RUN_ROOT "/%s", a);
	rc = dp_eal_runtime_dir_remove(a);
	CHECK(rc == -EBUSY, "removing a live EAL's dir returned %d, want "
	      "-EBUSY", rc);
	CHECK(dir_exists(a), "the live EAL's dir was removed");

	kill_reap(pa);
	CHECK(dir_exists(a), "the killed EAL's dir is already gone (then "
	      "nothing leaks and this test proves nothing)");
	rc = dp_eal_runtime_dir_remove(a);
	CHECK(rc == 0 && !dir_exists(a), "after its starter reaped it, the "
	      "killed EAL's dir %s is still there (rc %d)", a, rc);
	rc = dp_eal_runtime_dir_remove(a);
	CHECK(rc == 0, "a dir already gone: rc %d, want 0", rc);

	/* the stem: this job's killed children, not another job's EAL */
	pb = eal_child(b);
	po = eal_child(other);
	CHECK(pb > 0 && po > 0, "children %s, %s did not come up", b, other);
	if (pb > 0)
		kill_reap(pb);
	rc = dp_eal_runtime_dirs_remove(stem);
	CHECK(rc == 1 && !dir_exists(b), "stem %s: rc %d, want 1 (%s)", stem,
	      rc, b);
	CHECK(po <= 0 || dir_exists(other), "stem %s removed %s", stem,
	      other);
	if (po > 0) {
		kill_reap(po);
		CHECK(dp_eal_runtime_dir_remove(other) == 0 &&
		      !dir_exists(other), "%s left", other);
	}

	CHECK(dp_eal_runtime_dir_remove("a/b") == -EINVAL, "a/b accepted");
	CHECK(dp_eal_runtime_dir_remove("..") == -EINVAL, ".. accepted");
	CHECK(dp_eal_runtime_dir_remove("") == -EINVAL, "'' accepted");

	printf("dp-rundir: %s\n", failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}
