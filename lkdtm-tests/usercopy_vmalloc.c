// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for hardened usercopy on vmalloc areas that have no guard page.
 *
 * check_heap_object() bounds a copy to or from a vmalloc address by the
 * vmap area that holds it. An area made by __get_vm_area_node() (vmalloc(),
 * vmap(), ioremap()) ends in a guard page unless it is VM_NO_GUARD, and
 * USERCOPY_VMALLOC checks that a copy running into it is caught. Other
 * areas have no guard page: VM_NO_GUARD ones, the areas pcpu_get_vm_areas()
 * makes for the dynamic chunks of the per-cpu allocator, which lack the flag,
 * and those registered with vm_area_register_early(). Their last page holds
 * data like any other, and a copy of its last bytes is legitimate: these
 * tests make one, to and from user space, and must see no report.
 */
#include "lkdtm.h"
#include "usercopy_whitelist.h"
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

/* How many bytes at the end of the area are copied. */
#define TAIL_SIZE	64

/*
 * Per-cpu objects of PCPU_MIN_UNIT_SIZE allocated: 4 MiB per CPU, twice
 * the largest unit of a chunk on x86-64 (the 2 MiB atom).
 */
#define PERCPU_OBJS	128

/*
 * Copy the TAIL_SIZE bytes that end at @end to user space at @ubuf, or
 * from there into them. Returns false, after saying so, if it failed.
 * Unused where neither test can run (LKDTM=m without SMP: both XFAIL).
 */
static bool __maybe_unused do_usercopy_tail(unsigned char __user *ubuf,
					    void *end, bool to_user)
{
	unsigned char *tail = (unsigned char *)end - TAIL_SIZE;
	unsigned long left;

	if (to_user)
		left = copy_to_user(ubuf, tail, lkdtm_unconst(TAIL_SIZE));
	else
		left = copy_from_user(tail, ubuf, lkdtm_unconst(TAIL_SIZE));
	if (left)
		pr_err("FAIL: copy_%s_user of the %d bytes below %p failed: %lu bytes left\n",
		       to_user ? "to" : "from", TAIL_SIZE, end, left);
	return !left;
}

/* A zeroed user buffer of PAGE_SIZE bytes, or 0. */
static unsigned long __maybe_unused tail_user_buffer(void)
{
	unsigned long uaddr;

	uaddr = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (uaddr >= TASK_SIZE) {
		pr_warn("Failed to allocate user memory\n");
		return 0;
	}
	if (clear_user((void __user *)uaddr, PAGE_SIZE)) {
		pr_warn("clear_user failed unexpectedly?!\n");
		vm_munmap(uaddr, PAGE_SIZE);
		return 0;
	}
	return uaddr;
}

/*
 * A VM_NO_GUARD mapping: two pages from __vmalloc_node_range(), which is
 * not exported to modules. Copy the last bytes of the second page.
 */
static void do_usercopy_vmalloc_no_guard(bool to_user)
{
#ifdef MODULE
	pr_err("XFAIL: modules cannot map a VM_NO_GUARD area: __vmalloc_node_range() is not exported\n");
#else
	const char *what = "a 2-page VM_NO_GUARD vmalloc area";
	size_t size = 2 * PAGE_SIZE;
	unsigned long uaddr;
	void *area;

	uaddr = tail_user_buffer();
	if (!uaddr)
		return;
	area = __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END,
				    GFP_KERNEL, PAGE_KERNEL, VM_NO_GUARD,
				    NUMA_NO_NODE, __builtin_return_address(0));
	if (!area) {
		pr_warn("Failed to vmalloc a VM_NO_GUARD area\n");
		goto free_user;
	}

	pr_info("attempting copy_%s_user of the last %d bytes of %s\n",
		to_user ? "to" : "from", TAIL_SIZE, what);
	if (do_usercopy_tail((unsigned char __user *)uaddr, area + size,
			     to_user))
		pr_info("OK: the last %d bytes of %s were copied without a report\n",
			TAIL_SIZE, what);
	vfree(area);
free_user:
	vm_munmap(uaddr, PAGE_SIZE);
#endif
}

/*
 * The dynamic chunks of the per-cpu allocator are vmap areas from
 * pcpu_get_vm_areas(), one per group of units, without guard pages. The
 * allocator fills the fullest chunk first and makes a new chunk when none
 * has room, so PERCPU_OBJS objects of PCPU_MIN_UNIT_SIZE fill what is left
 * of the current chunk and then at least one new chunk to its end: the
 * last object of that chunk ends its unit. On the last possible CPU, whose
 * unit ends its group's area when the group has no unused units (as with
 * one CPU), copy the last bytes of every object that is vmalloc-backed,
 * and so the last bytes of an area.
 */
static void do_usercopy_vmalloc_percpu(bool to_user)
{
#ifdef CONFIG_NEED_PER_CPU_KM
	pr_err("XFAIL: this kernel's per-cpu chunks come from the page allocator, not vmalloc\n");
	pr_expected_config(CONFIG_SMP);
#else
	const char *what = "a per-cpu chunk's unit";
	const size_t size = PCPU_MIN_UNIT_SIZE;
	unsigned int cpu = nr_cpu_ids - 1;
	void __percpu **objs;
	unsigned long uaddr;
	int i, n, copied = 0;

	while (!cpu_possible(cpu))
		cpu--;

	uaddr = tail_user_buffer();
	if (!uaddr)
		return;
	objs = kcalloc(PERCPU_OBJS, sizeof(*objs), GFP_KERNEL);
	if (!objs)
		goto free_user;

	for (n = 0; n < PERCPU_OBJS; n++) {
		objs[n] = __alloc_percpu(size, PAGE_SIZE);
		if (!objs[n]) {
			pr_warn("Failed to allocate %d per-cpu objects\n",
				PERCPU_OBJS);
			goto free_objs;
		}
	}

	pr_info("attempting copy_%s_user of the last %d bytes of %d per-cpu objects of %zu bytes up to the end of %s\n",
		to_user ? "to" : "from", TAIL_SIZE, PERCPU_OBJS, size, what);
	for (i = 0; i < n; i++) {
		void *p = per_cpu_ptr(objs[i], cpu);

		if (!is_vmalloc_addr(p))
			continue;
		if (!do_usercopy_tail((unsigned char __user *)uaddr, p + size,
				      to_user))
			goto free_objs;
		copied++;
	}
	if (copied)
		pr_info("OK: the last %d bytes of %s were copied without a report\n",
			TAIL_SIZE, what);
	else
		pr_warn("Failed to get a vmalloc-backed per-cpu object\n");

free_objs:
	for (i = 0; i < n; i++)
		free_percpu(objs[i]);
	kfree(objs);
free_user:
	vm_munmap(uaddr, PAGE_SIZE);
#endif
}

/* Callable tests. */
static void lkdtm_USERCOPY_VMALLOC_NO_GUARD_TO(void)
{
	do_usercopy_vmalloc_no_guard(true);
}

static void lkdtm_USERCOPY_VMALLOC_NO_GUARD_FROM(void)
{
	do_usercopy_vmalloc_no_guard(false);
}

static void lkdtm_USERCOPY_VMALLOC_PERCPU_TO(void)
{
	do_usercopy_vmalloc_percpu(true);
}

static void lkdtm_USERCOPY_VMALLOC_PERCPU_FROM(void)
{
	do_usercopy_vmalloc_percpu(false);
}

static struct crashtype crashtypes[] = {
	CRASHTYPE(USERCOPY_VMALLOC_NO_GUARD_TO),
	CRASHTYPE(USERCOPY_VMALLOC_NO_GUARD_FROM),
	CRASHTYPE(USERCOPY_VMALLOC_PERCPU_TO),
	CRASHTYPE(USERCOPY_VMALLOC_PERCPU_FROM),
};

struct crashtype_category usercopy_vmalloc_crashtypes = {
	.crashtypes = crashtypes,
	.len	    = ARRAY_SIZE(crashtypes),
};
