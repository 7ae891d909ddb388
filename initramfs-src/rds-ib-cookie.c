// SPDX-License-Identifier: GPL-2.0
/*
 * rds-ib-cookie: in-guest probe of seed 011 (bf1867db9b85, rds_ib_incoming's
 * usercopy region) over a software RDMA device (issue #10 item 6).
 *
 * seed 011 whitelisted ii_inc.i_usercopy in rds_ib_incoming because
 * rds_cmsg_recv() put_cmsg()s inc->i_usercopy.rdma_cookie from it.  To make
 * the kernel do that copy for real, without RDMA hardware:
 *   - a veth pair "rdsi0"/"rdsi1" (rtnetlink), both in the initial
 *     namespace (RDS/IB only works there: rds_ib_laddr_check()); rdsi0 gets
 *     SEND_ADDR and, as the alias rdsi0:1, RECV_ADDR;
 *   - a soft-RoCE device "rxe0" on rdsi0, added over RDMA netlink like
 *     `rdma link add rxe0 type rxe netdev rdsi0` (iproute2's rdma tool is
 *     dynamically linked; the request is three string attributes);
 *     RDMA_RXE sends packets whose destination MAC is its own device's
 *     through rxe_loopback(), so both ends live on rxe0;
 *   - two RDS sockets with SO_RDS_TRANSPORT = RDS_TRANS_IB: the sender on
 *     SEND_ADDR, the receiver on RECV_ADDR;
 *   - a first plain message brings the RDS/IB connection up (and records
 *     SEND_ADDR in the rds_ib_device: rds_ib_update_ipaddr());
 *   - a second message carries an RDS_CMSG_RDMA_MAP cmsg: __rds_rdma_map()
 *     registers a page of the sender's memory (an FRWR memory region on
 *     the connection's QP; RDS_GET_MR cannot, rds_ib_reg_frmr() needs the
 *     connection) and stores its cookie in the message, so rds_ib_xmit()
 *     adds an RDS_EXTHDR_RDMA_DEST extension header;
 *   - the receiver's recvmsg() with a control buffer then put_cmsg()s
 *     i_usercopy.rdma_cookie out of the rds_ib_incoming object.
 *
 * On a kernel where rds_ib_incoming has its region: both messages arrive and
 * the RDS_CMSG_RDMA_DEST cookie equals the one RDS_CMSG_RDMA_MAP returned to
 * the sender: PASS lines, exit 0.  Without the region (test-only mutation
 * lkdtm-tests/mutations/rds-ib-incoming-no-region.patch) the copy BUGs, or
 * with slab_common.usercopy_fallback=1 WARNs as in seed 011's log.
 *
 * Results are "usercopy-lab-check: PASS:|FAIL:" lines (a setup failure names
 * the step); the exit status is 0 when every check passed, else 1.
 */
#define _GNU_SOURCE
#include <rdma/rdma_netlink.h>
#include <sys/uio.h>

#define PROBE_NAME "rds-ib-cookie"
#include "rds-probe.h"

#define IF_NAME "rdsi0"
#define IF_PEER "rdsi1"		/* only there to give rdsi0 a carrier */
#define RXE_NAME "rxe0"
#define SEND_ADDR "10.98.0.1"
#define RECV_ADDR "10.98.0.2"
#define SEND_PORT 4001
#define RECV_PORT 4000
#define HELLO "hello over rxe"
#define WITH_COOKIE "cookie over rxe"
#define BIND_TRIES 50		/* x 100 ms: RoCE GIDs are added by a worker */

/* rdma link add RXE_NAME type rxe netdev IF_NAME */
static void add_rxe(void)
{
	struct nl_req r;
	int err;

	/*
	 * No NLM_F_CREATE | NLM_F_EXCL: rdma_nl_rcv_msg() treats any bit of
	 * NLM_F_DUMP (NLM_F_ROOT | NLM_F_MATCH, and NLM_F_EXCL is NLM_F_MATCH's
	 * value) as a dump request, which NEWLINK does not have (-EINVAL).
	 */
	nl_init(&r, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK), 0, 0);
	nl_put(&r, RDMA_NLDEV_ATTR_DEV_NAME, RXE_NAME, sizeof(RXE_NAME));
	nl_put(&r, RDMA_NLDEV_ATTR_LINK_TYPE, "rxe", sizeof("rxe"));
	nl_put(&r, RDMA_NLDEV_ATTR_NDEV_NAME, IF_NAME, sizeof(IF_NAME));
	err = nl_talk(NETLINK_RDMA, &r);
	if (err) {
		errno = -err;
		setup_failed("RDMA netlink: add link " RXE_NAME " type rxe netdev " IF_NAME);
	}
	printf(INFO "added " RXE_NAME " (rxe) on " IF_NAME "\n");
}

static void send_plain(int fd, const char *payload)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(RECV_PORT) };

	inet_pton(AF_INET, RECV_ADDR, &dst.sin_addr);
	if (sendto(fd, payload, strlen(payload), 0, (struct sockaddr *)&dst,
		   sizeof(dst)) != (ssize_t)strlen(payload))
		setup_failed("sendto() the first message over RDS/IB");
}

/* sendmsg() with RDS_CMSG_RDMA_MAP of one page; returns the cookie. */
static uint64_t send_with_mr(int fd, const char *payload)
{
	static char region[4096] __attribute__((aligned(4096)));
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(RECV_PORT) };
	uint64_t cookie = 0;
	struct rds_get_mr_args args = {
		.vec = { .addr = (uintptr_t)region, .bytes = sizeof(region) },
		.cookie_addr = (uintptr_t)&cookie,
		.flags = RDS_RDMA_READWRITE,
	};
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_get_mr_args))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = (void *)payload, .iov_len = strlen(payload) };
	struct msghdr msg = {
		.msg_name = &dst, .msg_namelen = sizeof(dst),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	memset(region, 0x5a, sizeof(region));
	inet_pton(AF_INET, RECV_ADDR, &dst.sin_addr);
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = RDS_CMSG_RDMA_MAP;
	cm->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(cm), &args, sizeof(args));
	if (sendmsg(fd, &msg, 0) != (ssize_t)strlen(payload))
		setup_failed("sendmsg() with RDS_CMSG_RDMA_MAP over RDS/IB");
	printf(INFO "RDS_CMSG_RDMA_MAP registered a %zu-byte region, cookie 0x%016llx\n",
	       sizeof(region), (unsigned long long)cookie);
	return cookie;
}

int main(void)
{
	uint64_t cookie;
	int sender, receiver;

	setvbuf(stdout, NULL, _IOLBF, 0);
	make_veth(IF_NAME, IF_PEER);
	if (if_up("lo", NULL) || if_up(IF_PEER, NULL) || if_up(IF_NAME, SEND_ADDR) ||
	    if_up(IF_NAME ":1", RECV_ADDR))
		setup_failed("configure " IF_NAME " " SEND_ADDR " and " RECV_ADDR);
	add_rxe();
	/* bind() fails until RDMA CM can bind the address to rxe0 */
	receiver = rds_socket(RECV_ADDR, RECV_PORT, RDS_TRANS_IB, BIND_TRIES);
	sender = rds_socket(SEND_ADDR, SEND_PORT, RDS_TRANS_IB, BIND_TRIES);
	show_cache("rds_ib_incoming");

	send_plain(sender, HELLO);
	receive(receiver, HELLO, SEND_ADDR, SEND_PORT, 0, "");
	if (failures)
		return check_status();

	cookie = send_with_mr(sender, WITH_COOKIE);
	if (!cookie)
		result(0, "RDS_CMSG_RDMA_MAP wrote no cookie");
	receive(receiver, WITH_COOKIE, SEND_ADDR, SEND_PORT, cookie,
		"the sender's RDS_CMSG_RDMA_MAP cookie");
	close(sender);
	close(receiver);
	return check_status();
}
