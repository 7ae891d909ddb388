// SPDX-License-Identifier: GPL-2.0
/*
 * check-usersized-caches: in-guest proof of the user-sized kmalloc split
 * (CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC, patches/).
 *
 * 1. Every kmalloc-N cache has a usersized-kmalloc-N twin in /sys/kernel/slab
 *    (SLUB) that is a real cache, not an alias of a merged one, and whose
 *    whole object is whitelisted: useroffset 0, usersize == object_size.
 * 2. SysV messages (ipc/msgutil.c alloc_msg) of several sizes land in
 *    usersized-kmalloc-N: its in-use object count grows by at least the
 *    number of queued messages while kmalloc-N's does not.
 * 3. seq_file buffers (fs/seq_file.c seq_buf_alloc) of open /proc files
 *    land in usersized-kmalloc-4k likewise.
 *
 * Counts come from /proc/slabinfo (active_objs), which SLUB and SLAB both
 * provide.  Every check prints one "usercopy-lab-check: PASS:|FAIL:|SKIP:"
 * line; the exit status is the number of failed checks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab-check.h"

#define NR_ALLOCS 128
/* sizeof(struct msg_msg) on x86_64: list_head, m_type, m_ts, next, security */
#define MSG_MSG_HDR 48

/* active_objs of cache in /proc/slabinfo, -1 if absent. */
static long active_objs(const char *cache)
{
	char line[512], name[128];
	long active;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %ld", name, &active) == 2 &&
		    !strcmp(name, cache)) {
			fclose(f);
			return active;
		}
	}
	fclose(f);
	return -1;
}

static void check_sysfs(void)
{
	struct dirent *de;
	DIR *d = opendir(SLAB_SYSFS);
	int checked = 0;

	if (!d) {
		printf(PREFIX "SKIP: no " SLAB_SYSFS " (SLAB allocator): "
		       "cache attributes not checked\n");
		return;
	}
	while ((de = readdir(d))) {
		char twin[300], path[340];
		struct stat st;
		long osz, usz, uoff, aliases;

		if (strncmp(de->d_name, "kmalloc-", 8) ||
		    !strncmp(de->d_name, "kmalloc-cg-", 11) ||
		    !strncmp(de->d_name, "kmalloc-rcl-", 12))
			continue;
		checked++;
		snprintf(twin, sizeof(twin), "usersized-%s", de->d_name);
		snprintf(path, sizeof(path), SLAB_SYSFS "/%s", twin);
		if (lstat(path, &st)) {
			result(0, "%s has no %s in " SLAB_SYSFS, de->d_name, twin);
			continue;
		}
		osz = read_long(twin, "object_size");
		usz = read_long(twin, "usersize");
		uoff = read_long(twin, "useroffset");
		aliases = read_long(twin, "aliases");
		result(!S_ISLNK(st.st_mode) && aliases == 0 && uoff == 0 &&
		       osz > 0 && usz == osz,
		       "%s: %s, aliases %ld, useroffset %ld, usersize %ld, object_size %ld",
		       twin, S_ISLNK(st.st_mode) ? "an alias (symlink)" : "own cache",
		       aliases, uoff, usz, osz);
	}
	closedir(d);
	result(checked > 0, "%d kmalloc-N caches found in " SLAB_SYSFS, checked);
}

static void check_growth(const char *what, const char *size_name,
			 long before_user, long before_plain)
{
	char user[64], plain[64];
	long grown_user, grown_plain;

	snprintf(user, sizeof(user), "usersized-kmalloc-%s", size_name);
	snprintf(plain, sizeof(plain), "kmalloc-%s", size_name);
	grown_user = active_objs(user) - before_user;
	grown_plain = active_objs(plain) - before_plain;
	result(grown_user >= NR_ALLOCS && grown_plain < NR_ALLOCS / 4,
	       "%d %s: %s +%ld objects, %s +%ld", NR_ALLOCS, what, user,
	       grown_user, plain, grown_plain);
}

static void check_msg(size_t len, const char *size_name)
{
	struct { long mtype; char mtext[8192]; } msg = { .mtype = 1 };
	char user[64], plain[64], what[64];
	long bu, bp;
	int q, i;

	snprintf(user, sizeof(user), "usersized-kmalloc-%s", size_name);
	snprintf(plain, sizeof(plain), "kmalloc-%s", size_name);
	bu = active_objs(user);
	bp = active_objs(plain);
	if (bu < 0 || bp < 0) {
		result(0, "%s or %s missing from /proc/slabinfo", user, plain);
		return;
	}
	q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (q < 0) {
		result(0, "msgget: %s", strerror(errno));
		return;
	}
	memset(msg.mtext, 'm', len);
	for (i = 0; i < NR_ALLOCS; i++) {
		if (msgsnd(q, &msg, len, IPC_NOWAIT)) {
			result(0, "msgsnd #%d of %zu bytes: %s", i, len,
			       strerror(errno));
			msgctl(q, IPC_RMID, NULL);
			return;
		}
	}
	snprintf(what, sizeof(what), "msg_msg of %zu+%d bytes", len, MSG_MSG_HDR);
	check_growth(what, size_name, bu, bp);
	msgctl(q, IPC_RMID, NULL);
}

static void check_seq_file(void)
{
	long bu = active_objs("usersized-kmalloc-4k");
	long bp = active_objs("kmalloc-4k");
	int fds[NR_ALLOCS], i;
	char c;

	for (i = 0; i < NR_ALLOCS; i++) {
		/* seq_read() allocates the PAGE_SIZE buffer on the first read. */
		fds[i] = open("/proc/self/stat", O_RDONLY);
		if (fds[i] < 0 || read(fds[i], &c, 1) != 1) {
			result(0, "open/read /proc/self/stat #%d: %s", i,
			       strerror(errno));
			while (i >= 0)
				close(fds[i--]);
			return;
		}
	}
	check_growth("seq_file buffers", "4k", bu, bp);
	for (i = 0; i < NR_ALLOCS; i++)
		close(fds[i]);
}

int main(void)
{
	FILE *f = fopen("/proc/sys/kernel/msgmnb", "w");

	/* Room for NR_ALLOCS messages of the largest size in one queue. */
	if (f) {
		fprintf(f, "%d\n", 1 << 20);
		fclose(f);
	}
	check_sysfs();
	check_msg(16, "64");		/* 48 + 16 = 64 */
	check_msg(40, "96");		/* 48 + 40 = 88 -> 96 */
	check_msg(200, "256");		/* 48 + 200 = 248 -> 256 */
	check_msg(900, "1k");		/* 48 + 900 = 948 -> 1k */
	check_msg(2000, "2k");		/* 48 + 2000 = 2048 */
	check_seq_file();
	printf(PREFIX "%d failed\n", failures);
	return failures;
}
