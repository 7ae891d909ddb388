// SPDX-License-Identifier: GPL-2.0
/*
 * check-objcg-caches: where the memcg objcg arrays of charged slabs come
 * from (patches/0003: OBJCGS_CLEAR_MASK clears __GFP_USERCOPY).
 *
 * With MEMCG_KMEM, the first charged object of a slab makes
 * memcg_alloc_slab_cgroups() (mm/memcontrol.c) allocate an array of
 * struct obj_cgroup pointers, one per object, with kcalloc_node() and the
 * allocation's own gfp flags minus OBJCGS_CLEAR_MASK.  Kernel pointers
 * must never sit in a cache meant for user data, so no such array may come
 * from a usersized-kmalloc-* or msg_msg* cache.
 *
 * Only tasks outside the root memory cgroup are charged, so this program
 * mounts cgroup2, enables the memory controller, moves itself into a child
 * cgroup and then makes charged allocations that start new slabs: SysV
 * messages (msg_msg-N, msg_msgseg-N, SLAB_ACCOUNT) and seq_file buffers
 * (GFP_KERNEL_ACCOUNT | GFP_USERCOPY: usersized-kmalloc-cg-4k).
 *
 * The arrays are found with SLUB's allocation tracking: booted with
 * slub_debug=U every cache records the caller of each live object, and
 * /sys/kernel/debug/slab/<cache>/alloc_traces lists them, so the lines
 * naming memcg_alloc_slab_cgroups say which caches hold objcg arrays.
 *
 * With cgroup.memory=nokmem on the command line nothing is charged: the
 * check then wants no objcg array at all and no usersized-kmalloc-cg-*
 * cache (they are aliases of usersized-kmalloc-*, as kmalloc-cg-* are of
 * kmalloc-*).
 *
 * Every check prints one "usercopy-lab-check: PASS:|FAIL:" line; the exit
 * status is 0 when every check passed, else 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab-check.h"

#define CGROOT "/sys/fs/cgroup"
#define CHILD CGROOT "/lab"
#define TRACES "/sys/kernel/debug/slab"
#define NR_ALLOCS 128

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* The "slab" line of the child cgroup's memory.stat, in bytes; -1 if none. */
static long cgroup_slab_bytes(void)
{
	static char buf[8192];
	char *line;

	if (read_file(CHILD "/memory.stat", buf, sizeof(buf)))
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, "slab ", 5))
			return atol(line + 5);
	return -1;
}

/* Mount cgroup2, create CHILD with the memory controller, move there. */
static int enter_child_cgroup(void)
{
	char buf[128], pid[32];

	if (mount("none", CGROOT, "cgroup2", 0, NULL) && errno != EBUSY) {
		result(0, "mount cgroup2 on " CGROOT ": %s", strerror(errno));
		return -1;
	}
	if (write_file(CGROOT "/cgroup.subtree_control", "+memory")) {
		result(0, "enable the memory controller: %s", strerror(errno));
		return -1;
	}
	if (mkdir(CHILD, 0755) && errno != EEXIST) {
		result(0, "mkdir " CHILD ": %s", strerror(errno));
		return -1;
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file(CHILD "/cgroup.procs", pid)) {
		result(0, "move to " CHILD ": %s", strerror(errno));
		return -1;
	}
	if (read_file("/proc/self/cgroup", buf, sizeof(buf))) {
		result(0, "read /proc/self/cgroup: %s", strerror(errno));
		return -1;
	}
	buf[strcspn(buf, "\n")] = '\0';
	result(!strcmp(buf, "0::/lab"), "this task is in cgroup '%s' (want 0::/lab)",
	       buf);
	return strcmp(buf, "0::/lab") ? -1 : 0;
}

struct holders {
	int caches;		/* caches holding objcg arrays */
	long arrays;		/* live objcg arrays in all of them */
	long in_user_caches;	/* ... in usersized-* and msg_msg* caches */
	char where[2048];	/* "cache count, ..." */
};

/*
 * Sum the counts of the alloc_traces entries of every cache whose caller is
 * FUNC.  An entry is "COUNT CALLER age=... pid=..." and may be followed by
 * indented stack lines, which start with no count.
 */
static int find_holders(const char *func, struct holders *h)
{
	struct dirent *de;
	DIR *d = opendir(TRACES);
	int traced = 0;

	memset(h, 0, sizeof(*h));
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[512], line[512], caller[256];
		long count = 0, n;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), TRACES "/%s/alloc_traces", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		traced++;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%ld %255s", &n, caller) == 2 &&
			    !strncmp(caller, func, strlen(func)) &&
			    caller[strlen(func)] == '+')
				count += n;
		fclose(f);
		if (!count)
			continue;
		h->caches++;
		h->arrays += count;
		if (!strncmp(de->d_name, "usersized-", 10) ||
		    !strncmp(de->d_name, "msg_msg", 7))
			h->in_user_caches += count;
		snprintf(h->where + strlen(h->where), sizeof(h->where) - strlen(h->where),
			 "%s%s %ld", h->where[0] ? ", " : "", de->d_name, count);
	}
	closedir(d);
	return traced ? 0 : -1;
}

/* Charged allocations that start new slabs; returns the bytes queued. */
static long allocate(int fds[NR_ALLOCS], int *queue)
{
	static struct { long mtype; char mtext[4400]; } msg = { .mtype = 1 };
	static const size_t sizes[] = { 16, 900, 4248 };
	long bytes = 0;
	char ch;
	int i, s;

	*queue = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (*queue < 0) {
		result(0, "msgget: %s", strerror(errno));
		return -1;
	}
	memset(msg.mtext, 'm', sizeof(msg.mtext));
	for (s = 0; s < 3; s++) {
		for (i = 0; i < NR_ALLOCS; i++) {
			if (msgsnd(*queue, &msg, sizes[s], IPC_NOWAIT)) {
				result(0, "msgsnd of %zu bytes: %s", sizes[s],
				       strerror(errno));
				return -1;
			}
			bytes += sizes[s];
		}
	}
	for (i = 0; i < NR_ALLOCS; i++) {
		/* seq_read() allocates the PAGE_SIZE buffer on the first read. */
		fds[i] = open("/proc/self/stat", O_RDONLY);
		if (fds[i] < 0 || read(fds[i], &ch, 1) != 1) {
			result(0, "open/read /proc/self/stat: %s", strerror(errno));
			return -1;
		}
		bytes += 4096;
	}
	return bytes;
}

int main(void)
{
	const char *func = "memcg_alloc_slab_cgroups";
	struct holders before, after;
	int nokmem = 0, fds[NR_ALLOCS], queue = -1;
	char cmdline[1024] = "";
	long slab0, slab1, bytes;
	FILE *f = fopen("/proc/sys/kernel/msgmnb", "w");

	if (f) {
		fprintf(f, "%d\n", 4 << 20);
		fclose(f);
	}
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	nokmem = strstr(cmdline, "cgroup.memory=nokmem") != NULL;
	printf(PREFIX "memcg kmem accounting %s (command line)\n",
	       nokmem ? "off: cgroup.memory=nokmem" : "on");

	if (find_holders(func, &before)) {
		result(0, "no " TRACES "/*/alloc_traces: boot with slub_debug=U");
		return check_status();
	}
	if (enter_child_cgroup())
		return check_status();
	slab0 = cgroup_slab_bytes();
	bytes = allocate(fds, &queue);
	if (bytes < 0)
		return check_status();
	slab1 = cgroup_slab_bytes();
	find_holders(func, &after);
	printf(PREFIX "objcg arrays (%s in alloc_traces): %s\n", func,
	       after.where[0] ? after.where : "none");

	if (nokmem) {
		DIR *d = opendir("/sys/kernel/slab");
		struct dirent *de;
		int cg = 0;

		result(after.arrays == 0, "no objcg arrays without kmem accounting: %ld",
		       after.arrays);
		result(slab1 - slab0 < bytes / 4,
		       "cgroup slab usage grew by %ld bytes for %ld bytes allocated",
		       slab1 - slab0, bytes);
		while (d && (de = readdir(d)))
			cg += !strncmp(de->d_name, "usersized-kmalloc-cg-", 21);
		if (d)
			closedir(d);
		result(d && cg == 0, "%d usersized-kmalloc-cg-* caches (want none: aliases)",
		       cg);
	} else {
		result(slab1 - slab0 >= bytes / 2,
		       "the child cgroup was charged: slab usage +%ld bytes for %ld bytes allocated",
		       slab1 - slab0, bytes);
		result(after.arrays > before.arrays,
		       "charged allocations added objcg arrays: %ld -> %ld",
		       before.arrays, after.arrays);
		result(after.in_user_caches == 0,
		       "%ld objcg arrays in usersized-* or msg_msg* caches (want 0)",
		       after.in_user_caches);
	}
	if (queue >= 0)
		msgctl(queue, IPC_RMID, NULL);
	printf(PREFIX "%d failed\n", failures);
	return check_status();
}
