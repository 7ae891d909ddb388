/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of usercopy_whitelist.c shared with usercopy_seeds.c.
 */
#ifndef __LKDTM_USERCOPY_WHITELIST_H
#define __LKDTM_USERCOPY_WHITELIST_H

#include <linux/types.h>

struct kmem_cache;

void *find_owned_pair(void **objs, int count, void **owned, int owned_count,
		      struct kmem_cache *s);
void do_usercopy_window(const char *cache, void *obj, size_t offset,
			size_t size, bool bad_before, bool to_user);
void do_usercopy_sock(const char *cache, int family, int type, int protocol,
		      size_t offset, size_t size, bool to_user);

#endif
