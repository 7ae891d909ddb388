// SPDX-License-Identifier: GPL-2.0
/*
 * usercopy-bench: in-guest cost of hardened usercopy, run by bench/ in the
 * same boot image with hardened_usercopy=off and on, and on the kernel with
 * the user-sized kmalloc split off (bench/bench_overhead.py).
 *
 * Each case times a loop of system calls whose copies go through
 * copy_{to,from}_user and so, with hardening on, check_object_size():
 * pipes and a file on the initramfs root with 16 B - 64 KiB buffers,
 * SysV msgsnd/msgrcv (msg_msg, usersized kmalloc with the split), SCTP
 * and RAW getsockopt (whitelisted sock fields), seq_file reads of /proc,
 * stat and getdents64 (stack and dentry names), and fork+execve with long
 * argv (strndup_user / copy_strings).  A case runs in batches until it has
 * used its time budget, then prints one line:
 *
 *   usercopy-lab-bench: CASE SIZE ns=NS_PER_CALL calls=N
 *
 * Usage: usercopy-bench [BUDGET_MS]   (default: $USERCOPY_BENCH_MS, else 100 ms
 * per case; the guest clock may tick in 4 ms steps under TCG).  An unknown
 * VAR=value on the kernel command line reaches init's environment, so
 * bench/bench_overhead.py sets the budget with USERCOPY_BENCH_MS=N there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/icmp.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sctp.h>	/* after stdint.h: it uses uint16_t */

#ifndef SOL_SCTP
#define SOL_SCTP 132	/* include/linux/socket.h; glibc has no SCTP header */
#endif

#define PREFIX "usercopy-lab-bench: "
#define MAX_BUF 65536
#define BATCH 16
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define EXEC_ARGS 32
#define EXEC_ARG_LEN 4096

static char buf[MAX_BUF];
static const char self_path[] = "/proc/self/exe";
static long budget_ns = 100L * 1000 * 1000;

struct msgbuf_big {
	long mtype;
	char mtext[8192];
};

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void die(const char *what)
{
	printf(PREFIX "FAIL %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

/* A case the kernel cannot run (no such socket family): say so, go on. */
static void skip(const char *what)
{
	printf(PREFIX "SKIP %s: %s\n", what, strerror(errno));
	fflush(stdout);
}

typedef void (*op_fn)(void *ctx, size_t size);

/* Run op in batches until the budget is used; print ns per call. */
static void run_case(const char *name, size_t size, op_fn op, void *ctx)
{
	long start, elapsed;
	long calls = 0;
	int i;

	op(ctx, size);	/* warm up: first-touch faults, cache allocation */
	start = now_ns();
	do {
		for (i = 0; i < BATCH; i++)
			op(ctx, size);
		calls += BATCH;
		elapsed = now_ns() - start;
	} while (elapsed < budget_ns);
	printf(PREFIX "%s %zu ns=%.1f calls=%ld\n", name, size,
	       (double)elapsed / calls, calls);
	fflush(stdout);
}

static void pipe_op(void *ctx, size_t size)
{
	int *fds = ctx;

	if (write(fds[1], buf, size) != (ssize_t)size ||
	    read(fds[0], buf, size) != (ssize_t)size)
		die("pipe");
}

static void file_op(void *ctx, size_t size)
{
	int fd = *(int *)ctx;

	if (pwrite(fd, buf, size, 0) != (ssize_t)size ||
	    pread(fd, buf, size, 0) != (ssize_t)size)
		die("file");
}

static void msg_op(void *ctx, size_t size)
{
	static struct msgbuf_big m = { .mtype = 1 };
	int id = *(int *)ctx;

	if (msgsnd(id, &m, size, 0) < 0 || msgrcv(id, &m, size, 0, 0) < 0)
		die("msg");
}

struct sockopt {
	int fd, level, name;
};

static void sockopt_op(void *ctx, size_t size)
{
	struct sockopt *o = ctx;
	socklen_t len = size;

	if (getsockopt(o->fd, o->level, o->name, buf, &len) < 0)
		die("getsockopt");
}

static void seq_op(void *ctx, size_t size)
{
	int fd = *(int *)ctx;

	if (pread(fd, buf, size, 0) < 0)
		die("seq_file pread");
}

static void stat_op(void *ctx, size_t size)
{
	struct stat st;

	(void)size;
	if (stat(ctx, &st) < 0)
		die("stat");
}

static void getdents_op(void *ctx, size_t size)
{
	int fd = *(int *)ctx;
	long n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		die("lseek");
	do {
		n = syscall(SYS_getdents64, fd, buf, size);
	} while (n > 0);
	if (n < 0)
		die("getdents64");
}

static const char exit_flag[] = "--exit";
static char *exec_argv[EXEC_ARGS + 3];

static void exec_op(void *ctx, size_t size)
{
	int status;
	pid_t pid;

	(void)ctx;
	exec_argv[0] = (char *)self_path;
	exec_argv[1] = (char *)exit_flag;
	exec_argv[2] = NULL;
	if (size) {
		size_t i;

		for (i = 0; i < EXEC_ARGS; i++)
			exec_argv[2 + i] = buf;
		exec_argv[2 + EXEC_ARGS] = NULL;
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execv(self_path, exec_argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = ENOEXEC;
		die("execve child did not exit 0");
	}
}

/* getsockopt of whitelisted sock fields (sctp_sock, raw_sock) */
static const struct sockopt_case {
	const char *name;
	int type, proto, level, optname;
	size_t size;
} sockopt_cases[] = {
	{ "getsockopt-sctp-initmsg", SOCK_SEQPACKET, IPPROTO_SCTP, SOL_SCTP,
	  SCTP_INITMSG, sizeof(struct sctp_initmsg) },
	{ "getsockopt-sctp-events", SOCK_SEQPACKET, IPPROTO_SCTP, SOL_SCTP,
	  SCTP_EVENTS, sizeof(struct sctp_event_subscribe) },
	{ "getsockopt-raw-icmp-filter", SOCK_RAW, IPPROTO_ICMP, SOL_RAW,
	  ICMP_FILTER, sizeof(struct icmp_filter) },
};

static const size_t io_sizes[] = { 16, 256, 4096, 65536 };
static const size_t msg_sizes[] = { 16, 256, 1024, 4096, 8000 };

int main(int argc, char **argv)
{
	int fds[2], fd, id, dir;
	struct sockopt o;
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--exit"))
		return 0;
	if (argc > 1)
		budget_ns = atol(argv[1]) * 1000 * 1000;
	else if (getenv("USERCOPY_BENCH_MS"))
		budget_ns = atol(getenv("USERCOPY_BENCH_MS")) * 1000 * 1000;
	memset(buf, 'a', sizeof(buf));

	if (pipe(fds) < 0)
		die("pipe");
	for (i = 0; i < ARRAY_SIZE(io_sizes); i++)
		run_case("pipe", io_sizes[i], pipe_op, fds);

	fd = open("/tmp/usercopy-bench.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("open /tmp");
	for (i = 0; i < ARRAY_SIZE(io_sizes); i++)
		run_case("rootfs-file", io_sizes[i], file_op, &fd);
	close(fd);
	unlink("/tmp/usercopy-bench.dat");

	id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (id < 0)
		die("msgget");
	for (i = 0; i < ARRAY_SIZE(msg_sizes); i++)
		run_case("msgsnd-msgrcv", msg_sizes[i], msg_op, &id);
	msgctl(id, IPC_RMID, NULL);

	for (i = 0; i < ARRAY_SIZE(sockopt_cases); i++) {
		const struct sockopt_case *c = &sockopt_cases[i];

		o.fd = socket(AF_INET, c->type, c->proto);
		if (o.fd < 0) {
			skip(c->name);
			continue;
		}
		o.level = c->level;
		o.name = c->optname;
		run_case(c->name, c->size, sockopt_op, &o);
		close(o.fd);
	}

	fd = open("/proc/meminfo", O_RDONLY);
	if (fd < 0)
		die("open /proc/meminfo");
	run_case("seq_file-proc-meminfo", 4096, seq_op, &fd);
	close(fd);
	fd = open("/proc/self/status", O_RDONLY);
	if (fd < 0)
		die("open /proc/self/status");
	run_case("seq_file-proc-self-status", 4096, seq_op, &fd);
	close(fd);

	run_case("stat", sizeof(struct stat), stat_op, "/bin/busybox");
	dir = open("/bin", O_RDONLY | O_DIRECTORY);
	if (dir < 0)
		die("open /bin");
	run_case("getdents64-bin", 4096, getdents_op, &dir);
	close(dir);

	buf[EXEC_ARG_LEN - 1] = '\0';
	run_case("fork-execve", 0, exec_op, NULL);
	run_case("fork-execve-argv", EXEC_ARGS * EXEC_ARG_LEN, exec_op, NULL);
	printf(PREFIX "done\n");
	return 0;
}
