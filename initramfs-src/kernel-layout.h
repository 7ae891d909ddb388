/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel-layout.h: what the check programs need to know about the guest
 * kernel's layout, taken from the guest's arch and from the guest itself
 * rather than from x86-64 constants (docs/arches.md).
 *
 * - Kernel structures no uapi header exports, mirrored member for member:
 *   each helper is compiled for the guest's arch (Makefile: gcc,
 *   i686-linux-gnu-gcc, aarch64-linux-gnu-gcc), whose compiler lays them
 *   out as the kernel's does (natural alignment; long, size_t and pointers
 *   of the arch's size).  A wrong mirror cannot pass unnoticed:
 *   check-usersized-caches compares it with the useroffset of every
 *   msg_msg-N and msg_msgseg-N cache the kernel created.
 * - The kmalloc size classes, read from the guest's /proc/slabinfo: which
 *   exist depends on the arch's minimum kmalloc alignment (arm64 6.1:
 *   ARCH_DMA_MINALIGN 128, so no kmalloc-8 .. kmalloc-96 or -192).
 */
#ifndef KERNEL_LAYOUT_H
#define KERNEL_LAYOUT_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* include/linux/msg.h (6.1): the header of a SysV message. */
struct kernel_msg_msg {
	void *m_list[2];	/* struct list_head */
	long m_type;
	size_t m_ts;		/* message text size */
	void *next;		/* struct msg_msgseg * */
	void *security;
};

/* ipc/msgutil.c (6.1): the header of each further page of a message. */
struct kernel_msg_msgseg {
	void *next;
};

#define MSG_MSG_HDR ((long)sizeof(struct kernel_msg_msg))
#define MSG_SEG_HDR ((long)sizeof(struct kernel_msg_msgseg))

#define MAX_KMALLOC_CLASSES 32

struct kmalloc_class {
	char name[16];		/* "1k": the suffix of kmalloc-1k */
	long size;		/* its object size */
};

/*
 * The kmalloc-N caches of the running kernel (not -cg-, -rcl-, dma-),
 * smallest first, from /proc/slabinfo.  The object size is the name's N
 * ("96", "1k"): slabinfo's fourth column is SLUB's s->size, which with
 * slub_debug=U (the nokmem suite) includes the tracking data (kmalloc-8
 * read 80 there).  Returns how many, -1 without /proc/slabinfo.
 */
static inline int kmalloc_classes(struct kmalloc_class *out, int max)
{
	char line[512], name[128], *end;
	long active, num, objsize;
	int n = 0, i, j;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		if (sscanf(line, "%127s %ld %ld %ld", name, &active, &num,
			   &objsize) != 4 || strncmp(name, "kmalloc-", 8) ||
		    strchr(name + 8, '-') || strlen(name + 8) >= sizeof(out->name))
			continue;
		objsize = strtol(name + 8, &end, 10);
		if (*end == 'k') {
			objsize *= 1024;
			end++;
		}
		if (objsize <= 0 || *end)
			continue;
		strcpy(out[n].name, name + 8);
		out[n++].size = objsize;
	}
	fclose(f);
	for (i = 1; i < n; i++)		/* insertion sort by size */
		for (j = i; j > 0 && out[j].size < out[j - 1].size; j--) {
			struct kmalloc_class t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* The smallest of the n classes holding len bytes, NULL if none does. */
static inline const struct kmalloc_class *
kmalloc_class_of(const struct kmalloc_class *c, int n, long len)
{
	int i;

	for (i = 0; i < n; i++)
		if (c[i].size >= len)
			return &c[i];
	return NULL;
}

#endif
