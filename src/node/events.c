/* events.c — the event recorder: aggregation by (object, type, reason, message), a bounded
 * ring of distinct events, and synchronous listeners. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "node/events.h"
#include "core/log.h"
#include "pod/pod.h"
#include "core/util.h"

#define EVENTS_MAX_LISTENERS 16

struct ev_listener {
	int                id;
	events_listener_fn fn;
	void              *arg;
};

struct events {
	struct ev_record  *ring;  /* alloc slots; [head, head + n) in use */
	size_t             cap;   /* the most kept */
	size_t             alloc; /* slots allocated: grows to cap as events come */
	size_t             head;
	size_t             n;
	uint64_t           seq;
	uint64_t           next_id;
	struct ev_listener listeners[EVENTS_MAX_LISTENERS];
	int                next_listener;
};

static int64_t
ev_now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* A record's strings live in one block that starts with kind (never NULL). */
static void
ev_record_clear(struct ev_record *r)
{
	free(r->kind);
	memset(r, 0, sizeof(*r));
}

static void
ev_record_set_strings(
    struct ev_record *r, const struct ev_object *o, const char *reason, const char *msg)
{
	const char *in[] = { o->kind != NULL ? o->kind : "Pod", o->ns, o->name, o->uid,
		o->field_path, reason, msg };
	char      **out[] = { &r->kind, &r->ns, &r->name, &r->uid, &r->field_path, &r->reason,
		     &r->message };
	size_t      len = 0, i, n;
	char       *p;

	for (i = 0; i < nitems(in); i++)
		if (in[i] != NULL)
			len += strlen(in[i]) + 1;
	p = xmalloc(len);
	for (i = 0; i < nitems(in); i++) {
		if (in[i] == NULL) {
			*out[i] = NULL;
			continue;
		}
		n = strlen(in[i]) + 1;
		memcpy(p, in[i], n);
		*out[i] = p;
		p += n;
	}
}

/* Room for one more record: the ring grows (doubling) until it holds cap records. */
static void
ev_grow(struct events *ev)
{
	struct ev_record *ring;
	size_t            alloc, i;

	if (ev->n < ev->alloc || ev->alloc == ev->cap)
		return;
	alloc = ev->alloc == 0 ? 16 : ev->alloc * 2;
	if (alloc > ev->cap)
		alloc = ev->cap;
	ring = xcalloc(alloc, sizeof(*ring));
	for (i = 0; i < ev->n; i++)
		ring[i] = ev->ring[(ev->head + i) % ev->alloc];
	free(ev->ring);
	ev->ring = ring;
	ev->alloc = alloc;
	ev->head = 0;
}

struct events *
events_new(size_t capacity)
{
	struct events *ev;

	if (capacity == 0)
		capacity = EVENTS_DEFAULT_CAPACITY;
	ev = xcalloc(1, sizeof(*ev));
	ev->cap = capacity;
	ev->next_listener = 1;
	return ev;
}

void
events_free(struct events *ev)
{
	size_t i;

	if (ev == NULL)
		return;
	for (i = 0; i < ev->n; i++)
		ev_record_clear(&ev->ring[(ev->head + i) % ev->alloc]);
	free(ev->ring);
	free(ev);
}

static void
ev_notify(struct events *ev, const struct ev_record *r, int is_new)
{
	size_t i;

	for (i = 0; i < nitems(ev->listeners); i++)
		if (ev->listeners[i].fn != NULL)
			ev->listeners[i].fn(r, is_new, ev->listeners[i].arg);
}

/* FNV-1a over the fields that aggregate, each ended by a byte a string cannot hold there
 * (NULL and "" differ): a new event compares one integer per stored record, not strings. */
static uint32_t
ev_key(const struct ev_object *o, enum ev_type type, const char *reason, const char *msg)
{
	const char *f[] = { o->kind, o->ns, o->name, o->uid, o->field_path, reason, msg };
	uint32_t    h = 2166136261u ^ (uint32_t)type;
	size_t      i;

	for (i = 0; i < nitems(f); i++) {
		const unsigned char *c = (const unsigned char *)f[i];

		for (; c != NULL && *c != '\0'; c++)
			h = (h ^ *c) * 16777619u;
		h = (h ^ (f[i] == NULL ? 0xffu : 0xfeu)) * 16777619u;
	}
	return h;
}

static int
ev_matches(const struct ev_record *r, const struct ev_object *o, enum ev_type type,
    const char *reason, const char *msg)
{
	/* The most telling fields first: most records differ by object (UID) or reason. */
	return r->type == type && streq_null(r->uid, o->uid) && streq_null(r->reason, reason) &&
	    streq_null(r->name, o->name) && streq_null(r->ns, o->ns) &&
	    streq_null(r->kind, o->kind) && streq_null(r->field_path, o->field_path) &&
	    streq_null(r->message, msg);
}

static void
ev_record_msg(struct events *ev, const struct ev_object *o, enum ev_type type, const char *reason,
    const char *msg)
{
	struct ev_record *r, tmp;
	size_t            i, idx, last;
	int64_t           now = ev_now_ms();
	uint32_t          key = ev_key(o, type, reason, msg);

	/* Newest first: a repeating event is usually recent. */
	for (i = ev->n; i > 0; i--) {
		idx = (ev->head + i - 1) % ev->alloc;
		r = &ev->ring[idx];
		if (r->key != key || !ev_matches(r, o, type, reason, msg))
			continue;
		r->count++;
		r->last_ts = now;
		r->seq = ++ev->seq;
		/* Keep the ring ordered by last time: move the record to the end. */
		last = (ev->head + ev->n - 1) % ev->alloc;
		if (idx != last) {
			tmp = *r;
			for (; i < ev->n; i++) {
				size_t a = (ev->head + i - 1) % ev->alloc;
				size_t b = (ev->head + i) % ev->alloc;

				ev->ring[a] = ev->ring[b];
			}
			ev->ring[last] = tmp;
			r = &ev->ring[last];
		}
		ev_notify(ev, r, 0);
		return;
	}
	if (ev->n == ev->cap) {
		ev_record_clear(&ev->ring[ev->head]);
		ev->head = (ev->head + 1) % ev->alloc;
		ev->n--;
	}
	ev_grow(ev);
	r = &ev->ring[(ev->head + ev->n) % ev->alloc];
	ev->n++;
	ev_record_set_strings(r, o, reason, msg);
	r->key = key;
	r->type = type;
	r->count = 1;
	r->first_ts = r->last_ts = now;
	r->seq = ++ev->seq;
	r->id = ++ev->next_id;
	log_v(2, "event %s/%s %s %s %s: %s", r->ns ? r->ns : "", r->name ? r->name : "",
	    r->field_path ? r->field_path : "", ev_type_name(type), reason, msg);
	ev_notify(ev, r, 1);
}

static void
ev_vrecord(struct events *ev, const struct ev_object *o, enum ev_type type, const char *reason,
    const char *fmt, va_list ap)
{
	char             msg[EVENTS_MAX_MESSAGE];
	struct ev_object obj = *o;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (obj.kind == NULL)
		obj.kind = "Pod";
	ev_record_msg(ev, &obj, type, reason, msg);
}

void
events_record(struct events *ev, const struct ev_object *o, enum ev_type type, const char *reason,
    const char *fmt, ...)
{
	va_list ap;

	if (ev == NULL)
		return;
	va_start(ap, fmt);
	ev_vrecord(ev, o, type, reason, fmt, ap);
	va_end(ap);
}

const char *
events_field_path(const struct pod *pod, const char *container, char *buf, size_t len)
{
	const struct container *c;
	const char             *list;

	if (len > 0)
		buf[0] = '\0';
	if (pod == NULL || container == NULL || (c = pod_find_container(pod, container)) == NULL)
		return buf;
	switch (c->c_kind) {
	case CK_INIT:
		list = "initContainers";
		break;
	case CK_EPHEMERAL:
		list = "ephemeralContainers";
		break;
	default:
		list = "containers";
		break;
	}
	snprintf(buf, len, "spec.%s{%s}", list, container);
	return buf;
}

void
events_pod(struct events *ev, const struct pod *pod, const char *container, enum ev_type type,
    const char *reason, const char *fmt, ...)
{
	struct ev_object o;
	char             fp[512];
	va_list          ap;

	if (ev == NULL || pod == NULL)
		return;
	memset(&o, 0, sizeof(o));
	o.kind = "Pod";
	o.ns = pod->ns;
	o.name = pod->name;
	o.uid = pod->uid;
	if (container != NULL) {
		events_field_path(pod, container, fp, sizeof(fp));
		if (fp[0] == '\0')
			snprintf(fp, sizeof(fp), "spec.containers{%s}", container);
		o.field_path = fp;
	}
	va_start(ap, fmt);
	ev_vrecord(ev, &o, type, reason, fmt, ap);
	va_end(ap);
}

int
events_listen(struct events *ev, events_listener_fn fn, void *arg)
{
	size_t i;

	for (i = 0; i < nitems(ev->listeners); i++) {
		if (ev->listeners[i].fn == NULL) {
			ev->listeners[i].fn = fn;
			ev->listeners[i].arg = arg;
			ev->listeners[i].id = ev->next_listener++;
			return ev->listeners[i].id;
		}
	}
	fatalx("%s: too many event listeners", __func__);
}

void
events_unlisten(struct events *ev, int id)
{
	size_t i;

	if (ev == NULL)
		return;
	for (i = 0; i < nitems(ev->listeners); i++)
		if (ev->listeners[i].id == id && ev->listeners[i].fn != NULL)
			memset(&ev->listeners[i], 0, sizeof(ev->listeners[i]));
}

void
events_foreach(struct events *ev, void (*cb)(const struct ev_record *, void *), void *arg)
{
	size_t i;

	for (i = 0; i < ev->n; i++)
		cb(&ev->ring[(ev->head + i) % ev->alloc], arg);
}

size_t
events_count(struct events *ev)
{
	return ev->n;
}

const char *
ev_type_name(enum ev_type t)
{
	return t == EV_WARNING ? "Warning" : "Normal";
}
