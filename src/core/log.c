/* log.c — klog-style and JSON log lines. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

static int   log_v_level;
static int   log_json;
static FILE *log_fp;
static char *log_path;

void
log_init(int verbosity, int json)
{
	log_v_level = verbosity;
	log_json = json;
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
base_name(const char *file)
{
	const char *s = strrchr(file, '/');

	return s != NULL ? s + 1 : file;
}

static void
json_escape(FILE *fp, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
}

void
log_vemit(enum log_sev sev, int v, const char *file, int line, const char *fmt, va_list ap)
{
	static const char  letters[] = "IWEF";
	static const char *names[] = { "info", "warning", "error", "fatal" };
	FILE              *fp = log_fp != NULL ? log_fp : stderr;
	char               msg[2048];
	struct timeval     tv;
	struct tm          tm;
	int                saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	gettimeofday(&tv, NULL);
	if (log_json) {
		gmtime_r(&tv.tv_sec, &tm);
		fprintf(fp,
		    "{\"ts\":\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\",\"level\":\"%s\","
		    "\"v\":%d,\"caller\":\"%s:%d\",\"msg\":\"",
		    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		    (long)tv.tv_usec, names[sev], v, base_name(file), line);
		json_escape(fp, msg);
		fputs("\"}\n", fp);
	} else {
		localtime_r(&tv.tv_sec, &tm);
		fprintf(fp, "%c%02d%02d %02d:%02d:%02d.%06ld %7d %s:%d] %s\n", letters[sev],
		    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec,
		    (int)getpid(), base_name(file), line, msg);
	}
	fflush(fp);
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
