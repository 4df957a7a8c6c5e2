/* md5.c — MD5 as RFC 1321 defines it (see md5.h for why it is ours). */
#include <string.h>

#include "core/md5.h"

struct md5_state {
	uint32_t h[4];
	uint8_t  buf[64];
	size_t   nbuf;
	uint64_t total;
};

/* Per-round shift amounts and the constants floor(abs(sin(i + 1)) * 2^32). */
static const uint8_t md5_shift[64] = { 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11,
	16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21 };

static const uint32_t md5_k[64] = { 0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf,
	0x4787c62a, 0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51,
	0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6,
	0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942,
	0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8,
	0xc4ac5665, 0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
	0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82,
	0xbd3af235, 0x2ad7d2bb, 0xeb86d391 };

static void
md5_block(struct md5_state *s, const uint8_t *p)
{
	uint32_t m[16], a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], f, t;
	unsigned i, g;

	for (i = 0; i < 16; i++)
		m[i] = (uint32_t)p[i * 4] | (uint32_t)p[i * 4 + 1] << 8 |
		    (uint32_t)p[i * 4 + 2] << 16 | (uint32_t)p[i * 4 + 3] << 24;
	for (i = 0; i < 64; i++) {
		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) % 16;
		}
		t = d;
		d = c;
		c = b;
		f += a + md5_k[i] + m[g];
		b += (f << md5_shift[i]) | (f >> (32 - md5_shift[i]));
		a = t;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
}

static void
md5_update(struct md5_state *s, const uint8_t *p, size_t len)
{
	size_t take;

	s->total += len;
	while (len > 0) {
		take = 64 - s->nbuf < len ? 64 - s->nbuf : len;
		memcpy(s->buf + s->nbuf, p, take);
		s->nbuf += take;
		p += take;
		len -= take;
		if (s->nbuf == 64) {
			md5_block(s, s->buf);
			s->nbuf = 0;
		}
	}
}

void
md5_digest(const struct md5_part *parts, size_t n, uint8_t out[MD5_LEN])
{
	static const uint8_t pad[64] = { 0x80 };
	struct md5_state s = { { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 }, { 0 }, 0, 0 };
	uint8_t          len[8];
	uint64_t         bits;
	size_t           i;

	for (i = 0; i < n; i++)
		md5_update(&s, parts[i].p, parts[i].len);
	bits = s.total * 8;
	for (i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (8 * i));
	md5_update(&s, pad, s.nbuf < 56 ? 56 - s.nbuf : 120 - s.nbuf);
	md5_update(&s, len, 8);
	for (i = 0; i < 16; i++)
		out[i] = (uint8_t)(s.h[i / 4] >> (8 * (i % 4)));
}
