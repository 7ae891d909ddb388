// SPDX-License-Identifier: GPL-2.0
/*
 * check-usersized-caches: in-guest proof of the cache split of patches/
 * (CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC).
 *
 * 1. SLUB sysfs (/sys/kernel/slab; SKIP under SLAB, which has none):
 *    - every kmalloc-N cache has a usersized-kmalloc-N twin, and every
 *      kmalloc-cg-N one a usersized-kmalloc-cg-N twin (no -cg twins when
 *      there are no kmalloc-cg caches: memcg kmem off or cgroup.memory=
 *      nokmem), each a real cache (not an alias of a merged one) whose
 *      whole object is whitelisted: useroffset 0, usersize == object_size;
 *    - every kmalloc-N size has msg_msg-N and msg_msgseg-N caches (ipc/
 *      msgutil.c, kmem_buckets_create()) whose window is the text after
 *      the header: useroffset sizeof(struct msg_msg) (msg_msgseg: sizeof
 *      struct msg_msgseg; kernel-layout.h: 48 and 8 on 64-bit, 24 and 4 on
 *      i386), usersize min(N - useroffset, PAGE_SIZE - useroffset), none
 *      at all when N <= useroffset.
 * 2. SysV messages of several sizes, queued and so alive, land in msg_msg-N
 *    (and the part beyond the first page in msg_msgseg-N), N the smallest
 *    kmalloc size class of the guest holding header + text: its in-use
 *    object count (/proc/slabinfo, SLUB and SLAB) grows by the number of
 *    messages (less than a slab's objects short: check_growth()) while
 *    usersized-kmalloc-N, kmalloc-N and kmalloc-cg-N grow by less than a
 *    quarter of it.
 * 3. seq_file buffers (fs/seq_file.c, GFP_KERNEL_ACCOUNT | GFP_USERCOPY) of
 *    open /proc files land in usersized-kmalloc-cg-4k, or in
 *    usersized-kmalloc-4k when the -cg caches are aliases, likewise.
 *
 * Every check prints one "usercopy-lab-check: PASS:|FAIL:|SKIP:" line; the
 * exit status is 0 when every check passed, else 1.
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

#include "kernel-layout.h"
#include "lab-check.h"

#define NR_ALLOCS 128
#define PAGE 4096

/*
 * active_objs of cache in /proc/slabinfo, -1 if absent; its objperslab in
 * *per_slab if not NULL.
 */
static long active_objs_of(const char *cache, long *per_slab)
{
	char line[512], name[128];
	long active, num, size, per;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %ld %ld %ld %ld", name, &active, &num,
			   &size, &per) == 5 && !strcmp(name, cache)) {
			fclose(f);
			if (per_slab)
				*per_slab = per;
			return active;
		}
	}
	fclose(f);
	return -1;
}

static long active_objs(const char *cache)
{
	return active_objs_of(cache, NULL);
}

/* 1 if CACHE is a cache of its own in sysfs, 0 if an alias, -1 if absent. */
static int own_cache(const char *cache)
{
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), SLAB_SYSFS "/%s", cache);
	if (lstat(path, &st))
		return -1;
	return !S_ISLNK(st.st_mode) && read_long(cache, "aliases") == 0;
}

/* CACHE must exist, be its own cache and whitelist [off, off + size). */
static void check_window(const char *cache, long off, long size)
{
	long uoff = read_long(cache, "useroffset");
	long usz = read_long(cache, "usersize");
	int own = own_cache(cache);

	if (own < 0) {
		result(0, "%s missing from " SLAB_SYSFS, cache);
		return;
	}
	result(own && uoff == off && usz == size,
	       "%s: %s, useroffset %ld, usersize %ld (want %ld, %ld)", cache,
	       own ? "own cache" : "an alias", uoff, usz, off, size);
}

static int has_cg_caches;

static void check_sysfs(void)
{
	struct dirent *de;
	DIR *d = opendir(SLAB_SYSFS);
	int checked = 0, cg = 0;

	if (!d) {
		printf(PREFIX "SKIP: no " SLAB_SYSFS " (SLAB allocator): "
		       "cache attributes not checked\n");
		return;
	}
	while ((de = readdir(d))) {
		char twin[300];
		long osz;

		if (strncmp(de->d_name, "kmalloc-", 8) ||
		    !strncmp(de->d_name, "kmalloc-rcl-", 12))
			continue;
		cg += !strncmp(de->d_name, "kmalloc-cg-", 11);
		checked++;
		snprintf(twin, sizeof(twin), "usersized-%s", de->d_name);
		osz = read_long(twin, "object_size");
		check_window(twin, 0, osz > 0 ? osz : -2);
		if (strncmp(de->d_name, "kmalloc-cg-", 11)) {
			long size = read_long(de->d_name, "object_size");
			long hdrs[2] = { MSG_MSG_HDR, MSG_SEG_HDR };
			const char *names[2] = { "msg_msg", "msg_msgseg" };
			int i;

			for (i = 0; i < 2; i++) {
				long off = size > hdrs[i] ? hdrs[i] : 0;
				long len = size > hdrs[i] ? size - hdrs[i] : 0;

				if (len > PAGE - hdrs[i])
					len = PAGE - hdrs[i];
				snprintf(twin, sizeof(twin), "%s-%s", names[i],
					 de->d_name + 8);
				check_window(twin, off, len);
			}
		}
	}
	closedir(d);
	has_cg_caches = cg > 0;
	result(checked > 0, "%d kmalloc-N and %d kmalloc-cg-N caches found in "
	       SLAB_SYSFS, checked - cg, cg);
	if (!cg) {
		d = opendir(SLAB_SYSFS);
		while (d && (de = readdir(d)))
			if (!strncmp(de->d_name, "usersized-kmalloc-cg-", 21))
				result(0, "%s exists without kmalloc-cg caches",
				       de->d_name);
		if (d)
			closedir(d);
	}
}

/*
 * Settle CACHE before its count is read (SLUB; nothing under SLAB, which
 * has no sysfs): kmem_cache_shrink() through sysfs flushes the per-CPU
 * slabs and their partial lists, whose free objects slabinfo counts as
 * active, and under generic KASAN drains the cache's objects from the
 * quarantine (kasan_cache_shrink()), where freed objects stay counted as
 * active until a drain frees them in a batch.  Unsettled, each
 * /proc/slabinfo read this program makes frees its seq_file buffer into
 * that quarantine, and a drain during a check takes its growth back: 128
 * seq_file buffers counted +76 under KASAN on 2026-12-06.  Settled, the
 * count is still high by the free objects of the one slab the read's own
 * buffer makes the CPU slab: less than a slab's worth (check_growth()).
 */
static void settle(const char *cache)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), SLAB_SYSFS "/%s/shrink", cache);
	f = fopen(path, "w");
	if (!f)
		return;
	fputs("1\n", f);
	fclose(f);
}

struct counts {
	const char *names[4];
	long before[4];
};

/* Snapshot the active objects of the target cache and up to 3 others. */
static int snapshot(struct counts *c)
{
	int i;

	for (i = 0; i < 4 && c->names[i]; i++) {
		settle(c->names[i]);
		c->before[i] = active_objs(c->names[i]);
		if (c->before[i] < 0 && i == 0) {
			result(0, "%s missing from /proc/slabinfo", c->names[0]);
			return -1;
		}
	}
	return 0;
}

/*
 * names[0] grew by want objects, each other one by less than a quarter.
 * Each count is exact up to the free objects of one CPU slab (settle()),
 * so the growth may fall short of want by less than a slab's objects.
 */
static void check_growth(const char *what, struct counts *c, long want)
{
	char others[256] = "";
	long grown, per_slab = 1;
	int ok, i;

	settle(c->names[0]);
	grown = active_objs_of(c->names[0], &per_slab) - c->before[0];
	ok = grown > want - per_slab;
	for (i = 1; i < 4 && c->names[i]; i++) {
		long g;

		if (c->before[i] < 0)
			continue;
		settle(c->names[i]);
		g = active_objs(c->names[i]) - c->before[i];
		ok &= g < want / 4;
		snprintf(others + strlen(others), sizeof(others) - strlen(others),
			 ", %s +%ld", c->names[i], g);
	}
	result(ok, "%ld %s: %s +%ld (%ld per slab)%s", want, what, c->names[0],
	       grown, per_slab, others);
}

static struct kmalloc_class classes[MAX_KMALLOC_CLASSES];
static int nr_classes;

/*
 * A message of len bytes: the header and the text up to a page in
 * msg_msg-N, the rest (if any) after a msg_msgseg header in msg_msgseg-M
 * (ipc/msgutil.c alloc_msg()), N and M the guest's kmalloc classes.
 */
static void check_msg(size_t len)
{
	static struct { long mtype; char mtext[PAGE + 512]; } msg = { .mtype = 1 };
	char target[64], usersized[64], plain[64], cg[64], what[96];
	char segs[64], seg_usersized[64], seg_cg[64];
	struct counts c = { .names = { target, usersized, plain, cg } };
	struct counts s = { .names = { segs, seg_usersized, seg_cg } };
	long first = MSG_MSG_HDR + (long)len, rest = 0;
	const struct kmalloc_class *k, *seg = NULL;
	const char *size_name, *seg_name = NULL;
	int q, i;

	if (first > PAGE) {
		rest = first - PAGE;
		first = PAGE;
		seg = kmalloc_class_of(classes, nr_classes, MSG_SEG_HDR + rest);
	}
	k = kmalloc_class_of(classes, nr_classes, first);
	if (!k || (rest && !seg)) {
		result(0, "no kmalloc class for a message of %zu bytes (%d classes "
		       "in /proc/slabinfo)", len, nr_classes);
		return;
	}
	size_name = k->name;
	seg_name = seg ? seg->name : NULL;

	snprintf(target, sizeof(target), "msg_msg-%s", size_name);
	snprintf(usersized, sizeof(usersized), "usersized-kmalloc-%s", size_name);
	snprintf(plain, sizeof(plain), "kmalloc-%s", size_name);
	snprintf(cg, sizeof(cg), "kmalloc-cg-%s", size_name);
	if (seg_name) {
		snprintf(segs, sizeof(segs), "msg_msgseg-%.15s", seg_name);
		snprintf(seg_usersized, sizeof(seg_usersized),
			 "usersized-kmalloc-%.15s", seg_name);
		snprintf(seg_cg, sizeof(seg_cg), "kmalloc-cg-%.15s", seg_name);
	}
	if (snapshot(&c) || (seg_name && snapshot(&s)))
		return;
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
	snprintf(what, sizeof(what), "messages of %zu bytes", len);
	check_growth(what, &c, NR_ALLOCS);
	if (seg_name) {
		snprintf(what, sizeof(what), "segments of %zu bytes",
			 len - (size_t)(PAGE - MSG_MSG_HDR));
		check_growth(what, &s, NR_ALLOCS);
	}
	msgctl(q, IPC_RMID, NULL);
}

/*
 * Messages exactly filling distinct msg_msg-N caches: the two smallest
 * above the header, the first of at least 256 and of 1 KiB (x86-64:
 * msg_msg-64, -96, -256, -1k; i386: -32, -64, -256, -1k; arm64: -128,
 * -256, -1k).  Distinct, because slabinfo's active count of SLUB counts the
 * free objects of a CPU slab as active: messages freed by an earlier check
 * of the same cache would hide the growth of the next.
 */
static void check_msgs(void)
{
	const struct kmalloc_class *picked[4] = {
		kmalloc_class_of(classes, nr_classes, MSG_MSG_HDR + 1), NULL,
		kmalloc_class_of(classes, nr_classes, 256),
		kmalloc_class_of(classes, nr_classes, 1024),
	};
	int i, j;

	if (picked[0])
		picked[1] = kmalloc_class_of(classes, nr_classes, picked[0]->size + 1);
	for (i = 0; i < 4; i++) {
		for (j = 0; j < i && picked[i]; j++)
			if (picked[j] == picked[i])
				picked[i] = NULL;
		if (picked[i])
			check_msg(picked[i]->size - MSG_MSG_HDR);
	}
}

static void check_seq_file(void)
{
	struct counts c = { .names = { NULL, "kmalloc-4k", "kmalloc-cg-4k" } };
	int fds[NR_ALLOCS], i;
	char ch;

	if (access(SLAB_SYSFS, F_OK))	/* SLAB: decide by slabinfo */
		has_cg_caches = active_objs("usersized-kmalloc-cg-4k") >= 0;
	c.names[0] = has_cg_caches ? "usersized-kmalloc-cg-4k" :
				     "usersized-kmalloc-4k";
	if (snapshot(&c))
		return;
	for (i = 0; i < NR_ALLOCS; i++) {
		/* seq_read() allocates the PAGE_SIZE buffer on the first read. */
		fds[i] = open("/proc/self/stat", O_RDONLY);
		if (fds[i] < 0 || read(fds[i], &ch, 1) != 1) {
			result(0, "open/read /proc/self/stat #%d: %s", i,
			       strerror(errno));
			while (i >= 0)
				close(fds[i--]);
			return;
		}
	}
	check_growth("seq_file buffers", &c, NR_ALLOCS);
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
	nr_classes = kmalloc_classes(classes, MAX_KMALLOC_CLASSES);
	result(nr_classes > 0, "%d kmalloc size classes in /proc/slabinfo, "
	       "struct msg_msg %ld bytes, msg_msgseg %ld", nr_classes,
	       MSG_MSG_HDR, MSG_SEG_HDR);
	check_msgs();
	/* a full first page in msg_msg-4k and a segment of 8 + 200 bytes */
	check_msg(PAGE - MSG_MSG_HDR + 200);
	check_seq_file();
	printf(PREFIX "%d failed\n", failures);
	return check_status();
}
