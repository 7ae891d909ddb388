/*
 * usercopy-lab gap finder fixture: an excerpt of net/rds/tcp.h, lines 7-10,
 * from Debian's linux-source-6.1 (6.1.192, /usr/src/linux-source-6.1.tar.xz),
 * the code below unchanged.
 * Expectation (harness/tests/test_gaps.py): struct rds_tcp_incoming embeds struct rds_incoming ti_inc.
 */
struct rds_tcp_incoming {
	struct rds_incoming	ti_inc;
	struct sk_buff_head	ti_skb_list;
};
