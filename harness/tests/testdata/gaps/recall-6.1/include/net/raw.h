/*
 * usercopy-lab gap finder fixture: an excerpt of include/net/raw.h, lines 79-89 (struct raw_sock, raw_sk()),
 * from Debian's linux-source-6.1 (6.1.192, /usr/src/linux-source-6.1.tar.xz),
 * the code below unchanged.
 * Expectation (harness/tests/test_gaps.py): the struct of RAW.
 */
struct raw_sock {
	/* inet_sock has to be the first member */
	struct inet_sock   inet;
	struct icmp_filter filter;
	u32		   ipmr_table;
};

static inline struct raw_sock *raw_sk(const struct sock *sk)
{
	return (struct raw_sock *)sk;
}
