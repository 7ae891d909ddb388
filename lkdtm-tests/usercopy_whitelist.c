// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for hardened usercopy whitelisting on real kernel caches.
 *
 * drivers/misc/lkdtm/usercopy.c exercises the whitelist machinery on a
 * private "lkdtm-usercopy" cache. The tests here fire at the caches that
 * the kernel itself creates with a usercopy region (task_struct,
 * mm_struct, dentry, names_cache and the RAW/RAWv6/SCTP socket caches)
 * and at the user-sized kmalloc caches, using live objects of those
 * caches. Every whitelist test:
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
 * only warns about in-object violations) is not left corrupted. Copies
 * that leave the object only ever land in a neighbouring object that
 * this test allocated itself.
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
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>
#include <net/raw.h>
#include <net/sock.h>
#ifdef CONFIG_X86
#include <asm/fpu/api.h>
#endif
#if IS_ENABLED(CONFIG_IP_SCTP)
#include <net/sctp/structs.h>
#endif

/*
 * Hardened usercopy skips copies whose size is a compile-time constant,
 * so every size is laundered through this to force the run-time checks.
 */
static __always_inline size_t unconst(size_t size)
{
	OPTIMIZER_HIDE_VAR(size);
	return size;
}

/* Objects allocated to find two adjacent ones; see find_owned_pair(). */
#define NAMES_COUNT	16

/* Objects of each kind allocated: two order-3 slabs' worth. */
#define SPLIT_SIZE	1024
#define SPLIT_CACHE	"usersized-kmalloc-1k"
#define SPLIT_COUNT	64

/*
 * Return an object from @objs whose successor in the slab (@stride bytes
 * further) is also in @objs, so that a copy running one byte past the end
 * of the returned object only touches memory owned by this test.
 */
void *find_owned_pair(void **objs, int count, size_t stride)
{
	int i, j;

	for (i = 0; i < count; i++) {
		for (j = 0; j < count; j++) {
			if (objs[i] && objs[j] &&
			    (char *)objs[j] == (char *)objs[i] + stride)
				return objs[i];
		}
	}
	return NULL;
}

/**
 * do_usercopy_window() - test one usercopy window of a slab object
 * @cache: name of the cache @obj was allocated from
 * @obj: start of a live slab object
 * @offset: start of the usercopy window within the object
 * @size: size of the usercopy window
 * @bad_before: make the bad copy start one byte before the window
 *	instead of ending one byte past it
 * @to_user: test copy_to_user() rather than copy_from_user()
 *
 * The byte just outside the window (at @offset - 1 when @bad_before,
 * otherwise at @offset + @size) must be one that nothing else writes to
 * while the test runs: copy_from_user() writes back its current value.
 */
void do_usercopy_window(const char *cache, void *obj, size_t offset,
			size_t size, bool bad_before, bool to_user)
{
	size_t bad_offset = bad_before ? offset - 1 : offset;
	size_t bad_size = size + 1;
	size_t len = PAGE_ALIGN(bad_size);
	unsigned char __user *ubuf;
	unsigned long uaddr;
	unsigned char *snap;
	size_t good_delta = offset - bad_offset;

	pr_info("expecting window offset %zu size %zu in '%s'\n",
		offset, size, cache);

	snap = kmalloc(bad_size, GFP_KERNEL);
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
	 * Fill the user buffer with the bytes the bad copy covers, bounced
	 * through a fully whitelisted kmalloc buffer: a copy_from_user()
	 * that is wrongly allowed then stores the values already there.
	 */
	memcpy(snap, (unsigned char *)obj + bad_offset, bad_size);
	if (copy_to_user(ubuf, snap, unconst(bad_size))) {
		pr_warn("copy_to_user failed unexpectedly?!\n");
		goto free_user;
	}

	if (to_user) {
		pr_info("attempting good copy_to_user of the whole window\n");
		if (copy_to_user(ubuf + good_delta,
				 (unsigned char *)obj + offset,
				 unconst(size))) {
			pr_warn("copy_to_user failed unexpectedly?!\n");
			goto free_user;
		}

		pr_info("attempting bad copy_to_user at offset %zu size %zu\n",
			bad_offset, bad_size);
		if (copy_to_user(ubuf, (unsigned char *)obj + bad_offset,
				 unconst(bad_size))) {
			pr_warn("copy_to_user failed, but lacked Oops\n");
			goto free_user;
		}
	} else {
		pr_info("attempting good copy_from_user of the whole window\n");
		if (copy_from_user((unsigned char *)obj + offset,
				   ubuf + good_delta, unconst(size))) {
			pr_warn("copy_from_user failed unexpectedly?!\n");
			goto free_user;
		}

		pr_info("attempting bad copy_from_user at offset %zu size %zu\n",
			bad_offset, bad_size);
		if (copy_from_user((unsigned char *)obj + bad_offset, ubuf,
				   unconst(bad_size))) {
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
static void do_usercopy_task_struct(bool to_user)
{
#if defined(CONFIG_ARCH_TASK_STRUCT_ALLOCATOR)
	pr_err("XFAIL: this architecture has no task_struct cache\n");
#elif defined(MODULE) && defined(CONFIG_X86)
	pr_err("XFAIL: the x86 task_struct window is not visible to modules\n");
#else
	unsigned long offset, size;

	arch_thread_struct_whitelist(&offset, &size);
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

	do_usercopy_window("task_struct", current, offset, size, offset > 0,
			   to_user);
#endif
}

/*
 * mm_struct: the window is saved_auxv, see proc_caches_init(). The byte
 * before it belongs to env_end, which only exec and prctl(PR_SET_MM)
 * write; the counters after it change on every page fault.
 */
static void do_usercopy_mm_struct(bool to_user)
{
	if (!current->mm) {
		pr_warn("No mm to test\n");
		return;
	}
	do_usercopy_window("mm_struct", current->mm,
			   offsetof(struct mm_struct, saved_auxv),
			   sizeof_field(struct mm_struct, saved_auxv),
			   true, to_user);
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

	do_usercopy_window("dentry", dentry,
			   offsetof(struct dentry, d_iname),
			   sizeof_field(struct dentry, d_iname),
			   true, to_user);

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

	name = find_owned_pair(names, ARRAY_SIZE(names), PATH_MAX);
	if (!name) {
		pr_warn("Failed to allocate two adjacent names_cache objects\n");
		goto free_names;
	}

	do_usercopy_window("names_cache", name, 0, PATH_MAX, false, to_user);

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
void do_usercopy_sock(const char *cache, int family, int type,
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

	do_usercopy_window(cache, sock->sk, offset, size, false, to_user);

release:
	sock_release(sock);
}

static void do_usercopy_raw(bool to_user)
{
#if IS_ENABLED(CONFIG_INET)
	do_usercopy_sock("RAW", AF_INET, SOCK_RAW, IPPROTO_ICMP,
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
	do_usercopy_sock("RAWv6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6,
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
	do_usercopy_sock("SCTP", AF_INET, SOCK_STREAM, IPPROTO_SCTP,
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

/*
 * User-sized kmalloc: allocations whose size user space controls
 * (GFP_USERCOPY) must come from the separate usersized-kmalloc-<size>
 * caches, never share a slab with ordinary kmalloc objects, and stay
 * bounded by their object size.
 */
static void do_usercopy_kmalloc_split(bool to_user)
{
#ifdef CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC
	void **user_objs, **plain_objs;
	struct kmem_cache *user_cache, *plain_cache;
	const gfp_t user_gfp = GFP_KERNEL | GFP_USERCOPY;
	unsigned int index = kmalloc_index(SPLIT_SIZE);
	size_t size = unconst(SPLIT_SIZE);
	void *obj;
	int i, j;

	user_cache = kmalloc_caches[kmalloc_type(user_gfp)][index];
	plain_cache = kmalloc_caches[kmalloc_type(GFP_KERNEL)][index];
	pr_info("checking that GFP_USERCOPY selects its own kmalloc cache\n");
	if (!user_cache || user_cache == plain_cache) {
		pr_err("FAIL: GFP_USERCOPY does not select a separate cache\n");
		pr_expected_config(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC);
		return;
	}

	user_objs = kcalloc(SPLIT_COUNT, sizeof(*user_objs), GFP_KERNEL);
	plain_objs = kcalloc(SPLIT_COUNT, sizeof(*plain_objs), GFP_KERNEL);
	if (!user_objs || !plain_objs) {
		pr_warn("Failed to allocate object arrays\n");
		goto free_arrays;
	}

	/*
	 * Interleave enough allocations to fill a couple of slabs of each
	 * kind: without the split they would share slabs.
	 */
	pr_info("allocating %d user-sized and %d plain %zu-byte objects\n",
		SPLIT_COUNT, SPLIT_COUNT, size);
	for (i = 0; i < SPLIT_COUNT; i++) {
		user_objs[i] = kmalloc(size, user_gfp);
		plain_objs[i] = kmalloc(size, GFP_KERNEL);
		if (!user_objs[i] || !plain_objs[i]) {
			pr_warn("Failed to allocate kernel memory\n");
			goto free_objs;
		}
	}

	pr_info("checking that no slab page holds both kinds of object\n");
	for (i = 0; i < SPLIT_COUNT; i++) {
		struct folio *folio = virt_to_folio(user_objs[i]);

		for (j = 0; j < SPLIT_COUNT; j++) {
			if (folio == virt_to_folio(plain_objs[j])) {
				pr_err("FAIL: user-sized object %p shares a slab with plain object %p\n",
				       user_objs[i], plain_objs[j]);
				goto free_objs;
			}
		}
	}

	obj = find_owned_pair(user_objs, SPLIT_COUNT, SPLIT_SIZE);
	if (!obj) {
		pr_warn("Failed to allocate two adjacent user-sized objects\n");
		goto free_objs;
	}

	do_usercopy_window(SPLIT_CACHE, obj, 0, size, false, to_user);

free_objs:
	for (i = 0; i < SPLIT_COUNT; i++) {
		kfree(user_objs[i]);
		kfree(plain_objs[i]);
	}
free_arrays:
	kfree(user_objs);
	kfree(plain_objs);
#else
	pr_err("XFAIL: this kernel does not split user-sized kmalloc caches\n");
	pr_expected_config(CONFIG_HARDENED_USERCOPY_SPLIT_KMALLOC);
#endif
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

static void lkdtm_USERCOPY_KMALLOC_SPLIT(void)
{
	do_usercopy_kmalloc_split(true);
}

static void lkdtm_USERCOPY_KMALLOC_SPLIT_FROM(void)
{
	do_usercopy_kmalloc_split(false);
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
	CRASHTYPE(USERCOPY_KMALLOC_SPLIT),
	CRASHTYPE(USERCOPY_KMALLOC_SPLIT_FROM),
};

struct crashtype_category usercopy_whitelist_crashtypes = {
	.crashtypes = crashtypes,
	.len	    = ARRAY_SIZE(crashtypes),
};
