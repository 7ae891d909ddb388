// SPDX-License-Identifier: GPL-2.0
/*
 * hunt-probe-regions: a LAB-WRITTEN coverage filler of `make hunt`, NOT a
 * workload written elsewhere (docs/hunt.md counts its copies apart, family
 * lab-probes).  Each group makes the checked copies (copy_{to,from}_user()
 * or copy_{to,from}_iter() with a size that is not a compile-time
 * constant, so __check_heap_object() runs) that reach one family of the
 * caches with a usercopy region, one size class after another.  The paths
 * were read from the patched 6.1.192 tree for the caches the first hunts
 * never saw copied (expected-oops/hunt/coverage-notes.toml):
 *
 *  sysctl    read()/write() of a /proc/sys file with COUNT bytes:
 *            proc_sys_call_handler() kvzalloc(COUNT + 1, GFP_KERNEL) and
 *            copy_to_iter()/copy_from_iter_full() on it: kmalloc-<n>, both
 *            directions, every size 8 .. 8k (the write goes to
 *            vm/drop_caches and is refused by its handler after the copy).
 *  xattr     on a tmpfs (on the XFS image below when the tmpfs has no
 *            xattrs, as on the seeds kernel): setxattr() of trusted.* values (vmemdup_user():
 *            usersized-kmalloc-<n> overwrite), getxattr()/listxattr() with
 *            a buffer of each size (kvzalloc()/kvmalloc() GFP_KERNEL, then
 *            copy_to_user(): kmalloc-<n> exposure).
 *  keys      add_key("user") payloads (kvmalloc() + copy_from_user():
 *            kmalloc-<n> overwrite; the description goes through
 *            strndup_user(): usersized-kmalloc-<n>), keyctl_read() into a
 *            buffer of each size (kvmalloc(buflen) + copy_to_user():
 *            kmalloc-<n> exposure), KEYCTL_DESCRIBE (kasprintf() buffer and
 *            the kmemdup()ed description: kmalloc-<n> exposure).
 *  inotify   IN_CREATE events with names of 1 .. 255 bytes, read():
 *            copy_event_to_user() copies event->name out of the event that
 *            inotify_handle_inode_event() kmalloc()ed with
 *            GFP_KERNEL_ACCOUNT: kmalloc-cg-64 .. kmalloc-cg-512 exposure.
 *  dedupe    FIDEDUPERANGE with 0 .. 127 destinations (all fd -1):
 *            ioctl_file_dedupe_range() memdup_user()s the request
 *            (usersized-kmalloc-<n> overwrite) and copies it back
 *            (exposure), 32 .. 4k; needs a regular file on a filesystem
 *            with remap_file_range (XFS: the lab's /data/xfs-seed009 image,
 *            loop-mounted here, or the file given as argv[1]).
 *  skb_cb    a UDP socket with SO_RXQ_OVFL and the smallest receive
 *            buffer, overrun over loopback, then read with a control
 *            buffer: sock_recv_drops() put_cmsg()s
 *            SOCK_SKB_CB(skb)->dropcount out of skb->cb
 *            (skbuff_head_cache exposure; put_cmsg() checks the source).
 *  cwd       getcwd() at depths that make paths of 1 .. 4000 bytes:
 *            the path is built in a __getname() buffer and copied out
 *            (names_cache exposure).
 *  sit_prl   a sit tunnel with 512 potential-router-list entries, then
 *            SIOCGETPRL with room for 1 .. 512 of them:
 *            ipip6_tunnel_get_prl() kcalloc(cmax, 16, GFP_KERNEL_ACCOUNT)
 *            and copy_to_user() of the entries found: kmalloc-cg-16 .. -8k
 *            exposure (net/ipv6/sit.c; the hunt kernel, IPV6_SIT).
 *  xt_replace  IPT_SO_SET_REPLACE with a table of 32 .. 8128 bytes:
 *            do_replace() copies it into xt_alloc_table_info()'s
 *            kvmalloc(64 + size, GFP_KERNEL_ACCOUNT) before validating it
 *            (then refuses it): kmalloc-cg-96 .. -8k overwrite; and
 *            IPT_SO_GET_ENTRIES of the built-in filter table:
 *            xt_data_to_user() copies its targets' data out of the table's
 *            kmalloc-cg object (exposure; net/ipv4/netfilter/ip_tables.c,
 *            the hunt kernel's IP_NF_IPTABLES).
 *
 * One line per group: "hunt-probe-regions: GROUP: N calls, M failed
 * (first failure)"; the exit status is 0 (a filler: a group a kernel
 * cannot run is named, not a failure of the hunt).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <net/if.h>
#include <linux/if_tunnel.h>
#include <linux/netfilter_ipv4/ip_tables.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#define P "hunt-probe-regions: "
#define WORK "/tmp/hunt-regions"
#define XFS_GZ "/data/xfs-seed009.img.gz"
#define XFS_IMG WORK "/xfs.img"
#define XFS_MNT WORK "/xfs"

/* kmalloc size classes of x86-64 SLUB (KMALLOC_MIN_SIZE 8, up to 8k). */
static const size_t sizes[] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSIZES ARRAY_SIZE(sizes)

static char buf[65536];

struct group {
	const char *name;
	int calls, failed;
	char first[160];
};

static void call(struct group *g, int ok, const char *fmt, ...)
{
	va_list ap;

	g->calls++;
	if (ok)
		return;
	if (!g->failed++) {
		va_start(ap, fmt);
		vsnprintf(g->first, sizeof(g->first), fmt, ap);
		va_end(ap);
	}
}

static void report(struct group *g)
{
	printf(P "%s: %d calls, %d failed%s%s%s\n", g->name, g->calls, g->failed,
	       g->failed ? " (first: " : "", g->first, g->failed ? ")" : "");
	fflush(stdout);
}

static void sysctl_group(void)
{
	struct group g = { .name = "sysctl" };
	size_t i;

	for (i = 0; i < NSIZES; i++) {
		/* kvzalloc(count + 1): count = size - 1 lands in kmalloc-<size> */
		size_t count = sizes[i] - 1;
		int fd = open("/proc/sys/kernel/ostype", O_RDONLY);
		ssize_t n = fd < 0 ? -1 : pread(fd, buf, count, 0);

		call(&g, n > 0, "read %zu of kernel/ostype: %s", count, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
		memset(buf, 'x', count);
		n = fd < 0 ? -1 : write(fd, buf, count);
		/* the handler refuses "xxx" with EINVAL, after the copy */
		call(&g, fd >= 0 && n < 0 && errno == EINVAL, "write %zu to vm/drop_caches: %zd %s",
		     count, n, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	report(&g);
}

static const char *xfs_mount(void);

static void xattr_group(void)
{
	struct group g = { .name = "xattr" };
	const char *f = WORK "/tmpfs/x";
	size_t i;
	int fd;

	mkdir(WORK "/tmpfs", 0755);
	if (mount("hunt-regions", WORK "/tmpfs", "tmpfs", 0, NULL) && errno != EBUSY) {
		call(&g, 0, "mount tmpfs: %s", strerror(errno));
		report(&g);
		return;
	}
	fd = open(f, O_CREAT | O_RDWR, 0644);
	if (fd >= 0)
		close(fd);
	/* a tmpfs without xattrs (no TMPFS_XATTR): the lab's XFS image */
	if (setxattr(f, "trusted.probe", "x", 1, 0) && errno == EOPNOTSUPP && xfs_mount()) {
		f = XFS_MNT "/xattr";
		fd = open(f, O_CREAT | O_RDWR, 0644);
		if (fd >= 0)
			close(fd);
		printf(P "xattr: tmpfs has none, on XFS\n");
	}
	for (i = 0; i < NSIZES; i++) {
		char name[32];
		ssize_t n;

		snprintf(name, sizeof(name), "trusted.hunt%zu", sizes[i]);
		memset(buf, 'v', sizes[i]);
		call(&g, !setxattr(f, name, buf, sizes[i], 0), "setxattr %zu: %s", sizes[i],
		     strerror(errno));
		n = getxattr(f, name, buf, sizes[i]);
		call(&g, n == (ssize_t)sizes[i], "getxattr %zu: %zd %s", sizes[i], n,
		     strerror(errno));
		n = listxattr(f, buf, sizes[i]);
		call(&g, n > 0 || errno == ERANGE, "listxattr %zu: %zd %s", sizes[i], n,
		     strerror(errno));
	}
	umount(WORK "/tmpfs");
	report(&g);
}

#ifndef KEYCTL_READ
#define KEYCTL_DESCRIBE 6
#define KEYCTL_READ 11
#define KEYCTL_UNLINK 9
#endif
#define KEY_SPEC_PROCESS_KEYRING -2

static void keys_group(void)
{
	struct group g = { .name = "keys" };
	size_t i;

	for (i = 0; i < NSIZES; i++) {
		size_t len = sizes[i];
		char desc[4100];
		long key, n;

		/* descriptions up to 4000 bytes (KEY_MAX_DESC_SIZE 4096) */
		size_t dl = len < 4000 ? len : 4000;
		size_t pre = snprintf(desc, sizeof(desc), "hunt:%zu:", len);

		if (dl > pre)
			memset(desc + pre, 'd', dl - pre);
		else
			dl = pre;
		desc[dl] = '\0';
		memset(buf, 'p', len);
		key = syscall(SYS_add_key, "user", desc, buf, len, KEY_SPEC_PROCESS_KEYRING);
		call(&g, key > 0, "add_key %zu: %s", len, strerror(errno));
		if (key <= 0)
			continue;
		n = syscall(SYS_keyctl, KEYCTL_READ, key, buf, len);
		call(&g, n == (long)len, "keyctl read %zu: %ld %s", len, n, strerror(errno));
		n = syscall(SYS_keyctl, KEYCTL_DESCRIBE, key, buf, sizeof(buf));
		call(&g, n > 0, "keyctl describe %zu: %ld %s", len, n, strerror(errno));
		syscall(SYS_keyctl, KEYCTL_UNLINK, key, KEY_SPEC_PROCESS_KEYRING);
	}
	report(&g);
}

static void inotify_group(void)
{
	struct group g = { .name = "inotify" };
	/* event = 32-byte header + name + NUL: kmalloc-cg-64 .. -512 */
	static const size_t lens[] = { 1, 20, 40, 80, 120, 150, 200, 230, 255 };
	const char *d = WORK "/ino";
	size_t i;
	ssize_t n;
	int fd;

	mkdir(d, 0755);
	fd = inotify_init1(IN_NONBLOCK);
	if (fd < 0 || inotify_add_watch(fd, d, IN_CREATE) < 0) {
		call(&g, 0, "inotify: %s", strerror(errno));
		report(&g);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		char path[512];
		int f;

		snprintf(path, sizeof(path), "%s/", d);
		memset(path + strlen(path), 'n', lens[i]);
		path[strlen(d) + 1 + lens[i]] = '\0';
		f = open(path, O_CREAT | O_WRONLY, 0644);
		call(&g, f >= 0, "create a %zu-byte name: %s", lens[i], strerror(errno));
		if (f >= 0)
			close(f);
		unlink(path);
		n = read(fd, buf, sizeof(buf));
		call(&g, n > 0, "read the event of a %zu-byte name: %zd %s", lens[i], n,
		     strerror(errno));
	}
	close(fd);
	report(&g);
}

/* The lab's XFS image, mounted read-write once (NULL: not here). */
static const char *xfs_mount(void)
{
	static int state;       /* 0 not tried, 1 mounted, -1 failed */
	struct stat st;

	if (!state) {
		state = -1;
		mkdir(XFS_MNT, 0755);
		if (!stat(XFS_GZ, &st) &&
		    !system("gunzip -c " XFS_GZ " > " XFS_IMG " && mount -o loop -t xfs " XFS_IMG
			    " " XFS_MNT " 2>/dev/null"))
			state = 1;
	}
	return state > 0 ? XFS_MNT : NULL;
}

/* A regular file on a filesystem with remap_file_range (XFS). */
static const char *dedupe_file(const char *given)
{
	if (given)
		return given;
	return xfs_mount() ? XFS_MNT "/dir/a" : NULL;
}

static void dedupe_group(const char *given)
{
	struct group g = { .name = "dedupe" };
	/*
	 * offsetof(struct file_dedupe_range, info[count]) = 24 + 32 * count
	 * bytes (a file_dedupe_range_info is 32): 24, 56, 88, 120, 184, 248,
	 * 504, 1016, 2040, 4088 land in 32, 64, 96, 128, 192, 256, 512, 1k,
	 * 2k, 4k; ioctl_file_dedupe_range() refuses more than PAGE_SIZE.
	 */
	static const unsigned short counts[] = { 0, 1, 2, 3, 5, 7, 15, 31, 63, 127 };
	_Static_assert(sizeof(struct file_dedupe_range) == 24 &&
		       sizeof(struct file_dedupe_range_info) == 32,
		       "the counts above assume these sizes");
	const char *file = dedupe_file(given);
	struct file_dedupe_range *r = (struct file_dedupe_range *)buf;
	size_t i, j;
	int fd;

	fd = file ? open(file, O_RDONLY) : -1;
	if (fd < 0) {
		call(&g, 0, "no file on a filesystem with remap_file_range (%s)",
		     file ? file : "no XFS image");
		report(&g);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		memset(buf, 0, 4096);
		r->dest_count = counts[i];
		for (j = 0; j < counts[i]; j++)
			r->info[j].dest_fd = -1;
		call(&g, !ioctl(fd, FIDEDUPERANGE, r), "FIDEDUPERANGE with %u destinations: %s",
		     counts[i], strerror(errno));
	}
	close(fd);
	report(&g);
}

static void skb_cb_group(void)
{
	struct group g = { .name = "skb_cb" };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
	int one = 1, small = 1, i, got = 0;
	char cbuf[256];

	if (r < 0 || s < 0 || setsockopt(r, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) ||
	    setsockopt(r, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ||
	    bind(r, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(r, (struct sockaddr *)&a, &alen) ||
	    connect(s, (struct sockaddr *)&a, sizeof(a))) {
		call(&g, 0, "UDP loopback pair: %s", strerror(errno));
		goto out;
	}
	memset(buf, 'u', 1400);
	for (i = 0; i < 64; i++)        /* overrun: sk_drops > 0 */
		send(s, buf, 1400, MSG_DONTWAIT);
	while (recv(r, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	for (i = 0; i < 4; i++) {       /* these carry the drop count in skb->cb */
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *c;

		send(s, buf, 100, 0);
		if (recvmsg(r, &m, 0) < 0)
			break;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			got += c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL;
	}
	call(&g, got > 0, "no SO_RXQ_OVFL control message in 4 datagrams");
out:
	close(r);
	close(s);
	report(&g);
}

static void cwd_group(void)
{
	struct group g = { .name = "cwd" };
	char path[4096], name[256];
	int depth, len;

	if (chdir(WORK)) {
		call(&g, 0, "chdir " WORK ": %s", strerror(errno));
		report(&g);
		return;
	}
	memset(name, 'c', 250);
	name[250] = '\0';
	for (depth = 0; depth < 15; depth++) {
		call(&g, !!getcwd(path, sizeof(path)), "getcwd at depth %d: %s", depth,
		     strerror(errno));
		len = depth % 3 ? 250 : 7 + depth;
		name[len] = '\0';
		if (mkdir(name, 0755) && errno != EEXIST)
			break;
		if (chdir(name))
			break;
		name[len] = 'c';
	}
	chdir("/");
	report(&g);
}

static void sit_prl_group(void)
{
	struct group g = { .name = "sit_prl" };
	struct ip_tunnel_parm p = { .name = "hsit1" };
	struct ip_tunnel_prl *prl = (struct ip_tunnel_prl *)buf;
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), i;
	size_t k;

	p.iph.version = 4;
	p.iph.ihl = 5;
	p.iph.protocol = IPPROTO_IPV6;
	p.iph.daddr = htonl(0x0a090902);        /* 10.9.9.2: not sit0's 0/0 */
	strcpy(ifr.ifr_name, "sit0");
	ifr.ifr_data = (void *)&p;
	if (fd < 0 || ioctl(fd, SIOCADDTUNNEL, &ifr)) {
		call(&g, 0, "sit tunnel: %s", strerror(errno));
		goto out;
	}
	strcpy(ifr.ifr_name, "hsit1");
	for (i = 0; i < 512; i++) {
		struct ip_tunnel_prl e = { .addr = htonl(0x0a010000 + 1 + i) };

		ifr.ifr_data = (void *)&e;
		if (ioctl(fd, SIOCADDPRL, &ifr)) {
			call(&g, 0, "SIOCADDPRL %d: %s", i, strerror(errno));
			break;
		}
	}
	/* cmax = datalen / 16 entries: kcalloc(cmax, 16) is kmalloc-cg-<16 cmax> */
	for (k = 1; k < NSIZES; k++) {
		memset(prl, 0, sizeof(*prl));
		prl->datalen = sizes[k];
		ifr.ifr_data = (void *)prl;
		call(&g, !ioctl(fd, SIOCGETPRL, &ifr) && prl->datalen == sizes[k],
		     "SIOCGETPRL %zu: %s", sizes[k], strerror(errno));
	}
	ifr.ifr_data = (void *)&p;
	ioctl(fd, SIOCDELTUNNEL, &ifr);
out:
	if (fd >= 0)
		close(fd);
	report(&g);
}

static void xt_replace_group(void)
{
	struct group g = { .name = "xt_replace" };
	struct ipt_replace *r = (struct ipt_replace *)buf;
	struct ipt_getinfo info = { .name = "filter" };
	struct ipt_get_entries *e = (struct ipt_get_entries *)buf;
	socklen_t len = sizeof(info);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	size_t k;

	if (fd < 0) {
		call(&g, 0, "socket: %s", strerror(errno));
		goto out;
	}
	/* struct xt_table_info is 64 bytes: a table of S - 64 is kmalloc-cg-S */
	for (k = 4; k < NSIZES; k++) {
		memset(buf, 0, sizeof(*r) + sizes[k]);
		strcpy(r->name, "filter");
		r->num_counters = 1;
		r->size = sizes[k] - 64;
		errno = 0;
		call(&g, setsockopt(fd, IPPROTO_IP, IPT_SO_SET_REPLACE, r,
				    sizeof(*r) + r->size) && errno == EINVAL,
		     "IPT_SO_SET_REPLACE %zu: not refused with EINVAL: %s", sizes[k],
		     strerror(errno));
	}
	if (getsockopt(fd, IPPROTO_IP, IPT_SO_GET_INFO, &info, &len)) {
		call(&g, 0, "IPT_SO_GET_INFO filter: %s", strerror(errno));
		goto out;
	}
	memset(e, 0, sizeof(*e));
	strcpy(e->name, "filter");
	e->size = info.size;
	len = sizeof(*e) + info.size;
	call(&g, len <= sizeof(buf) && !getsockopt(fd, IPPROTO_IP, IPT_SO_GET_ENTRIES, e, &len),
	     "IPT_SO_GET_ENTRIES filter (%u bytes): %s", info.size, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	report(&g);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	mkdir(WORK, 0755);
	sysctl_group();
	xattr_group();
	keys_group();
	inotify_group();
	dedupe_group(argc > 1 ? argv[1] : NULL);
	skb_cb_group();
	if (xfs_mount())
		umount(XFS_MNT);
	cwd_group();
	sit_prl_group();
	xt_replace_group();
	return 0;
}
