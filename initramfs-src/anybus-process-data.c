// SPDX-License-Identifier: GPL-2.0
/*
 * anybus-process-data: in-guest probe of the Anybus-S process data copies
 * (issue #35, the gap finder's anybus-s candidate).
 *
 * drivers/staging/fieldbus/anybuss/host.c allocates each task from a cache
 * that anybuss_host_common_probe() creates with
 * kmem_cache_create(dev_name(dev), sizeof(struct ab_task), 0, 0, NULL):
 * no usercopy region.  Two of its functions copy user data straight into
 * and out of a task:
 *   - anybuss_read_output(): copy_to_user(buf, t->area_pd.buf, len),
 *     the read() of /dev/fieldbus_devN (hms-profinet's read_area);
 *   - create_area_user_writer(): copy_from_user(ap->buf, buf, count),
 *     the write() of the same device (anybuss_write_input()).
 * len/count are the caller's (up to 512), not constants, so
 * check_object_size() checks them against the cache's region.
 *
 * The anybus kernel (mk/anybus.mk) has the real host driver, the real
 * Profinet client and the real fieldbus_dev character device; the card is
 * test-drivers/anybuss-sim.patch's simulated controller (the platform
 * device "anybuss-sim", so the task cache is named "anybuss-sim"), which
 * fills its output area with 0xa5 ^ i at boot and copies the input area
 * to the output area when the host releases it.
 *
 * The probe enables the card (sysfs "enabled": power on, the init
 * mailbox commands), then read()s the output area, write()s a new
 * pattern to the input area and reads it back.  A kernel whose task cache
 * whitelists area_pd.buf passes all three.  A kernel without the region
 * BUGs in usercopy_abort() at the first read() and this process is killed
 * (with slab_common.usercopy_fallback=1 each direction WARNs once and the
 * data go through); the golden files say which.
 *
 * Results are "usercopy-lab-check: PASS:|FAIL:" lines; the exit status is
 * 0 when every check passed, else 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "lab-check.h"

#define FB_SYSFS "/sys/class/fieldbus_dev/fieldbus_dev0"
#define FB_DEV "/dev/fieldbus_dev0"
#define TASK_CACHE "anybuss-sim"
#define AREA_SZ 512	/* host.c MAX_DATA_AREA_SZ */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* The first index where BUF differs from the pattern SEED ^ i, or -1. */
static int pattern_mismatch(const unsigned char *buf, unsigned char seed)
{
	int i;

	for (i = 0; i < AREA_SZ; i++)
		if (buf[i] != (unsigned char)(seed ^ i))
			return i;
	return -1;
}

static void check_area(const char *what, const unsigned char *buf,
		       ssize_t n, unsigned char seed)
{
	int bad;

	if (n != AREA_SZ) {
		result(0, "%s: %zd bytes (%s), expected %d", what, n,
		       n < 0 ? strerror(errno) : "short", AREA_SZ);
		return;
	}
	bad = pattern_mismatch(buf, seed);
	if (bad >= 0)
		result(0, "%s: byte %d is 0x%02x, expected 0x%02x", what, bad,
		       buf[bad], (unsigned char)(seed ^ bad));
	else
		result(1, "%s: %d bytes, pattern 0x%02x ^ i", what, AREA_SZ,
		       seed);
}

int main(void)
{
	unsigned char buf[AREA_SZ];
	char name[128];
	ssize_t n;
	int fd, err, i;

	err = read_file(FB_SYSFS "/card_name", name, sizeof(name));
	if (err) {
		result(0, "setup: no %s (%s): is this the anybus kernel?",
		       FB_SYSFS, strerror(-err));
		return check_status();
	}
	printf(PREFIX "card '%s'; task cache %s: object_size %ld, useroffset %ld, usersize %ld\n",
	       name, TASK_CACHE, read_long(TASK_CACHE, "object_size"),
	       read_long(TASK_CACHE, "useroffset"),
	       read_long(TASK_CACHE, "usersize"));
	err = write_file(FB_SYSFS "/enabled", "1");
	if (err) {
		result(0, "setup: enabling the card: %s", strerror(-err));
		return check_status();
	}
	fd = open(FB_DEV, O_RDWR);
	if (fd < 0) {
		result(0, "setup: open %s: %s", FB_DEV, strerror(errno));
		return check_status();
	}

	printf(PREFIX "read() of the output area, %d bytes\n", AREA_SZ);
	fflush(stdout);
	n = pread(fd, buf, AREA_SZ, 0);
	check_area("read() of the output area", buf, n, 0xa5);

	for (i = 0; i < AREA_SZ; i++)
		buf[i] = (unsigned char)(0x5a ^ i);
	printf(PREFIX "write() of the input area, %d bytes\n", AREA_SZ);
	fflush(stdout);
	n = pwrite(fd, buf, AREA_SZ, 0);
	result(n == AREA_SZ, "write() of the input area: %zd bytes%s%s", n,
	       n < 0 ? ", " : "", n < 0 ? strerror(errno) : "");

	memset(buf, 0, sizeof(buf));
	n = pread(fd, buf, AREA_SZ, 0);
	check_area("read() back through the card's loopback", buf, n, 0x5a);
	close(fd);
	return check_status();
}
