// SPDX-License-Identifier: GPL-2.0
/*
 * check-legit-copies: the no-false-positive workload.  Legitimate system
 * calls that copy through every whitelisted region and the user-sized
 * kmalloc caches; with hardened usercopy on, none of them may BUG or WARN.
 * The harness boots it as a check (suites.toml `checks`): PASS needs exit 0,
 * no FAIL line and no kernel report on the console.
 *
 * What each group reaches in 6.1.192 (+ patches/):
 *  dentry      getdents64 on ramfs: dcache_readdir() -> filldir64() copies
 *              the name from the dentry (d_iname for names < 32 bytes,
 *              fs/dcache.c whitelist; longer names live in kmalloc);
 *              stat/lstat/readlink of the same names.
 *  names       stat of paths of 1..4095 bytes: getname() ->
 *              strncpy_from_user() into a names_cache object.
 *  auxv        /proc/self/auxv: proc_auxv_read() copies mm->saved_auxv
 *              (mm_struct whitelist) at every offset and length;
 *              prctl(PR_SET_MM, PR_SET_MM_AUXV) (stack buffer, then memcpy);
 *              prctl(PR_GET_AUXV) (added in 6.4: SKIP on 6.1) copies the
 *              whole saved_auxv array.
 *  fpu         ptrace PTRACE_GETREGSET/SETREGSET of the arch's FP regsets
 *              (x86-64: NT_PRFPREG, NT_X86_XSTATE; i386: NT_PRFPREG,
 *              NT_PRXFPREG, NT_X86_XSTATE; arm64: NT_PRFPREG, NT_ARM_TLS),
 *              whole and partial, x86's PTRACE_GETFPREGS/SETFPREGS, on a
 *              stopped child, and signal delivery (FP state in the signal
 *              frame).  In 6.1 the regset get side goes through a
 *              kvzalloc() bounce buffer (kernel/regset.c); the x86-64
 *              signal frame uses XSAVE/XRSTOR on user memory, so there the
 *              task_struct FPU window is copied directly only by the ia32
 *              sigreturn path (IA32_EMULATION is off in lab.config), which
 *              is native i386's (arch/x86/kernel/fpu/signal.c
 *              __fpu_restore_sig(): copy_sigframe_from_user_to_xstate()
 *              into current's fpstate); arm64's signal frame gets
 *              thread.uw.fpsimd_state (its task_struct whitelist) by
 *              __copy_to_user() straight from task_struct.
 *  sctp        SCTP_INITMSG getsockopt copies sctp_sock.initmsg (SCTP/SCTPv6
 *              whitelist); SCTP_EVENTS get (stack) and every SCTP setsockopt
 *              (memdup_sockptr(): kmalloc-<n>, not converted by patches/0007).
 *  raw         ICMP_FILTER / ICMPV6_FILTER get and set copy raw_sock.filter
 *              and raw6_sock.filter directly (RAW/RAWv6 whitelists), every
 *              length from 0 to the filter size and beyond.
 *  msg         SysV messages of every kmalloc size class of the guest
 *              (msg_msg and msg_msgseg: msg_msg-<n>/msg_msgseg-<n> with
 *              patches/0005, window = the text after the header;
 *              kernel-layout.h) up to 64 KiB,
 *              msgrcv whole and truncated (MSG_NOERROR).
 *  exec        execve with long argv/envp (copy_strings(): strnlen_user +
 *              copy_from_user into the new stack's pages).
 *  dup         strndup_user()/memdup_user() (user-sized kmalloc with 0007):
 *              mount(2) type/source strings, fsopen/fsconfig key, value and
 *              blob, setxattr values (vmemdup_user) of 1 byte .. 64 KiB.
 *  pipe        pipe read/write, vmsplice, splice file<->pipe, tee, splice
 *              of a seq_file.
 *  proc, sys   read every readable file under /proc and /sys (seq_file
 *              buffers: user-sized kmalloc with 0006), except
 *              /proc/kmsg (blocks, and reading consumes the kernel log) and
 *              /sys/kernel/debug (debugfs: LKDTM's crash triggers and other
 *              test hooks).  Symlinks are not followed.  At most 2 MiB are
 *              read per file (/proc/kcore, /proc/kpage*); a read that blocks
 *              for 2 s is interrupted and the file named.
 *
 * Each group prints "usercopy-lab-check: PASS|FAIL: GROUP: N calls (...)";
 * a FAIL names the first call that did not do what it should.  The exit
 * status is 0 when every group passed, else 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/mount.h>
#include <linux/sctp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "kernel-layout.h"
#include "lab-check.h"

#define WORKDIR "/tmp/legit"
#define MAX_NAME 255
#define FILE_CAP (2 << 20)
#define BLOCK_SECONDS 2
#ifndef PR_GET_AUXV
#define PR_GET_AUXV 0x41555856
#endif

struct group {
	const char *name;
	long calls;
	long failed;
	char first[200];	/* the first failure */
	char note[200];		/* what was done, for the PASS line */
};

enum { G_DENTRY, G_NAMES, G_AUXV, G_FPU, G_SCTP, G_RAW, G_MSG, G_EXEC,
	G_DUP, G_PIPE, G_PROC, G_SYS, NR_GROUPS };

static struct group groups[NR_GROUPS] = {
	[G_DENTRY] = { "dentry" }, [G_NAMES] = { "names" },
	[G_AUXV] = { "auxv" }, [G_FPU] = { "fpu" }, [G_SCTP] = { "sctp" },
	[G_RAW] = { "raw" }, [G_MSG] = { "msg" }, [G_EXEC] = { "exec" },
	[G_DUP] = { "dup" }, [G_PIPE] = { "pipe" }, [G_PROC] = { "proc" },
	[G_SYS] = { "sys" },
};

/* page-aligned: 64 KiB of big fill a pipe's 16 pages exactly */
static char buf[1 << 17] __attribute__((aligned(4096)));
static char big[1 << 17] __attribute__((aligned(4096)));

/* One system call of group g; ok = it did what it should. */
static __attribute__((format(printf, 3, 4)))
void call(int g, int ok, const char *fmt, ...)
{
	struct group *grp = &groups[g];
	va_list ap;

	grp->calls++;
	if (ok)
		return;
	if (!grp->failed++) {
		va_start(ap, fmt);
		vsnprintf(grp->first, sizeof(grp->first), fmt, ap);
		va_end(ap);
	}
}

static __attribute__((format(printf, 2, 3)))
void note(int g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(groups[g].note, sizeof(groups[g].note), fmt, ap);
	va_end(ap);
}

static void fill(char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = 'A' + (i * 7 + seed) % 26;
}

/* A name of len bytes, different for every len. */
static void name_of(char *out, int len)
{
	memset(out, 'a' + len % 26, len);
	out[len] = '\0';
	if (len >= 4)
		snprintf(out, 4, "%03d", len), out[3] = 'n';
}

/* ------------------------------------------------------------- dentry */

static void do_dentry(void)
{
	char name[MAX_NAME + 1], path[PATH_MAX], target[PATH_MAX];
	unsigned char seen[MAX_NAME + 1] = { 0 };
	static const int bufsizes[] = { 280, 1024, 32768 };
	struct stat st;
	int len, fd, i, missing = 0;

	mkdir(WORKDIR "/f", 0755);
	mkdir(WORKDIR "/l", 0755);
	for (len = 1; len <= MAX_NAME; len++) {
		name_of(name, len);
		snprintf(path, sizeof(path), WORKDIR "/f/%s", name);
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		call(G_DENTRY, fd >= 0, "creat %s: %s", path, strerror(errno));
		close_if_open(fd);
		snprintf(target, sizeof(target), "../f/%s", name);
		snprintf(path, sizeof(path), WORKDIR "/l/%s", name);
		call(G_DENTRY, !symlink(target, path), "symlink %s: %s", path,
		     strerror(errno));
	}
	for (i = 0; i < 3; i++) {
		long n, off;

		fd = open(WORKDIR "/f", O_RDONLY | O_DIRECTORY);
		memset(seen, 0, sizeof(seen));
		while ((n = getdents64(fd, buf, bufsizes[i])) > 0) {
			call(G_DENTRY, 1, "getdents64");
			for (off = 0; off < n;) {
				struct dirent64 *d = (void *)(buf + off);
				size_t l = strlen(d->d_name);

				name_of(name, l <= MAX_NAME ? l : 1);
				if (l <= MAX_NAME && !strcmp(name, d->d_name))
					seen[l] = 1;
				off += d->d_reclen;
			}
		}
		call(G_DENTRY, n == 0, "getdents64 (buffer %d): %s", bufsizes[i],
		     strerror(errno));
		close_if_open(fd);
		for (len = 1; len <= MAX_NAME; len++)
			missing += !seen[len];
	}
	call(G_DENTRY, !missing, "getdents64 missed %d names", missing);
	for (len = 1; len <= MAX_NAME; len++) {
		ssize_t n;

		name_of(name, len);
		snprintf(path, sizeof(path), WORKDIR "/f/%s", name);
		call(G_DENTRY, !stat(path, &st), "stat %s: %s", path, strerror(errno));
		snprintf(path, sizeof(path), WORKDIR "/l/%s", name);
		call(G_DENTRY, !lstat(path, &st) && S_ISLNK(st.st_mode),
		     "lstat %s: %s", path, strerror(errno));
		n = readlink(path, target, sizeof(target));
		call(G_DENTRY, n == len + 5 && !memcmp(target + 5, name, len),
		     "readlink %s: %zd", path, n);
		/* /proc/self/fd/N: d_path() of the short name */
		fd = open(path, O_RDONLY);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target));
		call(G_DENTRY, fd >= 0 && n > len &&
		     !memcmp(target + n - len, name, len),
		     "readlink %s: %zd", path, n);
		close_if_open(fd);
	}
	note(G_DENTRY, "names of 1..%d bytes: creat, symlink, getdents64 with "
	     "3 buffer sizes, stat, lstat, readlink", MAX_NAME);
}

/* ------------------------------------------------------------- names */

static void do_names(void)
{
	char path[PATH_MAX + 16], name[8];
	struct stat st;
	int len, fd;

	fd = open(WORKDIR "/n", O_CREAT | O_WRONLY, 0644);
	close_if_open(fd);
	/* "/tmp/legit/" then "./" * k then "n" (odd total) or "/n" (even) */
	for (len = 12; len < PATH_MAX; len++) {
		int pre = strlen(WORKDIR "/");
		int k = (len - pre - 1) / 2, p = pre;

		memcpy(path, WORKDIR "/", pre);
		while (k--) {
			memcpy(path + p, "./", 2);
			p += 2;
		}
		if ((len - pre - 1) % 2)
			path[p++] = '/';
		path[p++] = 'n';
		path[p] = '\0';
		call(G_NAMES, p == len && !stat(path, &st),
		     "stat of a %d-byte path: %s", len, strerror(errno));
	}
	strcpy(name, "/");
	call(G_NAMES, !stat(name, &st), "stat /: %s", strerror(errno));
	note(G_NAMES, "stat of paths of every length 1, 12..%d bytes", PATH_MAX - 1);
}

/* ------------------------------------------------------------- auxv */

static void do_auxv(void)
{
	static char auxv[4096], again[4096];
	ssize_t n, total = 0, got;
	size_t off, len;
	int fd = open("/proc/self/auxv", O_RDONLY);

	call(G_AUXV, fd >= 0, "open /proc/self/auxv: %s", strerror(errno));
	if (fd < 0)
		return;
	while ((n = read(fd, auxv + total, sizeof(auxv) - total)) > 0)
		total += n;
	call(G_AUXV, total > 16 && total % 16 == 0, "read /proc/self/auxv: %zd bytes",
	     total);
	for (off = 0; off < (size_t)total; off++) {
		for (len = 1; off + len <= (size_t)total; len += 1 + len / 4) {
			got = pread(fd, again, len, off);
			call(G_AUXV, got == (ssize_t)len && !memcmp(again, auxv + off, len),
			     "pread auxv off %zu len %zu: %zd", off, len, got);
		}
	}
	close(fd);
	/* Writing the same vector back (root; copied into a stack buffer). */
	call(G_AUXV, !prctl(PR_SET_MM, PR_SET_MM_AUXV, (unsigned long)auxv, total, 0),
	     "prctl(PR_SET_MM_AUXV, %zd bytes): %s", total, strerror(errno));
	errno = 0;
	n = prctl(PR_GET_AUXV, (unsigned long)again, sizeof(again), 0, 0);
	if (n < 0 && errno == EINVAL) {
		printf(PREFIX "SKIP: auxv: prctl(PR_GET_AUXV) is EINVAL: not in this "
		       "kernel (added in 6.4)\n");
	} else {
		/*
		 * kernel/sys.c prctl_get_auxv() returns sizeof(mm->saved_auxv),
		 * the whole array (400 bytes on 6.12 x86-64), and copies that much
		 * from the mm_struct whitelist; /proc/self/auxv shows only the
		 * used part, which must lead it.
		 */
		call(G_AUXV, n >= total && n <= (ssize_t)sizeof(again) &&
		     !memcmp(again, auxv, total),
		     "prctl(PR_GET_AUXV): %zd (%s)", n, strerror(errno));
	}
	note(G_AUXV, "/proc/self/auxv (%zd bytes) at every offset and length; "
	     "PR_SET_MM_AUXV", total);
}

/* ------------------------------------------------------------- fpu */

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	volatile double x = sig;

	handled += (int)(x * 1.5) > 0;
}

/*
 * The FP regsets of the guest's arch, and the size of the first from its
 * uapi/libc header (struct user_fpregs_struct: 512 bytes on x86-64, the
 * FSAVE image of 108 on i386; arm64's struct user_fpsimd_struct: 528).
 * NT_X86_XSTATE's size depends on the CPU, NT_ARM_TLS's on SME: both are
 * read from the kernel (GETREGSET clamps the length to the whole set).
 */
struct fp_regset {
	int type;
	const char *name;
	size_t header_size;	/* 0: take the size the kernel reports */
};

#if defined(__x86_64__) || defined(__i386__)
#define FPREGS struct user_fpregs_struct
static const struct fp_regset fp_regsets[] = {
	{ NT_PRFPREG, "NT_PRFPREG", sizeof(struct user_fpregs_struct) },
#ifdef __i386__
	{ NT_PRXFPREG, "NT_PRXFPREG", sizeof(struct user_fpxregs_struct) },
#endif
	{ NT_X86_XSTATE, "NT_X86_XSTATE", 0 },
};
#elif defined(__aarch64__)
static const struct fp_regset fp_regsets[] = {
	{ NT_PRFPREG, "NT_PRFPREG", sizeof(struct user_fpsimd_struct) },
	{ NT_ARM_TLS, "NT_ARM_TLS", 0 },
};
#else
#error "check-legit-copies: no FP regsets for this arch"
#endif
#define NR_FP_REGSETS (int)(sizeof(fp_regsets) / sizeof(fp_regsets[0]))

/*
 * GETREGSET of len bytes of a regset of full bytes.  A partial read must be
 * the start of the whole set; the whole set is written back with SETREGSET
 * (xfpregs_set() and xstateregs_set() refuse partial writes) and read again.
 */
static void regset_round(pid_t pid, int type, size_t len, size_t full,
			 const char *what)
{
	static char a[8192], b[8192];
	struct iovec io = { a, len };
	int ok;

	ok = !ptrace(PTRACE_GETREGSET, pid, (void *)(long)type, &io);
	call(G_FPU, ok && io.iov_len == len, "GETREGSET %s len %zu: %s, got %zu",
	     what, len, ok ? "short" : strerror(errno), io.iov_len);
	io.iov_base = b;
	io.iov_len = full;
	call(G_FPU, !ptrace(PTRACE_GETREGSET, pid, (void *)(long)type, &io) &&
	     io.iov_len == full && !memcmp(a, b, len),
	     "GETREGSET %s len %zu is not the start of the whole set", what, len);
	if (len < full)
		return;
	io.iov_base = a;
	call(G_FPU, !ptrace(PTRACE_SETREGSET, pid, (void *)(long)type, &io),
	     "SETREGSET %s len %zu: %s", what, full, strerror(errno));
	io.iov_base = b;
	call(G_FPU, !ptrace(PTRACE_GETREGSET, pid, (void *)(long)type, &io) &&
	     io.iov_len == full && !memcmp(a, b, full < 32 ? full : 32),
	     "GETREGSET %s after SETREGSET differs", what);
}

/* The i-th partial length of a set of full bytes: a multiple of 16 below it. */
static size_t partial_len(int i, size_t full)
{
	size_t steps = (full - 1) / 16;

	return steps ? 16 * (1 + (i * 7) % steps) : full;
}

/*
 * FP state in and out of the kernel: signal delivery and return (x86: the
 * FPU state in the signal frame, XSAVE/XRSTOR on user memory; arm64:
 * preserve_fpsimd_context() copies task_struct's thread.uw.fpsimd_state,
 * the arm64 task_struct whitelist, straight to the frame), and the FP
 * regsets of a stopped tracee, whole and partial (6.1: kernel/regset.c's
 * bounce buffer on the get side), plus x86's GETFPREGS/SETFPREGS.
 */
static void do_fpu(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	size_t full[NR_FP_REGSETS];
	char sizes[120] = "";
	int status = 0, i, r;
	pid_t pid;

	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < 200; i++)
		raise(SIGUSR1);
	call(G_FPU, handled == 200, "%d of 200 SIGUSR1 handled", (int)handled);

	pid = fork();
	if (pid < 0) {
		call(G_FPU, 0, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		volatile double x = 1.0;

		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (i = 0; i < 1000; i++)
			x *= 1.0001;
		_exit(x > 1.0 ? 0 : 1);
	}
	call(G_FPU, waitpid(pid, &status, 0) == pid && WIFSTOPPED(status),
	     "tracee did not stop: status %#x", status);
	for (r = 0; r < NR_FP_REGSETS; r++) {
		const struct fp_regset *rs = &fp_regsets[r];
		struct iovec io = { big, sizeof(big) };
		size_t l = strlen(sizes);

		full[r] = 0;
		if (!ptrace(PTRACE_GETREGSET, pid, (void *)(long)rs->type, &io))
			full[r] = io.iov_len;
		call(G_FPU, full[r] && (!rs->header_size || full[r] == rs->header_size),
		     "GETREGSET %s: %zu bytes (header: %zu; %s)", rs->name, full[r],
		     rs->header_size, strerror(errno));
		snprintf(sizes + l, sizeof(sizes) - l, "%s%s %zu", l ? ", " : "",
			 rs->name, full[r]);
	}
#if defined(__x86_64__) || defined(__i386__)
	/* The legacy FXSAVE area and the XSAVE header at least. */
	call(G_FPU, full[NR_FP_REGSETS - 1] >= 576, "NT_X86_XSTATE: %zu bytes",
	     full[NR_FP_REGSETS - 1]);
#endif
	for (i = 0; i < 20; i++) {
		for (r = 0; r < NR_FP_REGSETS; r++) {
			if (!full[r])
				continue;
			regset_round(pid, fp_regsets[r].type, full[r], full[r],
				     fp_regsets[r].name);
			regset_round(pid, fp_regsets[r].type, partial_len(i, full[r]),
				     full[r], fp_regsets[r].name);
		}
#ifdef FPREGS
		{
			FPREGS fp;

			call(G_FPU, !ptrace(PTRACE_GETFPREGS, pid, NULL, &fp),
			     "GETFPREGS: %s", strerror(errno));
			call(G_FPU, !ptrace(PTRACE_SETFPREGS, pid, NULL, &fp),
			     "SETFPREGS: %s", strerror(errno));
		}
#endif
	}
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	call(G_FPU, waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	     !WEXITSTATUS(status), "tracee ended with status %#x", status);
	note(G_FPU, "200 signals; GET/SETREGSET %s bytes, whole and partial%s",
	     sizes,
#ifdef FPREGS
	     "; GET/SETFPREGS"
#else
	     ""
#endif
	     );
}

/* ------------------------------------------------------------- sockets */

static void do_sctp_one(int family, int type)
{
	struct sctp_initmsg im, back;
	unsigned char ev[64], evback[64];
	socklen_t len, ksize;
	int s = socket(family, type, IPPROTO_SCTP), i;

	call(G_SCTP, s >= 0, "socket(%d, %d, SCTP): %s", family, type, strerror(errno));
	if (s < 0)
		return;
	for (i = 0; i < 16; i++) {
		im = (struct sctp_initmsg){ .sinit_num_ostreams = 10 + i,
			.sinit_max_instreams = 20 + i, .sinit_max_attempts = 3 + i,
			.sinit_max_init_timeo = 1000 + i };
		call(G_SCTP, !setsockopt(s, IPPROTO_SCTP, SCTP_INITMSG, &im, sizeof(im)),
		     "set SCTP_INITMSG: %s", strerror(errno));
		len = sizeof(back) + i;		/* longer buffers are clamped */
		memset(&back, 0, sizeof(back));
		call(G_SCTP, !getsockopt(s, IPPROTO_SCTP, SCTP_INITMSG, buf, &len) &&
		     len == sizeof(back) && !memcmp(buf, &im, sizeof(im)),
		     "get SCTP_INITMSG: %s, len %u", strerror(errno), len);
	}
	/* The kernel's struct sctp_event_subscribe size: get clamps to it. */
	len = sizeof(ev);
	call(G_SCTP, !getsockopt(s, IPPROTO_SCTP, SCTP_EVENTS, ev, &len),
	     "get SCTP_EVENTS: %s", strerror(errno));
	ksize = len;
	for (len = 1; len <= ksize; len++) {
		socklen_t blen = len;

		for (i = 0; i < (int)len; i++)
			ev[i] = (len + i) % 2;
		call(G_SCTP, !setsockopt(s, IPPROTO_SCTP, SCTP_EVENTS, ev, len),
		     "set SCTP_EVENTS len %u: %s", len, strerror(errno));
		call(G_SCTP, !getsockopt(s, IPPROTO_SCTP, SCTP_EVENTS, evback, &blen) &&
		     blen == len && !memcmp(ev, evback, len),
		     "get SCTP_EVENTS len %u: %s", len, strerror(errno));
	}
	close(s);
}

static void do_sctp(void)
{
	do_sctp_one(AF_INET, SOCK_SEQPACKET);
	do_sctp_one(AF_INET, SOCK_STREAM);
	do_sctp_one(AF_INET6, SOCK_SEQPACKET);
	do_sctp_one(AF_INET6, SOCK_STREAM);
	note(G_SCTP, "SCTP and SCTPv6, SEQPACKET and STREAM: SCTP_INITMSG and "
	     "SCTP_EVENTS (every length) set and read back");
}

static void raw_filter(int family, int proto, int level, int opt, size_t size)
{
	unsigned char want[64], got[64];
	socklen_t len, glen;
	int s = socket(family, SOCK_RAW, proto);

	call(G_RAW, s >= 0, "socket(%d, RAW, %d): %s", family, proto, strerror(errno));
	if (s < 0)
		return;
	fill((char *)want, sizeof(want), family);
	for (len = 0; len <= size + 8; len++) {
		call(G_RAW, !setsockopt(s, level, opt, want, len),
		     "setsockopt(%d, %d) len %u: %s", level, opt, len, strerror(errno));
		glen = len;
		memset(got, 0, sizeof(got));
		call(G_RAW, !getsockopt(s, level, opt, got, &glen) &&
		     glen == (len < size ? len : size) && !memcmp(got, want, glen),
		     "getsockopt(%d, %d) len %u: %s, got len %u", level, opt, len,
		     strerror(errno), glen);
	}
	close(s);
}

static void do_raw(void)
{
	raw_filter(AF_INET, IPPROTO_ICMP, SOL_RAW, ICMP_FILTER,
		   sizeof(struct icmp_filter));
	raw_filter(AF_INET6, IPPROTO_ICMPV6, SOL_ICMPV6, ICMPV6_FILTER,
		   sizeof(struct icmp6_filter));
	note(G_RAW, "ICMP_FILTER and ICMPV6_FILTER set and read back with "
	     "every length 0..size+8");
}

/* ------------------------------------------------------------- msg */

static void msg_round(int q, size_t len)
{
	struct msgbuf *m = (struct msgbuf *)big;
	ssize_t n;

	m->mtype = 1 + len % 7;
	fill(m->mtext, len, len);
	call(G_MSG, !msgsnd(q, m, len, 0), "msgsnd %zu bytes: %s", len,
	     strerror(errno));
	memset(buf, 0, len + 8);
	n = msgrcv(q, buf, len, 0, IPC_NOWAIT);
	call(G_MSG, n == (ssize_t)len && !memcmp(((struct msgbuf *)buf)->mtext,
						 m->mtext, len),
	     "msgrcv %zu bytes: %zd (%s)", len, n, strerror(errno));
	if (len < 2)
		return;
	/* Truncated receive: store_msg() copies only the first len / 2. */
	call(G_MSG, !msgsnd(q, m, len, 0), "msgsnd %zu bytes: %s", len,
	     strerror(errno));
	n = msgrcv(q, buf, len / 2, 0, IPC_NOWAIT | MSG_NOERROR);
	call(G_MSG, n == (ssize_t)len / 2 &&
	     !memcmp(((struct msgbuf *)buf)->mtext, m->mtext, len / 2),
	     "msgrcv %zu of %zu bytes: %zd (%s)", len / 2, len, n, strerror(errno));
}

static void do_msg(void)
{
	static const int large[] = { 8192, 16384, 32768, 65535, 65536 };
	struct kmalloc_class classes[MAX_KMALLOC_CLASSES];
	const int hdr = MSG_MSG_HDR, seghdr = MSG_SEG_HDR, first = 4096 - hdr;
	int nr = kmalloc_classes(classes, MAX_KMALLOC_CLASSES);
	FILE *f;
	int q, i, sizes = 0;

	call(G_MSG, nr > 0, "no kmalloc classes in /proc/slabinfo");

	f = fopen("/proc/sys/kernel/msgmax", "w");
	if (f) {
		fprintf(f, "65536\n");
		fclose(f);
	}
	f = fopen("/proc/sys/kernel/msgmnb", "w");
	if (f) {
		fprintf(f, "%d\n", 1 << 20);
		fclose(f);
	}
	q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	call(G_MSG, q >= 0, "msgget: %s", strerror(errno));
	if (q < 0)
		return;
	for (i = 0; i <= 16; i++, sizes++)
		msg_round(q, i);
	for (i = 0; i < nr && classes[i].size <= 4096; i++) {
		int c = classes[i].size;

		if (c > hdr) {	/* msg_msg exactly filling class c, and one more */
			msg_round(q, c - hdr);
			msg_round(q, c - hdr + 1);
			sizes += 2;
		}
		if (c > seghdr) {	/* a msg_msgseg exactly filling class c */
			msg_round(q, first + c - seghdr);
			msg_round(q, first + c - seghdr + 1);
			sizes += 2;
		}
	}
	for (i = 0; i < (int)(sizeof(large) / sizeof(large[0])); i++, sizes++)
		msg_round(q, large[i]);
	msgctl(q, IPC_RMID, NULL);
	note(G_MSG, "%d message sizes 0..65536 (every msg_msg and msg_msgseg "
	     "size class of %d, headers %d and %d bytes), whole and truncated "
	     "msgrcv", sizes, nr, hdr, seghdr);
}

/* ------------------------------------------------------------- exec */

static const int arg_lens[] = { 0, 1, 31, 32, 255, 4095, 4096, 4097, 65535,
				131071 };
#define NR_ARG_LENS ((int)(sizeof(arg_lens) / sizeof(arg_lens[0])))

/* argv: self --exec-child TOTAL then the long strings; envp likewise. */
static int exec_child(int argc, char **argv, char **envp)
{
	long want = atol(argv[2]), have = 0;
	int i;

	for (i = 3; i < argc; i++)
		have += strlen(argv[i]);
	for (i = 0; envp[i]; i++)
		have += strlen(envp[i]);
	return have == want ? 0 : 1;
}

static void do_exec(const char *self)
{
	static char *argv[2 * NR_ARG_LENS + 600], *envp[NR_ARG_LENS + 1];
	char total[32];
	long sum = 0;
	int i, n, round, status;
	pid_t pid, r;

	for (round = 0; round < 4; round++) {
		n = 0;
		argv[n++] = (char *)self;
		argv[n++] = "--exec-child";
		argv[n++] = total;
		sum = 0;
		for (i = 0; i < NR_ARG_LENS; i++) {
			int l = arg_lens[(i + round) % NR_ARG_LENS];

			argv[n] = malloc(l + 1);
			fill(argv[n], l, i);
			argv[n][l] = '\0';
			sum += l;
			n++;
		}
		for (i = 0; round == 3 && i < 500; i++) {	/* many short ones */
			argv[n++] = "x";
			sum++;
		}
		argv[n] = NULL;
		for (i = 0; i < NR_ARG_LENS; i++) {
			/* "Vi=" and a value: strings of max(3, len) bytes */
			int l = arg_lens[NR_ARG_LENS - 1 - i] < 3 ? 3 :
				arg_lens[NR_ARG_LENS - 1 - i];

			envp[i] = malloc(l + 1);
			snprintf(envp[i], 4, "V%d", i % 10);
			envp[i][2] = '=';
			fill(envp[i] + 3, l - 3, i);
			envp[i][l] = '\0';
			sum += l;
		}
		envp[NR_ARG_LENS] = NULL;
		snprintf(total, sizeof(total), "%ld", sum);
		pid = fork();
		if (pid < 0) {
			call(G_EXEC, 0, "execve round %d: fork: %s", round, strerror(errno));
			break;
		}
		if (pid == 0) {
			execve(self, argv, envp);
			printf(PREFIX "FAIL: exec: execve %s: %s\n", self, strerror(errno));
			_exit(127);
		}
		status = -1;
		r = waitpid(pid, &status, 0);
		call(G_EXEC, r == pid && WIFEXITED(status) && !WEXITSTATUS(status),
		     "execve round %d (%ld bytes of strings): waitpid %d (%s), "
		     "status %#x", round, sum, r, strerror(errno), status);
		for (i = 3; i < 3 + NR_ARG_LENS; i++)
			free(argv[i]);
		for (i = 0; envp[i]; i++)
			free(envp[i]);
	}
	note(G_EXEC, "4 execve of %d argv + %d envp strings of 0..131071 bytes "
	     "(one with 500 more), checked by the new image", NR_ARG_LENS, NR_ARG_LENS);
}

/* ------------------------------------------------------------- dup */

static void do_dup(void)
{
	static const int vlens[] = { 1, 8, 63, 64, 65, 1000, 4096, 4097, 65536 };
	char opts[64];
	int i, fd, r;

	mkdir(WORKDIR "/mnt", 0755);
	for (i = 0; i < 10; i++) {
		snprintf(opts, sizeof(opts), "hidepid=%d", i % 3);
		call(G_DUP, !mount("proc", WORKDIR "/mnt", "proc", MS_NOSUID, opts),
		     "mount proc %s: %s", opts, strerror(errno));
		call(G_DUP, !umount(WORKDIR "/mnt"), "umount: %s", strerror(errno));
	}
	for (i = 0; i < 10; i++) {
		fd = syscall(SYS_fsopen, "proc", 0);
		call(G_DUP, fd >= 0, "fsopen(proc): %s", strerror(errno));
		if (fd < 0)
			continue;
		call(G_DUP, !syscall(SYS_fsconfig, fd, FSCONFIG_SET_STRING, "hidepid",
				     "invisible", 0), "fsconfig hidepid: %s",
		     strerror(errno));
		call(G_DUP, !syscall(SYS_fsconfig, fd, FSCONFIG_SET_STRING, "gid",
				     "0", 0), "fsconfig gid: %s", strerror(errno));
		/* copied by memdup_user_nul(), then refused by proc */
		r = syscall(SYS_fsconfig, fd, FSCONFIG_SET_BINARY, "subset", "pid", 3);
		call(G_DUP, r < 0 && errno == EINVAL, "fsconfig binary: %d (%s)", r,
		     strerror(errno));
		close(fd);
	}
	fd = open(WORKDIR "/x", O_CREAT | O_WRONLY, 0644);
	close_if_open(fd);
	fill(big, 65536, 3);
	for (i = 0; i < (int)(sizeof(vlens) / sizeof(vlens[0])); i++) {
		/* vmemdup_user() copies the value before ramfs says no */
		r = setxattr(WORKDIR "/x", "user.legit", big, vlens[i], 0);
		call(G_DUP, !r || errno == EOPNOTSUPP, "setxattr %d bytes: %s", vlens[i],
		     strerror(errno));
	}
	note(G_DUP, "mount(2) strings, fsopen/fsconfig string and binary, "
	     "setxattr values of 1..65536 bytes");
}

/* ------------------------------------------------------------- pipe */

static void do_pipe(void)
{
	static const int lens[] = { 1, 7, 64, 4095, 4096, 4097, 32768, 65536 };
	int p[2], p2[2], fd, i;
	ssize_t n;
	loff_t off;

	/* non-blocking: a short transfer is a failure, never a hang */
	call(G_PIPE, !pipe2(p, O_NONBLOCK) && !pipe2(p2, O_NONBLOCK), "pipe: %s",
	     strerror(errno));
	for (i = 0; i < (int)(sizeof(lens) / sizeof(lens[0])); i++) {
		size_t len = lens[i];
		struct iovec iov = { big, len };

		fill(big, len, i);
		n = write(p[1], big, len);
		call(G_PIPE, n == (ssize_t)len, "write %zu: %zd", len, n);
		n = read(p[0], buf, len);
		call(G_PIPE, n == (ssize_t)len && !memcmp(buf, big, len),
		     "read %zu: %zd", len, n);
		n = vmsplice(p[1], &iov, 1, SPLICE_F_NONBLOCK);
		call(G_PIPE, n == (ssize_t)len, "vmsplice %zu: %zd (%s)", len, n,
		     strerror(errno));
		n = tee(p[0], p2[1], len, SPLICE_F_NONBLOCK);
		call(G_PIPE, n == (ssize_t)len, "tee %zu: %zd (%s)", len, n,
		     strerror(errno));
		n = read(p2[0], buf, len);
		call(G_PIPE, n == (ssize_t)len && !memcmp(buf, big, len),
		     "read tee'd %zu: %zd", len, n);
		fd = open(WORKDIR "/pipe-data", O_CREAT | O_TRUNC | O_RDWR, 0644);
		off = 0;
		n = splice(p[0], NULL, fd, &off, len, SPLICE_F_NONBLOCK);
		call(G_PIPE, n == (ssize_t)len, "splice pipe->file %zu: %zd (%s)", len,
		     n, strerror(errno));
		off = 0;
		n = splice(fd, &off, p[1], NULL, len, SPLICE_F_NONBLOCK);
		call(G_PIPE, n == (ssize_t)len, "splice file->pipe %zu: %zd (%s)", len,
		     n, strerror(errno));
		n = read(p[0], buf, len);
		call(G_PIPE, n == (ssize_t)len && !memcmp(buf, big, len),
		     "read spliced %zu: %zd", len, n);
		close_if_open(fd);
	}
	fd = open("/proc/meminfo", O_RDONLY);
	n = splice(fd, NULL, p[1], NULL, 4096, SPLICE_F_NONBLOCK);
	call(G_PIPE, n > 0, "splice /proc/meminfo->pipe: %zd (%s)", n,
	     strerror(errno));
	call(G_PIPE, read(p[0], buf, n) == n, "read spliced seq_file");
	close_if_open(fd);
	close(p[0]);
	close(p[1]);
	close(p2[0]);
	close(p2[1]);
	note(G_PIPE, "8 sizes 1..65536: write/read, vmsplice, tee, splice "
	     "pipe<->file; splice of a seq_file");
}

/* ------------------------------------------------------------- /proc, /sys */

struct walk {
	int g;
	long files, bytes, capped;
	char blocked[400];
	char skipped[200];
};

static void on_alarm(int sig)
{
	(void)sig;
}

static void read_file(struct walk *w, const char *path)
{
	static const size_t first[] = { 1, 61 };
	struct itimerval it = { .it_value = { BLOCK_SECONDS, 0 } };
	struct itimerval off = { 0 };
	long total = 0;
	ssize_t n = 0;
	int fd, i;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;		/* readable by mode, refused by the file: fine */
	w->files++;
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; total < FILE_CAP; i++) {
		n = read(fd, buf, i < 2 ? first[i] : 65536);
		call(w->g, n >= 0 || errno != EFAULT, "read %s: EFAULT", path);
		if (n <= 0)
			break;
		total += n;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	if (n < 0 && errno == EINTR) {
		size_t l = strlen(w->blocked);

		snprintf(w->blocked + l, sizeof(w->blocked) - l, " %s", path);
	}
	w->capped += total >= FILE_CAP;
	w->bytes += total;
	close(fd);
}

static void walk(struct walk *w, const char *dir)
{
	static const char *const skip[] = { "/proc/kmsg", "/sys/kernel/debug" };
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);
	int i;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int skipped = 0;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		for (i = 0; i < (int)(sizeof(skip) / sizeof(skip[0])); i++)
			skipped |= !strcmp(path, skip[i]);
		if (skipped) {
			size_t l = strlen(w->skipped);

			snprintf(w->skipped + l, sizeof(w->skipped) - l, " %s", path);
			continue;
		}
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			walk(w, path);
		else if (S_ISREG(st.st_mode) && (st.st_mode & 0444))
			read_file(w, path);
	}
	closedir(d);
}

static void do_tree(int g, const char *root)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct walk w = { .g = g };

	sigaction(SIGALRM, &sa, NULL);
	walk(&w, root);
	call(g, w.files > 50, "only %ld files read under %s", w.files, root);
	note(g, "%ld files, %ld bytes, %ld capped at %d MiB; skipped:%s; "
	     "blocked:%s", w.files, w.bytes, w.capped, FILE_CAP >> 20,
	     w.skipped[0] ? w.skipped : " none", w.blocked[0] ? w.blocked : " none");
}

/* ------------------------------------------------------------- main */

int main(int argc, char **argv, char **envp)
{
	long total = 0;
	int g;

	if (argc > 2 && !strcmp(argv[1], "--exec-child"))
		return exec_child(argc, argv, envp);
	mkdir(WORKDIR, 0755);
	do_dentry();
	do_names();
	do_auxv();
	do_fpu();
	do_sctp();
	do_raw();
	do_msg();
	do_exec(argv[0]);
	do_dup();
	do_pipe();
	do_tree(G_PROC, "/proc");
	do_tree(G_SYS, "/sys");
	for (g = 0; g < NR_GROUPS; g++) {
		struct group *grp = &groups[g];

		total += grp->calls;
		if (grp->failed)
			result(0, "%s: %ld calls, %ld failed, first: %s",
			       grp->name, grp->calls, grp->failed, grp->first);
		else
			result(1, "%s: %ld calls (%s)", grp->name, grp->calls,
			       grp->note);
	}
	printf(PREFIX "%ld calls in %d groups, %d groups failed\n", total,
	       NR_GROUPS, failures);
	return check_status();
}
