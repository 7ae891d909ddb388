// SPDX-License-Identifier: GPL-2.0
/*
 * rds-tcp-cookie: in-guest probe of the RDS/TCP rdma_cookie copy
 * (patches/0010, issue #10 item 5).
 *
 * net/rds/recv.c rds_cmsg_recv() put_cmsg()s inc->i_usercopy.rdma_cookie
 * straight from the struct rds_incoming, and rds_recv_incoming_exthdrs()
 * sets that cookie from an RDS_EXTHDR_RDMA_DEST extension header that
 * arrives from the wire.  Over RDS/TCP the incoming object is a
 * struct rds_tcp_incoming (net/rds/tcp_recv.c); put_cmsg()'s
 * check_object_size() only lets the copy through if that cache whitelists
 * ti_inc.i_usercopy.
 *
 * The probe plays both ends on one guest:
 *   - a veth pair (created over rtnetlink: busybox ip has no veth);
 *     "rdsb" goes into a child's new network namespace with PEER_ADDR,
 *     "rdsa" stays in the initial namespace with LOCAL_ADDR.  The peer's
 *     address is the numerically smaller one: rds_tcp_accept_one_path()
 *     only accepts a connection from the smaller address (otherwise it
 *     resets it and dials back itself);
 *   - the initial namespace binds an RDS socket to LOCAL_ADDR:RDS_PORT
 *     and calls recvmsg() with a control buffer;
 *   - the child, the "remote peer", connects with plain TCP to
 *     LOCAL_ADDR:16385 (RDS_TCP_PORT) and writes one 48-byte RDS header
 *     (h_dport = RDS_PORT, h_len = 4, h_exthdr = RDS_EXTHDR_RDMA_DEST with
 *     RKEY/OFFSET) and 4 bytes of payload.
 *
 * A kernel whose rds_tcp_incoming has its region delivers the payload and
 * an RDS_CMSG_RDMA_DEST cmsg whose value is rds_rdma_make_cookie(RKEY,
 * OFFSET) = RKEY | OFFSET << 32: PASS lines, exit 0.  A kernel without the
 * region BUGs in usercopy_abort() inside recvmsg() and this process is
 * killed (with slab_common.usercopy_fallback=1 it WARNs and the cookie is
 * still delivered); the golden files of the seeds suites say which.
 *
 * Results are "usercopy-lab-check: PASS:|FAIL:" lines (a setup failure before
 * any check names the step); the exit status is 0 when every check passed,
 * else 1.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>

#define PROBE_NAME "rds-tcp-cookie"
#include "rds-probe.h"

#define LOCAL_IF "rdsa"
#define PEER_IF "rdsb"
#define PEER_ADDR "10.99.0.1"	/* smaller: the peer initiates */
#define LOCAL_ADDR "10.99.0.2"
#define RDS_TCP_PORT 16385	/* net/rds/tcp.h */
#define RDS_PORT 4000		/* the bound RDS socket's port */
#define PEER_RDS_PORT 4001	/* h_sport of the forged message */
#define RKEY 0x12345678u
#define OFFSET 0x9abcdef0u
#define PAYLOAD "RDS!"

/* net/rds/rds.h: the on-wire header, 48 bytes, big endian */
#define RDS_HEADER_EXT_SPACE 16
#define RDS_EXTHDR_RDMA_DEST 3
struct rds_wire_header {
	uint64_t h_sequence;
	uint64_t h_ack;
	uint32_t h_len;
	uint16_t h_sport;
	uint16_t h_dport;
	uint8_t h_flags;
	uint8_t h_credit;
	uint8_t h_padding[4];
	uint16_t h_csum;
	uint8_t h_exthdr[RDS_HEADER_EXT_SPACE];
} __attribute__((packed));

_Static_assert(sizeof(struct rds_wire_header) == 48, "RDS header is 48 bytes");

/* ip link set IFNAME netns PID */
static void move_to_netns(const char *ifname, pid_t pid)
{
	struct nl_req r;
	struct ifinfomsg *ifi;
	uint32_t p = pid;
	int err;

	ifi = nl_init(&r, RTM_NEWLINK, 0, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = if_nametoindex(ifname);
	if (!ifi->ifi_index)
		setup_failed("no interface %s", ifname);
	nl_put(&r, IFLA_NET_NS_PID, &p, sizeof(p));
	err = nl_talk(NETLINK_ROUTE, &r);
	if (err) {
		errno = -err;
		setup_failed("move %s into the peer's namespace", ifname);
	}
}

/* The remote peer: a child in its own network namespace. */
static void peer(int ready_w, int go_r, int done_r)
{
	struct rds_wire_header h;
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(RDS_TCP_PORT) };
	uint32_t rdma_dest[2] = { htonl(RKEY), htonl(OFFSET) };
	char c;
	int fd, tries;

	if (unshare(CLONE_NEWNET))
		setup_failed("peer: unshare(CLONE_NEWNET)");
	if (write(ready_w, "r", 1) != 1 || read(go_r, &c, 1) != 1)
		setup_failed("peer: sync with the receiver");
	if (if_up("lo", NULL) || if_up(PEER_IF, PEER_ADDR))
		setup_failed("peer: configure " PEER_IF " " PEER_ADDR);

	inet_pton(AF_INET, LOCAL_ADDR, &dst.sin_addr);
	for (tries = 0;; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&dst, sizeof(dst)))
			break;
		if (tries == 50)
			setup_failed("peer: connect to " LOCAL_ADDR ":%d", RDS_TCP_PORT);
		close_if_open(fd);
		usleep(100000);
	}

	memset(&h, 0, sizeof(h));
	h.h_len = htonl(sizeof(PAYLOAD) - 1);
	h.h_sport = htons(PEER_RDS_PORT);
	h.h_dport = htons(RDS_PORT);
	h.h_exthdr[0] = RDS_EXTHDR_RDMA_DEST;
	memcpy(&h.h_exthdr[1], rdma_dest, sizeof(rdma_dest));
	if (write(fd, &h, sizeof(h)) != sizeof(h) ||
	    write(fd, PAYLOAD, sizeof(PAYLOAD) - 1) != sizeof(PAYLOAD) - 1)
		setup_failed("peer: write the RDS message");
	printf(INFO "peer %s wrote a %zu-byte RDS header (h_dport %d, h_len %zu, "
	       "RDS_EXTHDR_RDMA_DEST rkey 0x%x offset 0x%x) and %zu bytes\n",
	       PEER_ADDR, sizeof(h), RDS_PORT, sizeof(PAYLOAD) - 1, RKEY, OFFSET,
	       sizeof(PAYLOAD) - 1);
	fflush(stdout);
	/* Keep the connection until the receiver is done (or gone). */
	while (read(done_r, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

int main(void)
{
	int ready[2], go[2], done[2];
	pid_t child;
	char c;
	int fd, status;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(ready) || pipe(go) || pipe(done))
		setup_failed("pipe");
	make_veth(LOCAL_IF, PEER_IF);
	child = fork();
	if (child < 0)
		setup_failed("fork");
	if (!child) {
		close(ready[0]);
		close(go[1]);
		close(done[1]);
		peer(ready[1], go[0], done[0]);
	}
	close(ready[1]);
	close(go[0]);
	close(done[0]);
	if (read(ready[0], &c, 1) != 1)
		setup_failed("the peer did not unshare its network namespace");
	move_to_netns(PEER_IF, child);
	if (if_up("lo", NULL) || if_up(LOCAL_IF, LOCAL_ADDR))
		setup_failed("configure " LOCAL_IF " " LOCAL_ADDR);
	fd = rds_socket(LOCAL_ADDR, RDS_PORT, RDS_TRANS_TCP, 0);
	show_cache("rds_tcp_incoming");
	if (write(go[1], "g", 1) != 1)
		setup_failed("start the peer");

	receive(fd, PAYLOAD, PEER_ADDR, PEER_RDS_PORT,
		(uint64_t)RKEY | (uint64_t)OFFSET << 32, "rkey | offset << 32");

	close(done[1]);
	close(fd);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		result(0, "the peer ended with wait status 0x%x", status);
	return check_status();
}
