// SPDX-License-Identifier: GPL-2.0
/*
 * hunt-seed-rng SEED: credit the guest's random pool with 512 bits made
 * from SEED (ioctl RNDADDENTROPY on /dev/urandom), so that getrandom()
 * stops blocking at once.
 *
 * A TCG guest has no entropy source the 6.1 kernel trusts: stress-ng's
 * first getrandom() waited 78 s of guest time for "crng init done" in the
 * first hunt guest.  The bytes come from SEED (splitmix64), so a replay
 * of a hunt guest starts from the same pool input; they are not secret
 * and need not be: nothing in a hunt guest relies on them.
 */
#include <fcntl.h>
#include <linux/random.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BYTES 64

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
	struct {
		struct rand_pool_info info;
		uint64_t words[BYTES / 8];
	} req;
	uint64_t state;
	int fd, i;

	if (argc != 2) {
		fprintf(stderr, "usage: hunt-seed-rng SEED\n");
		return 2;
	}
	state = strtoull(argv[1], NULL, 0);
	memset(&req, 0, sizeof(req));
	for (i = 0; i < BYTES / 8; i++)
		req.words[i] = splitmix64(&state);
	req.info.entropy_count = BYTES * 8;
	req.info.buf_size = BYTES;
	fd = open("/dev/urandom", O_WRONLY);
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &req) < 0) {
		perror("hunt-seed-rng: RNDADDENTROPY");
		return 1;
	}
	close(fd);
	return 0;
}
