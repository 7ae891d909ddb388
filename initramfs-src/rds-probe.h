/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds-probe.h: what the RDS probes (rds-tcp-cookie.c, rds-ib-cookie.c)
 * share: check result lines, rtnetlink/RDMA-netlink requests, interface
 * setup by ioctl, the slab cache line, and the recvmsg() that checks the
 * RDS_CMSG_RDMA_DEST cookie.  Static functions only; each probe defines
 * PROBE_NAME and includes this once.
 */
#ifndef RDS_PROBE_H
#define RDS_PROBE_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/rds.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "lab-check.h"

#define INFO PROBE_NAME ": "

#ifndef SOL_RDS
#define SOL_RDS 276		/* include/linux/socket.h */
#endif
#define NETMASK "255.255.255.0"
#define RECV_TIMEOUT_S 20

/* A step the probe cannot go on without: one FAIL line naming it, exit 1. */
static __attribute__((noreturn, format(printf, 1, 2))) void setup_failed(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	printf(PREFIX "FAIL: setup: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (%s)\n", strerror(err));
	fflush(stdout);
	exit(1);
}

/* ---- netlink: one request, one ack ---- */

struct nl_req {
	struct nlmsghdr nh;
	char body[1024];
};

static struct rtattr *nl_tail(struct nl_req *r)
{
	return (struct rtattr *)((char *)&r->nh + NLMSG_ALIGN(r->nh.nlmsg_len));
}

/* Appends an attribute (rtattr and nlattr have the same layout). */
static struct rtattr *nl_put(struct nl_req *r, unsigned short type,
			     const void *data, size_t len)
{
	struct rtattr *rta = nl_tail(r);

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

static void nl_end(struct nl_req *r, struct rtattr *nest)
{
	nest->rta_len = (char *)nl_tail(r) - (char *)nest;
}

/* A request of type with a fixed header of hdr_len bytes (zeroed). */
static void *nl_init(struct nl_req *r, unsigned short type, unsigned short flags,
		     size_t hdr_len)
{
	memset(r, 0, sizeof(*r));
	r->nh.nlmsg_len = NLMSG_LENGTH(hdr_len);
	r->nh.nlmsg_type = type;
	r->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	return NLMSG_DATA(&r->nh);
}

/* 0 or -errno from the kernel's ack */
static int nl_talk(int protocol, struct nl_req *r)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char buf[1024];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	int fd, n, err = -EIO;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
	if (fd < 0)
		return -errno;
	if (sendto(fd, r, r->nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		err = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n >= (int)NLMSG_LENGTH(sizeof(struct nlmsgerr)) &&
	    nh->nlmsg_type == NLMSG_ERROR)
		err = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
out:
	close(fd);
	return err;
}

/* ip link add NAME type veth peer name PEER; exits on failure */
static void make_veth(const char *name, const char *peer_name)
{
	struct nl_req r;
	struct ifinfomsg *ifi, peer_ifi = { .ifi_family = AF_UNSPEC };
	struct rtattr *linkinfo, *data, *peer;
	int err;

	ifi = nl_init(&r, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	nl_put(&r, IFLA_IFNAME, name, strlen(name) + 1);
	linkinfo = nl_put(&r, IFLA_LINKINFO, NULL, 0);
	nl_put(&r, IFLA_INFO_KIND, "veth", sizeof("veth"));
	data = nl_put(&r, IFLA_INFO_DATA, NULL, 0);
	peer = nl_put(&r, VETH_INFO_PEER, &peer_ifi, sizeof(peer_ifi));
	nl_put(&r, IFLA_IFNAME, peer_name, strlen(peer_name) + 1);
	nl_end(&r, peer);
	nl_end(&r, data);
	nl_end(&r, linkinfo);
	err = nl_talk(NETLINK_ROUTE, &r);
	if (err) {
		errno = -err;
		setup_failed("create veth pair %s/%s", name, peer_name);
	}
}

/* ifconfig IFNAME [ADDR netmask NETMASK] up, in the caller's namespace */
static int if_up(const char *ifname, const char *addr)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	sin->sin_family = AF_INET;
	if (addr) {
		inet_pton(AF_INET, addr, &sin->sin_addr);
		if (ioctl(fd, SIOCSIFADDR, &ifr))
			goto out;
		inet_pton(AF_INET, NETMASK, &sin->sin_addr);
		if (ioctl(fd, SIOCSIFNETMASK, &ifr))
			goto out;
	}
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		goto out;
	ifr.ifr_flags |= IFF_UP;
	ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
out:
	close(fd);
	return ret;
}

/*
 * Informational lines: the cache's region and, when SLUB merged it (its
 * /sys/kernel/slab entry is a link to ":<id>"), every cache sharing it;
 * a usercopy report names the first of those that was created.
 */
static void show_cache(const char *name)
{
	char path[300], target[128], other[128];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s", name);
	n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	printf(INFO "cache %s%s%s: object_size %ld useroffset %ld usersize %ld\n",
	       name, n > 0 ? " -> " : "", target,
	       read_long(name, "object_size"), read_long(name, "useroffset"),
	       read_long(name, "usersize"));
	d = n > 0 ? opendir("/sys/kernel/slab") : NULL;
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s", de->d_name);
		n = readlink(path, other, sizeof(other) - 1);
		if (n <= 0)
			continue;
		other[n] = '\0';
		if (!strcmp(other, target))
			printf(INFO "cache %s -> %s\n", de->d_name, other);
	}
	if (d)
		closedir(d);
	fflush(stdout);
}

/*
 * An RDS socket of the given transport (SO_RDS_TRANSPORT) bound to
 * addr:port, its recvmsg() timing out after RECV_TIMEOUT_S.  bind() is
 * tried every 100 ms, bind_tries more times (an address may take a moment
 * to be usable by a transport).
 */
static int rds_socket(const char *addr, int port, int transport, int bind_tries)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = RECV_TIMEOUT_S };
	int fd, tries;

	inet_pton(AF_INET, addr, &sin.sin_addr);
	for (tries = 0;; tries++) {
		fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
		if (fd < 0)
			setup_failed("socket(AF_RDS)");
		if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &transport, sizeof(transport)))
			setup_failed("SO_RDS_TRANSPORT %d", transport);
		if (!bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
			break;
		if (tries == bind_tries)
			setup_failed("bind an RDS socket (transport %d) to %s:%d",
				     transport, addr, port);
		close(fd);
		usleep(100000);
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		setup_failed("SO_RCVTIMEO");
	printf(INFO "RDS socket (transport %d) bound to %s:%d after %d retries\n",
	       transport, addr, port, tries);
	return fd;
}

/*
 * recvmsg() one message with a control buffer; PASS when it is payload
 * from from_addr:from_port and, if want_cookie is nonzero, it carries exactly
 * one RDS_CMSG_RDMA_DEST cmsg whose value is want_cookie.
 */
static void receive(int fd, const char *payload, const char *from_addr, int from_port,
		    uint64_t want_cookie, const char *cookie_origin)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint64_t)) * 4];
		struct cmsghdr align;
	} control;
	char data[64], from[INET_ADDRSTRLEN] = "?";
	struct sockaddr_in src = { 0 };
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = {
		.msg_name = &src, .msg_namelen = sizeof(src),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	size_t len = strlen(payload);
	struct cmsghdr *cm;
	int cookies = 0;
	ssize_t n;

	printf(INFO "recvmsg() with a %zu-byte control buffer\n", sizeof(control.buf));
	fflush(stdout);
	n = recvmsg(fd, &msg, 0);
	if (n < 0) {
		result(0, "recvmsg() on the RDS socket: %s", strerror(errno));
		return;
	}
	inet_ntop(AF_INET, &src.sin_addr, from, sizeof(from));
	result((size_t)n == len && !memcmp(data, payload, len) &&
	       !strcmp(from, from_addr) && ntohs(src.sin_port) == from_port,
	       "recvmsg() returned %zd bytes '%.*s' from %s:%d (want %zu bytes '%s' from %s:%d)",
	       n, n > 0 ? (int)n : 0, data, from, ntohs(src.sin_port),
	       len, payload, from_addr, from_port);
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		uint64_t cookie;

		printf(INFO "cmsg level %d type %d len %zu\n", cm->cmsg_level,
		       cm->cmsg_type, (size_t)cm->cmsg_len);
		if (cm->cmsg_level != SOL_RDS || cm->cmsg_type != RDS_CMSG_RDMA_DEST)
			continue;
		cookies++;
		if (cm->cmsg_len != CMSG_LEN(sizeof(cookie))) {
			result(0, "RDS_CMSG_RDMA_DEST has cmsg_len %zu, want %zu",
			       (size_t)cm->cmsg_len, (size_t)CMSG_LEN(sizeof(cookie)));
			continue;
		}
		memcpy(&cookie, CMSG_DATA(cm), sizeof(cookie));
		result(cookie == want_cookie, "RDS_CMSG_RDMA_DEST cookie 0x%016llx (want %s 0x%016llx)",
		       (unsigned long long)cookie, cookie_origin,
		       (unsigned long long)want_cookie);
	}
	if (cookies != (want_cookie != 0))
		result(0, "%d RDS_CMSG_RDMA_DEST cmsgs (want %d)%s", cookies,
		       want_cookie != 0, msg.msg_flags & MSG_CTRUNC ? ", MSG_CTRUNC set" : "");
}

#endif
