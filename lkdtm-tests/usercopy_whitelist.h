/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of usercopy_whitelist.c shared with usercopy_seeds.c and
 * usercopy_vmalloc.c.
 */
#ifndef __LKDTM_USERCOPY_WHITELIST_H
#define __LKDTM_USERCOPY_WHITELIST_H

#include <linux/compiler.h>
#include <linux/types.h>

/*
 * Hardened usercopy skips copies whose size is a compile-time constant,
 * so every size is laundered through this to force the run-time checks.
 */
static __always_inline size_t lkdtm_unconst(size_t size)
{
	OPTIMIZER_HIDE_VAR(size);
	return size;
}

/*
 * The one byte more that the bad copy of lkdtm_usercopy_window() takes:
 * the byte before the window, the byte after it when that is still in the
 * object, or the byte after a window that ends with the object, which is
 * outside it (a neighbouring object the test owns, or the object's padding).
 */
enum lkdtm_bad_byte {
	LKDTM_BAD_BEFORE,
	LKDTM_BAD_AFTER,
	LKDTM_BAD_PAST_OBJECT,
};

/*
 * Why a test that needs an object followed by one it owns says XFAIL when
 * none of its objects is: the copy past the object would otherwise reach
 * memory of others (and KASAN's redzones), had the check let it through.
 * Seen under KASAN, whose object metadata and quarantine change where
 * objects land: no two of 16 cifs_request objects were adjacent.
 */
#define LKDTM_NO_PAIR \
	"the bad copy would leave the object into memory the test does not own"

void *lkdtm_find_owned_pair(void **objs, int count, void **owned,
			    int owned_count, size_t size);
void lkdtm_usercopy_window(const char *cache, void *obj, size_t offset,
			   size_t size, enum lkdtm_bad_byte bad, bool to_user);
void lkdtm_usercopy_sock(const char *cache, int family, int type,
			 int protocol, size_t offset, size_t size,
			 bool to_user);

#endif
