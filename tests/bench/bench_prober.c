/* bench_prober.c — CPU cost of the prober: N containers, each with a 1 s readiness probe,
 * on one loop for a few seconds.
 *   bench_prober tcp N SECONDS           tcpSocket probes of a local listener (a child
 *                                        process accepts and closes)
 *   bench_prober exec N SECONDS SOCK     exec probes through CRI ExecSync against the
 *                                        fake CRI started with --populate Nx1
 * Prints: mode, probes, checks/s, CPU ms per wall second of this process (user+sys). */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cri/cri.h"
#include "core/log.h"
#include "pod/pod.h"
#include "prober/prober.h"
#include "pod/runtime.h"
#include "core/util.h"

static struct event_base    *base;
static struct prober        *P;
static struct pod          **pods;
static struct rt_pod_status *rts;
static int                   npods;
static int                   port;
static const char           *mode;
static char                **ids;
static size_t                nids;

static void
stop_cb(evutil_socket_t fd, short w, void *arg)
{
	(void)fd;
	(void)w;
	(void)arg;
	event_base_loopbreak(base);
}

static void
run_for(double secs)
{
	struct event  *e = evtimer_new(base, stop_cb, NULL);
	struct timeval tv = { (time_t)secs, (suseconds_t)((secs - (time_t)secs) * 1e6) };

	evtimer_add(e, &tv);
	event_base_dispatch(base);
	event_free(e);
}

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	    ru.ru_stime.tv_usec / 1e6;
}

static void
make_pods(void)
{
	char doc[1024], err[256];
	int  i;

	pods = xcalloc(npods, sizeof(*pods));
	rts = xcalloc(npods, sizeof(*rts));
	for (i = 0; i < npods; i++) {
		const char *probe = strcmp(mode, "tcp") == 0 ? "tcpSocket: {port: %d}"
		                                             : "exec: {command: [\"true\"]}";
		char        pr[128];

		snprintf(pr, sizeof(pr), probe, port);
		snprintf(doc, sizeof(doc),
		    "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default, uid: u%d}\n"
		    "spec:\n  containers:\n  - name: c\n    image: busybox\n"
		    "    readinessProbe:\n      %s\n      periodSeconds: 1\n",
		    i, i, pr);
		pods[i] = pod_from_yaml(doc, strlen(doc), err, sizeof(err));
		if (pods[i] == NULL)
			fatalx("pod: %s", err);
		rts[i].uid = xsprintf("u%d", i);
		rts[i].nsandboxes = 1;
		rts[i].sandboxes = xcalloc(1, sizeof(*rts[i].sandboxes));
		rts[i].sandboxes[0].id = xstrdup("sb");
		rts[i].sandboxes[0].ip = xstrdup("127.0.0.1");
		rts[i].ncontainers = 1;
		rts[i].containers = xcalloc(1, sizeof(*rts[i].containers));
		rts[i].containers[0].id = nids > 0 ? xstrdup(ids[i % nids]) : xsprintf("c%d", i);
		rts[i].containers[0].name = xstrdup("c");
		rts[i].containers[0].state = RT_RUNNING;
		rts[i].containers[0].started_at = now_wall_ns();
	}
}

static void
list_done(int code, const char *msg, const Runtime__V1__ListContainersResponse *r, void *arg)
{
	size_t i;

	(void)arg;
	if (code != GRPC_OK)
		fatalx("ListContainers: %s", msg);
	for (i = 0; i < r->n_containers; i++) {
		ids = xreallocarray(ids, nids + 1, sizeof(*ids));
		ids[nids++] = xstrdup(r->containers[i]->id);
	}
	event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
	struct prober_stats st0, st1;
	struct cri         *cri = NULL;
	pid_t               child = -1;
	double              secs, c0, c1, t0, t1;
	int                 i, lfd = -1;

	if (argc < 4) {
		fprintf(stderr, "usage: bench_prober tcp|exec N SECONDS [SOCK]\n");
		return 2;
	}
	log_init(0, 0);
	signal(SIGPIPE, SIG_IGN);
	mode = argv[1];
	npods = atoi(argv[2]);
	secs = atof(argv[3]);
	base = event_base_new();
	if (strcmp(mode, "tcp") == 0) {
		struct sockaddr_in sin;
		socklen_t          sl = sizeof(sin);

		lfd = socket(AF_INET, SOCK_STREAM, 0);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(lfd, 4096) == -1)
			fatal("listen");
		getsockname(lfd, (struct sockaddr *)&sin, &sl);
		port = ntohs(sin.sin_port);
		child = fork();
		if (child == 0) {
			for (;;) {
				int fd = accept(lfd, NULL, NULL);

				if (fd >= 0)
					close(fd);
			}
		}
		close(lfd);
	} else {
		char                              *ep;
		Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;

		if (argc < 5)
			fatalx("exec needs the fake CRI socket");
		ep = xsprintf("unix://%s", argv[4]);
		cri = cri_new(base, ep, NULL, NULL, NULL);
		free(ep);
		cri_list_containers(cri, &req, 10000, list_done, NULL, NULL);
		event_base_dispatch(base);
		if (nids == 0)
			fatalx("the fake CRI has no containers");
	}
	P = prober_new(base, cri, NULL);
	make_pods();
	for (i = 0; i < npods; i++)
		prober_sync_pod(P, pods[i], &rts[i], 1);
	run_for(2.0); /* warm-up: first checks, connections */
	prober_get_stats(P, &st0);
	c0 = cpu_s();
	t0 = now_mono_us() / 1e6;
	run_for(secs);
	c1 = cpu_s();
	t1 = now_mono_us() / 1e6;
	prober_get_stats(P, &st1);
	printf("mode=%s probes=%d period=1s wall=%.2fs checks/s=%.0f failures=%llu "
	       "cpu_ms_per_s=%.1f (%.1f us per check)\n",
	    mode, npods, t1 - t0, (st1.runs - st0.runs) / (t1 - t0),
	    (unsigned long long)(st1.failures - st0.failures), (c1 - c0) * 1000 / (t1 - t0),
	    st1.runs > st0.runs ? (c1 - c0) * 1e6 / (double)(st1.runs - st0.runs) : 0.0);
	prober_free(P);
	cri_free(cri);
	for (i = 0; i < npods; i++) {
		pod_unref(pods[i]);
		rt_pod_status_clear(&rts[i]);
	}
	free(pods);
	free(rts);
	for (i = 0; i < (int)nids; i++)
		free(ids[i]);
	free(ids);
	event_base_free(base);
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	return 0;
}
