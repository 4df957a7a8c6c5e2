/* podctl.c — read-only inspection of a running kletd over its unix socket (see ctl/ctl.h):
 * the command line and the dispatch to the commands (cmd_*.c). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "podctl/common.h"

static void
podctl_usage(FILE *f)
{
	fprintf(f,
	    "usage: podctl [--socket PATH] COMMAND [options]\n"
	    "Read-only inspection of a running kletd.\n\n"
	    "Commands:\n"
	    "  get pods [-n NS | -A] [-o wide|json|yaml]   pods, their status and worker state\n"
	    "  get containers [-n NS | -A] [-o json|yaml]  the runtime's containers\n"
	    "  get nodes [-o wide|json|yaml]              the node: status, pressure, pods, lease\n"
	    "  describe pod [NS/]NAME [-n NS]             spec summary, worker, containers, events\n"
	    "  describe node                              conditions, capacity, allocatable, lease\n"
	    "  logs [NS/]POD [-c C] [-f] [--tail N] [-p]  a container's log (its CRI log file)\n"
	    "  top [pods] [-n NS | -A] [--containers]     CPU and memory of pods (containers)\n"
	    "  top node                                   CPU and memory of the node\n"
	    "  inspect CONTAINER [-o json|yaml]           the runtime's status of a container\n"
	    "  history [NS/]NAME [-n NS] [-o json|yaml]   the pod's stored state changes and events\n"
	    "  events [-w] [-n NS | -A] [-o json|yaml]     recorded events (-w: follow)\n"
	    "  status [-o json|yaml]                      the daemon's health\n"
	    "  version [-o json|yaml]                     client and server versions\n\n"
	    "Options:\n"
	    "  --socket PATH   kletd's podctl socket (default $KLET_PODCTL_SOCKET, else %s)\n"
	    "  -n, --namespace NS   namespace (default \"default\"); -A, --all-namespaces: all\n"
	    "  -o, --output FMT     wide (get pods, get nodes), json or yaml\n"
	    "  --no-headers         tables without their header line\n"
	    "  -w, --watch          events: keep printing new events\n"
	    "  -c, --container C    logs: the container (default: the pod's default or first)\n"
	    "  -f, --follow         logs: keep printing until the container exits\n"
	    "  --tail N             logs: the last N lines only (default -1: all)\n"
	    "  -p, --previous       logs: the previous instance of the container\n"
	    "  --timestamps         logs: each line with its RFC 3339 time\n"
	    "  --containers         top: each container of the pods\n"
	    "Exit status: 0 success, 1 error (kletd unreachable, not found), 2 usage.\n",
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
	exit(PODCTL_EXIT_USAGE);
}

/* An option with a value: "--long V", "--long=V" or "-s V". Returns 1 and sets *val. */
static int
podctl_take(int argc, char **argv, int *i, const char *lng, const char *shrt, const char **val)
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

static int
podctl_flag(const char *a, const char *lng, const char *shrt)
{
	return strcmp(a, lng) == 0 || (shrt != NULL && strcmp(a, shrt) == 0);
}

static void
podctl_parse_args(int argc, char **argv, struct podctl_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->tail = -1;
	o->socket = getenv("KLET_PODCTL_SOCKET");
	if (o->socket == NULL || *o->socket == '\0')
		o->socket = PODCTL_DEFAULT_SOCKET;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;

		if (podctl_flag(a, "--help", "-h")) {
			podctl_usage(stdout);
			exit(0);
		} else if (podctl_take(argc, argv, &i, "--socket", NULL, &val)) {
			o->socket = val;
		} else if (podctl_take(argc, argv, &i, "--namespace", "-n", &val)) {
			o->ns = val;
		} else if (podctl_take(argc, argv, &i, "--output", "-o", &val)) {
			o->fmt_given = 1;
			if (strcmp(val, "wide") == 0)
				o->fmt = FMT_WIDE;
			else if (strcmp(val, "json") == 0)
				o->fmt = FMT_JSON;
			else if (strcmp(val, "yaml") == 0)
				o->fmt = FMT_YAML;
			else
				usage_error("unknown output format \"%s\" (wide, json, yaml)", val);
		} else if (podctl_take(argc, argv, &i, "--container", "-c", &val)) {
			o->container = val;
		} else if (podctl_take(argc, argv, &i, "--tail", NULL, &val)) {
			char     *end;
			long long n;

			errno = 0;
			n = strtoll(val, &end, 10);
			if (errno != 0 || *val == '\0' || *end != '\0' || n < -1)
				usage_error(
				    "--tail: \"%s\" is not a number of lines (-1: all)", val);
			o->tail = n;
		} else if (podctl_flag(a, "--all-namespaces", "-A")) {
			o->all_ns = 1;
		} else if (podctl_flag(a, "--watch", "-w")) {
			o->watch = 1;
		} else if (podctl_flag(a, "--follow", "-f")) {
			o->follow = 1;
		} else if (podctl_flag(a, "--previous", "-p")) {
			o->previous = 1;
		} else if (podctl_flag(a, "--timestamps", NULL)) {
			o->timestamps = 1;
		} else if (podctl_flag(a, "--no-headers", NULL)) {
			o->no_headers = 1;
		} else if (podctl_flag(a, "--containers", NULL)) {
			o->containers = 1;
		} else if (a[0] == '-' && a[1] != '\0') {
			usage_error("unknown option %s", a);
		} else {
			if (o->nwords == PODCTL_MAX_WORDS)
				usage_error("too many arguments (%s)", a);
			o->words[o->nwords++] = a;
		}
	}
	if (o->nwords == 0) {
		podctl_usage(stderr);
		exit(PODCTL_EXIT_USAGE);
	}
}

static int
podctl_is(const char *w, const char *a, const char *b, const char *c)
{
	return w != NULL &&
	    (strcmp(w, a) == 0 || (b != NULL && strcmp(w, b) == 0) ||
	        (c != NULL && strcmp(w, c) == 0));
}

/* What each command accepts beyond --socket, -n/-A and -o json|yaml. */
enum { ALLOW_WIDE = 0x1, ALLOW_WATCH = 0x2, ALLOW_LOGS = 0x4, ALLOW_CONTAINERS = 0x8 };

static void
podctl_check_flags(const struct podctl_opts *o, const char *cmd, unsigned allow)
{
	if (o->fmt == FMT_WIDE && !(allow & ALLOW_WIDE))
		usage_error("-o wide is not for %s (get pods, get nodes)", cmd);
	if (o->watch && !(allow & ALLOW_WATCH))
		usage_error("-w is for events, not %s", cmd);
	if ((o->container != NULL || o->follow || o->previous || o->timestamps || o->tail != -1) &&
	    !(allow & ALLOW_LOGS))
		usage_error("-c, -f, -p, --tail and --timestamps are for logs, not %s", cmd);
	if (o->containers && !(allow & ALLOW_CONTAINERS))
		usage_error("--containers is for top pods, not %s", cmd);
}

int
main(int argc, char **argv)
{
	struct podctl_opts o;
	FILE              *f;
	int                rc;
	const char        *w0, *w1;

	signal(SIGPIPE, SIG_IGN);
	podctl_parse_args(argc, argv, &o);
	out_init(isatty(STDOUT_FILENO), o.no_headers);
	w0 = o.words[0];
	w1 = o.nwords > 1 ? o.words[1] : NULL;
	if (strcmp(w0, "version") == 0) {
		podctl_check_flags(&o, w0, 0);
		return cmd_version(&o);
	}
	if (strcmp(w0, "get") == 0) {
		if (w1 == NULL)
			usage_error("get needs a resource: %s", "pods, containers or nodes");
		if (!podctl_is(w1, "pods", "pod", "po") &&
		    !podctl_is(w1, "containers", "container", NULL) &&
		    !podctl_is(w1, "nodes", "node", "no"))
			usage_error("unknown resource \"%s\" (pods, containers, nodes)", w1);
		if (o.nwords > 2)
			usage_error("get %s takes no name", w1);
		podctl_check_flags(&o, "get", w1[0] == 'c' ? 0 : ALLOW_WIDE);
	} else if (strcmp(w0, "describe") == 0) {
		if (podctl_is(w1, "node", "nodes", "no")) {
			if (o.nwords > 3)
				usage_error("%s", "usage: podctl describe node [NAME]");
		} else if (!podctl_is(w1, "pod", "pods", "po") || o.nwords != 3)
			usage_error("%s", "usage: podctl describe pod [NS/]NAME | describe node");
		podctl_check_flags(&o, w0, 0);
	} else if (strcmp(w0, "history") == 0 || strcmp(w0, "logs") == 0 ||
	    strcmp(w0, "inspect") == 0) {
		if (o.nwords != 2)
			usage_error("usage: podctl %s %s", w0,
			    w0[0] == 'i' ? "CONTAINER" : (w0[0] == 'l' ? "[NS/]POD" : "[NS/]NAME"));
		podctl_check_flags(&o, w0, w0[0] == 'l' ? ALLOW_LOGS : 0);
		if (w0[0] == 'l' && o.fmt_given)
			usage_error("%s", "logs prints the log as it is: no -o");
	} else if (strcmp(w0, "top") == 0) {
		if (w1 != NULL && !podctl_is(w1, "pods", "pod", "po") &&
		    !podctl_is(w1, "nodes", "node", "no"))
			usage_error("unknown resource \"%s\" (pods, node)", w1);
		if (o.nwords > 2)
			usage_error("top %s takes no name", w1);
		podctl_check_flags(&o, w0, ALLOW_CONTAINERS);
	} else if (strcmp(w0, "events") == 0 || strcmp(w0, "status") == 0) {
		if (o.nwords > 1)
			usage_error("%s takes no argument", w0);
		podctl_check_flags(&o, w0, w0[0] == 'e' ? ALLOW_WATCH : 0);
	} else {
		usage_error("unknown command \"%s\"", w0);
	}
	f = client_connect(o.socket);
	if (strcmp(w0, "get") == 0 && w1[0] == 'p')
		rc = cmd_get_pods(f, &o);
	else if (strcmp(w0, "get") == 0 && w1[0] == 'c')
		rc = cmd_get_containers(f, &o);
	else if (strcmp(w0, "get") == 0)
		rc = cmd_get_nodes(f, &o);
	else if (strcmp(w0, "describe") == 0 && w1[0] == 'n')
		rc = cmd_describe_node(f, &o);
	else if (strcmp(w0, "describe") == 0)
		rc = cmd_describe(f, &o, o.words[2]);
	else if (strcmp(w0, "history") == 0)
		rc = cmd_history(f, &o, o.words[1]);
	else if (strcmp(w0, "logs") == 0)
		rc = cmd_logs(f, &o, o.words[1]);
	else if (strcmp(w0, "inspect") == 0)
		rc = cmd_inspect(f, &o, o.words[1]);
	else if (strcmp(w0, "top") == 0)
		rc = cmd_top(f, &o, w1 != NULL && w1[0] == 'n');
	else if (strcmp(w0, "events") == 0)
		rc = cmd_events(f, &o);
	else
		rc = cmd_status(f, &o);
	fclose(f);
	return rc;
}
