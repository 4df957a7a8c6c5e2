/* logreader.c — the CRI container log reader (see logreader.h). */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/logreader.h"
#include "core/util.h"

struct logreader {
	char                 *path;
	int                   fd;
	ino_t                 ino;
	dev_t                 dev;
	struct logreader_opts o;
	char                 *carry; /* an incomplete file logreader_line, read but not written */
	size_t                carry_len, carry_cap;
	int                   skipping; /* the current logreader_line is over LOGREADER_MAX_LINE */
	int64_t               written;
	int                   done;
};

static int
logreader_digits(const char *s, size_t n, int *out)
{
	int    v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int
logreader_parse_time(const char *s, size_t len, int64_t *ns)
{
	struct tm tm;
	int       y, mo, d, h, mi, sec, oh, om;
	int64_t   frac = 0, t;
	size_t    i = 19, nd = 0;

	if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
	    s[13] != ':' || s[16] != ':')
		return -1;
	if (logreader_digits(s, 4, &y) == -1 || logreader_digits(s + 5, 2, &mo) == -1 ||
	    logreader_digits(s + 8, 2, &d) == -1 || logreader_digits(s + 11, 2, &h) == -1 ||
	    logreader_digits(s + 14, 2, &mi) == -1 || logreader_digits(s + 17, 2, &sec) == -1)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	if (s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nd++)
			if (nd < 9)
				frac = frac * 10 + (s[i] - '0');
		if (nd == 0)
			return -1;
		for (; nd < 9; nd++)
			frac *= 10;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = (int64_t)timegm(&tm);
	if (i == len - 1 && (s[i] == 'Z' || s[i] == 'z'))
		;
	else if (i + 6 == len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':' &&
	    logreader_digits(s + i + 1, 2, &oh) == 0 && logreader_digits(s + i + 4, 2, &om) == 0 &&
	    oh < 24 && om < 60)
		t -= (s[i] == '+' ? 1 : -1) * (int64_t)(oh * 3600 + om * 60);
	else
		return -1;
	/* Years 0000..9999 parse; beyond int64 nanoseconds (before 1677-09-21, from
	 * 2262-04-11) the time is clamped, which keeps the comparisons with since right. */
	if (t < INT64_MIN / 1000000000LL)
		*ns = INT64_MIN;
	else if (t > (INT64_MAX - frac) / 1000000000LL)
		*ns = INT64_MAX;
	else
		*ns = t * 1000000000LL + frac;
	return 0;
}

int
logreader_parse(const char *logreader_line, size_t len, struct cri_log_record *out)
{
	const char *p = logreader_line, *end = logreader_line + len, *sp;

	memset(out, 0, sizeof(*out));
	if ((sp = memchr(p, ' ', len)) == NULL)
		return -1;
	out->ts = p;
	out->ts_len = (size_t)(sp - p);
	if (logreader_parse_time(out->ts, out->ts_len, &out->ts_ns) == -1)
		return -1;
	p = sp + 1;
	if ((sp = memchr(p, ' ', (size_t)(end - p))) == NULL)
		return -1;
	if (sp - p == 6 && memcmp(p, "stdout", 6) == 0)
		out->stream = LOGREADER_STDOUT;
	else if (sp - p == 6 && memcmp(p, "stderr", 6) == 0)
		out->stream = LOGREADER_STDERR;
	else
		return -1;
	p = sp + 1;
	/* The tag: "F" or "P", possibly followed by ":"-separated others. */
	sp = memchr(p, ' ', (size_t)(end - p));
	if (sp == NULL) /* an empty message may come without the separator */
		sp = end;
	if (sp == p || (*p != 'F' && *p != 'P') || (sp - p > 1 && p[1] != ':'))
		return -1;
	out->partial = *p == 'P';
	out->msg = sp < end ? sp + 1 : end;
	out->msg_len = (size_t)(end - out->msg);
	return 0;
}

/* Writes one record's output, as far as limit_bytes allows. */
static void
logreader_emit(
    struct logreader *r, const struct cri_log_record *rec, const struct logreader_sink *out)
{
	size_t  n = 0, room;
	char    pre[128];
	int64_t left = r->o.limit_bytes < 0 ? INT64_MAX : r->o.limit_bytes - r->written;

	if (r->done || (r->o.streams != 0 && !(r->o.streams & rec->stream)))
		return;
	if (r->o.since_ns > 0 && rec->ts_ns < r->o.since_ns)
		return;
	if (r->o.timestamps && rec->ts_len + 1 < sizeof(pre)) {
		memcpy(pre, rec->ts, rec->ts_len);
		pre[rec->ts_len] = ' ';
		n = rec->ts_len + 1;
	}
	{
		const char *parts[3] = { pre, rec->msg, "\n" };
		size_t      lens[3] = { n, rec->msg_len, rec->partial ? 0 : 1 };
		int         i;

		for (i = 0; i < 3 && left > 0; i++) {
			room = (int64_t)lens[i] > left ? (size_t)left : lens[i];
			out->write(out->arg, parts[i], room);
			r->written += (int64_t)room;
			left -= (int64_t)room;
		}
	}
	if (r->o.limit_bytes >= 0 && r->written >= r->o.limit_bytes)
		r->done = 1;
}

static void
logreader_line(struct logreader *r, const char *s, size_t len, const struct logreader_sink *out)
{
	struct cri_log_record rec;

	if (logreader_parse(s, len, &rec) == 0)
		logreader_emit(r, &rec, out);
}

/* The offset of the start of the last n lines of fd (the kubelet's findTailLineStartIndex). */
static off_t
logreader_tail_start(int fd, int64_t n)
{
	char    buf[65536];
	off_t   size = lseek(fd, 0, SEEK_END), pos = size;
	int64_t seen = 0;
	ssize_t got, i;

	if (size <= 0)
		return 0;
	while (pos > 0) {
		size_t want = pos > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;

		pos -= (off_t)want;
		got = pread(fd, buf, want, pos);
		if (got != (ssize_t)want)
			return 0;
		for (i = got - 1; i >= 0; i--) {
			/* The final newline ends the last logreader_line; every other one starts a
			 * logreader_line. */
			if (buf[i] != '\n' || pos + i == size - 1)
				continue;
			if (++seen == n)
				return pos + i + 1;
		}
	}
	return 0;
}

static int
logreader_open_path(struct logreader *r, char *err, size_t errlen)
{
	struct stat st;
	int         fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd == -1 || fstat(fd, &st) == -1) {
		if (err != NULL)
			snprintf(err, errlen, "failed to open log file \"%s\": %s", r->path,
			    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (r->fd != -1)
		close(r->fd);
	r->fd = fd;
	r->ino = st.st_ino;
	r->dev = st.st_dev;
	return 0;
}

struct logreader *
logreader_open(const char *path, const struct logreader_opts *o, char *err, size_t errlen)
{
	struct logreader *r = xcalloc(1, sizeof(*r));
	off_t             start = 0;

	r->fd = -1;
	r->path = xstrdup(path);
	r->o = *o;
	if (logreader_open_path(r, err, errlen) == -1) {
		logreader_free(r);
		return NULL;
	}
	if (o->tail_lines == 0)
		start = lseek(r->fd, 0, SEEK_END);
	else if (o->tail_lines > 0)
		start = logreader_tail_start(r->fd, o->tail_lines);
	if (start < 0 || lseek(r->fd, start, SEEK_SET) == -1)
		lseek(r->fd, 0, SEEK_SET);
	if (o->limit_bytes == 0)
		r->done = 1;
	return r;
}

void
logreader_free(struct logreader *r)
{
	if (r == NULL)
		return;
	if (r->fd != -1)
		close(r->fd);
	free(r->carry);
	free(r->path);
	free(r);
}

int64_t
logreader_written(const struct logreader *r)
{
	return r->written;
}

/* Appends add bytes to the carry (at most LOGREADER_MAX_LINE in all). It grows by doubling:
 * a long logreader_line read in small pieces (a slow writer, followed) costs linear time. */
static void
logreader_carry_add(struct logreader *r, const char *p, size_t add)
{
	if (r->carry_len + add > r->carry_cap) {
		size_t cap = r->carry_cap < 256 ? 256 : r->carry_cap;

		while (cap < r->carry_len + add)
			cap *= 2;
		if (cap > LOGREADER_MAX_LINE)
			cap = LOGREADER_MAX_LINE;
		r->carry = xreallocarray(r->carry, 1, cap);
		r->carry_cap = cap;
	}
	memcpy(r->carry + r->carry_len, p, add);
	r->carry_len += add;
}

/* The carry is done with: a large one (over 64 KiB) is given back. */
static void
logreader_carry_clear(struct logreader *r)
{
	r->carry_len = 0;
	if (r->carry_cap > LOGREADER_MAX_LINE / 16) {
		free(r->carry);
		r->carry = NULL;
		r->carry_cap = 0;
	}
}

/* Takes the complete lines of buf[0..n), keeps the rest in the carry. */
static void
logreader_consume(struct logreader *r, const char *buf, size_t n, const struct logreader_sink *out)
{
	const char *p = buf, *end = buf + n, *nl;

	while (p < end && !r->done) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL) {
			size_t add = (size_t)(end - p);

			if (!r->skipping && r->carry_len + add <= LOGREADER_MAX_LINE)
				logreader_carry_add(r, p, add);
			else {
				r->skipping = 1;
				logreader_carry_clear(r);
			}
			return;
		}
		if (r->skipping) {
			r->skipping = 0;
		} else if (r->carry_len > 0) {
			size_t add = (size_t)(nl - p);

			if (r->carry_len + add <= LOGREADER_MAX_LINE) {
				logreader_carry_add(r, p, add);
				logreader_line(r, r->carry, r->carry_len, out);
			}
			logreader_carry_clear(r);
		} else if (nl - p <= LOGREADER_MAX_LINE) /* (over it only below the read size) */
			logreader_line(r, p, (size_t)(nl - p), out);
		p = nl + 1;
	}
}

enum logreader_rc
logreader_step(struct logreader *r, const struct logreader_sink *out, size_t max)
{
	char    buf[65536];
	size_t  total = 0;
	ssize_t n;

	while (!r->done && total < max) {
		size_t want = max - total < sizeof(buf) ? max - total : sizeof(buf);

		n = read(r->fd, buf, want);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return LOGREADER_ERROR;
		if (n == 0) {
			if (!r->o.follow) {
				logreader_finish(r, out);
				return LOGREADER_DONE;
			}
			return LOGREADER_EOF;
		}
		logreader_consume(r, buf, (size_t)n, out);
		total += (size_t)n;
	}
	return r->done ? LOGREADER_DONE : LOGREADER_MORE;
}

int
logreader_check_rotation(struct logreader *r, const struct logreader_sink *out)
{
	struct stat st;

	if (stat(r->path, &st) == -1)
		return errno == ENOENT ? 0 : -1; /* between the rename and the reopen */
	if (st.st_ino == r->ino && st.st_dev == r->dev)
		return 0;
	/* The runtime may have written to the old file until it reopened: drain it (it is
	 * at most the rotation size), then an incomplete logreader_line there ends (the runtime
	 * writes whole records). */
	for (;;) {
		char    buf[65536];
		ssize_t n = read(r->fd, buf, sizeof(buf));

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 || r->done)
			break;
		logreader_consume(r, buf, (size_t)n, out);
	}
	logreader_finish(r, out);
	if (logreader_open_path(r, NULL, 0) == -1)
		return -1;
	return 1;
}

void
logreader_finish(struct logreader *r, const struct logreader_sink *out)
{
	if (r->carry_len > 0 && !r->skipping)
		logreader_line(r, r->carry, r->carry_len, out);
	logreader_carry_clear(r);
	r->skipping = 0;
}
