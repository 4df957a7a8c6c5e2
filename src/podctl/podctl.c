/* podctl.c — read-only inspection of a running kletd over its unix socket (see ctl.h). */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "ctl/proto.h"
#include "core/json.h"
#include "core/util.h"

#define PODCTL_DEFAULT_SOCKET "/var/lib/klet/podctl.sock"
#define PODCTL_MAX_REPLY      (64 * 1024 * 1024)

enum fmt { FMT_TABLE = 0, FMT_WIDE, FMT_JSON, FMT_YAML };

struct opts {
	const char *socket;
	const char *ns;
	int         all_ns;
	int         watch;
	enum fmt    fmt;
	const char *words[4];
	int         nwords;
};

static int tty_out;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: podctl [--socket PATH] COMMAND [options]\n"
	    "Read-only inspection of a running kletd.\n\n"
	    "Commands:\n"
	    "  get pods [-n NS | -A] [-o wide|json|yaml]   pods, their status and worker state\n"
	    "  get containers [-n NS | -A] [-o json|yaml]  the runtime's containers\n"
	    "  describe pod [NS/]NAME [-n NS]             spec summary, worker, containers, events\n"
	    "  history [NS/]NAME [-n NS] [-o json|yaml]   the pod's stored state changes and events\n"
	    "  events [-w] [-n NS | -A] [-o json|yaml]     recorded events (-w: follow)\n"
	    "  status [-o json|yaml]                      the daemon's health\n"
	    "  version [-o json|yaml]                     client and server versions\n\n"
	    "Options:\n"
	    "  --socket PATH   kletd's podctl socket (default $KLET_PODCTL_SOCKET, else %s)\n"
	    "  -n, --namespace NS   namespace (default \"default\"); -A, --all-namespaces: all\n"
	    "  -o, --output FMT     wide (get pods), json or yaml\n"
	    "  -w, --watch          events: keep printing new events\n"
	    "Exit status: 0 success, 1 error, 2 usage.\n",
	    PODCTL_DEFAULT_SOCKET);
}

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "podctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nRun 'podctl --help' for usage.\n");
	exit(2);
}

/* An option with a value: "--long V", "--long=V" or "-s V". Returns 1 and sets *val. */
static int
take(int argc, char **argv, int *i, const char *lng, const char *shrt, const char **val)
{
	const char *a = argv[*i];
	size_t      l = strlen(lng);

	if (strcmp(a, lng) == 0 || (shrt != NULL && strcmp(a, shrt) == 0)) {
		if (*i + 1 >= argc)
			usage_error("%s needs a value", a);
		*val = argv[++*i];
		return 1;
	}
	if (strncmp(a, lng, l) == 0 && a[l] == '=') {
		*val = a + l + 1;
		return 1;
	}
	return 0;
}

static void
parse_args(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->socket = getenv("KLET_PODCTL_SOCKET");
	if (o->socket == NULL || *o->socket == '\0')
		o->socket = PODCTL_DEFAULT_SOCKET;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;

		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (take(argc, argv, &i, "--socket", NULL, &val)) {
			o->socket = val;
		} else if (take(argc, argv, &i, "--namespace", "-n", &val)) {
			o->ns = val;
		} else if (take(argc, argv, &i, "--output", "-o", &val)) {
			if (strcmp(val, "wide") == 0)
				o->fmt = FMT_WIDE;
			else if (strcmp(val, "json") == 0)
				o->fmt = FMT_JSON;
			else if (strcmp(val, "yaml") == 0)
				o->fmt = FMT_YAML;
			else
				usage_error("unknown output format \"%s\" (wide, json, yaml)", val);
		} else if (strcmp(a, "-A") == 0 || strcmp(a, "--all-namespaces") == 0) {
			o->all_ns = 1;
		} else if (strcmp(a, "-w") == 0 || strcmp(a, "--watch") == 0) {
			o->watch = 1;
		} else if (a[0] == '-' && a[1] != '\0') {
			usage_error("unknown option %s", a);
		} else {
			if (o->nwords == 4)
				usage_error("too many arguments (%s)", a);
			o->words[o->nwords++] = a;
		}
	}
	if (o->nwords == 0) {
		usage(stderr);
		exit(2);
	}
}

/* ---- the connection ---- */

static FILE *
ctl_connect(const char *path)
{
	struct sockaddr_un sun;
	int                fd;
	FILE              *f;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "podctl: cannot connect to kletd at %s: path too long\n", path);
		exit(1);
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(
		    stderr, "podctl: cannot connect to kletd at %s: %s\n", path, strerror(errno));
		if (errno == ENOENT || errno == ECONNREFUSED)
			fprintf(stderr,
			    "podctl: is kletd running? (--socket or "
			    "KLET_PODCTL_SOCKET picks another socket)\n");
		exit(1);
	}
	f = fdopen(fd, "r+");
	if (f == NULL) {
		fprintf(stderr, "podctl: %s\n", strerror(errno));
		exit(1);
	}
	return f;
}

static void
ctl_send(
    FILE *f, const struct opts *o, const char *cmd, const char *ns, const char *name, int watch)
{
	yajl_gen             g = json_gen_new(0);
	const unsigned char *buf;
	size_t               len;

	yajl_gen_map_open(g);
	json_gen_kv_int(g, "v", CTL_PROTO_VERSION);
	json_gen_kv_str(g, "cmd", cmd);
	if (ns != NULL)
		json_gen_kv_str(g, "ns", ns);
	if (name != NULL)
		json_gen_kv_str(g, "name", name);
	if (o->all_ns)
		json_gen_kv_bool(g, "all", 1);
	if (watch)
		json_gen_kv_bool(g, "watch", 1);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	if (fwrite(buf, 1, len, f) != len || fputc('\n', f) == EOF || fflush(f) == EOF) {
		fprintf(
		    stderr, "podctl: cannot send to kletd at %s: %s\n", o->socket, strerror(errno));
		exit(1);
	}
	yajl_gen_free(g);
}

/* Reads one reply line; NULL at the end of the stream. */
static struct json_doc *
ctl_read(FILE *f, const struct opts *o, int eof_ok)
{
	struct json_limits lim = { PODCTL_MAX_REPLY, 64, PODCTL_MAX_REPLY };
	struct json_doc   *doc;
	char              *line = NULL, err[256];
	size_t             cap = 0;
	ssize_t            n;

	n = getline(&line, &cap, f);
	if (n <= 0) {
		free(line);
		if (eof_ok)
			return NULL;
		fprintf(stderr, "podctl: kletd at %s closed the connection%s%s\n", o->socket,
		    ferror(f) ? ": " : "", ferror(f) ? strerror(errno) : "");
		exit(1);
	}
	doc = json_parse(line, (size_t)n, &lim, err, sizeof(err));
	free(line);
	if (doc == NULL) {
		fprintf(stderr, "podctl: bad reply from kletd: %s\n", err);
		exit(1);
	}
	return doc;
}

/* ---- value helpers ---- */

static const char *
js(const struct json *v, const char *key)
{
	return json_str(json_get(v, key));
}

static const char *
jsd(const struct json *v, const char *key, const char *dflt)
{
	const char *s = js(v, key);

	return s != NULL && *s != '\0' ? s : dflt;
}

static int64_t
ji(const struct json *v, const char *key, int64_t dflt)
{
	int64_t n;

	return json_int(json_get(v, key), &n) == 0 ? n : dflt;
}

static int
jb(const struct json *v, const char *key)
{
	int b = 0;

	json_bool(json_get(v, key), &b);
	return b;
}

static const char *
age(int64_t secs, char *buf, size_t len)
{
	return ctl_format_age(secs, buf, len);
}

static const char *
dur_ms(int64_t ms, char *buf, size_t len)
{
	const char *sign = ms < 0 ? "-" : "";
	char        a[32];

	if (ms < 0)
		ms = -ms;
	if (ms < 1000)
		snprintf(buf, len, "%s%lldms", sign, (long long)ms);
	else if (ms < 120000)
		snprintf(buf, len, "%s%.1fs", sign, (double)ms / 1000);
	else
		snprintf(buf, len, "%s%s", sign, ctl_format_age(ms / 1000, a, sizeof(a)));
	return buf;
}

static const char *
wall(int64_t unix_s, char *buf, size_t len)
{
	struct tm tm;
	time_t    t = (time_t)unix_s;

	if (unix_s <= 0) {
		snprintf(buf, len, "<unknown>");
		return buf;
	}
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* ---- tables ---- */

struct table {
	size_t ncols;
	size_t nrows; /* including the header */
	char **cells;
};

static void
table_row(struct table *t, const char **vals)
{
	size_t i;

	t->cells = xreallocarray(t->cells, (t->nrows + 1) * t->ncols, sizeof(char *));
	for (i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = xstrdup(vals[i] != NULL ? vals[i] : "");
	t->nrows++;
}

static int
term_width(void)
{
	struct winsize ws;

	if (tty_out && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 0;
}

static void
table_print(struct table *t)
{
	size_t *w = xcalloc(t->ncols, sizeof(size_t)), r, i, total;
	int     tw = term_width();

	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++) {
			size_t l = strlen(t->cells[r * t->ncols + i]);

			if (l > w[i])
				w[i] = l;
		}
	/* On a terminal, shrink the widest columns until the table fits. */
	for (;;) {
		size_t widest = 0;

		for (total = 0, i = 0; i < t->ncols; i++)
			total += w[i] + (i + 1 < t->ncols ? 3 : 0);
		if (tw == 0 || total <= (size_t)tw)
			break;
		/* The last column (messages, long values) gives way first. */
		if (w[t->ncols - 1] > 24)
			widest = t->ncols - 1;
		else
			for (i = 1; i < t->ncols; i++)
				if (w[i] > w[widest])
					widest = i;
		if (w[widest] <= 8)
			break;
		w[widest]--;
	}
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++) {
			const char *c = t->cells[r * t->ncols + i];
			size_t      l = strlen(c);

			if (l > w[i])
				printf("%.*s~", (int)w[i] - 1, c);
			else if (i + 1 < t->ncols)
				printf("%-*s", (int)w[i], c);
			else
				printf("%s", c);
			if (i + 1 < t->ncols)
				printf("   ");
		}
		printf("\n");
	}
	for (r = 0; r < t->nrows * t->ncols; r++)
		free(t->cells[r]);
	free(t->cells);
	free(w);
}

/* ---- json / yaml ---- */

static void
print_json(const struct json *v)
{
	yajl_gen g = json_gen_new(1);
	char    *s;

	json_gen_value(g, v);
	s = json_gen_take(g, NULL);
	fputs(s, stdout);
	if (*s != '\0' && s[strlen(s) - 1] != '\n')
		putchar('\n');
	free(s);
	yajl_gen_free(g);
}

static int
yaml_plain_ok(const char *s)
{
	static const char *const typed[] = { "true", "false", "null", "yes", "no", "on", "off", "y",
		"n", "~" };
	const char              *p;
	size_t                   i;

	if (*s == '\0' || strchr("-?:,[]{}#&*!|>'\"%@` ", *s) != NULL)
		return 0;

	for (i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) /* YAML 1.1 reads these typed */
		if (strcasecmp(s, typed[i]) == 0)
			return 0;
	if (strspn(s, "0123456789.+-eE") == strlen(s))
		return 0;
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == '#' ||
		    (*p == ':' && (p[1] == ' ' || p[1] == '\0')))
			return 0;
	return s[strlen(s) - 1] != ' ';
}

static void
yaml_scalar(const struct json *v)
{
	if (json_type(v) == JSON_STRING) {
		const char *s = json_str(v);

		if (yaml_plain_ok(s))
			fputs(s, stdout);
		else { /* a JSON string is a valid YAML double-quoted scalar */
			yajl_gen g = json_gen_new(0);
			char    *q;

			json_gen_str(g, s);
			q = json_gen_take(g, NULL);
			fputs(q, stdout);
			free(q);
			yajl_gen_free(g);
		}
	} else if (json_type(v) == JSON_NULL) {
		fputs("null", stdout);
	} else {
		fputs(json_text(v), stdout);
	}
}

static void
yaml_value(const struct json *v, int indent, int inline_first)
{
	size_t         i, n = json_len(v);
	enum json_type t = json_type(v);

	if ((t == JSON_OBJECT || t == JSON_ARRAY) && n == 0) {
		printf(" %s\n", t == JSON_OBJECT ? "{}" : "[]");
		return;
	}
	if (t == JSON_OBJECT) {
		for (i = 0; i < n; i++) {
			const struct json *c = json_index(v, i);

			if (i > 0 || !inline_first)
				printf("%*s", indent, "");
			printf("%s:", json_key(v, i));
			if ((json_type(c) == JSON_OBJECT || json_type(c) == JSON_ARRAY) &&
			    json_len(c) > 0) {
				printf("\n");
				yaml_value(c, indent + 2, 0);
			} else if (json_type(c) == JSON_OBJECT || json_type(c) == JSON_ARRAY) {
				yaml_value(c, indent + 2, 0);
			} else {
				putchar(' ');
				yaml_scalar(c);
				putchar('\n');
			}
		}
	} else if (t == JSON_ARRAY) {
		for (i = 0; i < n; i++) {
			const struct json *c = json_index(v, i);

			printf("%*s- ", indent, "");
			if (json_type(c) == JSON_OBJECT && json_len(c) > 0)
				yaml_value(c, indent + 2, 1);
			else if (json_type(c) == JSON_ARRAY && json_len(c) > 0) {
				printf("\n");
				yaml_value(c, indent + 2, 0);
			} else if (json_type(c) == JSON_OBJECT || json_type(c) == JSON_ARRAY) {
				printf("%s\n", json_type(c) == JSON_OBJECT ? "{}" : "[]");
			} else {
				yaml_scalar(c);
				putchar('\n');
			}
		}
	} else {
		yaml_scalar(v);
		putchar('\n');
	}
}

static void
print_yaml(const struct json *v)
{
	if (json_type(v) == JSON_OBJECT || json_type(v) == JSON_ARRAY)
		yaml_value(v, 0, 0);
	else
		yaml_value(v, 0, 0);
}

/* ---- commands ---- */

/* Sends one request and returns the reply's data (exits 1 on an error reply). */
static const struct json *
request(FILE *f, const struct opts *o, struct json_doc **docp, const char *cmd, const char *ns,
    const char *name, int watch)
{
	const struct json *root;

	ctl_send(f, o, cmd, ns, name, watch);
	*docp = ctl_read(f, o, 0);
	root = json_root(*docp);
	if (!jb(root, "ok")) {
		fprintf(
		    stderr, "podctl: error from kletd: %s\n", jsd(root, "error", "(no message)"));
		exit(1);
	}
	return json_get(root, "data");
}

static int
emit_structured(const struct opts *o, const struct json *data)
{
	if (o->fmt == FMT_JSON)
		print_json(data);
	else if (o->fmt == FMT_YAML)
		print_yaml(data);
	else
		return 0;
	return 1;
}

static const char *
ns_of(const struct opts *o)
{
	if (o->all_ns)
		return NULL;
	return o->ns != NULL ? o->ns : "default";
}

static int
cmd_get_pods(FILE *f, const struct opts *o)
{
	struct json_doc   *doc;
	const struct json *data = request(f, o, &doc, "get_pods", ns_of(o), NULL, 0);
	const char  *hdr[] = { "NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "STATE",
		 "IP", "NODE", "UID", "CRI CALL" };
	struct table t;
	size_t       i, off = o->all_ns ? 0 : 1;

	if (emit_structured(o, data))
		goto out;
	memset(&t, 0, sizeof(t));
	t.ncols = (o->fmt == FMT_WIDE ? 11 : 8) - off;
	if (json_len(data) == 0) {
		if (o->all_ns)
			fprintf(stderr, "No resources found\n");
		else
			fprintf(stderr, "No resources found in %s namespace.\n", ns_of(o));
		goto out;
	}
	table_row(&t, hdr + off);
	for (i = 0; i < json_len(data); i++) {
		const struct json *p = json_index(data, i);
		char               restarts[32], a[32], call[96], ab[32];
		const char        *row[11];

		snprintf(restarts, sizeof(restarts), "%lld", (long long)ji(p, "restarts", 0));
		if (js(p, "criCall") != NULL)
			snprintf(call, sizeof(call), "%s (%s)", js(p, "criCall"),
			    dur_ms(ji(p, "criCallAgeMs", 0), ab, sizeof(ab)));
		else
			snprintf(call, sizeof(call), "<none>");
		row[0] = js(p, "namespace");
		row[1] = js(p, "name");
		row[2] = js(p, "ready");
		row[3] = js(p, "status");
		row[4] = restarts;
		row[5] = age(ji(p, "ageSeconds", -1), a, sizeof(a));
		row[6] = js(p, "state");
		row[7] = jsd(p, "ip", "<none>");
		row[8] = jsd(p, "node", "<none>");
		row[9] = js(p, "uid");
		row[10] = call;
		table_row(&t, row + off);
	}
	table_print(&t);
out:
	json_free(doc);
	return 0;
}

static int
cmd_get_containers(FILE *f, const struct opts *o)
{
	struct json_doc   *doc;
	const struct json *data = request(f, o, &doc, "get_containers", ns_of(o), NULL, 0);
	const char  *hdr[] = { "NAMESPACE", "CONTAINER", "POD", "NAME", "STATE", "ATTEMPT", "EXIT",
		 "AGE" };
	struct table t;
	size_t       i, off = o->all_ns ? 0 : 1;

	if (emit_structured(o, data))
		goto out;
	memset(&t, 0, sizeof(t));
	t.ncols = 8 - off;
	table_row(&t, hdr + off);
	for (i = 0; i < json_len(data); i++) {
		const struct json *c = json_index(data, i);
		char               id[16], att[16], ex[16], a[32];
		const char        *row[8];
		int64_t            code;

		snprintf(id, sizeof(id), "%.13s", jsd(c, "id", ""));
		snprintf(att, sizeof(att), "%lld", (long long)ji(c, "attempt", 0));
		if (json_int(json_get(c, "exitCode"), &code) == 0)
			snprintf(ex, sizeof(ex), "%lld", (long long)code);
		else
			snprintf(ex, sizeof(ex), "-");
		row[0] = js(c, "namespace");
		row[1] = id;
		row[2] = js(c, "pod");
		row[3] = js(c, "name");
		row[4] = js(c, "state");
		row[5] = att;
		row[6] = ex;
		row[7] = age(ji(c, "ageSeconds", -1), a, sizeof(a));
		table_row(&t, row + off);
	}
	table_print(&t);
out:
	json_free(doc);
	return 0;
}

static void
event_cells(const struct json *e, char *seen, size_t seenlen, char *obj, size_t objlen)
{
	char    a[32], b[32];
	int64_t now = time(NULL) * 1000, cnt = ji(e, "count", 1);

	age((now - ji(e, "lastTimestampMs", now)) / 1000, a, sizeof(a));
	if (cnt > 1)
		snprintf(seen, seenlen, "%s (x%lld over %s)", a, (long long)cnt,
		    age((now - ji(e, "firstTimestampMs", now)) / 1000, b, sizeof(b)));
	else
		snprintf(seen, seenlen, "%s", a);
	snprintf(obj, objlen, "%s/%s", strcmp(jsd(e, "kind", "Pod"), "Pod") == 0 ? "pod" : "node",
	    jsd(e, "name", "?"));
}

static int
cmd_events(FILE *f, const struct opts *o)
{
	struct json_doc   *doc;
	const struct json *data = request(f, o, &doc, "events", ns_of(o), NULL, o->watch);
	const char        *hdr[] = { "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE" };
	struct table       t;
	size_t             i;

	if (o->fmt == FMT_JSON && o->watch) {
		for (i = 0; i < json_len(data); i++) { /* one compact object per line */
			char *s = json_to_string(json_index(data, i));

			printf("%s\n", s);
			free(s);
		}
	} else if (!emit_structured(o, data)) {
		memset(&t, 0, sizeof(t));
		t.ncols = 5;
		table_row(&t, hdr);
		for (i = 0; i < json_len(data); i++) {
			const struct json *e = json_index(data, i);
			char               seen[96], obj[300];
			const char        *row[5];

			event_cells(e, seen, sizeof(seen), obj, sizeof(obj));
			row[0] = seen;
			row[1] = js(e, "type");
			row[2] = js(e, "reason");
			row[3] = obj;
			row[4] = js(e, "message");
			table_row(&t, row);
		}
		table_print(&t);
	}
	json_free(doc);
	fflush(stdout);
	while (o->watch) {
		const struct json *e;
		const char        *want = ns_of(o);

		doc = ctl_read(f, o, 1);
		if (doc == NULL) {
			fprintf(stderr, "podctl: kletd at %s closed the stream\n", o->socket);
			return 1;
		}
		e = json_get(json_root(doc), "event");
		if (e == NULL && !jb(json_root(doc), "ok")) {
			fprintf(stderr, "podctl: error from kletd: %s\n",
			    jsd(json_root(doc), "error", "?"));
			json_free(doc);
			return 1;
		}
		if (e != NULL &&
		    (want == NULL || strcmp(jsd(e, "namespace", ""), want) == 0 ||
		        strcmp(jsd(e, "kind", ""), "Node") == 0)) {
			if (o->fmt == FMT_JSON) {
				char *s = json_to_string(e);

				printf("%s\n", s);
				free(s);
			} else if (o->fmt == FMT_YAML) {
				printf("---\n");
				print_yaml(e);
			} else {
				char seen[96], obj[300];

				event_cells(e, seen, sizeof(seen), obj, sizeof(obj));
				printf("%-9s   %-7s   %-18s   %-30s   %s\n", seen,
				    jsd(e, "type", ""), jsd(e, "reason", ""), obj,
				    jsd(e, "message", ""));
			}
			fflush(stdout);
		}
		json_free(doc);
	}
	return 0;
}

/* The pod's history as kletd stored it: its worker's state changes and its events, oldest
 * first, with their wall-clock time (they survive kletd's restarts). */
static int
cmd_history(FILE *f, const struct opts *o, const char *what)
{
	struct json_doc   *doc;
	const struct json *d, *h;
	const char        *hdr[] = { "TIME", "AGE", "REASON", "MESSAGE" };
	const char        *slash = strchr(what, '/');
	char               ns[256], name[256];
	struct table       t;
	size_t             i;
	int64_t            now = time(NULL) * 1000;

	if (slash != NULL) {
		snprintf(ns, sizeof(ns), "%.*s", (int)(slash - what), what);
		snprintf(name, sizeof(name), "%s", slash + 1);
	} else {
		snprintf(ns, sizeof(ns), "%s", o->ns != NULL ? o->ns : "default");
		snprintf(name, sizeof(name), "%s", what);
	}
	d = request(f, o, &doc, "history", ns, name, 0);
	if (!emit_structured(o, d)) {
		h = json_get(d, "history");
		memset(&t, 0, sizeof(t));
		t.ncols = 4;
		table_row(&t, hdr);
		for (i = 0; i < json_len(h); i++) {
			const struct json *e = json_index(h, i);
			char               a[32], ts[32];
			const char        *row[4];
			time_t             secs = (time_t)(ji(e, "timeMs", now) / 1000);
			struct tm          tm;

			age((now - ji(e, "timeMs", now)) / 1000, a, sizeof(a));
			gmtime_r(&secs, &tm);
			strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
			row[0] = ts;
			row[1] = a;
			row[2] = js(e, "reason");
			row[3] = js(e, "message");
			table_row(&t, row);
		}
		table_print(&t);
	}
	json_free(doc);
	return 0;
}

static void
describe_state(const char *label, const struct json *st, int indent)
{
	const char *kind = jsd(st, "state", "none");
	char        wb[40], ab[32];
	int64_t     t;

	if (strcmp(kind, "none") == 0) {
		if (strcmp(label, "Last State") == 0)
			printf("%*s%-16s<none>\n", indent, "", "Last State:");
		else
			printf("%*s%-16sWaiting\n", indent, "", "State:");
		return;
	}
	printf("%*s%-16s%c%s", indent, "",
	    strcmp(label, "State") == 0 ? "State:" : "Last State:", kind[0] - 32, kind + 1);
	if (js(st, "reason") != NULL)
		printf(" (%s)", js(st, "reason"));
	printf("\n");
	if (strcmp(kind, "terminated") == 0)
		printf(
		    "%*s  %-14s%lld\n", indent, "", "Exit Code:", (long long)ji(st, "exitCode", 0));
	if (js(st, "message") != NULL && *js(st, "message") != '\0')
		printf("%*s  %-14s%s\n", indent, "", "Message:", js(st, "message"));
	if ((t = ji(st, "startedAt", 0)) > 0)
		printf("%*s  %-14s%s (%s ago)\n", indent, "", "Started:", wall(t, wb, sizeof(wb)),
		    age(time(NULL) - t, ab, sizeof(ab)));
	if ((t = ji(st, "finishedAt", 0)) > 0)
		printf("%*s  %-14s%s (%s ago)\n", indent, "", "Finished:", wall(t, wb, sizeof(wb)),
		    age(time(NULL) - t, ab, sizeof(ab)));
}

static void
describe_strv(const char *label, const struct json *a)
{
	size_t i;

	if (json_len(a) == 0)
		return;
	printf("    %-16s", label);
	for (i = 0; i < json_len(a); i++)
		printf("%s%s", i ? " " : "", json_str(json_index(a, i)));
	printf("\n");
}

static int
cmd_describe(FILE *f, const struct opts *o, const char *what)
{
	struct json_doc   *doc;
	const struct json *d, *w, *r, *a;
	char               ns[256], name[256], wb[40], ab[32], db[32];
	const char        *slash = strchr(what, '/');
	size_t             i, j;
	int64_t            t;

	if (slash != NULL) {
		snprintf(ns, sizeof(ns), "%.*s", (int)(slash - what), what);
		snprintf(name, sizeof(name), "%s", slash + 1);
	} else {
		snprintf(ns, sizeof(ns), "%s", o->ns != NULL ? o->ns : "default");
		snprintf(name, sizeof(name), "%s", what);
	}
	d = request(f, o, &doc, "describe_pod", ns, name, 0);
	if (emit_structured(o, d))
		goto out;
	printf("%-16s%s\n", "Name:", js(d, "name"));
	printf("%-16s%s\n", "Namespace:", js(d, "namespace"));
	printf("%-16s%s\n", "UID:", js(d, "uid"));
	printf("%-16s%s\n", "Node:", jsd(d, "node", "<none>"));
	printf("%-16s%s\n", "Source:", jsd(d, "source", "<unknown>"));
	if ((t = ji(d, "created", 0)) > 0)
		printf("%-16s%s (%s ago)\n", "Created:", wall(t, wb, sizeof(wb)),
		    age(time(NULL) - t, ab, sizeof(ab)));
	printf("%-16s%s\n", "Status:", js(d, "status"));
	printf("%-16s%s\n", "Phase:", js(d, "phase"));
	if (js(d, "reason") != NULL)
		printf("%-16s%s\n", "Reason:", js(d, "reason"));
	if (js(d, "message") != NULL)
		printf("%-16s%s\n", "Message:", js(d, "message"));
	printf("%-16s%s\n", "IP:", jsd(d, "ip", "<none>"));
	printf("%-16s%s\n", "QoS Class:", js(d, "qosClass"));
	printf("%-16s%s\n", "Restart Policy:", js(d, "restartPolicy"));
	printf(
	    "%-16s%llds\n", "Grace Period:", (long long)ji(d, "terminationGracePeriodSeconds", 30));

	w = json_get(d, "worker");
	printf("Pod Worker:\n");
	printf("  %-18s%s\n", "State:", js(w, "state"));
	if (jb(w, "working"))
		printf("  %-18s%s (for %s)\n", "Transaction:", jsd(w, "transaction", "?"),
		    dur_ms(ji(w, "transactionAgeMs", 0), db, sizeof(db)));
	else
		printf("  %-18s<idle>\n", "Transaction:");
	printf("  %-18s%s\n", "Pending Update:", jsd(w, "pendingUpdate", "<none>"));
	if (json_get(w, "nextSyncInMs") != NULL)
		printf("  %-18sin %s%s\n",
		    "Next Sync:", dur_ms(ji(w, "nextSyncInMs", 0), db, sizeof(db)),
		    ji(w, "failures", 0) > 0 ? " (backoff after failure)" : "");
	else
		printf("  %-18s<not queued>\n", "Next Sync:");
	if (json_get(w, "graceSeconds") != NULL)
		printf("  %-18s%llds, deadline in %s\n",
		    "Grace:", (long long)ji(w, "graceSeconds", 0),
		    dur_ms(ji(w, "graceDeadlineInMs", 0), db, sizeof(db)));
	printf("  %-18s%s\n", "Last Error:", jsd(w, "lastError", "<none>"));
	printf("  %-18s%lld\n", "Failures:", (long long)ji(w, "failures", 0));

	r = json_get(d, "runtime");
	printf("Runtime Machine:\n");
	printf("  %-18s%s\n", "Machine:", jsd(r, "machine", "<idle>"));
	printf("  %-18s%s\n", "Step:", jsd(r, "step", "<none>"));
	if (js(r, "call") != NULL)
		printf("  %-18s%s%s%s (in flight for %s)\n", "CRI Call:", js(r, "call"),
		    js(r, "callTarget") ? " " : "", jsd(r, "callTarget", ""),
		    dur_ms(ji(r, "callAgeMs", 0), db, sizeof(db)));
	else
		printf("  %-18s<none>\n", "CRI Call:");
	printf("  %-18s%s\n", "Sandbox:", jsd(r, "sandboxID", "<none>"));
	if (js(r, "sandboxError") != NULL)
		printf("  %-18s%s\n", "Sandbox Error:", js(r, "sandboxError"));
	printf("  %-18s%s\n", "Last Error:", jsd(r, "lastError", "<none>"));
	if (json_get(r, "lastSyncAgoMs") != NULL)
		printf("  %-18s%s ago\n",
		    "Last Sync:", dur_ms(ji(r, "lastSyncAgoMs", 0), db, sizeof(db)));
	a = json_get(r, "startErrors");
	for (i = 0; i < json_len(a); i++) {
		const struct json *e = json_index(a, i);

		printf("  %-18s%s: %s: %s\n", i == 0 ? "Start Errors:" : "", js(e, "container"),
		    js(e, "reason"), jsd(e, "message", ""));
	}

	a = json_get(d, "conditions");
	printf("Conditions:\n  %-28sStatus\n", "Type");
	for (i = 0; i < json_len(a); i++)
		printf("  %-28s%s\n", js(json_index(a, i), "type"), js(json_index(a, i), "status"));

	a = json_get(d, "containers");
	printf("Containers:\n");
	for (i = 0; i < json_len(a); i++) {
		const struct json *c = json_index(a, i), *env, *pr;

		printf("  %s%s:\n", json_key(a, i),
		    strcmp(jsd(c, "kind", ""), "init") == 0 ? " (init)" : "");
		printf("    %-16s%s\n", "Container ID:", jsd(c, "containerID", "<none>"));
		printf("    %-16s%s\n", "Image:", js(c, "image"));
		printf("    %-16s%s\n", "Pull Policy:", js(c, "imagePullPolicy"));
		describe_strv("Command:", json_get(c, "command"));
		describe_strv("Args:", json_get(c, "args"));
		if (json_get(c, "current") != NULL) {
			describe_state("State", json_get(c, "current"), 4);
			describe_state("Last State", json_get(c, "lastState"), 4);
			printf("    %-16s%s\n", "Ready:", jb(c, "ready") ? "True" : "False");
			printf("    %-16s%lld\n",
			    "Restart Count:", (long long)ji(c, "restartCount", 0));
		} else {
			printf("    %-16s<no status>\n", "State:");
		}
		pr = json_get(c, "probes");
		for (j = 0; j < json_len(pr); j++)
			printf("    %-16s%s\n", j == 0 ? "Probes:" : "", json_key(pr, j));
		for (j = 0; j < json_len(pr); j++)
			printf("      %s: %s\n", json_key(pr, j), json_str(json_index(pr, j)));
		env = json_get(c, "env");
		printf("    %-16s%s\n", "Environment:", json_len(env) == 0 ? "<none>" : "");
		for (j = 0; j < json_len(env); j++) {
			const struct json *e = json_index(env, j);

			/* Secret references show as <secret NAME/KEY>: the server never has
			 * their values to send. */
			printf("      %s: %s\n", jsd(e, "name", "(prefix)"),
			    js(e, "ref") != NULL ? js(e, "ref") : jsd(e, "value", ""));
		}
	}

	a = json_get(d, "events");
	printf("Events:");
	if (json_len(a) == 0) {
		printf("          <none>\n");
	} else {
		struct table et;
		const char  *hdr[] = { "  Type", "Reason", "Age", "Message" };

		printf("\n");
		memset(&et, 0, sizeof(et));
		et.ncols = 4;
		table_row(&et, hdr);
		for (i = 0; i < json_len(a); i++) {
			const struct json *e = json_index(a, i);
			char               seen[96], obj[300], type[32];
			const char        *row[4];

			event_cells(e, seen, sizeof(seen), obj, sizeof(obj));
			snprintf(type, sizeof(type), "  %s", jsd(e, "type", ""));
			row[0] = type;
			row[1] = js(e, "reason");
			row[2] = seen;
			row[3] = js(e, "message");
			table_row(&et, row);
		}
		table_print(&et);
	}
out:
	json_free(doc);
	return 0;
}

static void
status_tasks(const struct json *tasks)
{
	struct table t;
	const char  *hdr[] = { "  TASK", "EVERY", "RUNS", "LAST", "MAX", "LAG", "MAX LAG" };
	size_t       i;

	memset(&t, 0, sizeof(t));
	t.ncols = 7;
	table_row(&t, hdr);
	for (i = 0; i < json_len(tasks); i++) {
		const struct json *k = json_index(tasks, i);
		char               name[64], every[32], runs[32], l[32], m[32], lag[32], ml[32];
		const char        *row[7];

		snprintf(name, sizeof(name), "  %s", jsd(k, "name", "?"));
		dur_ms(ji(k, "intervalMs", 0), every, sizeof(every));
		snprintf(runs, sizeof(runs), "%lld", (long long)ji(k, "runs", 0));
		snprintf(l, sizeof(l), "%lldus", (long long)ji(k, "lastDurationUs", 0));
		snprintf(m, sizeof(m), "%lldus", (long long)ji(k, "maxDurationUs", 0));
		snprintf(lag, sizeof(lag), "%lldus", (long long)ji(k, "lastLagUs", 0));
		snprintf(ml, sizeof(ml), "%lldus", (long long)ji(k, "maxLagUs", 0));
		row[0] = name;
		row[1] = every;
		row[2] = runs;
		row[3] = l;
		row[4] = m;
		row[5] = lag;
		row[6] = ml;
		table_row(&t, row);
	}
	table_print(&t);
}

/* The eviction manager: conditions, each threshold against its signal, the last eviction. */
static void
status_eviction(const struct json *e)
{
	const struct json *c = json_get(e, "conditions"), *t = json_get(e, "thresholds");
	size_t             i;

	if (t == NULL)
		return;
	printf("%-16s", "Eviction:");
	for (i = 0; c != NULL && i < json_len(c); i++)
		printf("%s%s", i ? ", " : "", json_str(json_index(c, i)));
	printf("%s; %lld passes, %lld notifications%s, %lld evictions\n",
	    c == NULL || json_len(c) == 0 ? "no pressure" : "", (long long)ji(e, "passes", 0),
	    (long long)ji(e, "notifications", 0), jb(e, "notifyArmed") ? " (armed)" : "",
	    (long long)ji(e, "evictions", 0));
	for (i = 0; i < json_len(t); i++) {
		const struct json *x = json_index(t, i);

		printf("  %-28s%s %s<%s (%lld): available %lld of %lld%s\n", jsd(x, "signal", "?"),
		    jb(x, "hard") ? "hard" : "soft", jsd(x, "signal", "?"),
		    jsd(x, "threshold", "?"), (long long)ji(x, "value", 0),
		    (long long)ji(x, "available", 0), (long long)ji(x, "capacity", 0),
		    !jb(x, "observed") ? " (not observed)"
		        : jb(x, "met") ? "  MET"
		                       : "");
	}
	if (js(e, "lastPod") != NULL)
		printf("  %-28s%s: %s\n", "Last eviction:", js(e, "lastPod"),
		    jsd(e, "lastMessage", ""));
	if (ji(e, "reclaims", 0) > 0)
		printf("  %-28s%lld (dead containers, unused images)\n",
		    "Node-level reclaims:", (long long)ji(e, "reclaims", 0));
}

/* The image GC manager: thresholds, the image file system, what it removed. */
static void
status_imagegc(const struct json *g)
{
	if (g == NULL || json_get(g, "high") == NULL)
		return;
	printf("%-16sthresholds %lld%%/%lld%%, minimum age %llds",
	    "Image GC:", (long long)ji(g, "high", 0), (long long)ji(g, "low", 0),
	    (long long)ji(g, "minAgeMs", 0) / 1000);
	if (ji(g, "maxAgeMs", 0) > 0)
		printf(", maximum age %llds", (long long)ji(g, "maxAgeMs", 0) / 1000);
	printf("; %lld images (%lld in use, %lld pinned)\n", (long long)ji(g, "images", 0),
	    (long long)ji(g, "inUse", 0), (long long)ji(g, "pinned", 0));
	if (js(g, "mountpoint") != NULL)
		printf("  %-28s%s: %lld%% used, %lld of %lld bytes available\n",
		    "Image fs:", js(g, "mountpoint"), (long long)ji(g, "usagePercent", 0),
		    (long long)ji(g, "available", 0), (long long)ji(g, "capacity", 0));
	printf("  %-28s%lld runs, %lld images removed (%lld for their age), %lld bytes freed%s%s\n",
	    "Collected:", (long long)ji(g, "runs", 0), (long long)ji(g, "removed", 0),
	    (long long)ji(g, "removedAge", 0), (long long)ji(g, "freedBytes", 0),
	    js(g, "lastResult") != NULL ? "; last: " : "", jsd(g, "lastResult", ""));
}

static int
cmd_status(FILE *f, const struct opts *o)
{
	struct json_doc   *doc;
	const struct json *d = request(f, o, &doc, "status", NULL, NULL, 0), *s;
	char               ab[32], db[32];

	if (emit_structured(o, d))
		goto out;
	printf("%-16s%s\n", "Node:", js(d, "node"));
	printf(
	    "%-16skletd %s (pid %lld)\n", "Server:", js(d, "version"), (long long)ji(d, "pid", 0));
	printf("%-16s%s\n", "Uptime:", age(ji(d, "uptimeSeconds", 0), ab, sizeof(ab)));
	printf("%-16s%.1f MiB\n", "Memory (RSS):", (double)ji(d, "rssKiB", 0) / 1024);
	printf("%-16s%lld\n", "Pods:", (long long)ji(d, "pods", 0));
	s = json_get(d, "runtime");
	printf("%-16s%s %s (CRI %s) %s, %s\n", "Runtime:", jsd(s, "name", "?"),
	    jsd(s, "version", "?"), jsd(s, "apiVersion", "?"),
	    jb(s, "ready") ? "ready" : "NOT READY", jsd(s, "endpoint", "?"));
	if (js(s, "lastError") != NULL)
		printf("%-16s%s\n", "  Error:", js(s, "lastError"));
	printf("%-16s%lld calls, %lld errors, %lld in flight, %lld reconnects\n",
	    "  CRI Calls:", (long long)ji(s, "calls", 0), (long long)ji(s, "errors", 0),
	    (long long)ji(s, "inFlight", 0), (long long)ji(s, "reconnects", 0));
	s = json_get(d, "api");
	if (!jb(s, "configured"))
		printf("%-16snot configured (no --kubeconfig: static pods only)\n", "API Server:");
	else {
		int64_t ea = ji(s, "lastEventAgeMs", -1);

		printf("%-16s%s, watch %s, resourceVersion %s, last event %s%s\n", "API Server:",
		    jb(s, "connected") ? "connected"
		                       : (js(s, "watchState") ? "disconnected" : "configured"),
		    jsd(s, "watchState", "<unknown>"), jsd(s, "resourceVersion", "<unknown>"),
		    ea >= 0 ? dur_ms(ea, db, sizeof(db)) : "<unknown>", ea >= 0 ? " ago" : "");
	}
	s = json_get(d, "pleg");
	printf("%-16s%s%s%s, last relist %s ago took %lldus (max %lldus), %lld relists, "
	       "%lld failures\n",
	    "PLEG:", jb(s, "healthy") ? "healthy" : "UNHEALTHY", js(s, "why") ? ": " : "",
	    jsd(s, "why", ""), dur_ms(ji(s, "lastRelistAgoMs", -1), db, sizeof(db)),
	    (long long)ji(s, "lastDurationUs", 0), (long long)ji(s, "maxDurationUs", 0),
	    (long long)ji(s, "relists", 0), (long long)ji(s, "failures", 0));
	printf("%-16s%lld pods, %lld containers, %lld sandboxes\n",
	    "  Seen:", (long long)ji(s, "pods", 0), (long long)ji(s, "containers", 0),
	    (long long)ji(s, "sandboxes", 0));
	s = json_get(s, "recovery");
	if (ji(s, "recoveredInMs", -1) >= 0)
		printf("%-16srecovered in %lldms; first relist: %lld of %lld runtime objects from "
		       "the store, %lld status calls\n",
		    "Recovery:", (long long)ji(s, "recoveredInMs", 0),
		    (long long)ji(s, "fromStore", 0), (long long)ji(s, "objects", 0),
		    (long long)ji(s, "statusCalls", 0));
	status_eviction(json_get(d, "eviction"));
	status_imagegc(json_get(d, "imageGC"));
	s = json_get(d, "store");
	if (js(s, "health") != NULL)
		printf("%-16s%s, %.1f KiB, %lld commits, %lld failures, %lld journal ops%s%s\n",
		    "Store:", js(s, "health"), (double)ji(s, "fileBytes", 0) / 1024,
		    (long long)ji(s, "commits", 0), (long long)ji(s, "failures", 0),
		    (long long)ji(s, "journalOps", 0), js(s, "lastError") ? ", last error: " : "",
		    jsd(s, "lastError", ""));
	else
		printf("%-16sunavailable\n", "Store:");
	printf("%-16s%lld stored\n", "Events:", (long long)ji(json_get(d, "events"), "stored", 0));
	s = json_get(d, "loop");
	printf("%-16slag %lldus\n", "Loop:", (long long)ji(s, "lagUs", 0));
	status_tasks(json_get(s, "tasks"));
out:
	json_free(doc);
	return 0;
}

static int
cmd_version(const struct opts *o)
{
	struct json_doc   *doc;
	const struct json *d;
	FILE              *f;

	if (o->fmt == FMT_TABLE || o->fmt == FMT_WIDE)
		printf("Client Version: %s\n", KLET_VERSION);
	fflush(stdout);
	f = ctl_connect(o->socket);
	d = request(f, o, &doc, "version", NULL, NULL, 0);
	if (o->fmt == FMT_JSON || o->fmt == FMT_YAML) {
		yajl_gen         g = json_gen_new(0);
		char            *s;
		struct json_doc *vd;

		yajl_gen_map_open(g);
		json_gen_kv_str(g, "client", KLET_VERSION);
		json_gen_key(g, "server");
		json_gen_value(g, d);
		yajl_gen_map_close(g);
		s = json_gen_take(g, NULL);
		vd = json_parse(s, strlen(s), NULL, NULL, 0);
		if (vd != NULL)
			emit_structured(o, json_root(vd));
		json_free(vd);
		free(s);
		yajl_gen_free(g);
	} else {
		printf("Server Version: %s (protocol %lld)\n", js(d, "server"),
		    (long long)ji(d, "protocol", 0));
	}
	json_free(doc);
	fclose(f);
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	FILE       *f;
	int         rc;
	const char *w0, *w1;

	signal(SIGPIPE, SIG_IGN);
	tty_out = isatty(STDOUT_FILENO);
	parse_args(argc, argv, &o);
	w0 = o.words[0];
	w1 = o.nwords > 1 ? o.words[1] : NULL;
	if (strcmp(w0, "version") == 0)
		return cmd_version(&o);
	if (strcmp(w0, "get") == 0) {
		if (w1 == NULL)
			usage_error("get needs a resource: %s", "pods or containers");
		if (strcmp(w1, "pods") != 0 && strcmp(w1, "pod") != 0 && strcmp(w1, "po") != 0 &&
		    strcmp(w1, "containers") != 0 && strcmp(w1, "container") != 0)
			usage_error("unknown resource \"%s\" (pods, containers)", w1);
	} else if (strcmp(w0, "describe") == 0) {
		if (w1 == NULL ||
		    (strcmp(w1, "pod") != 0 && strcmp(w1, "pods") != 0 && strcmp(w1, "po") != 0) ||
		    o.nwords != 3)
			usage_error("%s", "usage: podctl describe pod [NS/]NAME");
	} else if (strcmp(w0, "history") == 0) {
		if (o.nwords != 2)
			usage_error("%s", "usage: podctl history [NS/]NAME");
	} else if (strcmp(w0, "events") != 0 && strcmp(w0, "status") != 0) {
		usage_error("unknown command \"%s\"", w0);
	}
	if (o.fmt == FMT_WIDE && !(strcmp(w0, "get") == 0 && w1[0] == 'p'))
		usage_error("%s", "-o wide is for get pods");
	if (o.watch && strcmp(w0, "events") != 0)
		usage_error("%s", "-w is for events");
	f = ctl_connect(o.socket);
	if (strcmp(w0, "get") == 0 && w1[0] == 'p')
		rc = cmd_get_pods(f, &o);
	else if (strcmp(w0, "get") == 0)
		rc = cmd_get_containers(f, &o);
	else if (strcmp(w0, "describe") == 0)
		rc = cmd_describe(f, &o, o.words[2]);
	else if (strcmp(w0, "history") == 0)
		rc = cmd_history(f, &o, o.words[1]);
	else if (strcmp(w0, "events") == 0)
		rc = cmd_events(f, &o);
	else
		rc = cmd_status(f, &o);
	fclose(f);
	return rc;
}
