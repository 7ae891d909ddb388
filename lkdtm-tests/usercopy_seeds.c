// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for the usercopy whitelists of the remaining caches named by the
 * 2017 hardened usercopy whitelisting series and by commit bf1867db9b85
 * ("net/rds: Whitelist rdma_cookie and rx_tstamp for usercopy"): cifs,
 * orangefs, CAIF, SCTPv6 and RDS over InfiniBand.
 *
 * Most of these caches are private to their subsystem (a static
 * kmem_cache pointer), so the tests look them up by name with
 * kmem_cache_find() and allocate an object of their own from them. The
 * window tested is the region the live cache declares
 * (kmem_cache_usercopy_region()); that the declared region is the one the
 * source asks for is checked separately, against the kernel's debug
 * information. Every test reports the window as lkdtm_usercopy_window()
 * does, copies exactly the window and then one byte more, which must Oops
 * naming the cache, offset and size.
 *
 * A subsystem's caches live as long as the subsystem: built as a module,
 * its caches are created by the module's init and destroyed by its exit.
 * So every test first takes the subsystem the way its users do, which
 * loads a module as mount(2) or socket(2) would, and holds it until the
 * test is done, so that the module cannot be removed under the test:
 * get_fs_type() holds the module of a filesystem, an RDS socket on the
 * InfiniBand transport holds the transport's module. Where the subsystem
 * is a module, the test also asks for it first as "modprobe NAME" would
 * (request_module()); a module that cannot be loaded is an XFAIL. A test
 * that Oopses never drops its reference, which only keeps the module
 * loaded.
 *
 * CAIF sockets are different: caif_create() passes a static struct proto
 * with a region to sk_alloc() but never proto_register()s it, so the proto
 * has no cache and the sockets come from kmalloc(). That test says so as
 * an XFAIL, as the declared window is not enforced, and copies nothing.
 *
 * A kernel without the subsystem reports XFAIL.
 */
#include "lkdtm.h"
#include "usercopy_whitelist.h"
#include <linux/fs.h>
#include <linux/in6.h>
#include <linux/kmod.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/sockptr.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#if IS_ENABLED(CONFIG_RDS_RDMA)
#include <linux/rds.h>
#endif
#if IS_ENABLED(CONFIG_CAIF)
#include <linux/caif/caif_socket.h>
#endif
#if IS_ENABLED(CONFIG_IP_SCTP) && IS_ENABLED(CONFIG_IPV6)
#include <net/sctp/structs.h>
#endif
#include <linux/slab_usercopy.h>

/* Objects allocated to find two adjacent ones; see lkdtm_find_owned_pair(). */
#define SEED_COUNT	16

/**
 * do_usercopy_seed_cache() - test the declared region of a named cache
 * @name: the cache, as kmem_cache_create_usercopy() named it
 * @to_user: test copy_to_user() rather than copy_from_user()
 *
 * The caller holds the subsystem that owns the cache (see the top of this
 * file), so that the cache is not destroyed while the test uses it.
 *
 * A region inside the object gets a bad copy one byte past its end, or
 * one byte before it when it ends with the object, so that the copy stays
 * inside the object. A region that is the whole object gets a bad copy
 * one byte past the object: into its own padding when it has some (ksize()
 * is larger than the object), else into a neighbouring object that this
 * test allocated.
 */
static noinline __maybe_unused void do_usercopy_seed_cache(const char *name,
							   bool to_user)
{
	unsigned int useroffset, usersize, object_size;
	void *objs[SEED_COUNT] = { };
	struct kmem_cache *s;
	bool whole, bad_before;
	void *obj = NULL;
	int i, count = 1;

	s = kmem_cache_find(name);
	if (!s) {
		pr_err("FAIL: this kernel has no '%s' cache\n", name);
		return;
	}
	kmem_cache_usercopy_region(s, &useroffset, &usersize);
	object_size = kmem_cache_size(s);
	if (!usersize) {
		pr_err("FAIL: cache '%s' has no usercopy region\n", name);
		return;
	}
	whole = useroffset == 0 && usersize == object_size;
	bad_before = !whole && useroffset > 0 &&
		     useroffset + usersize == object_size;
	if (whole)
		count = ARRAY_SIZE(objs);

	for (i = 0; i < count; i++) {
		objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		if (!objs[i]) {
			pr_warn("Failed to allocate '%s' objects\n", name);
			goto free_objs;
		}
	}
	if (!whole || ksize(objs[0]) > object_size)
		obj = objs[0];
	else
		obj = lkdtm_find_owned_pair(objs, count, objs, count,
					    object_size);
	if (!obj) {
		pr_err("XFAIL: no two adjacent '%s' objects: %s\n", name,
		       LKDTM_NO_PAIR);
		goto free_objs;
	}

	lkdtm_usercopy_window(name, obj, useroffset, usersize,
			      whole ? LKDTM_BAD_PAST_OBJECT :
			      bad_before ? LKDTM_BAD_BEFORE : LKDTM_BAD_AFTER,
			      to_user);

free_objs:
	for (i = 0; i < count; i++) {
		if (objs[i])
			kmem_cache_free(s, objs[i]);
	}
}

/*
 * Load @module as "modprobe @module" would when the subsystem is built as a
 * module (@modular). Return request_module()'s result, 0 if built in.
 */
static __maybe_unused int seed_module_load(const char *module, bool modular)
{
	return modular ? request_module("%s", module) : 0;
}

/*
 * The subsystem could not be taken: an XFAIL when it is a module that did
 * not load (@err from seed_module_load(), e.g. -ENOENT: no modprobe, or
 * modprobe's exit status: no such module in this system), else a FAIL.
 */
static __maybe_unused void seed_module_missing(const char *module, int err,
					       const char *what, int ret)
{
	if (err)
		pr_err("XFAIL: %s is built as a module, not loaded (request_module: %d)\n",
		       module, err);
	else
		pr_err("FAIL: cannot hold %s: %d\n", what, ret);
}

/*
 * A filesystem's caches, with the filesystem held as mount(2) holds it:
 * get_fs_type() takes a reference on the module that registered it (and
 * asks for "fs-@fs_name" if none did), so the module stays until it is
 * put. put_filesystem() is not exported; it is module_put(fs->owner).
 */
static __maybe_unused void do_usercopy_seed_fs(const char *fs_name,
					       const char *module,
					       bool modular, const char *cache,
					       bool to_user)
{
	int err = seed_module_load(module, modular);
	struct file_system_type *fs;

	fs = get_fs_type(fs_name);
	if (!fs) {
		seed_module_missing(module, err, fs_name, -ENODEV);
		return;
	}
	do_usercopy_seed_cache(cache, to_user);
	module_put(fs->owner);
}

static void do_usercopy_cifs(const char *name, bool to_user)
{
#if !IS_ENABLED(CONFIG_CIFS)
	pr_err("XFAIL: this kernel has no CIFS\n");
	pr_expected_config(CONFIG_CIFS);
#else
	do_usercopy_seed_fs("cifs", "cifs", IS_MODULE(CONFIG_CIFS), name,
			    to_user);
#endif
}

static void do_usercopy_orangefs(bool to_user)
{
#if !IS_ENABLED(CONFIG_ORANGEFS_FS)
	pr_err("XFAIL: this kernel has no OrangeFS\n");
	pr_expected_config(CONFIG_ORANGEFS_FS);
#else
	/* Registered as "pvfs2", without an "fs-pvfs2" module alias. */
	do_usercopy_seed_fs("pvfs2", "orangefs", IS_MODULE(CONFIG_ORANGEFS_FS),
			    "orangefs_inode_cache", to_user);
#endif
}

/*
 * rds_ib_incoming belongs to rds_rdma, RDS's InfiniBand transport. Hold
 * it as an RDS/IB program does: an RDS socket (socket(2) loads rds) on
 * the InfiniBand transport (SO_RDS_TRANSPORT), whose rds_trans_get() loads
 * rds_rdma if needed and holds it until the socket is released.
 */
static void do_usercopy_rds_ib(bool to_user)
{
#if !IS_ENABLED(CONFIG_RDS_RDMA)
	pr_err("XFAIL: this kernel has no RDS over InfiniBand\n");
	pr_expected_config(CONFIG_RDS_RDMA);
#else
	int err = seed_module_load("rds_rdma", IS_MODULE(CONFIG_RDS_RDMA));
	int trans = RDS_TRANS_IB;
	struct socket *sock;
	int ret;

	ret = sock_create_kern(&init_net, AF_RDS, SOCK_SEQPACKET, 0, &sock);
	if (ret) {
		seed_module_missing("rds_rdma", err, "an RDS socket", ret);
		return;
	}
	ret = sock->ops->setsockopt(sock, SOL_RDS, SO_RDS_TRANSPORT,
				    KERNEL_SOCKPTR(&trans), sizeof(trans));
	if (ret) {
		seed_module_missing("rds_rdma", err, "the RDS/IB transport", ret);
		goto release;
	}

	do_usercopy_seed_cache("rds_ib_incoming", to_user);
release:
	sock_release(sock);
#endif
}

/*
 * CAIF: the proto of caif_create() declares conn_req.param as the window
 * of a "PF_CAIF" cache that is never created. Say where the socket comes
 * from; test the declared window on the live socket only if it comes from
 * the proto's cache. A socket from kmalloc() is whitelisted whole, so a
 * copy past the window can only go through: a known defect of the kernel
 * (the proto is never registered), reported as an XFAIL, never as a pass.
 * The socket holds the caif module, which socket(2) loads.
 */
static void do_usercopy_caif(bool to_user)
{
#if !IS_ENABLED(CONFIG_CAIF)
	pr_err("XFAIL: this kernel has no CAIF\n");
	pr_expected_config(CONFIG_CAIF);
#else
	int err = seed_module_load("caif", IS_MODULE(CONFIG_CAIF));
	struct socket *sock;
	struct proto *prot;
	int ret;

	ret = sock_create_kern(&init_net, AF_CAIF, SOCK_SEQPACKET, CAIFPROTO_AT,
			       &sock);
	if (ret) {
		seed_module_missing("caif", err, "a PF_CAIF socket", ret);
		return;
	}
	prot = sock->sk->sk_prot;
	/* sk_prot_alloc(): kmalloc(prot->obj_size) when the proto has no cache */
	pr_info("%s socket declares window offset %u size %u, comes from %s\n",
		prot->name, prot->useroffset, prot->usersize,
		prot->slab ? "the proto's cache" : "kmalloc()");
	if (!prot->slab) {
		pr_err("XFAIL: %s sockets do not come from a '%s' cache: the window is not enforced (caif_create() never registers its proto)\n",
		       prot->name, prot->name);
		goto release;
	}

	lkdtm_usercopy_window(prot->name, sock->sk, prot->useroffset,
			      prot->usersize, LKDTM_BAD_AFTER, to_user);
release:
	sock_release(sock);
#endif
}

/* SCTPv6 sock: the window of sctpv6_prot, see net/sctp/socket.c. */
static void do_usercopy_sctpv6(bool to_user)
{
#if IS_ENABLED(CONFIG_IP_SCTP) && IS_ENABLED(CONFIG_IPV6)
	lkdtm_usercopy_sock("SCTPv6", AF_INET6, SOCK_STREAM, IPPROTO_SCTP,
			    offsetof(struct sctp6_sock, sctp.subscribe),
			    offsetof(struct sctp6_sock, sctp.initmsg) -
			    offsetof(struct sctp6_sock, sctp.subscribe) +
			    sizeof_field(struct sctp6_sock, sctp.initmsg),
			    to_user);
#else
	pr_err("XFAIL: this kernel has no SCTP over IPv6\n");
	pr_expected_config(CONFIG_IP_SCTP);
	pr_expected_config(CONFIG_IPV6);
#endif
}

/* Callable tests. */
static void lkdtm_USERCOPY_WHITELIST_CIFS_REQUEST_TO(void)
{
	do_usercopy_cifs("cifs_request", true);
}

static void lkdtm_USERCOPY_WHITELIST_CIFS_REQUEST_FROM(void)
{
	do_usercopy_cifs("cifs_request", false);
}

static void lkdtm_USERCOPY_WHITELIST_CIFS_SMALL_RQ_TO(void)
{
	do_usercopy_cifs("cifs_small_rq", true);
}

static void lkdtm_USERCOPY_WHITELIST_CIFS_SMALL_RQ_FROM(void)
{
	do_usercopy_cifs("cifs_small_rq", false);
}

static void lkdtm_USERCOPY_WHITELIST_ORANGEFS_TO(void)
{
	do_usercopy_orangefs(true);
}

static void lkdtm_USERCOPY_WHITELIST_ORANGEFS_FROM(void)
{
	do_usercopy_orangefs(false);
}

static void lkdtm_USERCOPY_WHITELIST_CAIF_TO(void)
{
	do_usercopy_caif(true);
}

static void lkdtm_USERCOPY_WHITELIST_CAIF_FROM(void)
{
	do_usercopy_caif(false);
}

static void lkdtm_USERCOPY_WHITELIST_SCTPV6_TO(void)
{
	do_usercopy_sctpv6(true);
}

static void lkdtm_USERCOPY_WHITELIST_SCTPV6_FROM(void)
{
	do_usercopy_sctpv6(false);
}

static void lkdtm_USERCOPY_WHITELIST_RDS_IB_TO(void)
{
	do_usercopy_rds_ib(true);
}

static void lkdtm_USERCOPY_WHITELIST_RDS_IB_FROM(void)
{
	do_usercopy_rds_ib(false);
}

static struct crashtype crashtypes[] = {
	CRASHTYPE(USERCOPY_WHITELIST_CIFS_REQUEST_TO),
	CRASHTYPE(USERCOPY_WHITELIST_CIFS_REQUEST_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_CIFS_SMALL_RQ_TO),
	CRASHTYPE(USERCOPY_WHITELIST_CIFS_SMALL_RQ_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_ORANGEFS_TO),
	CRASHTYPE(USERCOPY_WHITELIST_ORANGEFS_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_CAIF_TO),
	CRASHTYPE(USERCOPY_WHITELIST_CAIF_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_SCTPV6_TO),
	CRASHTYPE(USERCOPY_WHITELIST_SCTPV6_FROM),
	CRASHTYPE(USERCOPY_WHITELIST_RDS_IB_TO),
	CRASHTYPE(USERCOPY_WHITELIST_RDS_IB_FROM),
};

struct crashtype_category usercopy_seeds_crashtypes = {
	.crashtypes = crashtypes,
	.len	    = ARRAY_SIZE(crashtypes),
};
