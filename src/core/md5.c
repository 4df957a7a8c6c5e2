/* md5.c — the MD5 of a few buffers through libmd (see md5.h). */
#include <sys/types.h>

#include <md5.h>

#include "core/md5.h"

void
md5_digest(const struct md5_part *parts, size_t n, uint8_t out[KLET_MD5_LEN])
{
	MD5_CTX c;
	size_t  i;

	MD5Init(&c);
	for (i = 0; i < n; i++)
		MD5Update(&c, parts[i].p, parts[i].len);
	MD5Final(out, &c);
}
