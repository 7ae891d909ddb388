// SPDX-License-Identifier: GPL-2.0
/*
 * hunt-nobody PROG [ARG...]: run PROG as user and group nobody (65534),
 * with no supplementary groups and so no capabilities, for the hunt's
 * trinity workloads (initramfs-src/hunt-workloads/trinity*): a fuzzer
 * without privileges cannot reboot the guest, write /proc/sys or unmount
 * tracefs, while every unprivileged syscall path stays open to it.
 * (Debian's busybox setpriv has no --reuid; trinity's own --dropprivs is
 * marked experimental.)
 */
#include <grp.h>
#include <stdio.h>
#include <unistd.h>

#define NOBODY 65534

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: hunt-nobody PROG [ARG...]\n");
		return 2;
	}
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)) {
		perror("hunt-nobody: cannot become nobody");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("hunt-nobody: exec");
	return 127;
}
