/* fuzz_logreader.c — libFuzzer target: the CRI container log reader (src/core/logreader.c)
 * over a real file, as the node server's /containerLogs and podctl logs read it: records
 * parsed, partial lines joined, tail, since, limitBytes, streams, timestamps, follow while
 * the runtime appends, and a rotation (the file renamed to FILE.1 and a new FILE written, as
 * node/logrotate.c does) while following. The reader is included with its line limit
 * scaled down from 1 MiB to 4 KiB (the same code; test_logreader checks the real one), so
 * that lines over it, cut and skipped, fit in an input.
 *
 * Input: a 13-byte header, then the file's content.
 *   0  bit 0 timestamps, 1 follow, 2-3 streams (0 both, 1 stdout, 2 stderr, 3 both),
 *      4 tailLines, 5 limitBytes, 6 rotation (follow only), 7 since
 *   1  tailLines (0..255)          2-3  limitBytes (0..65535, little-endian)
 *   4  the per-step read size: 0 1..16, 1 1..512, 2 1..65536, 3 everything (each step drawn)
 *   5-7  the seed of the read sizes and of the appended pieces (follow)
 *   8-9  where the content is cut for the rotation (modulo its length + 1)
 *   10-11  how much of the content is in the file when it is opened (follow; modulo + 1)
 *   12 since: 2024-01-01T00:00:00Z plus this many seconds (signed)
 *
 * The output must be exactly what a plain model gives (the file's lines, each parsed with
 * logreader_parse and written whole or cut at limitBytes, from the start of the last
 * tailLines lines of the file as opened; an incomplete last line at the end and at the
 * rotation), whatever the read sizes; written never exceeds limitBytes, and with tailLines
 * and nothing appended, never more lines than that. */
#define LOGREADER_MAX_LINE 4096
#include "core/logreader.c"

#include "fuzz_common.h"

#define HDR 13

struct out {
	char  *p;
	size_t len, cap;
};

static void
out_add(struct out *o, const void *buf, size_t len)
{
	if (len == 0)
		return;
	if (o->len + len > o->cap) {
		o->cap = (o->len + len) * 2;
		if ((o->p = realloc(o->p, o->cap)) == NULL)
			abort();
	}
	memcpy(o->p + o->len, buf, len);
	o->len += len;
}

static void
sink_write(void *arg, const void *buf, size_t len)
{
	out_add(arg, buf, len);
}

/* ---- the model ---- */

struct model {
	const struct logreader_opts *o;
	int64_t                      written;
	int                          done;
	struct out                   out;
};

static void
model_line(struct model *m, const char *s, size_t len)
{
	struct cri_log_record rec;
	struct out            t = { NULL, 0, 0 };
	size_t                n;

	if (len > LOGREADER_MAX_LINE || logreader_parse(s, len, &rec) == -1 || m->done)
		return;
	if (m->o->streams != 0 && !(m->o->streams & rec.stream))
		return;
	if (m->o->since_ns > 0 && rec.ts_ns < m->o->since_ns)
		return;
	if (m->o->timestamps && rec.ts_len + 1 < 128) {
		out_add(&t, rec.ts, rec.ts_len);
		out_add(&t, " ", 1);
	}
	if (rec.msg_len > 0)
		out_add(&t, rec.msg, rec.msg_len);
	if (!rec.partial)
		out_add(&t, "\n", 1);
	n = t.len;
	if (m->o->limit_bytes >= 0 && (int64_t)n > m->o->limit_bytes - m->written)
		n = (size_t)(m->o->limit_bytes - m->written);
	if (n > 0)
		out_add(&m->out, t.p, n);
	m->written += (int64_t)n;
	if (m->o->limit_bytes >= 0 && m->written >= m->o->limit_bytes)
		m->done = 1;
	free(t.p);
}

/* One file's content read to its end, the incomplete last line included. */
static void
model_file(struct model *m, const char *s, size_t len)
{
	const char *end = s + len, *nl;

	while (s < end) {
		if ((nl = memchr(s, '\n', (size_t)(end - s))) == NULL)
			nl = end;
		model_line(m, s, (size_t)(nl - s));
		s = nl + 1;
	}
}

/* Where the last n lines of s start (the final newline ends the last line). */
static size_t
model_tail(const char *s, size_t len, int64_t n)
{
	size_t  i;
	int64_t seen = 0;

	if (n == 0)
		return len;
	for (i = len; i > 0; i--)
		if (s[i - 1] == '\n' && i != len && ++seen == n)
			return i;
	return 0;
}

/* ---- the file ---- */

static char dir[64], path[96], path1[96];

static void
cleanup(void)
{
	unlink(path);
	unlink(path1);
	rmdir(dir);
}

static void
setup(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

	if (dir[0] != '\0')
		return;
	snprintf(dir, sizeof(dir), "%s/klet-fuzz-logreader.XXXXXX", base != NULL ? base : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/0.log", dir);
	snprintf(path1, sizeof(path1), "%s/0.log.1", dir);
	atexit(cleanup);
}

static int
create(void)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd == -1)
		abort();
	return fd;
}

static void
put(int fd, const char *s, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, s, len);

		if (n <= 0)
			abort();
		s += n;
		len -= (size_t)n;
	}
}

static uint32_t
next(uint32_t *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 17;
	*seed ^= *seed << 5;
	return *seed;
}

static size_t
step_size(int mode, uint32_t *seed)
{
	static const uint32_t max[] = { 16, 512, 65536 };

	if (mode == 3)
		return SIZE_MAX;
	return 1 + next(seed) % max[mode];
}

static size_t
count_nl(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

static void
differ(const char *what, const struct out *got, const struct model *m)
{
	fprintf(stderr, "%s: got %zu bytes, the model %zu\n", what, got->len, m->out.len);
	fprintf(stderr, "got:   %.*s\n", (int)(got->len < 500 ? got->len : 500), got->p);
	fprintf(stderr, "model: %.*s\n", (int)(m->out.len < 500 ? m->out.len : 500), m->out.p);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct logreader_opts o;
	struct logreader     *r;
	struct logreader_sink sk;
	struct out            got = { NULL, 0, 0 };
	struct model          m;
	char                  err[256];
	const char           *content;
	size_t                len, len1, init, at, off, piece;
	uint32_t              seed;
	int                   mode, rotate, fd, rc;
	enum logreader_rc     st;

	fuzz_quiet();
	setup();
	if (size < HDR)
		return 0;
	memset(&o, 0, sizeof(o));
	o.timestamps = data[0] & 1;
	o.follow = (data[0] >> 1) & 1;
	o.streams = (data[0] >> 2) & 3;
	o.tail_lines = (data[0] & 0x10) ? data[1] : -1;
	o.limit_bytes = (data[0] & 0x20) ? (int64_t)(data[2] | data[3] << 8) : -1;
	rotate = o.follow && (data[0] & 0x40);
	if (data[0] & 0x80)
		o.since_ns = (1704067200LL + (int8_t)data[12]) * 1000000000LL;
	mode = data[4] & 3;
	seed = (uint32_t)data[5] | (uint32_t)data[6] << 8 | (uint32_t)data[7] << 16 | 1u << 24;

	content = (const char *)data + HDR;
	len = size - HDR;
	len1 = rotate ? (data[8] | data[9] << 8) % (len + 1) : len;
	init = o.follow ? (data[10] | data[11] << 8) % (len1 + 1) : len;

	/* What the reader must write. */
	memset(&m, 0, sizeof(m));
	m.o = &o;
	m.done = o.limit_bytes == 0;
	off = o.tail_lines >= 0 ? model_tail(content, init, o.tail_lines) : 0;
	model_file(&m, content + off, len1 - off);
	if (rotate)
		model_file(&m, content + len1, len - len1);

	unlink(path1);
	fd = create();
	put(fd, content, init);
	at = init;
	r = logreader_open(path, &o, err, sizeof(err));
	if (r == NULL) {
		fprintf(stderr, "open: %s\n", err);
		abort();
	}
	sk.write = sink_write;
	sk.arg = &got;
	for (;;) {
		st = logreader_step(r, &sk, step_size(mode, &seed));
		if (st == LOGREADER_ERROR || (!o.follow && st == LOGREADER_EOF) ||
		    (o.follow && st == LOGREADER_DONE && !(o.limit_bytes >= 0))) {
			fprintf(stderr, "step: %d\n", st);
			abort();
		}
		if (st == LOGREADER_DONE)
			break;
		if (st == LOGREADER_MORE)
			continue;
		/* Following, at the end of the file: the runtime writes more, or rotates. */
		if ((rc = logreader_check_rotation(r, &sk)) != 0) {
			fprintf(stderr, "check_rotation: %d without a rotation\n", rc);
			abort();
		}
		piece = 1 + next(&seed) % (mode == 0 ? 64 : 4096);
		if (rotate && (at == len1 || next(&seed) % 4 == 0)) {
			/* As the rotator: the file renamed; the runtime writes the rest of its
			 * first part to the old file until it reopens a new one. */
			if (rename(path, path1) == -1)
				abort();
			put(fd, content + at, len1 - at);
			at = len1;
			if ((rc = logreader_check_rotation(r, &sk)) != 0) {
				fprintf(stderr, "check_rotation: %d without a file\n", rc);
				abort();
			}
			close(fd);
			fd = create();
			if ((rc = logreader_check_rotation(r, &sk)) != 1) {
				fprintf(stderr, "check_rotation: %d after a rotation\n", rc);
				abort();
			}
			rotate = 0;
		} else if (at < len) {
			size_t end = at < len1 ? len1 : len;

			if (piece > end - at)
				piece = end - at;
			put(fd, content + at, piece);
			at += piece;
		} else
			break;
	}
	logreader_finish(r, &sk);
	if ((int64_t)got.len != logreader_written(r)) {
		fprintf(stderr, "wrote %zu bytes, counted %lld\n", got.len,
		    (long long)logreader_written(r));
		abort();
	}
	if (o.limit_bytes >= 0 && (int64_t)got.len > o.limit_bytes) {
		fprintf(stderr, "wrote %zu bytes over limitBytes %lld\n", got.len,
		    (long long)o.limit_bytes);
		abort();
	}
	if (o.tail_lines >= 0 && init == len && count_nl(got.p, got.len) > (size_t)o.tail_lines) {
		fprintf(stderr, "more lines than tailLines %lld\n", (long long)o.tail_lines);
		abort();
	}
	if (got.len != m.out.len || (got.len > 0 && memcmp(got.p, m.out.p, got.len) != 0))
		differ("output", &got, &m);
	logreader_free(r);
	close(fd);
	free(got.p);
	free(m.out.p);
	return 0;
}
