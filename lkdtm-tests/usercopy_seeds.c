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
 * CAIF sockets are different: caif_create() passes a static struct proto
 * with a region to sk_alloc() but never proto_register()s it, so the proto
 * has no cache and the sockets come from kmalloc(). That test says so and
 * fails, as the declared window is not enforced.
 *
 * A kernel without the subsystem reports XFAIL.
 */
#include "lkdtm.h"
#include "usercopy_whitelist.h"
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <net/net_namespace.h>
#include <net/sock.h>
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
 * A region inside the object gets a bad copy one byte past its end, or
 * one byte before it when it ends with the object, so that the copy stays
 * inside the object. A region that is the whole object gets a bad copy
 * one byte past the object: into its own padding when it has some (ksize()
 * is larger than the object), else into a neighbouring object that this
 * test allocated.
 */
static __maybe_unused void do_usercopy_seed_cache(const char *name,
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
		pr_warn("Failed to allocate two adjacent '%s' objects\n", name);
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

static void do_usercopy_cifs(const char *name, bool to_user)
{
#if !IS_ENABLED(CONFIG_CIFS)
	pr_err("XFAIL: this kernel has no CIFS\n");
	pr_expected_config(CONFIG_CIFS);
#else
	do_usercopy_seed_cache(name, to_user);
#endif
}

static void do_usercopy_orangefs(bool to_user)
{
#if !IS_ENABLED(CONFIG_ORANGEFS_FS)
	pr_err("XFAIL: this kernel has no OrangeFS\n");
	pr_expected_config(CONFIG_ORANGEFS_FS);
#else
	do_usercopy_seed_cache("orangefs_inode_cache", to_user);
#endif
}

static void do_usercopy_rds_ib(bool to_user)
{
#if !IS_ENABLED(CONFIG_RDS_RDMA)
	pr_err("XFAIL: this kernel has no RDS over InfiniBand\n");
	pr_expected_config(CONFIG_RDS_RDMA);
#else
	do_usercopy_seed_cache("rds_ib_incoming", to_user);
#endif
}

/*
 * CAIF: the proto of caif_create() declares conn_req.param as the window
 * of a "PF_CAIF" cache that is never created. Say where the socket comes
 * from, then test the declared window on the live socket.
 */
static void do_usercopy_caif(bool to_user)
{
#if !IS_ENABLED(CONFIG_CAIF)
	pr_err("XFAIL: this kernel has no CAIF\n");
	pr_expected_config(CONFIG_CAIF);
#else
	struct socket *sock;
	struct proto *prot;
	int ret;

	ret = sock_create_kern(&init_net, AF_CAIF, SOCK_SEQPACKET, CAIFPROTO_AT,
			       &sock);
	if (ret) {
		pr_warn("Failed to create PF_CAIF socket: %d\n", ret);
		return;
	}
	prot = sock->sk->sk_prot;
	/* sk_prot_alloc(): kmalloc(prot->obj_size) when the proto has no cache */
	pr_info("%s socket declares window offset %u size %u, comes from %s\n",
		prot->name, prot->useroffset, prot->usersize,
		prot->slab ? "the proto's cache" : "kmalloc()");
	if (!prot->slab || prot->slab != kmem_cache_find(prot->name))
		pr_err("FAIL: %s sockets do not come from a '%s' cache: the window is not enforced\n",
		       prot->name, prot->name);

	lkdtm_usercopy_window(prot->name, sock->sk, prot->useroffset,
			      prot->usersize, LKDTM_BAD_AFTER, to_user);
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
