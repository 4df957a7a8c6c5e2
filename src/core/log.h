/* log.h — leveled klog-style (or JSON) log lines on stderr or a file. */
#ifndef KLET_LOG_H
#define KLET_LOG_H

#include <stdarg.h>
#include <stdint.h>

enum log_sev { LOG_SEV_INFO, LOG_SEV_WARN, LOG_SEV_ERROR, LOG_SEV_FATAL };

/* verbosity is klog's -v; json selects --logging-format=json. Safe to call again. */
void log_init(int verbosity, int json);
/* Opens path for appending (NULL: stderr). Returns 0, or -1 with errno set. */
int log_open_file(const char *path);
/* Reopens the file given to log_open_file (SIGHUP, after rotation). No-op on stderr. */
void log_reopen(void);
/* --log-file-max-size: once the file reaches max_bytes (0: no limit, the default) it is
 * renamed PATH.1 (replacing the previous one) and a new PATH is started; the line that
 * crossed the limit ends the old file. klog counts in MB as well but truncates the file
 * instead; the previous generation is kept here. */
void log_set_max_size(uint64_t max_bytes);
/* journald: when stderr is the stream systemd named in $JOURNAL_STREAM ("DEV:INODE"), lines
 * on stderr start with a syslog priority "<N>" (6 info, 4 warning, 3 error, 2 fatal) and
 * carry neither the time nor the pid, which the journal records itself. Returns 1 when
 * that mode is on. Called by log_init; tests may call it again after changing the env. */
int log_detect_journal(void);
int log_verbosity(void);
/* Repeated lines are rate-limited: the same text (and severity) more than 10 times within
 * 10 s is held back, and one "N similar lines suppressed" line follows when the window ends
 * (written with the next line logged, or by log_flush_suppressed). */
void     log_flush_suppressed(void);
uint64_t log_suppressed_total(void); /* lines held back since the start */
/* Tests: burst lines per window (0 burst: no limit). */
void log_set_rate_limit(unsigned burst, int64_t window_ms);
void log_set_verbosity(int);

void log_emit(enum log_sev, int v, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void log_vemit(enum log_sev, int v, const char *file, int line, const char *fmt, va_list);
/* Logs at FATAL and exits 1. */
void log_fatal(int with_errno, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));

#define log_info(...)  log_emit(LOG_SEV_INFO, 0, __FILE__, __LINE__, __VA_ARGS__)
#define log_warnx(...) log_emit(LOG_SEV_WARN, 0, __FILE__, __LINE__, __VA_ARGS__)
#define log_error(...) log_emit(LOG_SEV_ERROR, 0, __FILE__, __LINE__, __VA_ARGS__)
/* Only when -v is at least lvl. */
#define log_v(lvl, ...)                                                                            \
	do {                                                                                       \
		if (log_verbosity() >= (lvl))                                                      \
			log_emit(LOG_SEV_INFO, (lvl), __FILE__, __LINE__, __VA_ARGS__);            \
	} while (0)
#define log_debug(...) log_v(4, __VA_ARGS__)
/* Appends ": strerror(errno)". */
#define log_warn(...)  log_errno_emit(LOG_SEV_WARN, __FILE__, __LINE__, __VA_ARGS__)
void log_errno_emit(enum log_sev, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A broken invariant or an unrecoverable start-up error. */
#define fatal(...)  log_fatal(1, __FILE__, __LINE__, __VA_ARGS__)
#define fatalx(...) log_fatal(0, __FILE__, __LINE__, __VA_ARGS__)

#endif
