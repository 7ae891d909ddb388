/*
 * usercopy-lab gap finder fixture: an excerpt of net/rds/recv.c, lines 558-570,
 * from Debian's linux-source-6.1 (6.1.192, /usr/src/linux-source-6.1.tar.xz),
 * the code below unchanged.
 * Expectation (harness/tests/test_gaps.py): rds_cmsg_recv(): put_cmsg(.., &inc->i_usercopy.rdma_cookie), always checked (put_cmsg passes its len on); member i_usercopy.rdma_cookie of struct rds_incoming.
 */
static int rds_cmsg_recv(struct rds_incoming *inc, struct msghdr *msg,
			 struct rds_sock *rs)
{
	int ret = 0;

	if (inc->i_usercopy.rdma_cookie) {
		ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_DEST,
				sizeof(inc->i_usercopy.rdma_cookie),
				&inc->i_usercopy.rdma_cookie);
		if (ret)
			goto out;
	}

out:
	return ret;
}
