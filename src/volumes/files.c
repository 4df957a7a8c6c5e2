/* files.c — the pure parts of volumes.h: ConfigMap / Secret documents, volume
 * payloads, the atomic writer and the downward API's file contents. */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/json.h"
#include "client/kubeconfig.h"
#include "core/log.h"
#include "pod/pod.h"
#include "core/util.h"
#include "volumes/volumes.h"

#define VOL_MAX_PATH 4096

static const char *
vol_kind_word(enum vobj_kind k)
{
	return k == VOBJ_SECRET ? "secret" : "configmap";
}

/* ---- objects ---- */

void
vobj_clear(struct vobj *o)
{
	size_t i;

	for (i = 0; i < o->nitems; i++) {
		free(o->items[i].key);
		free(o->items[i].val);
	}
	free(o->items);
	free(o->rv);
	o->items = NULL;
	o->nitems = 0;
	o->rv = NULL;
}

const struct vobj_item *
vobj_find(const struct vobj *o, const char *key)
{
	size_t i;

	if (o == NULL || key == NULL)
		return NULL;
	for (i = 0; i < o->nitems; i++)
		if (strcmp(o->items[i].key, key) == 0)
			return &o->items[i];
	return NULL;
}

static void
vobj_add(struct vobj *o, const char *key, char *val, size_t len, int binary)
{
	o->items = xreallocarray(o->items, o->nitems + 1, sizeof(*o->items));
	o->items[o->nitems].key = xstrdup(key);
	o->items[o->nitems].val = val;
	o->items[o->nitems].len = len;
	o->items[o->nitems].binary = binary;
	o->nitems++;
}

static int
vobj_parse_map(struct vobj *o, const struct json *m, const char *field, int b64, int binary,
    char *err, size_t errlen)
{
	const struct json *x;
	const char        *s;
	char              *val;
	size_t             i, len;

	if (m == NULL || json_type(m) == JSON_NULL)
		return 0;
	if (json_type(m) != JSON_OBJECT) {
		snprintf(err, errlen, "%s: not an object", field);
		return -1;
	}
	for (i = 0; i < json_len(m); i++) {
		x = json_index(m, i);
		if ((s = json_str(x)) == NULL) {
			snprintf(err, errlen, "%s.%s: not a string", field, json_key(m, i));
			return -1;
		}
		if (b64) {
			if ((val = kubeconfig_base64_decode(s, json_str_len(x), &len)) == NULL) {
				snprintf(
				    err, errlen, "%s.%s: invalid base64", field, json_key(m, i));
				return -1;
			}
		} else {
			len = json_str_len(x);
			val = xmalloc(len + 1);
			memcpy(val, s, len);
			val[len] = '\0';
		}
		vobj_add(o, json_key(m, i), val, len, binary);
	}
	return 0;
}

int
vobj_parse(
    enum vobj_kind kind, const char *json, size_t len, struct vobj *o, char *err, size_t errlen)
{
	struct json_doc   *doc;
	const struct json *root;
	const char        *rv;
	char               e[256];
	int                rc;

	vobj_clear(o);
	o->kind = kind;
	if ((doc = json_parse(json, len, NULL, e, sizeof(e))) == NULL) {
		snprintf(err, errlen, "%s: %s", vol_kind_word(kind), e);
		return -1;
	}
	root = json_root(doc);
	if (json_type(root) != JSON_OBJECT) {
		snprintf(err, errlen, "%s: not an object", vol_kind_word(kind));
		json_free(doc);
		return -1;
	}
	rv = json_str(json_get(json_get(root, "metadata"), "resourceVersion"));
	o->rv = xstrdup(rv != NULL ? rv : "");
	o->immutable = 0;
	(void)json_bool(json_get(root, "immutable"), &o->immutable);
	if (kind == VOBJ_SECRET)
		rc = vobj_parse_map(o, json_get(root, "data"), "data", 1, 0, err, errlen);
	else
		rc = vobj_parse_map(o, json_get(root, "data"), "data", 0, 0, err, errlen) == -1 ||
		        vobj_parse_map(
		            o, json_get(root, "binaryData"), "binaryData", 1, 1, err, errlen) == -1
		    ? -1
		    : 0;
	json_free(doc);
	if (rc == -1)
		vobj_clear(o);
	return rc;
}

int
vobj_same(const struct vobj *a, const struct vobj *b)
{
	const struct vobj_item *x;
	size_t                  i;

	if (a->nitems != b->nitems)
		return 0;
	for (i = 0; i < a->nitems; i++) {
		x = vobj_find(b, a->items[i].key);
		if (x == NULL || x->len != a->items[i].len || x->binary != a->items[i].binary ||
		    memcmp(x->val, a->items[i].val, x->len) != 0)
			return 0;
	}
	return 1;
}

/* ---- payloads ---- */

void
vol_payload_clear(struct vol_payload *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->files[i].path);
		free(p->files[i].data);
	}
	free(p->files);
	p->files = NULL;
	p->n = 0;
}

void
vol_payload_add(struct vol_payload *p, const char *path, const char *data, size_t len, int32_t mode)
{
	struct vol_file *f;

	p->files = xreallocarray(p->files, p->n + 1, sizeof(*p->files));
	f = &p->files[p->n++];
	f->path = xstrdup(path);
	f->data = xmalloc(len + 1);
	memcpy(f->data, data, len);
	f->data[len] = '\0';
	f->len = len;
	f->mode = mode;
}

int
vol_payload_make(const struct volume *vol, const struct vobj *obj, struct vol_payload *out,
    char *err, size_t errlen)
{
	const struct vobj_item *it;
	int32_t                 dmode = vol->v_default_mode >= 0 ? vol->v_default_mode : 0644;
	size_t                  i;

	if (obj == NULL)
		return 0; /* optional and missing: an empty volume */
	if (vol->v_nitems == 0) {
		for (i = 0; i < obj->nitems; i++) {
			/* Every key is a file name: one component, not the atomic writer's
			 * reserved "..NAME" (the API's key format is stricter still). */
			if (!path_component_ok(obj->items[i].key) ||
			    strncmp(obj->items[i].key, "..", 2) == 0) {
				snprintf(err, errlen,
				    "%s %s/%s: key \"%.64s\" is not a valid file name",
				    vol_kind_word(obj->kind), obj->ns != NULL ? obj->ns : "",
				    obj->name != NULL ? obj->name : "", obj->items[i].key);
				vol_payload_clear(out);
				return -1;
			}
			vol_payload_add(
			    out, obj->items[i].key, obj->items[i].val, obj->items[i].len, dmode);
		}
		return 0;
	}
	for (i = 0; i < vol->v_nitems; i++) {
		const struct key_to_path *kp = &vol->v_items[i];

		if ((it = vobj_find(obj, kp->key)) == NULL) {
			if (vol->v_optional)
				continue;
			if (obj->kind == VOBJ_SECRET)
				snprintf(err, errlen, "references non-existent secret key: %s",
				    kp->key != NULL ? kp->key : "");
			else
				snprintf(err, errlen,
				    "configmap references non-existent config key: %s",
				    kp->key != NULL ? kp->key : "");
			vol_payload_clear(out);
			return -1;
		}
		vol_payload_add(out, kp->path != NULL ? kp->path : kp->key, it->val, it->len,
		    kp->mode >= 0 ? kp->mode : dmode);
	}
	return 0;
}

/* ---- the atomic writer ---- */

static int
vol_path_ok(const char *p)
{
	const char *s;
	size_t      n;

	if (p == NULL || p[0] == '\0' || p[0] == '/' || strlen(p) >= VOL_MAX_PATH ||
	    strncmp(p, "..", 2) == 0)
		return 0;
	for (s = p; *s != '\0'; s += n + (s[n] == '/')) {
		n = strcspn(s, "/");
		if (n == 0 || (n == 2 && strncmp(s, "..", 2) == 0) || (n == 1 && s[0] == '.'))
			return 0;
	}
	return 1;
}

/* rm -rf of a directory we wrote (never follows symlinks). */
static void
vol_rm_tree(const char *path)
{
	DIR           *d;
	struct dirent *de;
	struct stat    st;
	char          *sub;

	if (lstat(path, &st) == -1)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	if ((d = opendir(path)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			sub = xsprintf("%s/%s", path, de->d_name);
			vol_rm_tree(sub);
			free(sub);
		}
		closedir(d);
	}
	rmdir(path);
}

static size_t
vol_count_files(const char *path)
{
	DIR           *d;
	struct dirent *de;
	struct stat    st;
	char          *sub;
	size_t         n = 0;

	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sub = xsprintf("%s/%s", path, de->d_name);
		if (lstat(sub, &st) == 0)
			n += S_ISDIR(st.st_mode) ? vol_count_files(sub) : 1;
		free(sub);
	}
	closedir(d);
	return n;
}

/* A file's mode on disk: with a pod fsGroup, group-readable (the kubelet's
 * SetVolumeOwnership for a read-only volume). */
static mode_t
vol_eff_mode(const struct vol_payload *pl, const struct vol_file *f)
{
	return (mode_t)(f->mode & 0777) | (pl->has_gid ? 0440 : 0);
}

/* With a pod fsGroup: everything under path gets the group; directories also setgid and
 * group-searchable (symlinks keep their mode). */
static void
vol_own_tree(const char *path, int64_t gid)
{
	DIR           *d;
	struct dirent *de;
	struct stat    st;
	char          *sub;

	if (lstat(path, &st) == -1)
		return;
	if (lchown(path, (uid_t)-1, (gid_t)gid) == -1)
		log_warn("%s: chown %s", __func__, path);
	if (!S_ISDIR(st.st_mode))
		return;
	chmod(path, (st.st_mode & 07777) | 02550);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		sub = xsprintf("%s/%s", path, de->d_name);
		vol_own_tree(sub, gid);
		free(sub);
	}
	closedir(d);
}

/* 1 when dir/file holds exactly f's bytes, mode (and group). */
static int
vol_file_same(const char *dir, const struct vol_payload *pl, const struct vol_file *f)
{
	char       *p = xsprintf("%s/%s", dir, f->path), *buf;
	struct stat st;
	int         fd, same = 0;
	ssize_t     r;

	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(p);
	if (fd == -1)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == f->len &&
	    (st.st_mode & 07777) == vol_eff_mode(pl, f) &&
	    (!pl->has_gid || st.st_gid == (gid_t)pl->gid)) {
		buf = xmalloc(f->len + 1);
		r = f->len > 0 ? read(fd, buf, f->len) : 0;
		same = r == (ssize_t)f->len && memcmp(buf, f->data, f->len) == 0;
		free(buf);
	}
	close(fd);
	return same;
}

static int
vol_write_file(const char *tsdir, const struct vol_payload *pl, const struct vol_file *f, char *err,
    size_t errlen)
{
	char   *p = xsprintf("%s/%s", tsdir, f->path), *sl;
	size_t  off = 0;
	ssize_t w;
	int     fd;

	sl = strrchr(p, '/');
	*sl = '\0';
	if (mkdirs(p, 0755) == -1) {
		snprintf(err, errlen, "mkdir %s: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	*sl = '/';
	if ((fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1) {
		snprintf(err, errlen, "create %s: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	while (off < f->len) {
		if ((w = write(fd, f->data + off, f->len - off)) == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "write %s: %s", p, strerror(errno));
			close(fd);
			free(p);
			return -1;
		}
		off += (size_t)w;
	}
	if (fchmod(fd, vol_eff_mode(pl, f)) == -1) {
		snprintf(err, errlen, "chmod %s: %s", p, strerror(errno));
		close(fd);
		free(p);
		return -1;
	}
	close(fd);
	free(p);
	return 0;
}

/* The first component of a payload path into buf. */
static const char *
vol_top_name(const char *path, char *buf, size_t len)
{
	size_t n = strcspn(path, "/");

	if (n >= len)
		n = len - 1;
	memcpy(buf, path, n);
	buf[n] = '\0';
	return buf;
}

int
vol_write_atomic(const char *dir, const struct vol_payload *pl, char *err, size_t errlen)
{
	char            old[256], *link, *tmplink, *tsdir = NULL, *olddir = NULL, *p, top[256];
	char            stamp[64];
	struct timespec ts;
	struct tm       tm;
	DIR            *d;
	struct dirent  *de;
	ssize_t         n;
	size_t          i, j;
	int             same, found;

	for (i = 0; i < pl->n; i++) {
		if (!vol_path_ok(pl->files[i].path)) {
			snprintf(err, errlen, "invalid path \"%s\"", pl->files[i].path);
			return -1;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(pl->files[i].path, pl->files[j].path) == 0) {
				snprintf(err, errlen, "duplicate path \"%s\"", pl->files[i].path);
				return -1;
			}
		}
	}
	if (mkdirs(dir, 0755) == -1) {
		snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	link = xsprintf("%s/..data", dir);
	tmplink = xsprintf("%s/..data_tmp", dir);
	old[0] = '\0';
	if ((n = readlink(link, old, sizeof(old) - 1)) > 0 && (size_t)n < sizeof(old) - 1) {
		old[n] = '\0';
		olddir = xsprintf("%s/%s", dir, old);
		/* Unchanged: the same files, bytes and modes, and nothing else. */
		same = vol_count_files(olddir) == pl->n;
		for (i = 0; same && i < pl->n; i++)
			same = vol_file_same(olddir, pl, &pl->files[i]);
		for (i = 0; same && i < pl->n; i++) {
			struct stat st;

			p = xsprintf(
			    "%s/%s", dir, vol_top_name(pl->files[i].path, top, sizeof(top)));
			same = lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
			free(p);
		}
		if (same) {
			free(olddir);
			free(link);
			free(tmplink);
			return 0;
		}
	} else {
		old[0] = '\0';
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "..%Y_%m_%d_%H_%M_%S.", &tm);
	tsdir = xsprintf("%s/%s%09ldXXXXXX", dir, stamp, (long)ts.tv_nsec);
	if (mkdtemp(tsdir) == NULL) {
		snprintf(err, errlen, "mkdtemp in %s: %s", dir, strerror(errno));
		goto fail;
	}
	chmod(tsdir, 0755);
	for (i = 0; i < pl->n; i++)
		if (vol_write_file(tsdir, pl, &pl->files[i], err, errlen) == -1)
			goto fail;
	if (pl->has_gid)
		vol_own_tree(dir, pl->gid); /* the volume dir, the new version, the links */
	unlink(tmplink);
	if (symlink(strrchr(tsdir, '/') + 1, tmplink) == -1 || rename(tmplink, link) == -1) {
		snprintf(err, errlen, "swap %s: %s", link, strerror(errno));
		unlink(tmplink);
		goto fail;
	}
	/* The names users see: NAME -> ..data/NAME for every top-level name. */
	for (i = 0; i < pl->n; i++) {
		struct stat st;
		char       *target;

		vol_top_name(pl->files[i].path, top, sizeof(top));
		p = xsprintf("%s/%s", dir, top);
		if (lstat(p, &st) == -1) {
			target = xsprintf("..data/%s", top);
			if (symlink(target, p) == -1 && errno != EEXIST)
				log_warn("%s: symlink %s", __func__, p);
			else if (pl->has_gid && lchown(p, (uid_t)-1, (gid_t)pl->gid) == -1)
				log_warn("%s: chown %s", __func__, p);
			free(target);
		}
		free(p);
	}
	/* Names no longer in the payload go away. */
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strncmp(de->d_name, "..", 2) == 0 || strcmp(de->d_name, ".") == 0)
				continue;
			found = 0;
			for (i = 0; !found && i < pl->n; i++)
				found = strcmp(vol_top_name(pl->files[i].path, top, sizeof(top)),
				            de->d_name) == 0;
			if (!found) {
				p = xsprintf("%s/%s", dir, de->d_name);
				unlink(p);
				free(p);
			}
		}
		closedir(d);
	}
	if (olddir != NULL && strcmp(old, strrchr(tsdir, '/') + 1) != 0)
		vol_rm_tree(olddir);
	free(olddir);
	free(tsdir);
	free(link);
	free(tmplink);
	return 1;
fail:
	if (tsdir != NULL)
		vol_rm_tree(tsdir);
	free(tsdir);
	free(olddir);
	free(link);
	free(tmplink);
	return -1;
}

/* Go's %q of s, appended to f. */
static void
vol_go_quote(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\x%02x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static int
vol_kv_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct kv *const *)a)->k, (*(const struct kv *const *)b)->k);
}

char *
vol_format_map(const struct kvlist *m)
{
	const struct kv **v;
	char             *buf = NULL;
	size_t            len = 0, i;
	FILE             *f = open_memstream(&buf, &len);

	if (f == NULL)
		fatal("%s: open_memstream", __func__);
	v = xcalloc(m->n + 1, sizeof(*v));
	for (i = 0; i < m->n; i++)
		v[i] = &m->items[i];
	qsort(v, m->n, sizeof(*v), vol_kv_cmp);
	for (i = 0; i < m->n; i++) {
		if (i > 0)
			fputc('\n', f);
		fprintf(f, "%s=", v[i]->k);
		vol_go_quote(f, v[i]->v != NULL ? v[i]->v : "");
	}
	fclose(f);
	free(v);
	return buf;
}

/* "metadata.labels['key']" -> key (malloc'd) when prefix matches. */
static char *
vol_subscript(const char *path, const char *prefix)
{
	size_t pl = strlen(prefix), n;

	if (strncmp(path, prefix, pl) != 0 || path[pl] != '[')
		return NULL;
	path += pl + 1;
	n = strlen(path);
	if (n < 3 || (path[0] != '\'' && path[0] != '"') || path[n - 1] != ']' ||
	    path[n - 2] != path[0])
		return NULL;
	return xstrndup(path + 1, n - 3);
}

int
vol_field_value(const struct pod *pod, const char *path, char **out, char *err, size_t errlen)
{
	const char *v;
	char       *key;

	*out = NULL;
	if (path == NULL)
		path = "";
	if (strcmp(path, "metadata.name") == 0)
		*out = xstrdup(pod->name != NULL ? pod->name : "");
	else if (strcmp(path, "metadata.namespace") == 0)
		*out = xstrdup(pod->ns != NULL ? pod->ns : "default");
	else if (strcmp(path, "metadata.uid") == 0)
		*out = xstrdup(pod->uid != NULL ? pod->uid : "");
	else if (strcmp(path, "metadata.labels") == 0)
		*out = vol_format_map(&pod->labels);
	else if (strcmp(path, "metadata.annotations") == 0)
		*out = vol_format_map(&pod->annotations);
	else if ((key = vol_subscript(path, "metadata.labels")) != NULL) {
		v = kvlist_get(&pod->labels, key);
		*out = xstrdup(v != NULL ? v : "");
		free(key);
	} else if ((key = vol_subscript(path, "metadata.annotations")) != NULL) {
		v = kvlist_get(&pod->annotations, key);
		*out = xstrdup(v != NULL ? v : "");
		free(key);
	}
	if (*out == NULL) {
		snprintf(err, errlen, "unsupported fieldPath \"%s\" in a downwardAPI volume", path);
		return -1;
	}
	return 0;
}
