// SPDX-License-Identifier: GPL-2.0
/*
 * hunt-ioctl: the ioctls of the hunt's fs-probes workload that no
 * shell tool makes (initramfs-src/hunt-workloads/fs-probes):
 *
 *   hunt-ioctl verity FILE   FS_IOC_ENABLE_VERITY (SHA-256, 4 KiB
 *                                  blocks), then FS_IOC_MEASURE_VERITY:
 *                                  the digest is copied out of the file's
 *                                  fsverity_info (region file_digest)
 *   hunt-ioctl sgio DEV      SG_IO on a SCSI device: INQUIRY, then a
 *                                  command with an unknown opcode, whose
 *                                  CHECK CONDITION sense data the kernel
 *                                  copies out of scsi_sense_cache
 *
 * Each prints "usercopy-lab-check: PASS|FAIL: ..." lines and exits with
 * the number of failures.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fsverity.h>
#include <scsi/sg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lab-check.h"

static int verity(const char *path)
{
	struct fsverity_enable_arg arg = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.block_size = 4096,
	};
	struct {
		struct fsverity_digest d;
		unsigned char buf[64];
	} dig;
	int fd, sizes[] = { 32, 40, 64 };
	unsigned int i;

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		result(0, "open %s: %s", path, strerror(errno));
		return failures;
	}
	result(ioctl(fd, FS_IOC_ENABLE_VERITY, &arg) == 0,
	       "FS_IOC_ENABLE_VERITY %s: %s", path, strerror(errno));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&dig, 0, sizeof(dig));
		dig.d.digest_size = sizes[i];
		errno = 0;
		result(ioctl(fd, FS_IOC_MEASURE_VERITY, &dig) == 0 && dig.d.digest_size == 32,
		       "FS_IOC_MEASURE_VERITY with room for %d bytes: %s (digest %u bytes)",
		       sizes[i], strerror(errno), dig.d.digest_size);
	}
	close(fd);
	return failures;
}

static int sg_cmd(int fd, unsigned char *cdb, int cdb_len, unsigned char *sense,
		  int sense_len, sg_io_hdr_t *io)
{
	static unsigned char data[96];

	memset(io, 0, sizeof(*io));
	io->interface_id = 'S';
	io->cmdp = cdb;
	io->cmd_len = cdb_len;
	io->dxferp = data;
	io->dxfer_len = sizeof(data);
	io->dxfer_direction = SG_DXFER_FROM_DEV;
	io->sbp = sense;
	io->mx_sb_len = sense_len;
	io->timeout = 5000;
	return ioctl(fd, SG_IO, io);
}

static int sgio(const char *dev)
{
	unsigned char inquiry[6] = { 0x12, 0, 0, 0, 96, 0 };
	unsigned char bogus[6] = { 0xff, 0, 0, 0, 0, 0 };
	unsigned char sense[64];
	sg_io_hdr_t io;
	int fd, len;

	fd = open(dev, O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		result(0, "open %s: %s", dev, strerror(errno));
		return failures;
	}
	result(sg_cmd(fd, inquiry, sizeof(inquiry), sense, sizeof(sense), &io) == 0 &&
	       io.status == 0, "SG_IO INQUIRY on %s: status %d", dev, io.status);
	for (len = 8; len <= (int)sizeof(sense); len += 28) {
		memset(sense, 0, sizeof(sense));
		result(sg_cmd(fd, bogus, sizeof(bogus), sense, len, &io) == 0 &&
		       io.sb_len_wr > 0,
		       "SG_IO opcode 0xff on %s: status %d, %d of %d sense bytes (key %x)",
		       dev, io.status, io.sb_len_wr, len, sense[2] & 0xf);
	}
	close(fd);
	return failures;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "verity"))
		return verity(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "sgio"))
		return sgio(argv[2]);
	fprintf(stderr, "usage: hunt-ioctl verity FILE | sgio DEV\n");
	return 2;
}
