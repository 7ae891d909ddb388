/*
 * usercopy-lab gap finder fixture: an excerpt of net/rds/ib.h, lines 42-46,
 * from Debian's linux-source-6.1 (6.1.192, /usr/src/linux-source-6.1.tar.xz),
 * the code below unchanged.
 * Expectation (harness/tests/test_gaps.py): struct rds_ib_incoming embeds struct rds_incoming ii_inc.
 */
struct rds_ib_incoming {
	struct list_head	ii_frags;
	struct list_head	ii_cache_entry;
	struct rds_incoming	ii_inc;
};
