/* logreader.h — the CRI container log reader behind the node server's /containerLogs and
 * podctl logs (the kubelet's pkg/kubelet/kuberuntime/logs ReadLogs).
 *
 * A CRI log file holds one record per line: "TIMESTAMP STREAM TAG CONTENT\n", TIMESTAMP in
 * RFC 3339 with nanoseconds, STREAM stdout or stderr, TAG "F" (a full line) or "P" (a part
 * of a line the runtime split; the next record continues it). As the kubelet: a P record's
 * content is written without a newline, so the parts join; with timestamps every record is
 * prefixed by its own timestamp and a space; tail counts the file's lines from its end;
 * since drops records older than the time; limitBytes cuts the output; a line that does
 * not parse is skipped; an incomplete last line is written when the reading ends (not
 * following, or the container exited). Only the live file is read, as the kubelet does;
 * a follow switches to the new file when the rotator renamed the old one (read to its
 * end first), so a line split across a rotation (P before, F after) is joined.
 *
 * Nothing blocks: logreader_step reads at most a given number of bytes per call; the
 * caller decides when to call again (after its output drained, or on a timer at EOF). The
 * output goes to a sink the caller gives with each call (an evbuffer in the server, stdout
 * in podctl): this file needs util only, so podctl links it without the daemon.
 */
#ifndef KLET_LOGREADER_H
#define KLET_LOGREADER_H

#include <stddef.h>
#include <stdint.h>

struct logreader;

/* Where the output goes: write(arg, buf, len) for each piece, in order. */
struct logreader_sink {
	void (*write)(void *arg, const void *buf, size_t len);
	void *arg;
};

#define LOGREADER_STDOUT 1
#define LOGREADER_STDERR 2
/* A longer file line is cut and skipped (a fuzz target scales it down). */
#ifndef LOGREADER_MAX_LINE
#define LOGREADER_MAX_LINE (1024 * 1024)
#endif

struct cri_log_record {
	const char *ts; /* the timestamp text as in the file */
	size_t      ts_len;
	int64_t     ts_ns;  /* Unix nanoseconds */
	int         stream; /* LOGREADER_STDOUT or LOGREADER_STDERR */
	int         partial;
	const char *msg;
	size_t      msg_len;
};

struct logreader_opts {
	int     timestamps;
	int64_t since_ns;    /* 0: no limit */
	int64_t tail_lines;  /* < 0: all */
	int64_t limit_bytes; /* < 0: no limit */
	int     streams;     /* LOGREADER_STDOUT | LOGREADER_STDERR; 0 means both */
	int     follow;
};

enum logreader_rc {
	LOGREADER_ERROR = -1,
	LOGREADER_MORE = 0, /* more data may be read now */
	LOGREADER_EOF = 1,  /* at the end of the file (following: try later) */
	LOGREADER_DONE = 2, /* finished: the limit reached, or the end without follow */
};

/* Parses one file line (without its newline). 0, or -1 when it is not a CRI record. */
int logreader_parse(const char *line, size_t len, struct cri_log_record *out);
/* Parses an RFC 3339 time with optional fraction ("2024-01-02T03:04:05.123456789Z",
 * "...+02:00") into Unix nanoseconds. 0 or -1. */
int logreader_parse_time(const char *s, size_t len, int64_t *ns);

/* Opens path for reading with opts (copied); NULL with err set when it cannot be opened. */
struct logreader *logreader_open(
    const char *path, const struct logreader_opts *, char *err, size_t errlen);
void logreader_free(struct logreader *);
/* Reads up to max bytes of the file and writes the output of the complete records to out. */
enum logreader_rc logreader_step(struct logreader *, const struct logreader_sink *out, size_t max);
/* Following at EOF: when the path now names another file (rotated), switches to it and
 * returns 1; 0 when not; -1 on an error. */
int logreader_check_rotation(struct logreader *, const struct logreader_sink *out);
/* Ends the reading: the incomplete last line (if any) is parsed and written. */
void logreader_finish(struct logreader *, const struct logreader_sink *out);
/* Bytes of output written so far. */
int64_t logreader_written(const struct logreader *);

#endif
