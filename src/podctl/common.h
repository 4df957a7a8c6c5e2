/* common.h — what podctl's files share: the options, the connection to kletd (client.c),
 * the output helpers (output.c) and the commands (cmd_*.c). podctl links the protocol,
 * the json/yaml DOM, util and the CRI log reader only (tests/unit/test_podctl_link.sh). */
#ifndef KLET_PODCTL_COMMON_H
#define KLET_PODCTL_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"

#define PODCTL_DEFAULT_SOCKET "/var/lib/klet/podctl.sock"
#define PODCTL_MAX_REPLY      (64 * 1024 * 1024)
#define PODCTL_MAX_WORDS      4

/* Exit codes, as kubectl's and crictl's: */
#define PODCTL_EXIT_ERROR 1 /* an error (kletd unreachable, not found, ...) */
#define PODCTL_EXIT_USAGE 2 /* a bad command line */

enum podctl_fmt { FMT_TABLE = 0, FMT_WIDE, FMT_JSON, FMT_YAML };

struct podctl_opts {
	const char     *socket;
	const char     *ns;
	int             all_ns;
	int             watch;
	enum podctl_fmt fmt;
	int             fmt_given;
	int             no_headers;
	const char     *container; /* logs -c */
	int             follow;    /* logs -f */
	int             previous;  /* logs -p */
	int             timestamps;
	int64_t         tail;       /* logs --tail; -1: all */
	int             containers; /* top --containers */
	const char     *words[PODCTL_MAX_WORDS];
	int             nwords;
};

/* The namespace of a request: NULL with -A, else -n or "default". */
static inline const char *
opts_ns(const struct podctl_opts *o)
{
	if (o->all_ns)
		return NULL;
	return o->ns != NULL ? o->ns : "default";
}

/* Splits a pod argument: "NS/NAME", or NAME in -n's namespace (default "default"). */
static inline void
opts_pod(const struct podctl_opts *o, const char *what, char *ns, size_t nslen, char *name,
    size_t namelen)
{
	const char *slash = strchr(what, '/');

	if (slash != NULL) {
		snprintf(ns, nslen, "%.*s", (int)(slash - what), what);
		snprintf(name, namelen, "%s", slash + 1);
	} else {
		snprintf(ns, nslen, "%s", o->ns != NULL ? o->ns : "default");
		snprintf(name, namelen, "%s", what);
	}
}

/* ---- client.c: one request line, one reply line ---- */

struct client_req {
	const char *cmd;
	const char *ns;        /* may be NULL */
	const char *name;      /* may be NULL */
	const char *container; /* may be NULL */
	int         watch;
	int         previous;
};

/* Connects to kletd's socket; exits 1 with a hint when it cannot. */
FILE *client_connect(const char *path);
/* Sends the request and reads its reply into *docp (the caller frees it). Returns the
 * reply's data; on an error reply NULL with the message in err, or, with must_succeed,
 * prints it and exits 1. Exits 1 when the connection fails. */
const struct json *client_call(FILE *, const struct podctl_opts *, const struct client_req *,
    struct json_doc **docp, int must_succeed, char *err, size_t errlen);
/* client_call of cmd, ns, name, watch (-A from o), exiting on an error. */
const struct json *client_request(FILE *, const struct podctl_opts *, struct json_doc **docp,
    const char *cmd, const char *ns, const char *name, int watch);
/* Reads the next line of a stream (events -w); NULL at its end. */
struct json_doc *client_read(FILE *, const struct podctl_opts *, int eof_ok);

/* ---- value helpers over a reply ---- */

static inline const char *
jv_str(const struct json *v, const char *key)
{
	return json_str(json_get(v, key));
}

static inline const char *
jv_strd(const struct json *v, const char *key, const char *dflt)
{
	const char *s = jv_str(v, key);

	return s != NULL && *s != '\0' ? s : dflt;
}

static inline int64_t
jv_int(const struct json *v, const char *key, int64_t dflt)
{
	int64_t n;

	return json_int(json_get(v, key), &n) == 0 ? n : dflt;
}

static inline int
jv_bool(const struct json *v, const char *key)
{
	int b = 0;

	json_bool(json_get(v, key), &b);
	return b;
}

/* ---- output.c ---- */

/* tty: stdout is a terminal (tables fit its width); no_headers: tables without their
 * header row (--no-headers). */
void        out_init(int tty, int no_headers);
const char *out_age(int64_t secs, char *buf, size_t len);    /* kubectl's "3m12s" */
const char *out_dur(int64_t ms, char *buf, size_t len);      /* "850ms", "1.5s", "3m12s" */
const char *out_wall(int64_t unix_s, char *buf, size_t len); /* RFC 3339, UTC */
/* kubectl top's units: "250m" (millicores), "12Mi". */
const char *out_millicores(int64_t milli, char *buf, size_t len);
const char *out_mebibytes(int64_t bytes, char *buf, size_t len);

/* A table: the first row is the header. Cells are copied. out_table_print prints it (the
 * widest cells shortened to fit a terminal, "~" marking a cut) and frees it. */
struct out_table {
	size_t ncols;
	size_t nrows;
	char **cells;
};
void out_table_row(struct out_table *, const char **vals);
void out_table_print(struct out_table *);

void out_json(const struct json *);
void out_yaml(const struct json *);
/* -o json / -o yaml: prints data and returns 1; 0 for the table formats. */
int out_structured(const struct podctl_opts *, const struct json *data);
/* The same for what g generated (podctl's own data); g is freed. */
int out_structured_gen(const struct podctl_opts *, yajl_gen g);

/* ---- the commands; each returns the exit status ---- */

/* cmd_pods.c */
int cmd_get_pods(FILE *, const struct podctl_opts *);
int cmd_get_containers(FILE *, const struct podctl_opts *);
int cmd_events(FILE *, const struct podctl_opts *);
int cmd_history(FILE *, const struct podctl_opts *, const char *what);
int cmd_describe(FILE *, const struct podctl_opts *, const char *what);
/* cmd_node.c */
int cmd_status(FILE *, const struct podctl_opts *);
int cmd_version(const struct podctl_opts *);
int cmd_get_nodes(FILE *, const struct podctl_opts *);
int cmd_describe_node(FILE *, const struct podctl_opts *);
int cmd_top(FILE *, const struct podctl_opts *, int nodes);
/* cmd_logs.c */
int cmd_logs(FILE *, const struct podctl_opts *, const char *what);
int cmd_inspect(FILE *, const struct podctl_opts *, const char *id);

#endif
