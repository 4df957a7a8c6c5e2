/* output.c — podctl's output: kubectl's tables (fitted to the terminal), JSON and YAML, and
 * the ages, durations and units it prints (see common.h). */
#include <sys/ioctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"
#include "core/util.h"
#include "ctl/proto.h"
#include "podctl/common.h"

static int out_tty;
static int out_no_headers;

void
out_init(int tty, int no_headers)
{
	out_tty = tty;
	out_no_headers = no_headers;
}

const char *
out_millicores(int64_t milli, char *buf, size_t len)
{
	snprintf(buf, len, "%lldm", (long long)(milli > 0 ? milli : 0));
	return buf;
}

const char *
out_mebibytes(int64_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%lldMi", (long long)(bytes > 0 ? bytes / (1024 * 1024) : 0));
	return buf;
}

const char *
out_age(int64_t secs, char *buf, size_t len)
{
	return ctl_format_age(secs, buf, len);
}

const char *
out_dur(int64_t ms, char *buf, size_t len)
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

const char *
out_wall(int64_t unix_s, char *buf, size_t len)
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

void
out_table_row(struct out_table *t, const char **vals)
{
	size_t i;

	t->cells = xreallocarray(t->cells, (t->nrows + 1) * t->ncols, sizeof(char *));
	for (i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = xstrdup(vals[i] != NULL ? vals[i] : "");
	t->nrows++;
}

static int
out_term_width(void)
{
	struct winsize ws;

	if (out_tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 0;
}

void
out_table_print(struct out_table *t)
{
	size_t *w = xcalloc(t->ncols, sizeof(size_t)), r, i, total;
	size_t  first = out_no_headers && t->nrows > 0 ? 1 : 0;
	int     tw = out_term_width();

	for (r = first; r < t->nrows; r++)
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
	for (r = first; r < t->nrows; r++) {
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

void
out_json(const struct json *v)
{
	yajl_gen g = json_gen_new(1);
	char    *s, *r, *w;

	json_gen_value(g, v);
	s = json_gen_take(g, NULL);
	/* yajl's pretty printer opens an empty object or array on lines of its own: {} and []
	 * as kubectl and crictl print them (outside strings: the blanks are yajl's own). */
	for (r = w = s; *r != '\0'; r++) {
		*w++ = *r;
		if (*r == '"') {
			for (r++; *r != '\0' && *r != '"'; r++) {
				*w++ = *r;
				if (*r == '\\' && r[1] != '\0')
					*w++ = *++r;
			}
			if (*r == '\0')
				break;
			*w++ = *r;
		} else if (*r == '{' || *r == '[') {
			char *q = r + 1;

			while (*q == '\n' || *q == ' ')
				q++;
			if (*q == (*r == '{' ? '}' : ']')) {
				*w++ = *q;
				r = q;
			}
		}
	}
	*w = '\0';
	fputs(s, stdout);
	if (*s != '\0' && s[strlen(s) - 1] != '\n')
		putchar('\n');
	free(s);
	yajl_gen_free(g);
}

static int
out_yaml_plain_ok(const char *s)
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
out_yaml_scalar(const struct json *v)
{
	if (json_type(v) == JSON_STRING) {
		const char *s = json_str(v);

		if (out_yaml_plain_ok(s))
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
out_yaml_value(const struct json *v, int indent, int inline_first)
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
				out_yaml_value(c, indent + 2, 0);
			} else if (json_type(c) == JSON_OBJECT || json_type(c) == JSON_ARRAY) {
				out_yaml_value(c, indent + 2, 0);
			} else {
				putchar(' ');
				out_yaml_scalar(c);
				putchar('\n');
			}
		}
	} else if (t == JSON_ARRAY) {
		for (i = 0; i < n; i++) {
			const struct json *c = json_index(v, i);

			printf("%*s- ", indent, "");
			if (json_type(c) == JSON_OBJECT && json_len(c) > 0)
				out_yaml_value(c, indent + 2, 1);
			else if (json_type(c) == JSON_ARRAY && json_len(c) > 0) {
				printf("\n");
				out_yaml_value(c, indent + 2, 0);
			} else if (json_type(c) == JSON_OBJECT || json_type(c) == JSON_ARRAY) {
				printf("%s\n", json_type(c) == JSON_OBJECT ? "{}" : "[]");
			} else {
				out_yaml_scalar(c);
				putchar('\n');
			}
		}
	} else {
		out_yaml_scalar(v);
		putchar('\n');
	}
}

void
out_yaml(const struct json *v)
{
	if (json_type(v) == JSON_OBJECT || json_type(v) == JSON_ARRAY)
		out_yaml_value(v, 0, 0);
	else
		out_yaml_value(v, 0, 0);
}

int
out_structured(const struct podctl_opts *o, const struct json *data)
{
	if (o->fmt == FMT_JSON)
		out_json(data);
	else if (o->fmt == FMT_YAML)
		out_yaml(data);
	else
		return 0;
	return 1;
}

int
out_structured_gen(const struct podctl_opts *o, yajl_gen g)
{
	char            *s = json_gen_take(g, NULL);
	struct json_doc *d = json_parse(s, strlen(s), NULL, NULL, 0);
	int              rc = d != NULL ? out_structured(o, json_root(d)) : 0;

	json_free(d);
	free(s);
	yajl_gen_free(g);
	return rc;
}
