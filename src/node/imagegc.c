/* imagegc.c — see imagegc.h. */
#include <sys/statvfs.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/config.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/util.h"
#include "cri/cri.h"
#include "node/events.h"
#include "node/imagegc.h"

#define IGC_LIST_MS   30000       /* the kubelet's image list cache period */
#define IGC_DETECT_MS (5 * 60000) /* the kubelet's detectImages period */
#define IGC_GC_MS     (5 * 60000) /* ImageGCPeriod */

enum igc_kind { IGC_LIST = 0, IGC_DETECT, IGC_GC, IGC_RECLAIM };

/* One image of the last ListImages answer (owned copies). */
struct igc_img {
	char   *id;
	char  **tags, **digests;
	size_t  ntags, ndigests;
	int64_t size;
	int     pinned, in_use;
};

struct igc_waiter {
	void (*done)(int64_t freed, void *arg);
	void *arg;
};

struct imagegc {
	struct imagegc_deps d;
	struct igc_policy   pol;
	char               *node;
	char               *infra;
	struct event       *list_ev, *detect_ev, *gc_ev, *kick_ev;
	int64_t             list_ms, detect_ms, gc_ms;
	/* the pass in flight */
	int                busy;
	enum igc_kind      kind;
	int                want_gc, want_reclaim, want_detect, want_list;
	struct igc_img    *pimgs; /* this pass' list, until the pass ends */
	size_t             npimgs;
	size_t            *plan; /* the age removals (nage) first, then those for space */
	size_t             nplan, nage, iplan;
	int64_t            want, freed;        /* want: bytes for space, after the age removals */
	int64_t            freed_space;        /* by the removals for space */
	int64_t            began_ms;           /* the manager's start (the kubelet's beganGC) */
	struct igc_waiter *waiters, *pwaiters; /* queued / served by this pass */
	size_t             nwaiters, npwaiters;
	/* what is known */
	int                 initialized;
	struct igc_record  *recs;
	size_t              nrecs;
	struct igc_img     *imgs; /* the last complete list (node status) */
	size_t              nimgs;
	struct imagegc_fs   fs;
	struct imagegc_view v;
};

static void ig_start(struct imagegc *);

static void
ig_imgs_free(struct igc_img *im, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		free(im[i].id);
		for (j = 0; j < im[i].ntags; j++)
			free(im[i].tags[j]);
		for (j = 0; j < im[i].ndigests; j++)
			free(im[i].digests[j]);
		free(im[i].tags);
		free(im[i].digests);
	}
	free(im);
}

static char **
ig_strv(char **src, size_t n)
{
	char **v = n > 0 ? xcalloc(n, sizeof(*v)) : NULL;
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = xstrdup(src[i] != NULL ? src[i] : "");
	return v;
}

static void
ig_kick(struct imagegc *ig)
{
	event_active(ig->kick_ev, EV_TIMEOUT, 0);
}

/* ---- the end of a pass ---- */

static void
ig_finish(struct imagegc *ig)
{
	struct igc_waiter *w = ig->pwaiters;
	size_t             i, n = ig->npwaiters;
	int64_t            freed = ig->freed;

	if (ig->pimgs != NULL) { /* a complete list replaces the previous one */
		ig_imgs_free(ig->imgs, ig->nimgs);
		ig->imgs = ig->pimgs;
		ig->nimgs = ig->npimgs;
		ig->pimgs = NULL;
		ig->npimgs = 0;
	}
	free(ig->plan);
	ig->plan = NULL;
	ig->nplan = ig->nage = ig->iplan = 0;
	ig->pwaiters = NULL;
	ig->npwaiters = 0;
	ig->busy = 0;
	if (ig->want_gc || ig->want_reclaim || ig->want_detect || ig->want_list)
		ig_kick(ig);
	if (ig->d.images_changed != NULL)
		ig->d.images_changed(ig->d.arg);
	for (i = 0; i < n; i++)
		w[i].done(freed, w[i].arg);
	free(w);
}

static void
ig_node_event(struct imagegc *ig, const char *reason, const char *fmt, int64_t a, int64_t b)
{
	struct ev_object o = { "Node", "", ig->node, ig->node, NULL };

	events_record(ig->d.events, &o, EV_WARNING, reason, fmt, a, b);
}

/* ---- removals ---- */

static void ig_remove_next(struct imagegc *);

static void
ig_removed(int code, const char *msg, const Runtime__V1__RemoveImageResponse *r, void *arg)
{
	struct imagegc          *ig = arg;
	const struct igc_record *rec = &ig->recs[ig->plan[ig->iplan]];
	int                      age = ig->iplan < ig->nage;

	(void)r;
	if (code != GRPC_OK && code != GRPC_NOT_FOUND) {
		log_warnx("image GC: RemoveImage %s: %s", rec->id, msg);
		ig->v.failures++;
	} else {
		log_info("image GC: removed image %s (%" PRId64 " bytes, %s)", rec->id, rec->size,
		    age                      ? "unused for longer than the maximum age"
		        : ig->kind == IGC_GC ? "disk usage over the high threshold"
		                             : "reclaim for the eviction manager");
		ig->freed += rec->size;
		ig->v.freed_bytes += rec->size;
		if (age)
			ig->v.removed_age++;
		else if (ig->kind == IGC_GC) {
			ig->v.removed_space++;
			ig->freed_space += rec->size;
		} else
			ig->v.removed_reclaim++;
	}
	ig->iplan++;
	ig_remove_next(ig);
}

static void
ig_remove_next(struct imagegc *ig)
{
	Runtime__V1__RemoveImageRequest rq = RUNTIME__V1__REMOVE_IMAGE_REQUEST__INIT;
	Runtime__V1__ImageSpec          spec = RUNTIME__V1__IMAGE_SPEC__INIT;

	if (ig->iplan < ig->nplan &&
	    (ig->iplan < ig->nage || ig->kind == IGC_RECLAIM || ig->freed_space < ig->want)) {
		spec.image = ig->recs[ig->plan[ig->iplan]].id;
		rq.image = &spec;
		cri_remove_image(ig->d.cri, &rq, 0, ig_removed, ig, ig);
		return;
	}
	if (ig->kind == IGC_GC && ig->want > 0 && ig->freed_space < ig->want) {
		/* The kubelet's message and event. */
		log_warnx("image GC: Failed to garbage collect required amount of images. "
		          "Attempted to free %" PRId64 " bytes, but only found %" PRId64
		          " bytes eligible to free.",
		    ig->want, ig->freed_space);
		ig_node_event(ig, "FreeDiskSpaceFailed",
		    "Failed to garbage collect required amount of images. Attempted to free "
		    "%" PRId64 " bytes, but only found %" PRId64 " bytes eligible to free.",
		    ig->want, ig->freed_space);
		snprintf(ig->v.last_result, sizeof(ig->v.last_result),
		    "wanted %" PRId64 " bytes, freed %" PRId64, ig->want, ig->freed_space);
	} else if (ig->kind == IGC_GC) {
		snprintf(ig->v.last_result, sizeof(ig->v.last_result),
		    "freed %" PRId64 " bytes (%zu images, %zu for their age)", ig->freed, ig->iplan,
		    ig->nage);
	}
	ig_finish(ig);
}

/* ---- detection ---- */

static int
ig_eq(const char *s, const uint8_t *name, size_t n)
{
	return strncmp(s, (const char *)name, n) == 0 && s[n] == '\0';
}

/* Whether name (n bytes, not terminated) is the image's ID, one of its tags or digests. */
static int
ig_names_n(const struct igc_img *im, const uint8_t *name, size_t n)
{
	size_t i;

	if (name == NULL || n == 0)
		return 0;
	if (ig_eq(im->id, name, n))
		return 1;
	for (i = 0; i < im->ntags; i++)
		if (ig_eq(im->tags[i], name, n))
			return 1;
	for (i = 0; i < im->ndigests; i++)
		if (ig_eq(im->digests[i], name, n))
			return 1;
	return 0;
}

static int
ig_names(const struct igc_img *im, const char *name)
{
	return name != NULL && ig_names_n(im, (const uint8_t *)name, strlen(name));
}

/* igc_plan over the records not already chosen for their age (plan[0..nage)); indices into
 * recs written to out. */
static size_t
ig_plan_space(struct imagegc *ig, int64_t now, size_t *out)
{
	struct igc_record *rest;
	size_t            *map, *o, i, j, m = 0, k;

	if (ig->nage == 0)
		return igc_plan(&ig->pol, ig->recs, ig->nrecs, now, ig->want, out, NULL);
	rest = xcalloc(ig->nrecs + 1, sizeof(*rest)); /* shallow: ids borrowed */
	map = xcalloc(ig->nrecs + 1, sizeof(*map));
	o = xcalloc(ig->nrecs + 1, sizeof(*o));
	for (i = 0; i < ig->nrecs; i++) {
		for (j = 0; j < ig->nage && ig->plan[j] != i; j++)
			;
		if (j < ig->nage)
			continue;
		rest[m] = ig->recs[i];
		map[m++] = i;
	}
	k = igc_plan(&ig->pol, rest, m, now, ig->want, o, NULL);
	for (i = 0; i < k; i++)
		out[i] = map[o[i]];
	free(o);
	free(map);
	free(rest);
	return k;
}

static void
ig_decide(struct imagegc *ig)
{
	struct igc_image *in;
	int64_t           now = now_mono_ms();
	size_t            i;
	int               usage = -1;

	if (ig->kind == IGC_LIST) {
		/* The image list and the file system only: what is in use, and so the
		 * records, waits for the next detection (the kubelet's imageCache). */
		if (ig->fs.valid) {
			(void)igc_amount_to_free(
			    &ig->pol, ig->fs.capacity, ig->fs.available, &usage);
			ig->v.usage_pct = usage;
		}
		log_v(3, "image GC: list pass: %zu images, image fs %s", ig->npimgs,
		    ig->fs.valid ? ig->fs.mountpoint : "unknown");
		ig_finish(ig);
		return;
	}
	in = ig->npimgs > 0 ? xcalloc(ig->npimgs, sizeof(*in)) : NULL;
	ig->v.in_use = ig->v.pinned = 0;
	for (i = 0; i < ig->npimgs; i++) {
		in[i].id = ig->pimgs[i].id;
		in[i].size = ig->pimgs[i].size;
		in[i].pinned = ig->pimgs[i].pinned;
		in[i].in_use = ig->pimgs[i].in_use;
		ig->v.in_use += in[i].in_use != 0;
		ig->v.pinned += in[i].pinned != 0;
	}
	igc_detect(&ig->recs, &ig->nrecs, in, ig->npimgs, now, !ig->initialized);
	free(in);
	ig->initialized = 1;
	ig->v.detections++;
	ig->v.images = ig->nrecs;
	log_v(3, "image GC: %s pass: %zu images (%zu in use, %zu pinned), image fs %s",
	    ig->kind == IGC_GC            ? "collection"
	        : ig->kind == IGC_RECLAIM ? "reclaim"
	                                  : "detection",
	    ig->nrecs, ig->v.in_use, ig->v.pinned, ig->fs.valid ? ig->fs.mountpoint : "unknown");
	ig->want = 0;
	if (ig->fs.valid) {
		ig->want = igc_amount_to_free(&ig->pol, ig->fs.capacity, ig->fs.available, &usage);
		ig->v.usage_pct = usage;
	}
	if (ig->kind == IGC_RECLAIM)
		ig->want = INT64_MAX;
	if (ig->kind == IGC_DETECT) {
		ig_finish(ig);
		return;
	}
	ig->plan = xcalloc(ig->nrecs + 1, sizeof(*ig->plan));
	ig->iplan = 0;
	ig->freed = ig->freed_space = 0;
	/* The kubelet's GarbageCollect: images unused for longer than the maximum age first
	 * (freeOldImages), then, over the high threshold, the space still wanted. */
	ig->nage = ig->kind == IGC_GC
	    ? igc_plan_age(&ig->pol, ig->recs, ig->nrecs, now, ig->began_ms, ig->plan)
	    : 0;
	for (i = 0; i < ig->nage && ig->want > 0 && ig->want != INT64_MAX; i++)
		ig->want -= ig->recs[ig->plan[i]].size;
	if (ig->kind == IGC_GC) {
		ig->v.gc_runs++;
		ig->v.last_gc_ms = now_wall_ms();
		if (ig->nage > 0)
			log_info("image GC: %zu images unused for longer than the maximum age "
			         "(%" PRId64 " s)",
			    ig->nage, ig->pol.max_age_ms / 1000);
	}
	if (ig->want <= 0 && ig->nage == 0) {
		if (ig->kind == IGC_GC)
			snprintf(ig->v.last_result, sizeof(ig->v.last_result),
			    ig->fs.valid ? "usage %d%% below %d%%: nothing to do"
			                 : "image file system unknown%.0d%.0d",
			    usage, ig->pol.high);
		ig_finish(ig);
		return;
	}
	if (ig->kind == IGC_GC && ig->want > 0)
		log_info("image GC: Disk usage on image filesystem is over the high threshold, "
		         "trying to free bytes down to the low threshold (usage %d%%, high "
		         "threshold %d%%, amount to free %" PRId64 ", low threshold %d%%)",
		    usage, ig->pol.high, ig->want, ig->pol.low);
	if (ig->want > 0)
		ig->nplan = ig->nage + ig_plan_space(ig, now, ig->plan + ig->nage);
	else
		ig->nplan = ig->nage;
	ig_remove_next(ig);
}

static void
ig_fs_cb(int code, const char *msg, const Runtime__V1__ImageFsInfoResponse *r, void *arg)
{
	struct imagegc *ig = arg;
	struct statvfs  sv;

	if (code != GRPC_OK || r->n_image_filesystems == 0 || r->image_filesystems[0] == NULL) {
		log_v(2, "image GC: ImageFsInfo: %s",
		    code != GRPC_OK ? msg : "no image file system reported");
	} else {
		const Runtime__V1__FilesystemUsage *u = r->image_filesystems[0];
		const char                         *mp =
                    u->fs_id != NULL && u->fs_id->mountpoint != NULL ? u->fs_id->mountpoint : "";

		memset(&ig->fs, 0, sizeof(ig->fs));
		snprintf(ig->fs.mountpoint, sizeof(ig->fs.mountpoint), "%s", mp);
		ig->fs.used = u->used_bytes != NULL ? (int64_t)u->used_bytes->value : 0;
		if (*mp != '\0' && statvfs(mp, &sv) == 0 && sv.f_blocks > 0) {
			ig->fs.valid = 1;
			ig->fs.capacity = (int64_t)sv.f_blocks * (int64_t)sv.f_frsize;
			ig->fs.available = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
			ig->fs.inodes = (int64_t)sv.f_files;
			ig->fs.inodes_free = (int64_t)sv.f_favail;
		} else {
			log_v(2, "image GC: image file system %s cannot be read", mp);
		}
	}
	ig->v.fs = ig->fs;
	ig_decide(ig);
}

/* The images a container names (Container: image 4 { image 1 }, image_ref 5, image_id 10)
 * are in use. Read from the record's bytes: a pass looks at every container of the node,
 * and decoding them all (labels and annotations included) cost about 10 000 instructions
 * a container, every 30 s. */
static int
ig_container_item(const uint8_t *rec, size_t len, void *arg)
{
	static const uint32_t fields[] = { 5, 10, 4 }; /* image_ref, image_id, image */
	struct imagegc       *ig = arg;
	const uint8_t        *v[3];
	size_t                n[3], i, j;

	if (cri_wire_fields(rec, len, fields, 3, v, n) == -1)
		return -1;
	if (v[2] != NULL) { /* image is an ImageSpec: its image (1) */
		const uint8_t *spec = v[2];

		if (cri_wire_bytes(spec, n[2], 1, &v[2], &n[2]) == -1)
			return -1;
	}
	for (j = 0; j < ig->npimgs; j++)
		for (i = 0; i < 3 && !ig->pimgs[j].in_use; i++)
			if (n[i] > 0 && ig_names_n(&ig->pimgs[j], v[i], n[i]))
				ig->pimgs[j].in_use = 1;
	return 0;
}

static void
ig_containers_cb(int code, const char *msg, const uint8_t *raw, size_t len, void *arg)
{
	struct imagegc                 *ig = arg;
	Runtime__V1__ImageFsInfoRequest rq = RUNTIME__V1__IMAGE_FS_INFO_REQUEST__INIT;

	if (code == GRPC_OK && cri_wire_items(raw, len, 1, ig_container_item, ig) == -1) {
		code = GRPC_INTERNAL;
		msg = "undecodable answer";
	}
	if (code != GRPC_OK) {
		/* Without the containers nothing is known to be unused: no removal this pass. */
		log_warnx("image GC: ListContainers: %s", msg);
		ig->v.failures++;
		ig_imgs_free(ig->pimgs, ig->npimgs);
		ig->pimgs = NULL;
		ig->npimgs = 0;
		ig_finish(ig);
		return;
	}
	cri_image_fs_info(ig->d.cri, &rq, 0, ig_fs_cb, ig, ig);
}

static void
ig_images_cb(int code, const char *msg, const Runtime__V1__ListImagesResponse *r, void *arg)
{
	struct imagegc                    *ig = arg;
	Runtime__V1__ListContainersRequest rq = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
	size_t                             i;

	if (code != GRPC_OK) {
		log_warnx("image GC: ListImages: %s", msg);
		ig->v.failures++;
		ig_finish(ig);
		return;
	}
	ig->pimgs = r->n_images > 0 ? xcalloc(r->n_images, sizeof(*ig->pimgs)) : NULL;
	ig->npimgs = 0;
	for (i = 0; i < r->n_images; i++) {
		const Runtime__V1__Image *im = r->images[i];
		struct igc_img           *x;

		if (im == NULL || im->id == NULL || *im->id == '\0')
			continue;
		x = &ig->pimgs[ig->npimgs++];
		x->id = xstrdup(im->id);
		x->tags = ig_strv(im->repo_tags, im->n_repo_tags);
		x->ntags = im->n_repo_tags;
		x->digests = ig_strv(im->repo_digests, im->n_repo_digests);
		x->ndigests = im->n_repo_digests;
		x->size = (int64_t)im->size;
		x->pinned = im->pinned || ig_names(x, ig->infra);
	}
	if (ig->kind == IGC_LIST) {
		Runtime__V1__ImageFsInfoRequest fq = RUNTIME__V1__IMAGE_FS_INFO_REQUEST__INIT;

		cri_image_fs_info(ig->d.cri, &fq, 0, ig_fs_cb, ig, ig);
		return;
	}
	cri_list_containers_raw(ig->d.cri, &rq, 0, ig_containers_cb, ig, ig);
}

static void
ig_start(struct imagegc *ig)
{
	Runtime__V1__ListImagesRequest rq = RUNTIME__V1__LIST_IMAGES_REQUEST__INIT;

	if (ig->busy || !cri_ready(ig->d.cri))
		return;
	if (ig->want_reclaim) {
		ig->kind = IGC_RECLAIM;
		ig->pwaiters = ig->waiters;
		ig->npwaiters = ig->nwaiters;
		ig->waiters = NULL;
		ig->nwaiters = 0;
		ig->want_reclaim = 0;
	} else if (ig->want_gc) {
		ig->kind = IGC_GC;
		ig->want_gc = 0;
	} else if (ig->want_detect) {
		ig->kind = IGC_DETECT;
	} else if (ig->want_list) {
		ig->kind = IGC_LIST;
	} else {
		return;
	}
	ig->want_detect = ig->want_list = 0; /* every pass lists, all but IGC_LIST detect */
	ig->busy = 1;
	ig->freed = 0;
	cri_list_images(ig->d.cri, &rq, 0, ig_images_cb, ig, ig);
}

static void
ig_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ig_start(arg);
}

/* The periods' timers share instants (every 5 min all three are due): each only says what
 * is wanted, and the kick, after them in the same turn, starts one pass for all. */
static void
ig_list_cb(evutil_socket_t fd, short what, void *arg)
{
	struct imagegc *ig = arg;

	(void)fd;
	(void)what;
	loop_grid_add(ig->list_ev, (unsigned)ig->list_ms);
	ig->want_list = 1;
	ig_kick(ig);
}

static void
ig_detect_cb(evutil_socket_t fd, short what, void *arg)
{
	struct imagegc *ig = arg;

	(void)fd;
	(void)what;
	loop_grid_add(ig->detect_ev, (unsigned)ig->detect_ms);
	ig->want_detect = 1;
	ig_kick(ig);
}

static void
ig_gc_cb(evutil_socket_t fd, short what, void *arg)
{
	struct imagegc *ig = arg;

	(void)fd;
	(void)what;
	loop_grid_add(ig->gc_ev, (unsigned)ig->gc_ms);
	ig->want_gc = 1;
	ig_kick(ig);
}

struct imagegc *
imagegc_new(const struct imagegc_deps *d)
{
	struct imagegc *ig;
	const char     *env = getenv("KLET_IMAGE_GC_PERIOD_MS");
	const char     *lenv = getenv("KLET_IMAGE_LIST_PERIOD_MS");

	if (d->cfg->image_gc_high < 0 || d->cfg->image_gc_high > 100 || d->cfg->image_gc_low < 0 ||
	    d->cfg->image_gc_low > d->cfg->image_gc_high) {
		log_error("image GC: invalid thresholds %d / %d", d->cfg->image_gc_high,
		    d->cfg->image_gc_low);
		return NULL;
	}
	ig = xcalloc(1, sizeof(*ig));
	ig->d = *d;
	ig->pol.high = d->cfg->image_gc_high;
	ig->pol.low = d->cfg->image_gc_low;
	ig->pol.min_age_ms = d->cfg->image_gc_min_age_ms;
	ig->pol.max_age_ms = d->cfg->image_gc_max_age_ms;
	ig->began_ms = now_mono_ms();
	ig->node = xstrdup(d->cfg->node_name != NULL ? d->cfg->node_name : "");
	ig->infra = xstrdup(d->cfg->pod_infra_image != NULL ? d->cfg->pod_infra_image : "");
	ig->list_ms = IGC_LIST_MS;
	ig->detect_ms = IGC_DETECT_MS;
	ig->gc_ms = IGC_GC_MS;
	if (env != NULL && atoi(env) >= 100)
		ig->list_ms = ig->detect_ms = ig->gc_ms = atoi(env);
	if (lenv != NULL && atoi(lenv) >= 100)
		ig->list_ms = atoi(lenv);
	ig->v.policy = ig->pol;
	ig->v.usage_pct = -1;
	ig->kick_ev = event_new(d->base, -1, 0, ig_kick_cb, ig);
	/* Each re-armed when it fires, at the loop's shared instants (core/loop.h). */
	ig->list_ev = evtimer_new(d->base, ig_list_cb, ig);
	ig->detect_ev = evtimer_new(d->base, ig_detect_cb, ig);
	ig->gc_ev = evtimer_new(d->base, ig_gc_cb, ig);
	loop_grid_add(ig->list_ev, (unsigned)ig->list_ms);
	loop_grid_add(ig->detect_ev, (unsigned)ig->detect_ms);
	if (ig->pol.high < 100 || ig->pol.max_age_ms > 0) {
		loop_grid_add(ig->gc_ev, (unsigned)ig->gc_ms);
		ig->want_gc = 1; /* a first GC now, as the kubelet's wait.Until */
	} else {
		log_info("image GC: --image-gc-high-threshold is 100 and --image-maximum-gc-age "
		         "0: image GC disabled");
		ig->want_detect = 1;
	}
	ig_kick(ig);
	return ig;
}

void
imagegc_runtime_ready(struct imagegc *ig)
{
	if (ig != NULL)
		ig_kick(ig); /* ig_start: nothing while a pass runs or when none is due */
}

void
imagegc_free(struct imagegc *ig)
{
	if (ig == NULL)
		return;
	cri_cancel_owner(ig->d.cri, ig);
	event_free(ig->kick_ev);
	event_free(ig->list_ev);
	event_free(ig->detect_ev);
	event_free(ig->gc_ev);
	ig_imgs_free(ig->imgs, ig->nimgs);
	ig_imgs_free(ig->pimgs, ig->npimgs);
	igc_records_free(ig->recs, ig->nrecs);
	free(ig->pwaiters); /* their callbacks never run: their owners are going away too */
	free(ig->waiters);
	free(ig->plan);
	free(ig->node);
	free(ig->infra);
	free(ig);
}

int
imagegc_fs(const struct imagegc *ig, struct imagegc_fs *out)
{
	struct statvfs sv;

	if (ig == NULL || !ig->fs.valid)
		return -1;
	*out = ig->fs;
	/* Fresh figures of the known mount point: the eviction manager decides on them right
	 * after a reclaim (the kubelet asks its summary provider for updated stats). */
	if (statvfs(out->mountpoint, &sv) == 0 && sv.f_blocks > 0) {
		out->capacity = (int64_t)sv.f_blocks * (int64_t)sv.f_frsize;
		out->available = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
		out->inodes = (int64_t)sv.f_files;
		out->inodes_free = (int64_t)sv.f_favail;
	}
	return 0;
}

size_t
imagegc_node_images(const struct imagegc *ig, struct igc_node_image *out)
{
	struct igc_listed *l;
	size_t             i, n;

	if (ig == NULL || ig->nimgs == 0)
		return 0;
	l = xcalloc(ig->nimgs, sizeof(*l));
	for (i = 0; i < ig->nimgs; i++) {
		l[i].tags = (const char *const *)ig->imgs[i].tags;
		l[i].ntags = ig->imgs[i].ntags;
		l[i].digests = (const char *const *)ig->imgs[i].digests;
		l[i].ndigests = ig->imgs[i].ndigests;
		l[i].size = ig->imgs[i].size;
	}
	n = igc_node_images(l, ig->nimgs, out);
	free(l);
	return n;
}

void
imagegc_free_unused(struct imagegc *ig, void (*done)(int64_t freed, void *arg), void *arg)
{
	if (done != NULL) {
		ig->waiters = xreallocarray(ig->waiters, ig->nwaiters + 1, sizeof(*ig->waiters));
		ig->waiters[ig->nwaiters].done = done;
		ig->waiters[ig->nwaiters++].arg = arg;
	}
	ig->want_reclaim = 1;
	ig_kick(ig);
}

void
imagegc_view(const struct imagegc *ig, struct imagegc_view *v)
{
	*v = ig->v;
}
