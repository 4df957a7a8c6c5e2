/* log.c — klog-style and JSON log lines. */
#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

static int      log_v_level;
static int      log_json;
static FILE    *log_fp;
static char    *log_path;
static uint64_t log_max_bytes;  /* --log-file-max-size; 0: no limit */
static uint64_t log_file_bytes; /* the size of the file being written */
static int      log_journal;    /* stderr is journald's stream ($JOURNAL_STREAM) */

/* Rate limit: a message repeated more than log_rl_burst times within log_rl_window_us is
 * held back; when the window ends one summary line says how many were suppressed. Keyed
 * by the formatted text (a direct-mapped table: a collision only ends a window early). A
 * slot keeps the text for the summary only once it holds a line back: the table is written
 * at every line, and each of its pages stays resident. */
#define LOG_RL_SLOTS 256
static unsigned  log_rl_burst = 10;
static long long log_rl_window_us = 10 * 1000000LL;

struct log_rl {
	uint64_t     hash; /* 0: free */
	long long    start_us;
	unsigned     count;      /* lines in this window */
	unsigned     suppressed; /* of which held back */
	enum log_sev sev;
	int          v;
	int          line;
	const char  *file;
	char        *msg; /* for the summary, from the first line held back; NULL: none kept */
};
#define LOG_RL_MSG 159 /* bytes of a line kept for the summary */
static struct log_rl log_rl[LOG_RL_SLOTS];
static uint64_t      log_rl_total;
static int           log_rl_pending; /* slots with suppressed > 0 */

void
log_init(int verbosity, int json)
{
	log_v_level = verbosity;
	log_json = json;
	log_detect_journal();
}

int
log_detect_journal(void)
{
	const char        *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat        st;
	char               end;

	log_journal = 0;
	if (env != NULL && sscanf(env, "%llu:%llu%c", &dev, &ino, &end) == 2 &&
	    fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino)
		log_journal = 1;
	return log_journal;
}

void
log_set_max_size(uint64_t max_bytes)
{
	log_max_bytes = max_bytes;
}

int
log_verbosity(void)
{
	return log_v_level;
}

void
log_set_verbosity(int v)
{
	log_v_level = v;
}

int
log_open_file(const char *path)
{
	FILE *fp;

	if (path == NULL) {
		log_flush_suppressed();
		if (log_fp != NULL)
			fclose(log_fp);
		log_fp = NULL;
		free(log_path);
		log_path = NULL;
		return 0;
	}
	if ((fp = fopen(path, "ae")) == NULL)
		return -1;
	setvbuf(fp, NULL, _IOLBF, 0);
	if (log_fp != NULL)
		fclose(log_fp);
	log_fp = fp;
	{
		struct stat st;

		log_file_bytes = fstat(fileno(fp), &st) == 0 ? (uint64_t)st.st_size : 0;
	}
	if (log_path != path) {
		char *copy = strdup(path);

		free(log_path);
		log_path = copy;
	}
	return 0;
}

void
log_reopen(void)
{
	if (log_path != NULL && log_open_file(log_path) == -1)
		log_warn("%s: reopen %s", __func__, log_path);
}

static const char *
log_base_name(const char *file)
{
	const char *s = strrchr(file, '/');

	return s != NULL ? s + 1 : file;
}

/* Returns the bytes written. */
static int
log_json_escape(FILE *fp, const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			n += fprintf(fp, "\\%c", c);
		else if (c == '\n')
			n += fprintf(fp, "\\n");
		else if (c == '\t')
			n += fprintf(fp, "\\t");
		else if (c < 0x20)
			n += fprintf(fp, "\\u%04x", c);
		else
			n += fputc(c, fp) != EOF;
	}
	return n;
}

/* The file reached --log-file-max-size: PATH becomes PATH.1 and a new PATH is started. A
 * failure is written into the file once per generation and writing goes on. */
static void
log_rotate(void)
{
	char *old;

	if (log_path == NULL || (old = malloc(strlen(log_path) + 3)) == NULL)
		return;
	memcpy(old, log_path, strlen(log_path));
	memcpy(old + strlen(log_path), ".1", 3);
	fflush(log_fp);
	if (rename(log_path, old) == -1 || log_open_file(log_path) == -1) {
		fprintf(log_fp, "E log file %s not rotated to %s: %s\n", log_path, old,
		    strerror(errno));
		log_file_bytes = 0; /* tried again after another max size */
	}
	free(old);
}

static void
log_write(
    enum log_sev sev, int v, const char *file, int line, const char *msg, const struct timeval *tvp)
{
	static const char  letters[] = "IWEF";
	static const char *names[] = { "info", "warning", "error", "fatal" };
	static const int   prio[] = { 6, 4, 3, 2 }; /* syslog: info, warning, err, crit */
	FILE              *fp = log_fp != NULL ? log_fp : stderr;
	struct timeval     tv = *tvp;
	struct tm          tm;
	int                n;

	if (log_journal && log_fp == NULL) {
		/* journald stamps time, pid and priority itself: no duplicates. */
		if (log_json) {
			fprintf(fp,
			    "<%d>{\"level\":\"%s\",\"v\":%d,\"caller\":\"%s:%d\",\"msg\":\"",
			    prio[sev], names[sev], v, log_base_name(file), line);
			log_json_escape(fp, msg);
			fputs("\"}\n", fp);
		} else
			fprintf(fp, "<%d>%s:%d] %s\n", prio[sev], log_base_name(file), line, msg);
		fflush(fp);
		return;
	}
	if (log_json) {
		gmtime_r(&tv.tv_sec, &tm);
		n = fprintf(fp,
		    "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\",\"level\":\"%s\","
		    "\"v\":%d,\"caller\":\"%s:%d\",\"msg\":\"",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		    (long)tv.tv_usec, names[sev], v, log_base_name(file), line);
		n += log_json_escape(fp, msg);
		n += fprintf(fp, "\"}\n");
	} else {
		localtime_r(&tv.tv_sec, &tm);
		n = fprintf(fp, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] %s\n", letters[sev],
		    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec,
		    (int)getpid(), log_base_name(file), line, msg);
	}
	fflush(fp);
	if (log_fp != NULL && n > 0) {
		log_file_bytes += (uint64_t)n;
		if (log_max_bytes > 0 && log_file_bytes >= log_max_bytes)
			log_rotate();
	}
}

static void
log_rl_summary(struct log_rl *r, const struct timeval *tv)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%u similar lines suppressed in %.3gs: %s%s", r->suppressed,
	    (double)log_rl_window_us / 1e6, r->msg != NULL ? r->msg : "(text not kept)",
	    r->msg != NULL && strlen(r->msg) == LOG_RL_MSG ? "..." : "");
	log_write(r->sev, r->v, r->file, r->line, buf, tv);
	free(r->msg); /* only ever held by a slot that suppressed */
	r->msg = NULL;
	r->suppressed = 0;
	log_rl_pending--;
}

/* Summaries of the windows that ended. */
static void
log_rl_expire(long long now_us, const struct timeval *tv)
{
	size_t i;

	for (i = 0; i < LOG_RL_SLOTS && log_rl_pending > 0; i++)
		if (log_rl[i].suppressed > 0 && now_us - log_rl[i].start_us >= log_rl_window_us)
			log_rl_summary(&log_rl[i], tv);
}

void
log_flush_suppressed(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	log_rl_expire((long long)tv.tv_sec * 1000000 + tv.tv_usec, &tv);
}

void
log_set_rate_limit(unsigned burst, int64_t window_ms)
{
	log_rl_burst = burst;
	log_rl_window_us = (long long)window_ms * 1000;
}

uint64_t
log_suppressed_total(void)
{
	return log_rl_total;
}

/* 1 when the line is to be written, 0 when it is held back. */
static int
log_rl_admit(
    enum log_sev sev, int v, const char *file, int line, const char *msg, const struct timeval *tv)
{
	long long      now_us = (long long)tv->tv_sec * 1000000 + tv->tv_usec;
	uint64_t       h = 1469598103934665603ULL;
	const char    *p;
	struct log_rl *r;

	if (sev == LOG_SEV_FATAL || log_rl_burst == 0)
		return 1;
	for (p = msg; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ (uint64_t)sev) * 1099511628211ULL;
	if (h == 0)
		h = 1;
	if (log_rl_pending > 0)
		log_rl_expire(now_us, tv);
	r = &log_rl[h % LOG_RL_SLOTS];
	if (r->hash == h && now_us - r->start_us < log_rl_window_us && now_us >= r->start_us) {
		if (++r->count <= log_rl_burst)
			return 1;
		if (r->suppressed++ == 0) {
			log_rl_pending++;
			r->msg = strndup(msg, LOG_RL_MSG); /* NULL (no memory): the count only */
		}
		log_rl_total++;
		return 0;
	}
	if (r->suppressed > 0)
		log_rl_summary(r, tv); /* another message takes the slot, or the window ended */
	r->hash = h;
	r->start_us = now_us;
	r->count = 1;
	r->sev = sev;
	r->v = v;
	r->file = file;
	r->line = line;
	return 1;
}

void
log_vemit(enum log_sev sev, int v, const char *file, int line, const char *fmt, va_list ap)
{
	char           msg[2048];
	struct timeval tv;
	int            saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	gettimeofday(&tv, NULL);
	if (log_rl_admit(sev, v, file, line, msg, &tv))
		log_write(sev, v, file, line, msg, &tv);
	errno = saved;
}

void
log_emit(enum log_sev sev, int v, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit(sev, v, file, line, fmt, ap);
	va_end(ap);
}

void
log_errno_emit(enum log_sev sev, const char *file, int line, const char *fmt, ...)
{
	char    buf[1024];
	va_list ap;
	int     saved = errno;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_emit(sev, 0, file, line, "%s: %s", buf, strerror(saved));
}

void
log_fatal(int with_errno, const char *file, int line, const char *fmt, ...)
{
	char    buf[1024];
	va_list ap;
	int     saved = errno;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (with_errno)
		log_emit(LOG_SEV_FATAL, 0, file, line, "%s: %s", buf, strerror(saved));
	else
		log_emit(LOG_SEV_FATAL, 0, file, line, "%s", buf);
	exit(1);
}
