/* patch.c — two-way strategic-merge patches between JSON documents, with the merge keys of
 * the pod status (CreateTwoWayMergePatch's rules for the lists a kubelet touches). */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "logic/patch.h"
#include "logic/podstatus.h"
#include "core/util.h"

/* Lists merged by key; every other list is atomic (replaced whole). */
static const struct {
	const char *path;
	const char *key;
} merge_keys[] = {
	{ "status.conditions", "type" },
	{ "status.podIPs", "ip" },
	{ "status.hostIPs", "ip" },
};

/* A patch under construction: borrowed values from the new document, objects and lists
 * built here, nulls and directive strings. */
enum pv_kind { PV_BORROW, PV_NULL, PV_STRING, PV_OBJ, PV_ARR };

struct pv {
	enum pv_kind kind;
	yajl_val     borrow;
	char        *str;
	char       **keys; /* PV_OBJ */
	struct pv  **vals; /* PV_OBJ values, PV_ARR items */
	size_t       n;
};

static struct pv *
patch_pv_new(enum pv_kind k)
{
	struct pv *v = xcalloc(1, sizeof(*v));

	v->kind = k;
	return v;
}

static struct pv *
patch_pv_borrow(yajl_val b)
{
	struct pv *v = patch_pv_new(PV_BORROW);

	v->borrow = b;
	return v;
}

static struct pv *
patch_pv_string(const char *s)
{
	struct pv *v = patch_pv_new(PV_STRING);

	v->str = xstrdup(s);
	return v;
}

static void
patch_pv_free(struct pv *v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < v->n; i++) {
		if (v->keys != NULL)
			free(v->keys[i]);
		patch_pv_free(v->vals[i]);
	}
	free(v->keys);
	free(v->vals);
	free(v->str);
	free(v);
}

static void
patch_pv_set(struct pv *o, const char *key, struct pv *val)
{
	o->keys = xreallocarray(o->keys, o->n + 1, sizeof(*o->keys));
	o->vals = xreallocarray(o->vals, o->n + 1, sizeof(*o->vals));
	o->keys[o->n] = xstrdup(key);
	o->vals[o->n] = val;
	o->n++;
}

static void
patch_pv_push(struct pv *a, struct pv *val)
{
	a->vals = xreallocarray(a->vals, a->n + 1, sizeof(*a->vals));
	a->vals[a->n++] = val;
}

/* ---- comparing yajl trees ---- */

static yajl_val
patch_obj_get(yajl_val o, const char *key)
{
	size_t i;

	if (!YAJL_IS_OBJECT(o))
		return NULL;
	for (i = 0; i < o->u.object.len; i++)
		if (strcmp(o->u.object.keys[i], key) == 0)
			return o->u.object.values[i];
	return NULL;
}

static int
patch_val_equal(yajl_val a, yajl_val b)
{
	size_t i;

	if (a == NULL || b == NULL)
		return a == b;
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case yajl_t_string:
		return strcmp(a->u.string, b->u.string) == 0;
	case yajl_t_number:
		return strcmp(a->u.number.r, b->u.number.r) == 0;
	case yajl_t_object:
		if (a->u.object.len != b->u.object.len)
			return 0;
		for (i = 0; i < a->u.object.len; i++) {
			yajl_val bv = patch_obj_get(b, a->u.object.keys[i]);

			if (bv == NULL || !patch_val_equal(a->u.object.values[i], bv))
				return 0;
		}
		return 1;
	case yajl_t_array:
		if (a->u.array.len != b->u.array.len)
			return 0;
		for (i = 0; i < a->u.array.len; i++)
			if (!patch_val_equal(a->u.array.values[i], b->u.array.values[i]))
				return 0;
		return 1;
	default:
		return 1; /* true, false, null */
	}
}

/* ---- the diff ---- */

static struct pv *patch_diff_obj(yajl_val old, yajl_val nw, const char *path);

static const char *
patch_merge_key_for(const char *path)
{
	size_t i;

	for (i = 0; i < nitems(merge_keys); i++)
		if (strcmp(merge_keys[i].path, path) == 0)
			return merge_keys[i].key;
	return NULL;
}

/* The merge key's value of a list element as a string ("" if missing). */
static const char *
patch_elem_key(yajl_val e, const char *key)
{
	yajl_val k = patch_obj_get(e, key);

	return YAJL_IS_STRING(k) ? k->u.string : "";
}

/* list_find, trying *hint first: the place after the previous match. Lists in mostly the
 * same order (a pod can have thousands of conditions) cost no search. */
static yajl_val
patch_list_find_from(yajl_val list, const char *key, const char *want, size_t *hint)
{
	size_t   i = *hint;
	yajl_val e;

	if (i < list->u.array.len && YAJL_IS_OBJECT(e = list->u.array.values[i]) &&
	    strcmp(patch_elem_key(e, key), want) == 0) {
		*hint = i + 1;
		return e;
	}
	for (i = 0; i < list->u.array.len; i++) {
		e = list->u.array.values[i];
		if (YAJL_IS_OBJECT(e) && strcmp(patch_elem_key(e, key), want) == 0) {
			*hint = i + 1;
			return e;
		}
	}
	return NULL;
}

/* A list of objects merged by key: changed/added elements (with their key), deletions as
 * {"$patch":"delete", key}, and the new order when anything changed or moved. */
static void
patch_diff_keyed_list(
    struct pv *out, const char *field, yajl_val old, yajl_val nw, const char *key, const char *path)
{
	struct pv *items = patch_pv_new(PV_ARR);
	size_t     i, ohint = 0, nhint = 0;
	int        same_order = old->u.array.len == nw->u.array.len;

	for (i = 0; i < nw->u.array.len; i++) {
		yajl_val    e = nw->u.array.values[i];
		const char *k = patch_elem_key(e, key);
		yajl_val    oe = patch_list_find_from(old, key, k, &ohint);

		if (same_order && strcmp(patch_elem_key(old->u.array.values[i], key), k) != 0)
			same_order = 0;
		if (oe == NULL) {
			patch_pv_push(items, patch_pv_borrow(e));
		} else {
			struct pv *d = patch_diff_obj(oe, e, path);

			if (d->n > 0) {
				patch_pv_set(d, key, patch_pv_string(k));
				patch_pv_push(items, d);
			} else
				patch_pv_free(d);
		}
	}
	for (i = 0; i < old->u.array.len; i++) {
		yajl_val    oe = old->u.array.values[i];
		const char *k = patch_elem_key(oe, key);

		if (patch_list_find_from(nw, key, k, &nhint) == NULL) {
			struct pv *del = patch_pv_new(PV_OBJ);

			patch_pv_set(del, "$patch", patch_pv_string("delete"));
			patch_pv_set(del, key, patch_pv_string(k));
			patch_pv_push(items, del);
		}
	}
	if (items->n > 0 || !same_order) {
		struct pv *order = patch_pv_new(PV_ARR);
		char      *dk = xsprintf("$setElementOrder/%s", field);

		for (i = 0; i < nw->u.array.len; i++) {
			struct pv *o = patch_pv_new(PV_OBJ);

			patch_pv_set(
			    o, key, patch_pv_string(patch_elem_key(nw->u.array.values[i], key)));
			patch_pv_push(order, o);
		}
		patch_pv_set(out, dk, order);
		free(dk);
	}
	if (items->n > 0)
		patch_pv_set(out, field, items);
	else
		patch_pv_free(items);
}

static int
patch_list_is_keyed(yajl_val v, const char *key)
{
	size_t i;

	for (i = 0; i < v->u.array.len; i++)
		if (!YAJL_IS_OBJECT(v->u.array.values[i]) ||
		    !YAJL_IS_STRING(patch_obj_get(v->u.array.values[i], key)))
			return 0;
	return 1;
}

static struct pv *
patch_diff_obj(yajl_val old, yajl_val nw, const char *path)
{
	struct pv *out = patch_pv_new(PV_OBJ);
	size_t     i;

	for (i = 0; i < nw->u.object.len; i++) {
		const char *k = nw->u.object.keys[i];
		yajl_val    nv = nw->u.object.values[i];
		yajl_val    ov = patch_obj_get(old, k);
		char       *sub;
		const char *mk;

		if (ov == NULL) {
			patch_pv_set(out, k, patch_pv_borrow(nv));
			continue;
		}
		if (patch_val_equal(ov, nv))
			continue;
		sub = path[0] ? xsprintf("%s.%s", path, k) : xstrdup(k);
		if (YAJL_IS_OBJECT(ov) && YAJL_IS_OBJECT(nv)) {
			struct pv *d = patch_diff_obj(ov, nv, sub);

			if (d->n > 0)
				patch_pv_set(out, k, d);
			else
				patch_pv_free(d);
		} else if (YAJL_IS_ARRAY(ov) && YAJL_IS_ARRAY(nv) &&
		    (mk = patch_merge_key_for(sub)) && patch_list_is_keyed(ov, mk) &&
		    patch_list_is_keyed(nv, mk)) {
			patch_diff_keyed_list(out, k, ov, nv, mk, sub);
		} else {
			patch_pv_set(out, k, patch_pv_borrow(nv));
		}
		free(sub);
	}
	for (i = 0; i < old->u.object.len; i++)
		if (patch_obj_get(nw, old->u.object.keys[i]) == NULL)
			patch_pv_set(out, old->u.object.keys[i], patch_pv_new(PV_NULL));
	return out;
}

/* ---- writing, keys sorted like Go's encoding of a map ---- */

static int
patch_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void
patch_gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void
patch_gen_yajl(yajl_gen g, yajl_val v)
{
	size_t       i, j, n;
	const char **keys;

	switch (v->type) {
	case yajl_t_string:
		patch_gen_str(g, v->u.string);
		break;
	case yajl_t_number:
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
		break;
	case yajl_t_true:
		yajl_gen_bool(g, 1);
		break;
	case yajl_t_false:
		yajl_gen_bool(g, 0);
		break;
	case yajl_t_array:
		yajl_gen_array_open(g);
		for (i = 0; i < v->u.array.len; i++)
			patch_gen_yajl(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
		break;
	case yajl_t_object:
		n = v->u.object.len;
		keys = xcalloc(n ? n : 1, sizeof(*keys));
		for (i = 0; i < n; i++)
			keys[i] = v->u.object.keys[i];
		qsort(keys, n, sizeof(*keys), patch_cmp_str);
		yajl_gen_map_open(g);
		for (i = 0; i < n; i++) {
			patch_gen_str(g, keys[i]);
			for (j = 0; j < n; j++)
				if (v->u.object.keys[j] == keys[i])
					patch_gen_yajl(g, v->u.object.values[j]);
		}
		yajl_gen_map_close(g);
		free(keys);
		break;
	default:
		yajl_gen_null(g);
		break;
	}
}

static void
patch_gen_pv(yajl_gen g, const struct pv *v)
{
	size_t *order, i, j;

	switch (v->kind) {
	case PV_BORROW:
		patch_gen_yajl(g, v->borrow);
		break;
	case PV_NULL:
		yajl_gen_null(g);
		break;
	case PV_STRING:
		patch_gen_str(g, v->str);
		break;
	case PV_ARR:
		yajl_gen_array_open(g);
		for (i = 0; i < v->n; i++)
			patch_gen_pv(g, v->vals[i]);
		yajl_gen_array_close(g);
		break;
	case PV_OBJ:
		order = xcalloc(v->n ? v->n : 1, sizeof(*order));
		for (i = 0; i < v->n; i++)
			order[i] = i;
		for (i = 1; i < v->n; i++) /* insertion sort by key */
			for (j = i; j > 0 && strcmp(v->keys[order[j - 1]], v->keys[order[j]]) > 0;
			     j--) {
				size_t t = order[j];

				order[j] = order[j - 1];
				order[j - 1] = t;
			}
		yajl_gen_map_open(g);
		for (i = 0; i < v->n; i++) {
			patch_gen_str(g, v->keys[order[i]]);
			patch_gen_pv(g, v->vals[order[i]]);
		}
		yajl_gen_map_close(g);
		free(order);
		break;
	}
}

static char *
patch_pv_to_string(const struct pv *v)
{
	yajl_gen             g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t               len;
	char                *out = NULL;

	if (g == NULL)
		return NULL;
	patch_gen_pv(g, v);
	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		out = xstrndup((const char *)buf, len);
	yajl_gen_free(g);
	return out;
}

char *
patch_two_way_json(const char *old_json, const char *new_json, const char **err)
{
	yajl_val   o, n;
	struct pv *d;
	char      *out = NULL;

	if (err != NULL)
		*err = NULL;
	o = yajl_tree_parse(old_json, NULL, 0);
	n = yajl_tree_parse(new_json, NULL, 0);
	if (!YAJL_IS_OBJECT(o) || !YAJL_IS_OBJECT(n)) {
		if (err != NULL)
			*err = "patch: both documents must be JSON objects";
		yajl_tree_free(o);
		yajl_tree_free(n);
		return NULL;
	}
	d = patch_diff_obj(o, n, "");
	if (d->n > 0)
		out = patch_pv_to_string(d);
	patch_pv_free(d);
	yajl_tree_free(o);
	yajl_tree_free(n);
	return out;
}

char *
patch_pod_status(const char *uid, const struct pod_status *old, const struct pod_status *nw)
{
	char *os = old != NULL ? podstatus_to_json_string(old) : xstrdup("{}");
	char *ns = podstatus_to_json_string(nw);
	char *od = NULL, *nd = NULL, *p = NULL;
	char *uidjson = NULL;

	if (os == NULL || ns == NULL)
		goto out;
	/* The uid goes in the new document only, so it lands in the patch as a precondition. */
	{
		yajl_gen             g = yajl_gen_alloc(NULL);
		const unsigned char *buf;
		size_t               len;

		patch_gen_str(g, uid != NULL ? uid : "");
		yajl_gen_get_buf(g, &buf, &len);
		uidjson = xstrndup((const char *)buf, len);
		yajl_gen_free(g);
	}
	od = xsprintf("{\"status\":%s}", os);
	nd = xsprintf("{\"metadata\":{\"uid\":%s},\"status\":%s}", uidjson, ns);
	p = patch_two_way_json(od, nd, NULL);
	if (p != NULL) {
		char *only_uid = xsprintf("{\"metadata\":{\"uid\":%s}}", uidjson);

		if (strcmp(p, only_uid) == 0) {
			free(p);
			p = NULL;
		}
		free(only_uid);
	}
out:
	free(os);
	free(ns);
	free(od);
	free(nd);
	free(uidjson);
	return p;
}
