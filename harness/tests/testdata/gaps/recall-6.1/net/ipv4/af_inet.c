/*
 * usercopy-lab gap finder fixture: an excerpt of net/ipv4/af_inet.c, line 1984 (in inet_init()),
 * from Debian's linux-source-6.1 (6.1.192, /usr/src/linux-source-6.1.tar.xz),
 * the code below unchanged.
 * Expectation (harness/tests/test_gaps.py): proto_register(&raw_prot, 1): RAW is a cache.
 */
	rc = proto_register(&raw_prot, 1);
