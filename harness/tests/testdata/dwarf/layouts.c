/*
 * Fixture for harness/tests/test_dwarf_layout.py.  Built with
 *   gcc -g -gdwarf-5 -gz=zlib -O0 -nostdlib -static -Wl,-e,0 -o layouts.elf layouts.c
 * (gcc 12.2, Debian 12; DWARF 5, zlib-compressed sections like the seeds
 * kernel's vmlinux).  The expected numbers are in the test, checked with
 * offsetof()/sizeof in the _Static_asserts below.
 */
#include <stddef.h>

struct param { unsigned short size; unsigned char data[256]; };
struct conn { int selector; char name[16]; struct param param; };
typedef const struct inner { long a; char tail[3]; } inner_t;
struct sock_like {
	void *next;
	struct conn conn_req;
	union { int q; long r; };
	struct { int anon_a; inner_t anon_inner; };
	unsigned int flags : 3;
	char flex[];
};

struct sock_like sock_like;

_Static_assert(offsetof(struct sock_like, conn_req.param) == 28, "param");
_Static_assert(sizeof(((struct sock_like *)0)->conn_req.param) == 258, "param size");
_Static_assert(offsetof(struct sock_like, r) == 288, "anonymous union");
_Static_assert(offsetof(struct sock_like, anon_inner.tail) == 312, "anonymous struct");
_Static_assert(sizeof(inner_t) == 16, "typedef");
_Static_assert(offsetof(struct sock_like, flex) == 321, "after the bit-field");
_Static_assert(sizeof(struct sock_like) == 328, "struct size");
