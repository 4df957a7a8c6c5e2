/* client.c — podctl's connection to kletd: one JSON request line, one reply line (see
 * ctl/proto.h). */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "ctl/proto.h"
#include "podctl/common.h"

FILE *
client_connect(const char *path)
{
	struct sockaddr_un sun;
	int                fd;
	FILE              *f;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "podctl: cannot connect to kletd at %s: path too long\n", path);
		exit(PODCTL_EXIT_ERROR);
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
		exit(PODCTL_EXIT_ERROR);
	}
	f = fdopen(fd, "r+");
	if (f == NULL) {
		fprintf(stderr, "podctl: %s\n", strerror(errno));
		exit(PODCTL_EXIT_ERROR);
	}
	return f;
}

static void
client_send(FILE *f, const struct podctl_opts *o, const struct client_req *rq)
{
	yajl_gen             g = json_gen_new(0);
	const unsigned char *buf;
	size_t               len;

	yajl_gen_map_open(g);
	json_gen_kv_int(g, "v", CTL_PROTO_VERSION);
	json_gen_kv_str(g, "cmd", rq->cmd);
	if (rq->ns != NULL)
		json_gen_kv_str(g, "ns", rq->ns);
	if (rq->name != NULL)
		json_gen_kv_str(g, "name", rq->name);
	if (rq->container != NULL)
		json_gen_kv_str(g, "container", rq->container);
	if (o->all_ns)
		json_gen_kv_bool(g, "all", 1);
	if (rq->watch)
		json_gen_kv_bool(g, "watch", 1);
	if (rq->previous)
		json_gen_kv_bool(g, "previous", 1);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	if (fwrite(buf, 1, len, f) != len || fputc('\n', f) == EOF || fflush(f) == EOF) {
		fprintf(
		    stderr, "podctl: cannot send to kletd at %s: %s\n", o->socket, strerror(errno));
		exit(PODCTL_EXIT_ERROR);
	}
	yajl_gen_free(g);
}

struct json_doc *
client_read(FILE *f, const struct podctl_opts *o, int eof_ok)
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
		exit(PODCTL_EXIT_ERROR);
	}
	doc = json_parse(line, (size_t)n, &lim, err, sizeof(err));
	free(line);
	if (doc == NULL) {
		fprintf(stderr, "podctl: bad reply from kletd: %s\n", err);
		exit(PODCTL_EXIT_ERROR);
	}
	return doc;
}

const struct json *
client_call(FILE *f, const struct podctl_opts *o, const struct client_req *rq,
    struct json_doc **docp, int must_succeed, char *err, size_t errlen)
{
	const struct json *root;

	client_send(f, o, rq);
	*docp = client_read(f, o, 0);
	root = json_root(*docp);
	if (!jv_bool(root, "ok")) {
		if (must_succeed) {
			fprintf(stderr, "podctl: error from kletd: %s\n",
			    jv_strd(root, "error", "(no message)"));
			exit(PODCTL_EXIT_ERROR);
		}
		snprintf(err, errlen, "%s", jv_strd(root, "error", "(no message)"));
		return NULL;
	}
	return json_get(root, "data");
}

const struct json *
client_request(FILE *f, const struct podctl_opts *o, struct json_doc **docp, const char *cmd,
    const char *ns, const char *name, int watch)
{
	struct client_req rq = { .cmd = cmd, .ns = ns, .name = name, .watch = watch };

	return client_call(f, o, &rq, docp, 1, NULL, 0);
}
