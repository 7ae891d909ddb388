// SPDX-License-Identifier: GPL-2.0
/*
 * audit-slab-caches: list every slab cache of the guest kernel with its
 * usercopy region, for the whitelist audit of the seeds suite
 * (harness/usercopy_lab/audit/slab_audit.py judges the table on the host,
 * against expected-oops/seeds/slab-audit.toml and the kernel's DWARF).
 *
 * One console line per entry of /sys/kernel/slab (SLUB):
 *
 *   usercopy-lab-slab: cache NAME object_size=N size=N useroffset=N usersize=N aliases=N
 *   usercopy-lab-slab: alias NAME -> TARGET
 *
 * A cache that SLUB merged into another one is a symlink to the real
 * cache's directory; a mergeable cache's directory has a unique id
 * (":A-0000192") instead of a name.  useroffset is patches/0009's file.
 * /proc/slabinfo names each real cache as kmem_cache->name, the name the
 * usercopy reports use; every one gets a line too:
 *
 *   usercopy-lab-slab: named NAME object_size=N
 *
 * and the listing ends with the counts, so that the host can tell a
 * complete table from one cut off on the console:
 *
 *   usercopy-lab-slab: end caches=N aliases=N named=N
 *
 * Before listing, it opens a CAIF socket and keeps it open: a cache that
 * only appeared with the first socket of its family would then be listed
 * too (PF_CAIF has a declared region but no cache; seed 007).
 *
 * The program only lists; it says FAIL when it cannot read the files or
 * open the socket.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <linux/caif/caif_socket.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab-check.h"

#define ROW "usercopy-lab-slab: "

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int list_sysfs(int *caches, int *aliases)
{
	struct dirent **names;
	int n, i, bad = 0;

	n = scandir(SLAB_SYSFS, &names, NULL, by_name);
	if (n < 0) {
		printf(PREFIX "FAIL: " SLAB_SYSFS ": %s (the audit needs SLUB)\n",
		       strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char path[PATH_MAX], target[PATH_MAX];
		struct stat st;
		ssize_t len;

		if (name[0] == '.')
			goto next;
		snprintf(path, sizeof(path), SLAB_SYSFS "/%s", name);
		if (lstat(path, &st)) {
			printf(PREFIX "FAIL: lstat %s: %s\n", path, strerror(errno));
			bad = 1;
		} else if (S_ISLNK(st.st_mode)) {
			len = readlink(path, target, sizeof(target) - 1);
			if (len < 0) {
				printf(PREFIX "FAIL: readlink %s: %s\n", path,
				       strerror(errno));
				bad = 1;
				goto next;
			}
			target[len] = '\0';
			printf(ROW "alias %s -> %s\n", name,
			       strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
			(*aliases)++;
		} else {
			printf(ROW "cache %s object_size=%ld size=%ld useroffset=%ld usersize=%ld aliases=%ld\n",
			       name, read_long(name, "object_size"),
			       read_long(name, "slab_size"),
			       read_long(name, "useroffset"),
			       read_long(name, "usersize"),
			       read_long(name, "aliases"));
			(*caches)++;
		}
		fflush(stdout);
next:
		free(names[i]);
	}
	free(names);
	return bad;
}

static int list_slabinfo(int *named)
{
	char line[512], name[128];
	long active, total, objsize;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f) {
		printf(PREFIX "FAIL: /proc/slabinfo: %s\n", strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%127s %ld %ld %ld", name, &active, &total,
			   &objsize) == 4) {
			printf(ROW "named %s object_size=%ld\n", name, objsize);
			fflush(stdout);
			(*named)++;
		}
	}
	fclose(f);
	return 0;
}

int main(void)
{
	int caches = 0, aliases = 0, named = 0, bad;
	int caif = socket(AF_CAIF, SOCK_SEQPACKET, CAIFPROTO_AT);

	if (caif < 0)
		printf(PREFIX "FAIL: socket(AF_CAIF, SOCK_SEQPACKET, CAIFPROTO_AT): %s\n",
		       strerror(errno));
	bad = caif < 0;
	bad |= list_sysfs(&caches, &aliases);
	bad |= list_slabinfo(&named);
	printf(ROW "end caches=%d aliases=%d named=%d\n", caches, aliases, named);
	if (!bad)
		printf(PREFIX "PASS: listed %d caches, %d aliases, %d slabinfo names "
		       "with a PF_CAIF socket open\n", caches, aliases, named);
	fflush(stdout);
	return bad;
}
