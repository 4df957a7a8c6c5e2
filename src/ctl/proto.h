/* proto.h — podctl's protocol (CTL_PROTO_VERSION), shared by kletd's server and the podctl
 * client: one JSON request per line, e.g.
 *   {"v":1,"cmd":"get_pods","ns":"default"}
 * one JSON reply per line:
 *   {"v":1,"ok":true,"cmd":"get_pods","data":...}   or   {"v":1,"ok":false,"error":"..."}
 * Commands: version, get_pods (ns optional), describe_pod (ns, name), get_containers,
 * events (watch: true keeps the connection and sends {"v":1,"event":{...}} lines as events
 * are recorded), status, history (ns, name: the pod's stored worker state changes and
 * events, oldest first), logs (ns, name, container optional, previous: which CRI log file
 * podctl reads itself, and whether its container runs), top (ns or all: cumulative CPU
 * time and memory working set of the node, the pods and their containers from the
 * cgroups, with the monotonic time of the reading), node (the node summary: conditions,
 * capacity, allocatable, pressure, lease, shutdown manager), inspect (name: a container ID
 * or a unique prefix; the runtime's ContainerStatus with verbose info, answered when the
 * runtime is). No command changes daemon state.
 * Limits: a request line over CTL_MAX_REQUEST bytes gets an error and the connection is
 * closed; a client whose unsent output exceeds the output bound (CTL_MAX_OUTPUT, or the
 * server's max_output) is dropped.
 * Pure functions (proto.c): they need json and util only. */
#ifndef KLET_CTL_PROTO_H
#define KLET_CTL_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_gen.h>

#define CTL_PROTO_VERSION 1
#define CTL_MAX_REQUEST   (64 * 1024)
#define CTL_MAX_OUTPUT    (4 * 1024 * 1024)

/* A parsed request. cmd and the strings point into storage owned by the struct. */
struct ctl_request {
	int  v;
	char cmd[32];
	char ns[254];
	char name[254];
	char container[254];
	int  all_ns;
	int  watch;
	int  previous;
};
/* Parses one request line (without its newline). Returns 0, or -1 with a one-line reason
 * in err: invalid JSON, not an object, missing/unknown cmd, unsupported v, wrong types. */
int ctl_parse_request(
    const char *line, size_t len, struct ctl_request *out, char *err, size_t errlen);
/* kubectl's short age ("45s", "3m12s", "5h", "2d3h", ...) of secs into buf; "<unknown>"
 * for a negative value. Returns buf. */
const char *ctl_format_age(int64_t secs, char *buf, size_t len);
/* Writes an error reply line (without newline) into gen. */
void ctl_gen_error(yajl_gen, const char *msg);

#endif
