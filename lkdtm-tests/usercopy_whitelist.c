// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for hardened usercopy whitelisting on real kernel caches.
 *
 * drivers/misc/lkdtm/usercopy.c exercises the whitelist machinery on a
 * private "lkdtm-usercopy" cache. The tests here fire at the caches that
 * the kernel itself creates with a usercopy region (task_struct,
 * mm_struct, dentry, names_cache, the RAW/RAWv6/SCTP socket caches and
 * the msg_msg caches of SysV messages) and at the user-sized kmalloc
 * caches that GFP_USERCOPY and the memdup_user() family select, using
 * live objects of those caches and only interfaces exported to modules, so
 * that they also run with LKDTM built as a module. Every whitelist test:
 *
 *  - recomputes the usercopy window from the same expressions the kernel
 *    uses to create the cache, and reports it as
 *    "expecting window offset X size Y in 'CACHE'",
 *  - copies exactly that window (which must not Oops),
 *  - then copies one byte more, either past the end of the window or
 *    starting one byte before it, after reporting it as
 *    "attempting bad copy_{to,from}_user at offset X size Y",
 *    which must Oops with the same cache name, offset and size.
 *
 * The copy_from_user() tests write back bytes that were read from the
 * object just before, so that a kernel lacking the check (or one that
 * only warns about in-object violations) is not left corrupted. Only the
 * object's own bytes are read: copies that leave the object only ever
 * land in a neighbouring object that this test allocated itself, or in
 * the object's own padding, and the test never reads that byte itself.
 */
#include "lkdtm.h"
#include "usercopy_whitelist.h"
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/in.h>
#include <linux/ipv6.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/net.h>
#include <linux/processor.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>
#include <net/raw.h>
#include <net/sock.h>
#include <linux/msg.h>
#include <linux/slab_usercopy.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#ifdef CONFIG_X86
#include <asm/fpu/api.h>
#endif
#if IS_ENABLED(CONFIG_IP_SCTP)
#include <net/sctp/structs.h>
#endif

/* Objects allocated to find two adjacent ones; see lkdtm_find_owned_pair(). */
#define NAMES_COUNT	16

/* Objects of each kind allocated: two order-3 slabs' worth. */
#define SPLIT_SIZE	1024
#define SPLIT_COUNT	64

/*
 * Return an object from @objs whose successor in its slab is in @owned, so
 * that a copy running one byte past the end of the returned object (of
 * @size bytes) only touches memory owned by this test. Neighbours are the
 * cache's stride apart: the object plus whatever the allocator keeps after
 * it (red zone, free pointer, tracking data, alignment), which slub_debug=
 * changes at boot and which is private to the allocator. Objects handed
 * out one after another from a fresh slab are neighbours, so the closest
 * pair in one slab is taken as neighbours: the byte after the object is
 * then either the object's own padding or the start of @owned's object.
 * An object of another slab that starts exactly at the object's end is
 * as good a neighbour.
 */
void *lkdtm_find_owned_pair(void **objs, int count, void **owned,
			    int owned_count, size_t size)
{
	size_t gap, best_gap = SIZE_MAX;
	void *best = NULL;
	int i, j;

	for (i = 0; i < count; i++) {
		for (j = 0; j < owned_count; j++) {
			char *obj = objs[i], *next = owned[j];

			if (!obj || !next || next < obj + size)
				continue;
			/*
			 * Another folio's object only counts when it starts
			 * right at the object's end: SLAB keeps a page-sized
			 * object alone in its order-0 slab.
			 */
			if (virt_to_folio(obj) != virt_to_folio(next) &&
			    next != obj + size)
				continue;
			gap = next - obj;
			if (gap < best_gap) {
				best_gap = gap;
				best = obj;
			}
		}
	}
	return best;
}

/* The suffix of the kmalloc cache names for objects of @size bytes. */
static __maybe_unused void lkdtm_kmalloc_suffix(char *buf, size_t len,
						size_t size)
{
	if (size >= SZ_1M && !(size % SZ_1M))
		snprintf(buf, len, "%zuM", size / SZ_1M);
	else if (size >= SZ_1K && !(size % SZ_1K))
		snprintf(buf, len, "%zuk", size / SZ_1K);
	else
		snprintf(buf, len, "%zu", size);
}

#ifndef CONFIG_SLOB
/*
 * The name of @s, a kmalloc cache of @size-byte objects: the cache of that
 * name among the kmalloc cache types' names, found with kmem_cache_find().
 */
static const char *lkdtm_kmalloc_name(struct kmem_cache *s, size_t size,
				      char *buf, size_t len)
{
	static const char * const prefixes[] = {
		"kmalloc-", "kmalloc-cg-", "kmalloc-rcl-", "dma-kmalloc-",
		"usersized-kmalloc-", "usersized-kmalloc-cg-",
	};
	char suffix[16];
	int i;

	lkdtm_kmalloc_suffix(suffix, sizeof(suffix), size);
	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		snprintf(buf, len, "%s%s", prefixes[i], suffix);
		if (kmem_cache_find(buf) == s)
			return buf;
	}
	snprintf(buf, len, "(no kmalloc cache of %zu bytes)", size);
	return buf;
}
#endif

/**
 * lkdtm_usercopy_window() - test one usercopy window of a slab object
 * @cache: name of the cache @obj was allocated from
 * @obj: start of a live slab object
 * @offset: start of the usercopy window within the object
 * @size: size of the usercopy window
 * @bad: where the bad copy takes its one byte more: before the window
 *	(%LKDTM_BAD_BEFORE) or after it, inside the object (%LKDTM_BAD_AFTER)
 *	or past the end of the object (%LKDTM_BAD_PAST_OBJECT)
 * @to_user: test copy_to_user() rather than copy_from_user()
 *
 * The byte just outside the window (at @offset - 1 or at @offset + @size)
 * must be one that nothing else writes to while the test runs: when it is
 * in the object, copy_from_user() writes back its current value. Past the
 * object it is never read, as it belongs to no object of this test's: the
 * user buffer has 0 there, which a kernel that lets the copy through writes
 * into a neighbouring object this test owns or into the object's padding.
 */
void lkdtm_usercopy_window(const char *cache, void *obj, size_t offset,
			   size_t size, enum lkdtm_bad_byte bad, bool to_user)
{
	size_t bad_offset = bad == LKDTM_BAD_BEFORE ? offset - 1 : offset;
	size_t bad_size = size + 1;
	/* The bytes of the bad copy that are the object's own. */
	size_t snap_size = bad == LKDTM_BAD_PAST_OBJECT ? size : bad_size;
	size_t len = PAGE_ALIGN(bad_size);
	unsigned char __user *ubuf;
	unsigned long uaddr;
	unsigned char *snap;
	size_t good_delta = offset - bad_offset;

	pr_info("expecting window offset %zu size %zu in '%s'\n",
		offset, size, cache);

	snap = kmalloc(snap_size, GFP_KERNEL);
	if (!snap)
		return;

	uaddr = vm_mmap(NULL, 0, len, PROT_READ | PROT_WRITE,
			MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (uaddr >= TASK_SIZE) {
		pr_warn("Failed to allocate user memory\n");
		goto free_snap;
	}
	ubuf = (unsigned char __user *)uaddr;

	/*
	 * Fault the user buffer in first, so that nothing sleeps between
	 * reading the object and the copies below.
	 */
	if (clear_user(ubuf, len)) {
		pr_warn("clear_user failed unexpectedly?!\n");
		goto free_user;
	}

	/*
	 * Fill the user buffer with the object's bytes that the bad copy
	 * covers, bounced through a fully whitelisted kmalloc buffer: a
	 * copy_from_user() that is wrongly allowed then stores the values
	 * already there. The bytes of the good copy are among them.
	 */
	memcpy(snap, (unsigned char *)obj + bad_offset, snap_size);
	if (copy_to_user(ubuf, snap, lkdtm_unconst(snap_size))) {
		pr_warn("copy_to_user failed unexpectedly?!\n");
		goto free_user;
	}

	if (to_user) {
		pr_info("attempting good copy_to_user of the whole window\n");
		if (copy_to_user(ubuf + good_delta,
				 (unsigned char *)obj + offset,
				 lkdtm_unconst(size))) {
			pr_warn("copy_to_user failed unexpectedly?!\n");
			goto free_user;
		}

		pr_info("attempting bad copy_to_user at offset %zu size %zu\n",
			bad_offset, bad_size);
		if (copy_to_user(ubuf, (unsigned char *)obj + bad_offset,
				 lkdtm_unconst(bad_size))) {
			pr_warn("copy_to_user failed, but lacked Oops\n");
			goto free_user;
		}
	} else {
		pr_info("attempting good copy_from_user of the whole window\n");
		if (copy_from_user((unsigned char *)obj + offset,
				   ubuf + good_delta, lkdtm_unconst(size))) {
			pr_warn("copy_from_user failed unexpectedly?!\n");
			goto free_user;
		}

		pr_info("attempting bad copy_from_user at offset %zu size %zu\n",
			bad_offset, bad_size);
		if (copy_from_user((unsigned char *)obj + bad_offset, ubuf,
				   lkdtm_unconst(bad_size))) {
			pr_warn("copy_from_user failed, but lacked Oops\n");
			goto free_user;
		}
	}
	pr_err("FAIL: bad usercopy not detected!\n");
	pr_expected_config_param(CONFIG_HARDENED_USERCOPY, "hardened_usercopy");

free_user:
	vm_munmap(uaddr, len);
free_snap:
	kfree(snap);
}

/*
 * task_struct: the window is the architecture's thread_struct region
 * (the FPU register state on x86), see task_struct_whitelist() in
 * kernel/fork.c. The register state is the last member of task_struct,
 * so the bad copy starts one byte before it, in the padding that aligns
 * it, instead of running off the end of the object.
 */
#ifndef CONFIG_ARCH_TASK_STRUCT_ALLOCATOR
static void lkdtm_thread_struct_whitelist(unsigned long *offset,
					  unsigned long *size)
{
#if defined(MODULE) && defined(CONFIG_X86)
	/*
	 * arch_thread_struct_whitelist() calls fpu_thread_struct_whitelist(),
	 * which is not exported: it gives offsetof(struct thread_struct,
	 * fpu.__fpstate.regs) and fpu_kernel_cfg.default_size, the size that
	 * fpstate_reset() also gave this task's own __fpstate at fork.
	 */
	*offset = offsetof(struct thread_struct, fpu.__fpstate.regs);
	*size = current->thread.fpu.__fpstate.size;
#else
	arch_thread_struct_whitelist(offset, size);
#endif
}
#endif

static void do_usercopy_task_struct(bool to_user)
{
#if defined(CONFIG_ARCH_TASK_STRUCT_ALLOCATOR)
	pr_err("XFAIL: this architecture has no task_struct cache\n");
#else
	unsigned long offset, size;

	lkdtm_thread_struct_whitelist(&offset, &size);
	if (unlikely(size == 0))
		offset = 0;
	else
		offset += offsetof(struct task_struct, thread);

#ifdef CONFIG_X86
	/*
	 * Park the user FPU registers in the task_struct: once saved there
	 * (TIF_NEED_FPU_LOAD), nothing rewrites them before the return to
	 * user space, so copying the saved bytes back cannot lose state.
	 */
	kernel_fpu_begin();
	kernel_fpu_end();
#endif

	lkdtm_usercopy_window("task_struct", current, offset, size,
			      offset > 0 ? LKDTM_BAD_BEFORE : LKDTM_BAD_AFTER,
			      to_user);
#endif
}

/*
 * mm_struct: the window is saved_auxv, see mm_cache_init(). The byte
 * before it belongs to env_end, which only exec and prctl(PR_SET_MM)
 * write; the counters after it change on every page fault.
 */
static void do_usercopy_mm_struct(bool to_user)
{
	if (!current->mm) {
		pr_warn("No mm to test\n");
		return;
	}
	lkdtm_usercopy_window("mm_struct", current->mm,
			      offsetof(struct mm_struct, saved_auxv),
			      sizeof_field(struct mm_struct, saved_auxv),
			      LKDTM_BAD_BEFORE, to_user);
}

/*
 * dentry: the window is d_iname, see dcache_init(). Use a fresh anonymous
 * dentry (its inline name is "/") that nobody else can find, so that no
 * lookup or rename races with the test; the byte before d_iname is the
 * top of its d_inode pointer, which stays NULL.
 */
static void do_usercopy_dentry(bool to_user)
{
	struct dentry *dentry;
	struct path root;

	get_fs_root(current->fs, &root);
	dentry = d_alloc_anon(root.dentry->d_sb);
	if (!dentry) {
		pr_warn("Failed to allocate dentry\n");
		goto put_root;
	}
	if (dentry->d_name.name != dentry->d_iname) {
		pr_warn("dentry name is not inline?!\n");
		goto put_dentry;
	}

	lkdtm_usercopy_window("dentry", dentry,
			      offsetof(struct dentry, d_iname),
			      sizeof_field(struct dentry, d_iname),
			      LKDTM_BAD_BEFORE, to_user);

put_dentry:
	dput(dentry);
put_root:
	path_put(&root);
}

/*
 * names_cache: the whole PATH_MAX object is whitelisted, see
 * vfs_caches_init(), so the bad copy leaves the object. Overflow into a
 * neighbouring names_cache object that this test owns.
 */
static void do_usercopy_names_cache(bool to_user)
{
	void *names[NAMES_COUNT] = { };
	void *name;
	int i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		names[i] = __getname();

	name = lkdtm_find_owned_pair(names, ARRAY_SIZE(names), names,
				     ARRAY_SIZE(names), PATH_MAX);
	if (!name) {
		pr_err("XFAIL: no two adjacent names_cache objects: %s\n",
		       LKDTM_NO_PAIR);
		goto free_names;
	}

	lkdtm_usercopy_window("names_cache", name, 0, PATH_MAX,
			      LKDTM_BAD_PAST_OBJECT, to_user);

free_names:
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (names[i])
			__putname(names[i]);
	}
}

/*
 * Socket caches: the window is the proto's useroffset/usersize, see
 * proto_register(). The socket is private to this test, so the field
 * after the window (an unused multicast routing table id on RAW/RAWv6,
 * user_frag on SCTP) does not change while it runs.
 */
void lkdtm_usercopy_sock(const char *cache, int family, int type,
			 int protocol, size_t offset, size_t size, bool to_user)
{
	struct socket *sock;
	int ret;

	ret = sock_create_kern(&init_net, family, type, protocol, &sock);
	if (ret) {
		pr_warn("Failed to create %s socket: %d\n", cache, ret);
		return;
	}
	if (strcmp(sock->sk->sk_prot->name, cache)) {
		pr_warn("Socket came from '%s', not '%s'?!\n",
			sock->sk->sk_prot->name, cache);
		goto release;
	}

	lkdtm_usercopy_window(cache, sock->sk, offset, size, LKDTM_BAD_AFTER,
			      to_user);

release:
	sock_release(sock);
}

static void do_usercopy_raw(bool to_user)
{
#if IS_ENABLED(CONFIG_INET)
	lkdtm_usercopy_sock("RAW", AF_INET, SOCK_RAW, IPPROTO_ICMP,
			    offsetof(struct raw_sock, filter),
			    sizeof_field(struct raw_sock, filter), to_user);
#else
	pr_err("XFAIL: this kernel has no IPv4\n");
	pr_expected_config(CONFIG_INET);
#endif
}

static void do_usercopy_rawv6(bool to_user)
{
#if IS_ENABLED(CONFIG_IPV6)
	lkdtm_usercopy_sock("RAWv6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6,
			    offsetof(struct raw6_sock, filter),
			    sizeof_field(struct raw6_sock, filter), to_user);
#else
	pr_err("XFAIL: this kernel has no IPv6\n");
	pr_expected_config(CONFIG_IPV6);
#endif
}

static void do_usercopy_sctp(bool to_user)
{
#if IS_ENABLED(CONFIG_IP_SCTP)
	lkdtm_usercopy_sock("SCTP", AF_INET, SOCK_STREAM, IPPROTO_SCTP,
			    offsetof(struct sctp_sock, subscribe),
			    offsetof(struct sctp_sock, initmsg) -
			    offsetof(struct sctp_sock, subscribe) +
			    sizeof_field(struct sctp_sock, initmsg),
			    to_user);
#else
	pr_err("XFAIL: this kernel has no SCTP\n");
	pr_expected_config(CONFIG_IP_SCTP);
#endif
}

/* split_kinds[] indexes */
#define SPLIT_PLAIN	0
#define SPLIT_PLAIN_CG	1
#define SPLIT_USER	2
#define SPLIT_USER_CG	3

/*
 * User-sized kmalloc: a buffer that is user data as a whole (GFP_USERCOPY)
 * must come from the separate usersized-kmalloc-<size> caches, or from
 * usersized-kmalloc-cg-<size> when it is also memcg accounted, never share
 * a slab with the other kinds of kmalloc() object of its size, and stay
 * bounded by its object size. Kinds that share a cache by design (the -cg
 * caches are aliases without memcg kmem accounting) are not compared.
 * Booted with slab_common.usercopy_split=0 there are no such caches: XFAIL.
 */
#ifdef CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC
static const struct split_kind {
	const char *what;
	gfp_t gfp;
} split_kinds[] = {
	{ "plain",			GFP_KERNEL },
	{ "accounted",			GFP_KERNEL_ACCOUNT },
	{ "user-sized",			GFP_KERNEL | GFP_USERCOPY },
	{ "accounted user-sized",	GFP_KERNEL_ACCOUNT | GFP_USERCOPY },
};

static struct kmem_cache *split_cache(int kind)
{
	return kmalloc_caches[kmalloc_type(split_kinds[kind].gfp)]
			     [kmalloc_index(SPLIT_SIZE)];
}

/*
 * Whether the split is off at boot (slab_common.usercopy_split=0): then
 * create_kmalloc_caches() makes the user-sized cache types aliases of the
 * general ones and creates none of their caches, and kmem_buckets_create()
 * makes no buckets. kmalloc_type() does not change, so the alias is what
 * tells: the type GFP_USERCOPY selects holds the general caches.
 */
static bool usercopy_split_off(void)
{
	return kmalloc_caches[KMALLOC_USERCOPY][kmalloc_index(SPLIT_SIZE)] ==
	       kmalloc_caches[KMALLOC_NORMAL][kmalloc_index(SPLIT_SIZE)];
}

/* Whether any object of @a shares a slab page with any object of @b. */
static bool share_a_slab(void **a, void **b, int count)
{
	int i, j;

	for (i = 0; i < count; i++) {
		for (j = 0; j < count; j++) {
			if (virt_to_folio(a[i]) == virt_to_folio(b[j])) {
				pr_err("FAIL: objects %p and %p share a slab\n",
				       a[i], b[j]);
				return true;
			}
		}
	}
	return false;
}
#endif /* CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC */

static void do_usercopy_kmalloc_split(int kind, bool to_user)
{
#ifdef CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC
	void **objs[ARRAY_SIZE(split_kinds)] = { };
	struct kmem_cache *cache = split_cache(kind);
	size_t size = lkdtm_unconst(SPLIT_SIZE);
	char name[48];
	void *obj;
	int i, k, j;

	if (kmalloc_type(split_kinds[SPLIT_USER].gfp) ==
	    kmalloc_type(split_kinds[SPLIT_PLAIN].gfp) ||
	    kmalloc_type(split_kinds[SPLIT_USER_CG].gfp) ==
	    kmalloc_type(split_kinds[SPLIT_PLAIN_CG].gfp)) {
		pr_err("FAIL: GFP_USERCOPY does not select a kmalloc cache type of its own\n");
		return;
	}

	if (usercopy_split_off()) {
		pr_err("XFAIL: this kernel does not split user-sized kmalloc caches\n");
		pr_expected_config_param(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC,
					 "slab_common.usercopy_split");
		return;
	}

	pr_info("checking that GFP_USERCOPY selects caches of its own\n");
	if (split_cache(SPLIT_USER) == split_cache(SPLIT_PLAIN) ||
	    split_cache(SPLIT_USER_CG) == split_cache(SPLIT_PLAIN_CG)) {
		pr_err("FAIL: GFP_USERCOPY does not select a separate cache\n");
		pr_expected_config(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC);
		return;
	}

	for (k = 0; k < ARRAY_SIZE(split_kinds); k++) {
		objs[k] = kcalloc(SPLIT_COUNT, sizeof(*objs[k]), GFP_KERNEL);
		if (!objs[k])
			goto free_arrays;
	}

	/*
	 * Interleave enough allocations to fill a couple of slabs of each
	 * kind: without the split they would share slabs.
	 */
	pr_info("allocating %d %zu-byte objects of each of %zu kinds\n",
		SPLIT_COUNT, size, ARRAY_SIZE(split_kinds));
	for (i = 0; i < SPLIT_COUNT; i++) {
		for (k = 0; k < ARRAY_SIZE(split_kinds); k++) {
			objs[k][i] = kmalloc(size, split_kinds[k].gfp);
			if (!objs[k][i])
				goto free_objs;
		}
	}

	pr_info("checking that no slab page holds two kinds of object\n");
	for (k = 0; k < ARRAY_SIZE(split_kinds); k++) {
		for (j = k + 1; j < ARRAY_SIZE(split_kinds); j++) {
			if (split_cache(k) == split_cache(j)) {
				pr_info("%s and %s objects share '%s' by design\n",
					split_kinds[k].what, split_kinds[j].what,
					lkdtm_kmalloc_name(split_cache(k), size,
							   name, sizeof(name)));
				continue;
			}
			if (share_a_slab(objs[k], objs[j], SPLIT_COUNT))
				goto free_objs;
		}
	}

	/* Kinds sharing the cache by design interleave in its slabs. */
	for (k = 0, obj = NULL; k < ARRAY_SIZE(split_kinds) && !obj; k++) {
		if (split_cache(k) == cache)
			obj = lkdtm_find_owned_pair(objs[kind], SPLIT_COUNT,
						    objs[k], SPLIT_COUNT, size);
	}
	if (!obj) {
		pr_err("XFAIL: no two adjacent %s objects: %s\n",
		       split_kinds[kind].what, LKDTM_NO_PAIR);
		goto free_objs;
	}

	lkdtm_kmalloc_name(cache, size, name, sizeof(name));
	lkdtm_usercopy_window(name, obj, 0, size, LKDTM_BAD_PAST_OBJECT,
			      to_user);

free_objs:
	for (k = 0; k < ARRAY_SIZE(split_kinds); k++) {
		for (i = 0; i < SPLIT_COUNT && objs[k]; i++)
			kfree(objs[k][i]);
	}
free_arrays:
	for (k = 0; k < ARRAY_SIZE(split_kinds); k++)
		kfree(objs[k]);
#else
	pr_err("XFAIL: this kernel does not split user-sized kmalloc caches\n");
	pr_expected_config(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC);
#endif
}

/*
 * GFP_DMA is a placement requirement and wins over GFP_USERCOPY: such an
 * object must come from the dma-kmalloc-<size> cache, from ZONE_DMA pages.
 */
static void do_usercopy_kmalloc_dma(bool to_user)
{
#if !defined(CONFIG_ZONE_DMA)
	pr_err("XFAIL: this kernel has no ZONE_DMA\n");
	pr_expected_config(CONFIG_ZONE_DMA);
#elif defined(CONFIG_SLOB)
	pr_err("XFAIL: SLOB has no kmalloc cache types\n");
#else
	const gfp_t gfp = GFP_KERNEL | GFP_DMA | GFP_USERCOPY;
	struct kmem_cache *cache =
		kmalloc_caches[kmalloc_type(gfp)][kmalloc_index(SPLIT_SIZE)];
	size_t size = lkdtm_unconst(SPLIT_SIZE);
	void *objs[SPLIT_COUNT / 2] = { };
	char name[48];
	void *obj;
	int i;

	lkdtm_kmalloc_name(cache, size, name, sizeof(name));
	pr_info("GFP_DMA | GFP_USERCOPY selects '%s'\n", name);
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		objs[i] = kmalloc(size, gfp);
		if (!objs[i])
			goto free_objs;
		if (page_zonenum(virt_to_page(objs[i])) != ZONE_DMA) {
			pr_err("FAIL: GFP_DMA object %p is not in ZONE_DMA\n",
			       objs[i]);
			goto free_objs;
		}
	}

	obj = lkdtm_find_owned_pair(objs, ARRAY_SIZE(objs), objs,
				    ARRAY_SIZE(objs), size);
	if (!obj) {
		pr_err("XFAIL: no two adjacent DMA objects: %s\n", LKDTM_NO_PAIR);
		goto free_objs;
	}

	lkdtm_usercopy_window(name, obj, 0, size, LKDTM_BAD_PAST_OBJECT,
			      to_user);

free_objs:
	for (i = 0; i < ARRAY_SIZE(objs); i++)
		kfree(objs[i]);
#endif
}

/*
 * A user buffer of @len bytes filled with 'u' and ending in a NUL.
 * Unused where neither caller is built (SLOB without SPLIT_KMALLOC).
 */
static unsigned long __maybe_unused user_string(size_t len)
{
	unsigned long uaddr;
	char *fill;

	uaddr = vm_mmap(NULL, 0, PAGE_ALIGN(len), PROT_READ | PROT_WRITE,
			MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (uaddr >= TASK_SIZE)
		return 0;
	fill = kmalloc(len, GFP_KERNEL);
	if (!fill)
		goto unmap;
	memset(fill, 'u', len - 1);
	fill[len - 1] = '\0';
	if (copy_to_user((void __user *)uaddr, fill, lkdtm_unconst(len))) {
		kfree(fill);
		goto unmap;
	}
	kfree(fill);
	return uaddr;

unmap:
	vm_munmap(uaddr, PAGE_ALIGN(len));
	return 0;
}

/*
 * memdup_user(), vmemdup_user() and strndup_user() copy a buffer that is
 * user data as a whole: it must come from the user-sized kmalloc cache
 * that GFP_USER | GFP_USERCOPY selects (mm/util.c), which the oops names.
 */
enum dup_helper { DUP_MEMDUP_USER, DUP_VMEMDUP_USER, DUP_STRNDUP_USER };

static const char * const dup_names[] = {
	[DUP_MEMDUP_USER]	= "memdup_user",
	[DUP_VMEMDUP_USER]	= "vmemdup_user",
	[DUP_STRNDUP_USER]	= "strndup_user",
};

static void do_usercopy_dup(enum dup_helper helper, bool to_user)
{
#ifdef CONFIG_SLOB
	pr_err("XFAIL: SLOB has no kmalloc cache types\n");
#else
	struct kmem_cache *cache =
		kmalloc_caches[kmalloc_type(GFP_USER | GFP_USERCOPY)]
			      [kmalloc_index(SPLIT_SIZE)];
	size_t size = lkdtm_unconst(SPLIT_SIZE);
	void *objs[SPLIT_COUNT / 2] = { };
	const void __user *src;
	unsigned long uaddr;
	char name[48];
	void *obj;
	int i;

	uaddr = user_string(size);
	if (!uaddr) {
		pr_warn("Failed to allocate user memory\n");
		return;
	}
	src = (const void __user *)uaddr;

	lkdtm_kmalloc_name(cache, size, name, sizeof(name));
	pr_info("%s of %zu bytes should use '%s'\n", dup_names[helper], size,
		name);
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		if (helper == DUP_MEMDUP_USER)
			obj = memdup_user(src, size);
		else if (helper == DUP_VMEMDUP_USER)
			obj = vmemdup_user(src, size);
		else
			obj = strndup_user(src, size);
		if (IS_ERR(obj)) {
			pr_warn("%s failed: %ld\n", dup_names[helper],
				PTR_ERR(obj));
			goto free_objs;
		}
		objs[i] = obj;
	}

	obj = lkdtm_find_owned_pair(objs, ARRAY_SIZE(objs), objs,
				    ARRAY_SIZE(objs), size);
	if (!obj) {
		pr_err("XFAIL: no two adjacent %s objects: %s\n",
		       dup_names[helper], LKDTM_NO_PAIR);
		goto free_objs;
	}

	lkdtm_usercopy_window(name, obj, 0, size, LKDTM_BAD_PAST_OBJECT,
			      to_user);

free_objs:
	for (i = 0; i < ARRAY_SIZE(objs); i++)
		kvfree(objs[i]);
	vm_munmap(uaddr, PAGE_ALIGN(size));
#endif
}

/*
 * msg_msg: SysV and POSIX messages come from caches of their own, the
 * msg_msg-<size> buckets that ipc/msgutil.c makes for alloc_msg(), whose
 * window is the text after the header: useroffset sizeof(struct msg_msg),
 * usersize DATALEN_MSG (PAGE_SIZE - sizeof(struct msg_msg)), cut to the
 * object. load_msg() and the buckets are private to ipc/, so the test
 * looks the cache up by name and allocates zeroed objects from it, laid
 * out as messages are. The header (list, type, size, next segment and
 * security pointers) is kernel data, so the bad copy starts one byte
 * before the text, in the top byte of the NULL security pointer of an
 * object nobody else can see. The objects are interleaved with
 * memdup_user() buffers of the same size, which must not share their slabs.
 */
#define MSG_TEXT	900	/* sizeof(struct msg_msg) + 900 -> 1k */

static void do_usercopy_msg_msg(bool to_user)
{
#if !IS_ENABLED(CONFIG_SYSVIPC) && !IS_ENABLED(CONFIG_POSIX_MQUEUE)
	pr_err("XFAIL: this kernel has no SysV or POSIX messages\n");
	pr_expected_config(CONFIG_SYSVIPC);
#elif !defined(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC)
	pr_err("XFAIL: this kernel has no msg_msg caches\n");
	pr_expected_config(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC);
#else
	size_t object_size = kmalloc_size_roundup(sizeof(struct msg_msg) +
						  MSG_TEXT);
	size_t offset = sizeof(struct msg_msg);
	size_t size = min_t(size_t, object_size - offset,
			    PAGE_SIZE - sizeof(struct msg_msg));
	void *msgs[SPLIT_COUNT / 2] = { };
	void *bufs[SPLIT_COUNT / 2] = { };
	const void __user *src;
	struct kmem_cache *s;
	unsigned long uaddr;
	char cache[32];
	int i;

	/* Booted without the split, messages are in kmalloc-cg-<size>. */
	if (usercopy_split_off()) {
		pr_err("XFAIL: this kernel has no msg_msg caches\n");
		pr_expected_config_param(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC,
					 "slab_common.usercopy_split");
		return;
	}

	strscpy(cache, "msg_msg-", sizeof(cache));
	lkdtm_kmalloc_suffix(cache + strlen(cache), sizeof(cache) - strlen(cache),
			     object_size);
	s = kmem_cache_find(cache);
	if (!s || kmem_cache_size(s) != object_size) {
		pr_err("FAIL: this kernel has no '%s' cache of %zu-byte objects\n",
		       cache, object_size);
		return;
	}

	uaddr = user_string(MSG_TEXT);
	if (!uaddr) {
		pr_warn("Failed to allocate user memory\n");
		return;
	}
	src = (const void __user *)uaddr;

	pr_info("allocating %zu '%s' objects and memdup_user() buffers of %d bytes\n",
		ARRAY_SIZE(msgs), cache, MSG_TEXT);
	for (i = 0; i < ARRAY_SIZE(msgs); i++) {
		void *msg = kmem_cache_zalloc(s, GFP_KERNEL);
		void *buf = memdup_user(src, MSG_TEXT);

		if (!msg || IS_ERR(buf)) {
			pr_warn("Failed to allocate a message or a buffer\n");
			if (msg)
				kmem_cache_free(s, msg);
			if (!IS_ERR(buf))
				kfree(buf);
			goto free_msgs;
		}
		msgs[i] = msg;
		bufs[i] = buf;
	}

	pr_info("checking that no slab page holds a message and a buffer\n");
	if (share_a_slab(msgs, bufs, ARRAY_SIZE(msgs)))
		goto free_msgs;

	lkdtm_usercopy_window(cache, msgs[0], offset, size, LKDTM_BAD_BEFORE,
			      to_user);

free_msgs:
	for (i = 0; i < ARRAY_SIZE(msgs); i++) {
		if (msgs[i])
			kmem_cache_free(s, msgs[i]);
		kfree(bufs[i]);
	}
	vm_munmap(uaddr, PAGE_ALIGN(MSG_TEXT));
#endif
}

/*
 * Two caches in one call, then the first one again: with the whitelist
 * fallback on (slab_common.usercopy_fallback=1) each of the first two
 * copies gets its own WARNING (one per cache and direction) and the
 * third only the ratelimited notice; without it the first copy oopses.
 */
static void do_usercopy_two_caches(bool to_user)
{
	do_usercopy_raw(to_user);
	do_usercopy_dentry(to_user);
	do_usercopy_raw(to_user);
}

/* Callable tests. */
static void lkdtm_USERCOPY_WHITELIST_TASK_STRUCT_TO(void)
{
	do_usercopy_task_struct(true);
}

static void lkdtm_USERCOPY_WHITELIST_TASK_STRUCT_FROM(void)
{
	do_usercopy_task_struct(false);
}

static void lkdtm_USERCOPY_WHITELIST_MM_STRUCT_TO(void)
{
	do_usercopy_mm_struct(true);
}

static void lkdtm_USERCOPY_WHITELIST_MM_STRUCT_FROM(void)
{
	do_usercopy_mm_struct(false);
}

static void lkdtm_USERCOPY_WHITELIST_DENTRY_TO(void)
{
	do_usercopy_dentry(true);
}

static void lkdtm_USERCOPY_WHITELIST_DENTRY_FROM(void)
{
	do_usercopy_dentry(false);
}

static void lkdtm_USERCOPY_WHITELIST_NAMES_CACHE_TO(void)
{
	do_usercopy_names_cache(true);
}

static void lkdtm_USERCOPY_WHITELIST_NAMES_CACHE_FROM(void)
{
	do_usercopy_names_cache(false);
}

static void lkdtm_USERCOPY_WHITELIST_RAW_TO(void)
{
	do_usercopy_raw(true);
}

static void lkdtm_USERCOPY_WHITELIST_RAW_FROM(void)
{
	do_usercopy_raw(false);
}

static void lkdtm_USERCOPY_WHITELIST_RAWV6_TO(void)
{
	do_usercopy_rawv6(true);
}

static void lkdtm_USERCOPY_WHITELIST_RAWV6_FROM(void)
{
	do_usercopy_rawv6(false);
}

static void lkdtm_USERCOPY_WHITELIST_SCTP_TO(void)
{
	do_usercopy_sctp(true);
}

static void lkdtm_USERCOPY_WHITELIST_SCTP_FROM(void)
{
	do_usercopy_sctp(false);
}

static void lkdtm_USERCOPY_WHITELIST_TWO_CACHES_TO(void)
{
	do_usercopy_two_caches(true);
}

static void lkdtm_USERCOPY_WHITELIST_TWO_CACHES_FROM(void)
{
	do_usercopy_two_caches(false);
}

static void lkdtm_USERCOPY_WHITELIST_MSG_MSG_TO(void)
{
	do_usercopy_msg_msg(true);
}

static void lkdtm_USERCOPY_WHITELIST_MSG_MSG_FROM(void)
{
	do_usercopy_msg_msg(false);
}

static void lkdtm_USERCOPY_KMALLOC_SPLIT_TO(void)
{
	do_usercopy_kmalloc_split(SPLIT_USER, true);
}

static void lkdtm_USERCOPY_KMALLOC_SPLIT_FROM(void)
{
	do_usercopy_kmalloc_split(SPLIT_USER, false);
}

static void lkdtm_USERCOPY_KMALLOC_SPLIT_CG_TO(void)
{
	do_usercopy_kmalloc_split(SPLIT_USER_CG, true);
}

static void lkdtm_USERCOPY_KMALLOC_SPLIT_CG_FROM(void)
{
	do_usercopy_kmalloc_split(SPLIT_USER_CG, false);
}

static void lkdtm_USERCOPY_KMALLOC_DMA_TO(void)
{
	do_usercopy_kmalloc_dma(true);
}

static void lkdtm_USERCOPY_KMALLOC_DMA_FROM(void)
{
	do_usercopy_kmalloc_dma(false);
}

static void lkdtm_USERCOPY_MEMDUP_USER_TO(void)
{
	do_usercopy_dup(DUP_MEMDUP_USER, true);
}

static void lkdtm_USERCOPY_MEMDUP_USER_FROM(void)
{
	do_usercopy_dup(DUP_MEMDUP_USER, false);
}

static void lkdtm_USERCOPY_VMEMDUP_USER_TO(void)
{
	do_usercopy_dup(DUP_VMEMDUP_USER, true);
}

static void lkdtm_USERCOPY_VMEMDUP_USER_FROM(void)
{
	do_usercopy_dup(DUP_VMEMDUP_USER, false);
}

static void lkdtm_USERCOPY_STRNDUP_USER_TO(void)
{
	do_usercopy_dup(DUP_STRNDUP_USER, true);
}

static void lkdtm_USERCOPY_STRNDUP_USER_FROM(void)
{
	do_usercopy_dup(DUP_STRNDUP_USER, false);
}

static struct crashtype crashtypes[] = {
	CRASHTYPE(USERCOPY_WHITELIST_TASK_STRUCT_TO),
	CRASHTYPE(USERCOPY_WHITELIST_TASK_STRUCT_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_MM_STRUCT_TO),
	CRASHTYPE(USERCOPY_WHITELIST_MM_STRUCT_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_DENTRY_TO),
	CRASHTYPE(USERCOPY_WHITELIST_DENTRY_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_NAMES_CACHE_TO),
	CRASHTYPE(USERCOPY_WHITELIST_NAMES_CACHE_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_RAW_TO),
	CRASHTYPE(USERCOPY_WHITELIST_RAW_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_RAWV6_TO),
	CRASHTYPE(USERCOPY_WHITELIST_RAWV6_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_SCTP_TO),
	CRASHTYPE(USERCOPY_WHITELIST_SCTP_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_TWO_CACHES_TO),
	CRASHTYPE(USERCOPY_WHITELIST_TWO_CACHES_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_MSG_MSG_TO),
	CRASHTYPE(USERCOPY_WHITELIST_MSG_MSG_FROM),
	CRASHTYPE(USERCOPY_KMALLOC_SPLIT_TO),
	CRASHTYPE(USERCOPY_KMALLOC_SPLIT_FROM),
	CRASHTYPE(USERCOPY_KMALLOC_SPLIT_CG_TO),
	CRASHTYPE(USERCOPY_KMALLOC_SPLIT_CG_FROM),
	CRASHTYPE(USERCOPY_KMALLOC_DMA_TO),
	CRASHTYPE(USERCOPY_KMALLOC_DMA_FROM),
	CRASHTYPE(USERCOPY_MEMDUP_USER_TO),
	CRASHTYPE(USERCOPY_MEMDUP_USER_FROM),
	CRASHTYPE(USERCOPY_VMEMDUP_USER_TO),
	CRASHTYPE(USERCOPY_VMEMDUP_USER_FROM),
	CRASHTYPE(USERCOPY_STRNDUP_USER_TO),
	CRASHTYPE(USERCOPY_STRNDUP_USER_FROM),
};

struct crashtype_category usercopy_whitelist_crashtypes = {
	.crashtypes = crashtypes,
	.len	    = ARRAY_SIZE(crashtypes),
};
