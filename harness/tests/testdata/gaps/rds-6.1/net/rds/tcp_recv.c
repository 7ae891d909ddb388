/*
 * usercopy-lab gap finder fixture: an excerpt of net/rds/tcp_recv.c, lines 336-344,
 * from Debian's linux-source-6.1 (6.1.192, /usr/src/linux-source-6.1.tar.xz),
 * the code below unchanged.
 * Expectation (harness/tests/test_gaps.py): cache rds_tcp_incoming (struct rds_tcp_incoming), no region: the put_cmsg of rds_cmsg_recv() (recv.c here) is its candidate.
 */
int rds_tcp_recv_init(void)
{
	rds_tcp_incoming_slab = kmem_cache_create("rds_tcp_incoming",
					sizeof(struct rds_tcp_incoming),
					0, 0, NULL);
	if (!rds_tcp_incoming_slab)
		return -ENOMEM;
	return 0;
}
