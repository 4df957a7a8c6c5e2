/* test_pleg.c — the kubelet's PLEG transition table and health threshold; the wire walk
 * the relist uses to hash and decode list answers record by record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cri/cri.h"
#include "node/pleg.h"
#include "core/util.h"

static void
test_transition_table(void **state)
{
	static const struct {
		enum pleg_cstate     old, new;
		size_t               n;
		enum pleg_event_type ev[2];
	} cases[] = {
		{ PLEG_NONEXISTENT, PLEG_NONEXISTENT, 0, { 0, 0 } },
		{ PLEG_RUNNING, PLEG_RUNNING, 0, { 0, 0 } },
		{ PLEG_NONEXISTENT, PLEG_RUNNING, 1, { PLEG_CONTAINER_STARTED, 0 } },
		{ PLEG_UNKNOWN, PLEG_RUNNING, 1, { PLEG_CONTAINER_STARTED, 0 } },
		{ PLEG_EXITED, PLEG_RUNNING, 1, { PLEG_CONTAINER_STARTED, 0 } },
		{ PLEG_RUNNING, PLEG_EXITED, 1, { PLEG_CONTAINER_DIED, 0 } },
		{ PLEG_NONEXISTENT, PLEG_EXITED, 1, { PLEG_CONTAINER_DIED, 0 } },
		{ PLEG_NONEXISTENT, PLEG_UNKNOWN, 1, { PLEG_CONTAINER_CHANGED, 0 } },
		{ PLEG_RUNNING, PLEG_UNKNOWN, 1, { PLEG_CONTAINER_CHANGED, 0 } },
		{ PLEG_EXITED, PLEG_NONEXISTENT, 1, { PLEG_CONTAINER_REMOVED, 0 } },
		{ PLEG_RUNNING, PLEG_NONEXISTENT, 2,
		    { PLEG_CONTAINER_DIED, PLEG_CONTAINER_REMOVED } },
		{ PLEG_UNKNOWN, PLEG_NONEXISTENT, 2,
		    { PLEG_CONTAINER_DIED, PLEG_CONTAINER_REMOVED } },
	};
	enum pleg_event_type out[2];
	size_t               i, j, n;

	(void)state;
	for (i = 0; i < nitems(cases); i++) {
		n = pleg_transition(cases[i].old, cases[i].new, out);
		assert_int_equal(n, cases[i].n);
		for (j = 0; j < n; j++)
			assert_int_equal(out[j], cases[i].ev[j]);
	}
	assert_string_equal(pleg_event_name(PLEG_CONTAINER_DIED), "ContainerDied");
}

static void
test_health(void **state)
{
	struct pleg      *p = pleg_new(NULL, NULL, NULL, NULL, NULL);
	struct pleg_stats st;
	char              why[128];
	int64_t           now = now_mono_ms();

	(void)state;
	assert_int_equal(pleg_healthy(p, now, why, sizeof(why)), 1);
	assert_int_equal(
	    pleg_healthy(p, now + PLEG_RELIST_THRESHOLD_MS + 1000, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "threshold is 180s"));
	pleg_stats(p, &st);
	assert_int_equal(st.relists, 0);
	assert_int_equal(st.in_flight, 0);
	pleg_free(p);
}

struct items {
	char  *ids[8];
	size_t n;
	int    fail_at; /* return -1 at this item (0: never) */
};

static int
item_cb(const uint8_t *b, size_t len, void *arg)
{
	struct items           *it = arg;
	Runtime__V1__Container *c = runtime__v1__container__unpack(NULL, len, b);

	assert_non_null(c);
	assert_true(it->n < 8);
	it->ids[it->n++] = xstrdup(c->id);
	runtime__v1__container__free_unpacked(c, NULL);
	return it->fail_at != 0 && (int)it->n == it->fail_at ? -1 : 0;
}

static void
items_clear(struct items *it)
{
	size_t i;

	for (i = 0; i < it->n; i++)
		free(it->ids[i]);
	memset(it, 0, sizeof(*it));
}

static void
test_wire_items(void **state)
{
	Runtime__V1__ListContainersResponse r = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
	Runtime__V1__Container              c[3], *cp[3];
	Runtime__V1__ContainerMetadata      md = RUNTIME__V1__CONTAINER_METADATA__INIT;
	static const char                  *ids[] = { "aa", "bbbb", "c" };
	uint8_t                             buf[512], bad[600];
	struct items                        it;
	size_t                              len, i, rec0, rec1;
	static const char                   other[] = "\x10\x96\x01" /* field 2, varint 150 */
	                            "\x19"
	                            "12345678" /* field 3, 64-bit */
	                            "\x25"
	                            "1234" /* field 4, 32-bit */
	                            "\x12\x02"
	                            "zz"; /* field 2, 2 bytes */
	static const struct {
		const char *bytes;
		size_t      len;
	} malformed[] = {
		{ "\x0a", 1 }, /* field 1 LEN without a length */
		{ "\x0a\x05"
		  "ab",
		    4 },               /* length past the end */
		{ "\x08", 1 },         /* a varint field without its value */
		{ "\x09\x01\x02", 3 }, /* a 64-bit field cut short */
		{ "\x0b", 1 },         /* start group: not accepted */
		{ "\x0e\x00", 2 },     /* wire type 6 */
		{ "\x02\x00", 2 },     /* field number 0 */
		{ "\x8a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11 }, /* 11-byte tag */
	};

	(void)state;
	memset(&it, 0, sizeof(it));
	md.name = "n";
	for (i = 0; i < 3; i++) {
		runtime__v1__container__init(&c[i]);
		c[i].id = (char *)ids[i];
		c[i].metadata = &md;
		c[i].state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
		cp[i] = &c[i];
	}
	r.n_containers = 3;
	r.containers = cp;
	len = runtime__v1__list_containers_response__get_packed_size(&r);
	assert_true(len < sizeof(buf));
	runtime__v1__list_containers_response__pack(&r, buf);
	assert_int_equal(cri_wire_items(buf, len, 1, item_cb, &it), 0);
	assert_int_equal(it.n, 3);
	for (i = 0; i < 3; i++)
		assert_string_equal(it.ids[i], ids[i]);
	items_clear(&it);
	/* Other fields (any wire type) are skipped; only field 1's records are items. */
	memcpy(bad, other, sizeof(other) - 1);
	memcpy(bad + sizeof(other) - 1, buf, len);
	assert_int_equal(cri_wire_items(bad, len + sizeof(other) - 1, 1, item_cb, &it), 0);
	assert_int_equal(it.n, 3);
	items_clear(&it);
	/* An empty message has no items. */
	assert_int_equal(cri_wire_items(buf, 0, 1, item_cb, &it), 0);
	assert_int_equal(it.n, 0);
	/* The callback stops the walk. */
	it.fail_at = 2;
	assert_int_equal(cri_wire_items(buf, len, 1, item_cb, &it), -1);
	assert_int_equal(it.n, 2);
	items_clear(&it);
	/* Truncated anywhere: an error, never a read past the end. */
	rec0 = 2 + (size_t)buf[1];
	rec1 = rec0 + 2 + (size_t)buf[rec0 + 1];
	for (i = 1; i < len; i++) {
		uint8_t *cut = xmalloc(i);
		int      rc;

		memcpy(cut, buf, i);
		rc = cri_wire_items(cut, i, 2, item_cb, &it); /* field 2: walk, do not decode */
		free(cut);
		/* A cut exactly between records is a valid, shorter message (the records are
		 * short: a one-byte tag and a one-byte length each). */
		assert_int_equal(rc, i == rec0 || i == rec1 ? 0 : -1);
		items_clear(&it);
	}
	for (i = 0; i < nitems(malformed); i++)
		assert_int_equal(cri_wire_items((const uint8_t *)malformed[i].bytes,
		                     malformed[i].len, 1, item_cb, &it),
		    -1);
	assert_int_equal(it.n, 0);
}

static int
wire_str_is(const uint8_t *msg, size_t len, uint32_t field, const char *want)
{
	const uint8_t *v;
	size_t         n;

	return cri_wire_bytes(msg, len, field, &v, &n) == 1 && n == strlen(want) &&
	    memcmp(v, want, n) == 0;
}

/* The fields image GC reads from a ListContainers record without decoding it. */
static void
test_wire_bytes(void **state)
{
	Runtime__V1__Container              c = RUNTIME__V1__CONTAINER__INIT;
	Runtime__V1__ImageSpec              im = RUNTIME__V1__IMAGE_SPEC__INIT;
	Runtime__V1__Container__LabelsEntry l = RUNTIME__V1__CONTAINER__LABELS_ENTRY__INIT,
	                                    *lp = &l;
	uint8_t        buf[512], two[1024];
	const uint8_t *v, *spec;
	size_t         len, n, slen, i;

	(void)state;
	c.id = "cid";
	im.image = "klet.local/busybox:1.35";
	c.image = &im;
	c.image_ref = "sha256:abc";
	c.image_id = "sha256:def";
	c.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
	l.key = "io.kubernetes.pod.uid";
	l.value = "u1";
	c.n_labels = 1;
	c.labels = &lp;
	len = runtime__v1__container__get_packed_size(&c);
	assert_true(len < sizeof(buf));
	runtime__v1__container__pack(&c, buf);
	assert_true(wire_str_is(buf, len, 1, "cid"));
	assert_true(wire_str_is(buf, len, 5, "sha256:abc"));
	assert_true(wire_str_is(buf, len, 10, "sha256:def"));
	assert_int_equal(cri_wire_bytes(buf, len, 4, &spec, &slen), 1);
	assert_true(wire_str_is(spec, slen, 1, "klet.local/busybox:1.35"));
	/* Absent: pod_sandbox_id (2); not length-delimited: state (6, a varint). */
	assert_int_equal(cri_wire_bytes(buf, len, 2, &v, &n), 0);
	assert_int_equal(cri_wire_bytes(buf, len, 6, &v, &n), 0);
	/* Several in one walk: image_ref, image_id, image (nested) and the absent 2. */
	{
		static const uint32_t f[] = { 5, 10, 4, 2 };
		const uint8_t        *vv[4];
		size_t                nn[4];

		assert_int_equal(cri_wire_fields(buf, len, f, 4, vv, nn), 3);
		assert_true(nn[0] == 10 && memcmp(vv[0], "sha256:abc", 10) == 0);
		assert_true(nn[1] == 10 && memcmp(vv[1], "sha256:def", 10) == 0);
		assert_true(vv[2] == spec && nn[2] == slen);
		assert_null(vv[3]);
		assert_int_equal(nn[3], 0);
		assert_int_equal(cri_wire_fields(buf, len - 1, f, 4, vv, nn), -1);
	}
	/* A field written twice: the last one, as protobuf reads it. */
	memcpy(two, buf, len);
	memcpy(two + len, "\x2a\x03xyz", 5); /* field 5, 3 bytes */
	assert_true(wire_str_is(two, len + 5, 5, "xyz"));
	/* Truncated anywhere but between fields: malformed, never a read past the end. */
	for (i = 1; i < len; i++) {
		uint8_t *cut = xmalloc(i);
		int      rc = cri_wire_bytes((memcpy(cut, buf, i), cut), i, 5, &v, &n);

		if (rc != -1)
			assert_true(rc == 0 || (v >= cut && v + n <= cut + i));
		free(cut);
	}
	assert_int_equal(cri_wire_bytes((const uint8_t *)"\x2a\x05"
	                                                 "ab",
	                     4, 5, &v, &n),
	    -1);
}

/* A record's hash is made of its ID and state only (a Go runtime writes its maps in a new
 * order every time, and nothing else of a record changes while its ID lasts); the walk stops
 * past the state in a record in field order, and goes to the end of one that was seen out of
 * order before. */
#define KEYS_CONTAINER (1u << 1 | 1u << 6)
static uint64_t
whash(const uint8_t *b, size_t len, uint64_t seed)
{
	return cri_wire_hash(b, len, seed, KEYS_CONTAINER);
}

static void
test_wire_hash(void **state)
{
	Runtime__V1__Container                   c = RUNTIME__V1__CONTAINER__INIT;
	Runtime__V1__Container__LabelsEntry      l[3], *lp[3];
	Runtime__V1__Container__AnnotationsEntry an[2], *ap[2];
	static const char *keys[] = { "io.kubernetes.pod.uid", "app", "tier" };
	static const char *vals[] = { "u1", "web", "front" };
	uint8_t            a[512], b[512], o[512];
	size_t             la, lb, i, cut;
	uint64_t           ha;

	(void)state;
	for (i = 0; i < 3; i++) {
		runtime__v1__container__labels_entry__init(&l[i]);
		l[i].key = (char *)keys[i];
		l[i].value = (char *)vals[i];
		lp[i] = &l[i];
	}
	for (i = 0; i < 2; i++) {
		runtime__v1__container__annotations_entry__init(&an[i]);
		an[i].key = (char *)keys[i + 1];
		an[i].value = (char *)vals[i];
		ap[i] = &an[i];
	}
	c.id = "c1";
	c.pod_sandbox_id = "s1";
	c.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
	c.created_at = 1764100000000000000LL;
	c.labels = lp;
	c.n_labels = 3;
	c.annotations = ap;
	c.n_annotations = 2;
	c.image_id = "sha256:1";
	la = runtime__v1__container__get_packed_size(&c);
	assert_true(la < sizeof(a));
	runtime__v1__container__pack(&c, a);
	ha = whash(a, la, 7);
	/* Both maps in another order: other bytes, the same hash. */
	lp[0] = &l[2];
	lp[2] = &l[0];
	ap[0] = &an[1];
	ap[1] = &an[0];
	lb = runtime__v1__container__pack(&c, b);
	assert_int_equal(la, lb);
	assert_memory_not_equal(a, b, la);
	assert_true(whash(b, lb, 7) == ha);
	assert_true(whash(a, la, 8) != ha); /* the seed counts */
	/* The state and the ID change it. */
	c.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
	lb = runtime__v1__container__pack(&c, b);
	assert_true(whash(b, lb, 7) != ha);
	c.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED; /* 0: not written at all */
	lb = runtime__v1__container__pack(&c, b);
	assert_true(whash(b, lb, 7) != ha);
	c.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
	c.id = "c2";
	lb = runtime__v1__container__pack(&c, b);
	assert_true(whash(b, lb, 7) != ha);
	c.id = "c1";
	/* Nothing else does: the field after the maps, a map's size. */
	c.image_id = "sha256:2";
	c.n_labels = 2;
	lb = runtime__v1__container__pack(&c, b);
	assert_true(whash(b, lb, 7) == ha);
	c.image_id = "sha256:1";
	c.n_labels = 3;
	/* In field order, nothing past the state is read: the whole record cut one byte into its
	 * second label has the whole record's hash (the walk stops at the first label). */
	{
		Runtime__V1__Container one = c;

		one.n_labels = 1;
		one.n_annotations = 0;
		one.image_id = NULL;
		cut = runtime__v1__container__pack(&one, o);
		lb = runtime__v1__container__pack(&c, b);
		assert_true(cut + 1 < lb);
		assert_memory_equal(o, b, cut);
		assert_true(whash(b, cut + 1, 7) == ha);
		/* Out of field order (the state right after the ID, before the sandbox ID): the
		 * same hash, and the whole record is walked. */
		one = c;
		one.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_CREATED;
		lb = runtime__v1__container__pack(&one, b);
		assert_true(b[0] == (1u << 3 | 2) && b[1] == 2); /* the ID, "c1" */
		memcpy(o, b, 4);
		o[4] = 6u << 3 | 0;
		o[5] = RUNTIME__V1__CONTAINER_STATE__CONTAINER_RUNNING;
		memcpy(o + 6, b + 4, lb - 4);
		lb += 2;
		assert_true(whash(o, lb, 7) == ha);
		o[lb++] = 6u << 3 | 2; /* to its end: a field past the end there is seen */
		o[lb++] = 0x7f;
		assert_true(whash(o, lb, 7) == hash_bytes(o, lb, 7));
	}
	/* No key field in the mask: nothing is hashed but the seed. */
	assert_true(cri_wire_hash(a, la, 7, 0) == cri_wire_hash(b, lb, 7, 0));
	/* Not a message: hashed as bytes, no read past the end. */
	{
		static const uint8_t cut1[] = { 0x0a, 0x05, 'a', 'b' }; /* a length past the end */
		static const uint8_t cut2[] = { 0x32, 0x7f, 'a' };      /* the same, field 6 */

		assert_true(whash(cut1, sizeof(cut1), 7) == hash_bytes(cut1, sizeof(cut1), 7));
		assert_true(whash(cut2, sizeof(cut2), 7) == hash_bytes(cut2, sizeof(cut2), 7));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transition_table),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_wire_items),
		cmocka_unit_test(test_wire_hash),
		cmocka_unit_test(test_wire_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
