/* bench_cri.c — throughput and latency of the CRI client (src/cri.c) against a CRI server:
 *   bench_cri SOCK [SECONDS_PER_CASE]
 * Cases: ListContainers (all containers) and ContainerStatus (one id), one call at a time and
 * 16 in flight. Prints one line per case:
 *   case METHOD CONC calls N rate R/s p50 US p99 US
 * and the client's resident memory after listing every container:
 *   rss_kb N hwm_kb N containers N
 * Not part of `make check`: run tests/bench/bench_cri.sh. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "cri/cri.h"
#include "core/log.h"
#include "core/util.h"

static struct event_base *base;
static struct cri        *cri;
static char              *one_id;
static size_t             ncontainers;

struct run {
	const char *method;
	int         conc;
	int64_t     end_ms;
	int         inflight;
	int64_t    *lat;
	size_t      nlat, cap;
	size_t      errors;
};

static void start_one(struct run *);

struct one {
	struct run *r;
	int64_t     t0;
};

static void
done_one(struct one *o, int code)
{
	struct run *r = o->r;

	if (code != GRPC_OK)
		r->errors++;
	else if (r->nlat < r->cap)
		r->lat[r->nlat++] = now_mono_us() - o->t0;
	r->inflight--;
	free(o);
	if (now_mono_ms() < r->end_ms)
		start_one(r);
}

static void
list_cb(int code, const char *msg, const Runtime__V1__ListContainersResponse *resp, void *arg)
{
	(void)msg;
	(void)resp;
	done_one(arg, code);
}

static void
status_cb(int code, const char *msg, const Runtime__V1__ContainerStatusResponse *resp, void *arg)
{
	(void)msg;
	(void)resp;
	done_one(arg, code);
}

static void
start_one(struct run *r)
{
	struct one *o = xcalloc(1, sizeof(*o));

	o->r = r;
	o->t0 = now_mono_us();
	r->inflight++;
	if (strcmp(r->method, "ListContainers") == 0) {
		Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;

		cri_list_containers(cri, &req, 30000, list_cb, o, NULL);
	} else {
		Runtime__V1__ContainerStatusRequest req =
		    RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;

		req.container_id = one_id;
		cri_container_status(cri, &req, 30000, status_cb, o, NULL);
	}
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
run_case(const char *method, int conc, int seconds)
{
	struct run r;
	int64_t    t0;
	int        i;
	double     secs;

	memset(&r, 0, sizeof(r));
	r.method = method;
	r.conc = conc;
	r.cap = 4u << 20;
	r.lat = xcalloc(r.cap, sizeof(*r.lat));
	t0 = now_mono_ms();
	r.end_ms = t0 + seconds * 1000;
	for (i = 0; i < conc; i++)
		start_one(&r);
	while (r.inflight > 0)
		event_base_loop(base, EVLOOP_ONCE);
	secs = (double)(now_mono_ms() - t0) / 1000.0;
	qsort(r.lat, r.nlat, sizeof(*r.lat), cmp64);
	printf("case %s %d calls %zu rate %.0f/s p50 %lld us p99 %lld us errors %zu\n", method,
	    conc, r.nlat, (double)r.nlat / secs, r.nlat ? (long long)r.lat[r.nlat / 2] : -1LL,
	    r.nlat ? (long long)r.lat[(size_t)((double)r.nlat * 0.99)] : -1LL, r.errors);
	fflush(stdout);
	free(r.lat);
}

static int ready_flag;

static void
first_list_cb(int code, const char *msg, const Runtime__V1__ListContainersResponse *resp, void *arg)
{
	(void)arg;
	if (code != GRPC_OK) {
		fprintf(stderr, "ListContainers: %s %s\n", grpc_code_name(code), msg);
		exit(1);
	}
	ncontainers = resp->n_containers;
	if (resp->n_containers > 0)
		one_id = xstrdup(resp->containers[0]->id);
	ready_flag = 1;
}

static void
rss(long *rss_kb, long *hwm_kb)
{
	FILE *f = fopen("/proc/self/status", "r");
	char  line[256];

	*rss_kb = *hwm_kb = -1;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			*rss_kb = atol(line + 6);
		else if (strncmp(line, "VmHWM:", 6) == 0)
			*hwm_kb = atol(line + 6);
	}
	fclose(f);
}

int
main(int argc, char **argv)
{
	char                               ep[600];
	int                                seconds = argc > 2 ? atoi(argv[2]) : 3;
	long                               r0, h0, r1, h1;
	Runtime__V1__ListContainersRequest req = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SOCK [SECONDS]\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	log_init(0, 0);
	base = event_base_new();
	snprintf(ep, sizeof(ep), "unix://%s", argv[1]);
	rss(&r0, &h0);
	cri = cri_new(base, ep, NULL, NULL, NULL);
	while (!cri_ready(cri))
		event_base_loop(base, EVLOOP_ONCE);
	cri_list_containers(cri, &req, 30000, first_list_cb, NULL, NULL);
	while (!ready_flag)
		event_base_loop(base, EVLOOP_ONCE);
	rss(&r1, &h1);
	printf("rss_kb %ld hwm_kb %ld start_rss_kb %ld containers %zu\n", r1, h1, r0, ncontainers);
	fflush(stdout);
	if (one_id == NULL) {
		fprintf(stderr, "no containers listed\n");
		return 1;
	}
	run_case("ListContainers", 1, seconds);
	run_case("ListContainers", 16, seconds);
	run_case("ContainerStatus", 1, seconds);
	run_case("ContainerStatus", 16, seconds);
	rss(&r1, &h1);
	printf("rss_kb_end %ld hwm_kb_end %ld\n", r1, h1);
	cri_free(cri);
	free(one_id);
	event_base_free(base);
	return 0;
}
