/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lab-check.h: shared by the in-guest check programs of initramfs-src/.
 *
 * Every check prints one "usercopy-lab-check: PASS:|FAIL: ..." line
 * (harness/usercopy_lab/protocol.py defines the prefix); the
 * program's exit status is check_status(): 0 when every check passed, 1
 * when any failed.
 */
#ifndef LAB_CHECK_H
#define LAB_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SLAB_SYSFS "/sys/kernel/slab"
#define PREFIX "usercopy-lab-check: "

static int failures;

static inline __attribute__((format(printf, 2, 3))) void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf(PREFIX "%s: ", ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		failures++;
}

/* The exit status of a check program: 0 all passed, 1 any failed. */
static inline int check_status(void)
{
	return failures ? 1 : 0;
}

/* close() an fd that open() may have failed to give. */
static inline void close_if_open(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* The number in /sys/kernel/slab/CACHE/ATTR (SLUB), -1 if unreadable. */
static inline long read_long(const char *cache, const char *attr)
{
	char path[512], buf[64];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), SLAB_SYSFS "/%s/%s", cache, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

#endif
