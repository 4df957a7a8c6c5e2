/* proto.c — podctl's protocol, shared by the server and the client: the request parser,
 * the error reply and kubectl's short ages (see src/ctl/proto.h). Links with json and util
 * only, so that podctl carries none of the daemon. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "ctl/proto.h"

const char *
ctl_format_age(int64_t s, char *buf, size_t len)
{
	if (s < 0)
		snprintf(buf, len, "<unknown>");
	else if (s < 120)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 600)
		snprintf(buf, len, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
	else if (s < 3 * 3600)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 8 * 3600)
		snprintf(buf, len, "%lldh%lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else if (s < 48 * 3600)
		snprintf(buf, len, "%lldh", (long long)(s / 3600));
	else if (s < 8 * 86400)
		snprintf(
		    buf, len, "%lldd%lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
	else
		snprintf(buf, len, "%lldd", (long long)(s / 86400));
	return buf;
}

void
ctl_gen_error(yajl_gen g, const char *msg)
{
	yajl_gen_map_open(g);
	json_gen_kv_int(g, "v", CTL_PROTO_VERSION);
	json_gen_kv_bool(g, "ok", 0);
	json_gen_kv_str(g, "error", msg);
	yajl_gen_map_close(g);
}

static const char *const ctl_cmds[] = {
	"version",
	"get_pods",
	"describe_pod",
	"get_containers",
	"events",
	"status",
	"history",
	"logs",
	"top",
	"node",
	"inspect",
};

static int
ctl_opt_str(
    const struct json *root, const char *key, char *out, size_t outlen, char *err, size_t errlen)
{
	const struct json *v = json_get(root, key);

	out[0] = '\0';
	if (v == NULL || json_type(v) == JSON_NULL)
		return 0;
	if (json_type(v) != JSON_STRING) {
		snprintf(err, errlen, "%s: expected a string, got %s", key,
		    json_type_name(json_type(v)));
		return -1;
	}
	if (json_str_len(v) >= outlen || strlen(json_str(v)) != json_str_len(v)) {
		snprintf(err, errlen, "%s: too long or not text", key);
		return -1;
	}
	memcpy(out, json_str(v), json_str_len(v) + 1);
	return 0;
}

static int
ctl_opt_bool(const struct json *root, const char *key, int *out, char *err, size_t errlen)
{
	const struct json *v = json_get(root, key);

	*out = 0;
	if (v == NULL || json_type(v) == JSON_NULL)
		return 0;
	if (json_bool(v, out) == -1) {
		snprintf(err, errlen, "%s: expected a boolean, got %s", key,
		    json_type_name(json_type(v)));
		return -1;
	}
	return 0;
}

int
ctl_parse_request(const char *line, size_t len, struct ctl_request *out, char *err, size_t errlen)
{
	struct json_limits lim = { CTL_MAX_REQUEST, 8, 4096 };
	struct json_doc   *doc;
	const struct json *root, *v, *cmd;
	char               perr[256];
	int64_t            ver;
	size_t             i;
	int                rc = -1;

	memset(out, 0, sizeof(*out));
	if (len > CTL_MAX_REQUEST) {
		snprintf(err, errlen, "request of %zu bytes is over the limit of %d", len,
		    CTL_MAX_REQUEST);
		return -1;
	}
	doc = json_parse(line, len, &lim, perr, sizeof(perr));
	if (doc == NULL) {
		snprintf(err, errlen, "invalid JSON request: %s", perr);
		return -1;
	}
	root = json_root(doc);
	if (json_type(root) != JSON_OBJECT) {
		snprintf(err, errlen, "request must be a JSON object, got %s",
		    json_type_name(json_type(root)));
		goto out;
	}
	v = json_get(root, "v");
	if (v == NULL || json_int(v, &ver) == -1) {
		snprintf(err, errlen, "request needs an integer protocol version \"v\"");
		goto out;
	}
	if (ver != CTL_PROTO_VERSION) {
		snprintf(err, errlen, "unsupported protocol version %lld (server speaks %d)",
		    (long long)ver, CTL_PROTO_VERSION);
		goto out;
	}
	out->v = (int)ver;
	cmd = json_get(root, "cmd");
	if (json_type(cmd) != JSON_STRING) {
		snprintf(err, errlen, "request needs a string \"cmd\"");
		goto out;
	}
	for (i = 0; i < sizeof(ctl_cmds) / sizeof(ctl_cmds[0]); i++)
		if (strcmp(json_str(cmd), ctl_cmds[i]) == 0)
			break;
	if (i == sizeof(ctl_cmds) / sizeof(ctl_cmds[0])) {
		snprintf(err, errlen, "unknown cmd \"%.64s\"", json_str(cmd));
		goto out;
	}
	snprintf(out->cmd, sizeof(out->cmd), "%s", ctl_cmds[i]);
	if (ctl_opt_str(root, "ns", out->ns, sizeof(out->ns), err, errlen) == -1 ||
	    ctl_opt_str(root, "name", out->name, sizeof(out->name), err, errlen) == -1 ||
	    ctl_opt_str(root, "container", out->container, sizeof(out->container), err, errlen) ==
	        -1 ||
	    ctl_opt_bool(root, "previous", &out->previous, err, errlen) == -1 ||
	    ctl_opt_bool(root, "all", &out->all_ns, err, errlen) == -1 ||
	    ctl_opt_bool(root, "watch", &out->watch, err, errlen) == -1)
		goto out;
	if ((strcmp(out->cmd, "describe_pod") == 0 || strcmp(out->cmd, "history") == 0 ||
	        strcmp(out->cmd, "logs") == 0 || strcmp(out->cmd, "inspect") == 0) &&
	    out->name[0] == '\0') {
		snprintf(err, errlen, "%s needs \"name\"", out->cmd);
		goto out;
	}
	rc = 0;
out:
	json_free(doc);
	return rc;
}
