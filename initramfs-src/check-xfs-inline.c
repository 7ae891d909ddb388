// SPDX-License-Identifier: GPL-2.0
/*
 * check-xfs-inline: in-guest proof that seed 009 ("xfs: define usercopy
 * region in xfs_inode slab cache") is obsolete on 6.1.
 *
 * The seed whitelisted the inline fork data inside struct xfs_inode
 * (i_df.if_u2.if_inline_data), which readlink() of an inline symlink and
 * getdents() of a short-form directory copied to user space.  6.1 has no
 * such field: the data of a local-format fork is a kmalloc() buffer
 * (if_u1.if_data, xfs_init_local_fork()), whose cache is whitelisted
 * whole, and xfs_inode has no region.  So both reads must work without a
 * usercopy report:
 *
 *  - readlink() of an inline symlink: vfs_readlink() -> readlink_copy() ->
 *    copy_to_user() from if_data, checked by hardened usercopy;
 *  - getdents64() of a short-form directory: xfs_dir2_sf_getdents() ->
 *    filldir64(), which in 6.1 copies each name with unsafe_copy_to_user()
 *    (fs/readdir.c), a copy hardened usercopy does not check; this part
 *    shows that the short-form directory reads back right.
 *
 * The image comes from scripts/xfs-image.sh (which checks with xfs_db
 * that both inodes are in local format) as /data/xfs-seed009.img.gz;
 * it is unpacked to /tmp, attached to a loop device and mounted
 * read-only.  The names below are the ones that script puts in the image.
 * Every check prints one "usercopy-lab-check: PASS:|FAIL:" line; the exit
 * status is 0 when every check passed, else 1.  The harness adds: no kernel
 * report on the console.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab-check.h"

#define IMAGE_GZ "/data/xfs-seed009.img.gz"
#define IMAGE "/tmp/xfs-seed009.img"
#define MNT "/mnt/xfs"
/* scripts/xfs-image.sh: /link -> LINK_TARGET, /dir holds dir_entries. */
#define LINK_TARGET "short-target"
static const char *const dir_entries[] = { ".", "..", "a", "bb" };

/* gunzip -c IMAGE_GZ > IMAGE, with busybox's gunzip. */
static int unpack(void)
{
	int status, fd;
	pid_t pid;

	fd = open(IMAGE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		result(0, "open %s: %s", IMAGE, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		execl("/bin/gunzip", "gunzip", "-c", IMAGE_GZ, (char *)NULL);
		_exit(127);
	}
	close(fd);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		result(0, "gunzip -c %s failed", IMAGE_GZ);
		return -1;
	}
	return 0;
}

/* Attach IMAGE to a free loop device, read-only; its fd, or -1. */
static int attach_loop(char *dev, size_t len)
{
	int ctl, nr, loop, img;

	ctl = open("/dev/loop-control", O_RDWR);
	nr = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	if (ctl >= 0)
		close(ctl);
	if (nr < 0) {
		result(0, "no free loop device: %s", strerror(errno));
		return -1;
	}
	snprintf(dev, len, "/dev/loop%d", nr);
	loop = open(dev, O_RDONLY);
	img = open(IMAGE, O_RDONLY);
	if (loop < 0 || img < 0 || ioctl(loop, LOOP_SET_FD, img)) {
		result(0, "attaching %s to %s: %s", IMAGE, dev, strerror(errno));
		if (loop >= 0)
			close(loop);
		loop = -1;
	}
	if (img >= 0)
		close(img);
	return loop;
}

static void check_readlink(void)
{
	char buf[256];
	ssize_t len = readlink(MNT "/link", buf, sizeof(buf) - 1);

	if (len < 0) {
		result(0, "readlink %s/link: %s", MNT, strerror(errno));
		return;
	}
	buf[len] = '\0';
	result(!strcmp(buf, LINK_TARGET),
	       "readlink of the inline symlink %s/link: '%s' (want '%s')",
	       MNT, buf, LINK_TARGET);
}

static void check_getdents(void)
{
	char buf[4096], names[256] = "";
	int fd, n, pos, count = 0, found = 0;
	size_t i;

	fd = open(MNT "/dir", O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		result(0, "open %s/dir: %s", MNT, strerror(errno));
		return;
	}
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (pos = 0; pos < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + pos);

			count++;
			for (i = 0; i < sizeof(dir_entries) / sizeof(*dir_entries); i++)
				found += !strcmp(d->d_name, dir_entries[i]);
			if (strlen(names) + strlen(d->d_name) + 2 < sizeof(names)) {
				strcat(names, " ");
				strcat(names, d->d_name);
			}
			pos += d->d_reclen;
		}
	}
	if (n < 0)
		result(0, "getdents64 %s/dir: %s", MNT, strerror(errno));
	close(fd);
	result(n == 0 && count == found &&
	       found == sizeof(dir_entries) / sizeof(*dir_entries),
	       "getdents64 of the short-form directory %s/dir:%s", MNT, names);
}

int main(void)
{
	char dev[32];
	int loop;

	mkdir("/mnt", 0755);
	mkdir(MNT, 0755);
	if (unpack())
		goto out;
	loop = attach_loop(dev, sizeof(dev));
	if (loop < 0)
		goto out;
	if (mount(dev, MNT, "xfs", MS_RDONLY, NULL)) {
		result(0, "mount -t xfs %s %s: %s", dev, MNT, strerror(errno));
	} else {
		result(1, "mounted %s (%s) on %s", IMAGE, dev, MNT);
		check_readlink();
		check_getdents();
		if (umount(MNT))
			result(0, "umount %s: %s", MNT, strerror(errno));
	}
	ioctl(loop, LOOP_CLR_FD, 0);
	close(loop);
out:
	printf(PREFIX "%d failed\n", failures);
	return check_status();
}
