/* source_file.c — static pod manifests: scan, inotify, defaulting, hand-over to podconfig. */
#include <sys/inotify.h>
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

#include <event2/event.h>

#include "node/events.h"
#include "core/json.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/md5.h"
#include "pod/pod.h"
#include "node/podconfig.h"
#include "core/strindex.h"
#include "node/source_file.h"
#include "core/util.h"

/* A manifest complete when its event arrives (renamed into the directory, closed after
 * writing, removed) is acted on at once; one being written in place (created or modified,
 * not closed yet) waits until its writer has been quiet this long. */
#define SF_SETTLE_MS 100
#define SF_MAX_OPEN  64   /* names being written tracked; past it, every change settles */
#define SF_BUDGET_US 5000 /* of a scan's reading per loop turn */

/* What the last scan found in one file: its decoded pod, or the error reported. */
struct sf_file {
	char             *f_name;
	uint64_t          f_content_hash;
	const struct pod *f_pod;   /* a reference; NULL when invalid */
	int               f_fresh; /* f_pod decoded since the last hand-over */
	char             *f_doc;
	size_t            f_doc_len;
	char             *f_error;
	int               f_seen;       /* in the current scan */
	uint64_t          f_first_scan; /* the scan that first saw it: of two files giving one
	                                 * namespace/name, the one seen first wins */
	char *f_dup_of; /* the file that gives this pod's namespace/name (reported) */
	/* stat of the file when it was last read: a scan reads it again only when it changed
	 * (or changed too recently to tell). */
	dev_t   f_dev;
	ino_t   f_ino;
	off_t   f_size;
	int64_t f_mtime_ns;
	int64_t f_ctime_ns;
	int     f_read;
};

struct source_file {
	struct event_base *s_base;
	struct podconfig  *s_pc;
	struct events     *s_ev;
	char              *s_dir;
	char              *s_node;
	int64_t            s_check_ms;
	int                s_ifd;
	int                s_wd;
	struct event      *s_ievent;
	struct event      *s_settle;
	struct event      *s_rescan;
	char              *s_open[SF_MAX_OPEN]; /* names written in place, not closed yet */
	size_t             s_nopen;
	int                s_open_overflow;
	struct sf_file   **s_files;
	size_t             s_nfiles;
	struct strindex   *s_index; /* s_files by name */
	uint64_t           s_scans;
	uint64_t           s_sets; /* scans whose set went to podconfig */
	/* A scan in progress: the names it has still to look at (read at most SF_BUDGET_US a
	 * turn, so that a thousand new manifests do not hold the loop). */
	char **s_pending;
	size_t s_npending, s_ipending;
	int    s_scanning;
	int    s_dfd;     /* the directory the scan listed (its names are looked up from it); -1 */
	int    s_again;   /* something changed during the scan: one more after it */
	int    s_changed; /* this scan found a file new, read again or skipped anew */
	int    s_handed;  /* podconfig holds the set of the last complete scan */
	/* A scan's set being handed to podconfig, SF_BUDGET_US a turn (a thousand new pods'
	 * admission and first updates do not hold the loop either): items[s_iitem..) to go. */
	int                    s_applying;
	struct podconfig_item *s_items;
	size_t                 s_nitems, s_iitem;
	int64_t                s_scan_start; /* wall ns, for the "changed too recently" rule */
	struct event          *s_more;
	int                    s_dir_missing_logged;
};

static char *
sf_hex_uid(const char *canon, const char *path, const char *node)
{
	const struct md5_part parts[] = { { canon, strlen(canon) }, { "host:", 5 },
		{ node, strlen(node) }, { "file:", 5 }, { path, strlen(path) } };
	uint8_t               md[KLET_MD5_LEN];
	char                 *out = xcalloc(KLET_MD5_LEN * 2 + 1, 1);
	size_t                i;

	md5_digest(parts, nitems(parts), md);
	for (i = 0; i < KLET_MD5_LEN; i++)
		snprintf(out + i * 2, 3, "%02x", md[i]);
	return out;
}

/* Writes metadata with the static pod defaults applied. */
static void
sf_gen_metadata(
    yajl_gen g, const struct json *md, const char *name, const char *ns, const char *uid)
{
	const struct json *ann = json_get(md, "annotations");
	size_t             i;

	yajl_gen_map_open(g);
	for (i = 0; i < json_len(md); i++) {
		const char *k = json_key(md, i);

		if (strcmp(k, "name") == 0 || strcmp(k, "namespace") == 0 ||
		    strcmp(k, "uid") == 0 || strcmp(k, "annotations") == 0)
			continue;
		json_gen_key(g, k);
		json_gen_value(g, json_index(md, i));
	}
	json_gen_kv_str(g, "name", name);
	json_gen_kv_str(g, "namespace", ns);
	json_gen_kv_str(g, "uid", uid);
	json_gen_key(g, "annotations");
	yajl_gen_map_open(g);
	for (i = 0; i < json_len(ann); i++) {
		const char *k = json_key(ann, i);

		if (strcmp(k, "kubernetes.io/config.source") == 0 ||
		    strcmp(k, "kubernetes.io/config.hash") == 0)
			continue;
		json_gen_key(g, k);
		json_gen_value(g, json_index(ann, i));
	}
	json_gen_kv_str(g, "kubernetes.io/config.source", "file");
	json_gen_kv_str(g, "kubernetes.io/config.hash", uid);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

int
source_file_decode(const char *buf, size_t len, const char *path, const char *node,
    struct pod **podp, char **docp, size_t *doc_lenp, char *err, size_t errlen)
{
	struct json_doc   *d;
	const struct json *root, *md, *spec;
	const char        *name, *ns, *kind;
	char               perr[256], *canon, *uid, *fullname, *doc;
	size_t             i, k, doclen;
	struct pod        *pod;
	yajl_gen           g;

	for (k = 0;
	     k < len && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\n' || buf[k] == '\r'); k++)
		;
	if (k < len && buf[k] == '{')
		d = json_parse(buf, len, NULL, perr, sizeof(perr));
	else
		d = json_parse_yaml(buf, len, NULL, perr, sizeof(perr));
	if (d == NULL) {
		snprintf(err, errlen, "%s", perr);
		return -1;
	}
	root = json_root(d);
	if (json_type(root) != JSON_OBJECT) {
		snprintf(err, errlen, "the document is not an object");
		json_free(d);
		return -1;
	}
	kind = json_str(json_get(root, "kind"));
	if (kind != NULL && strcmp(kind, "Pod") != 0) {
		snprintf(err, errlen, "kind: expected Pod, got %s", kind);
		json_free(d);
		return -1;
	}
	md = json_get(root, "metadata");
	spec = json_get(root, "spec");
	name = json_str(json_get(md, "name"));
	if (name == NULL || *name == '\0') {
		snprintf(err, errlen, "metadata.name: required");
		json_free(d);
		return -1;
	}
	ns = json_str(json_get(md, "namespace"));
	if (ns == NULL || *ns == '\0')
		ns = "default";
	canon = json_to_string(root);
	if (json_str(json_get(md, "uid")) != NULL && *json_str(json_get(md, "uid")) != '\0')
		uid = xstrdup(json_str(json_get(md, "uid")));
	else
		uid = sf_hex_uid(canon, path, node);
	free(canon);
	xasprintf(&fullname, "%s-%s", name, node);
	g = json_gen_new(0);
	yajl_gen_map_open(g);
	for (i = 0; i < json_len(root); i++) {
		const char *key = json_key(root, i);

		if (strcmp(key, "metadata") == 0 || strcmp(key, "spec") == 0)
			continue;
		json_gen_key(g, key);
		json_gen_value(g, json_index(root, i));
	}
	json_gen_key(g, "metadata");
	sf_gen_metadata(g, md, fullname, ns, uid);
	json_gen_key(g, "spec");
	yajl_gen_map_open(g);
	for (i = 0; i < json_len(spec); i++) {
		const char *key = json_key(spec, i);

		if (strcmp(key, "nodeName") == 0)
			continue;
		json_gen_key(g, key);
		json_gen_value(g, json_index(spec, i));
	}
	json_gen_kv_str(g, "nodeName", node);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	doc = json_gen_take(g, &doclen);
	yajl_gen_free(g);
	json_free(d);
	free(uid);
	free(fullname);
	pod = pod_from_json(doc, doclen, err, errlen);
	if (pod == NULL) {
		free(doc);
		return -1;
	}
	if (pod_validate(pod, err, errlen) == -1 || pod_validate_names(pod, err, errlen) == -1) {
		pod_unref(pod);
		free(doc);
		return -1;
	}
	*podp = pod;
	*docp = doc;
	*doc_lenp = doclen;
	return 0;
}

static void
sf_file_free(struct sf_file *f)
{
	pod_unref(f->f_pod);
	free(f->f_doc);
	free(f->f_error);
	free(f->f_dup_of);
	free(f->f_name);
	free(f);
}

static const char *
sf_key(const void *arg, size_t i)
{
	const struct source_file *s = arg;

	return s->s_files[i]->f_name;
}

static struct sf_file *
sf_find(struct source_file *s, const char *name)
{
	size_t i = strindex_find(s->s_index, name, sf_key, s);

	return i == STRINDEX_NONE ? NULL : s->s_files[i];
}

static int64_t
sf_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static void
sf_remember_stat(struct sf_file *f, const struct stat *st)
{
	f->f_dev = st->st_dev;
	f->f_ino = st->st_ino;
	f->f_size = st->st_size;
	f->f_mtime_ns = sf_ns(&st->st_mtim);
	f->f_ctime_ns = sf_ns(&st->st_ctim);
	f->f_read = 1;
}

/* The file is as it was when last read: same inode, size, times, and those times older
 * than the previous scan by a second (a change within the timestamps' granule cannot hide:
 * the git index's "racily clean" rule). */
static int
sf_unchanged(const struct source_file *s, const struct sf_file *f, const struct stat *st)
{
	return f->f_read && f->f_dev == st->st_dev && f->f_ino == st->st_ino &&
	    f->f_size == st->st_size && f->f_mtime_ns == sf_ns(&st->st_mtim) &&
	    f->f_ctime_ns == sf_ns(&st->st_ctim) && f->f_ctime_ns < s->s_scan_start - 1000000000LL;
}

static void
sf_report(struct source_file *s, const char *path, const char *why)
{
	struct ev_object obj = { .kind = "Node", .name = s->s_node, .uid = s->s_node };

	log_error("Failed to load manifest %s: %s", path, why);
	events_record(s->s_ev, &obj, EV_WARNING, "FailedToLoadManifest",
	    "Failed to load manifest %s: %s", path, why);
}

/* Errors that say nothing about the manifests (the process is out of descriptors or memory). */
#define SF_TRANSIENT(e) ((e) == EMFILE || (e) == ENFILE || (e) == ENOMEM || (e) == ENOBUFS)

/* Reads one file into f (unless its content is unchanged). */
static void
sf_load(struct source_file *s, struct sf_file *f, const char *path)
{
	char        err[512], *buf = NULL;
	size_t      len = 0;
	uint64_t    h;
	struct stat st;
	struct pod *pod;
	int         fd;
	ssize_t     r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1 || fstat(fd, &st) == -1) {
		if (SF_TRANSIENT(errno)) { /* out of descriptors or memory: keep the last pod */
			log_warn("manifest %s: keeping what was read before", path);
			if (fd != -1)
				close(fd);
			return;
		}
		snprintf(err, sizeof(err), "%s", strerror(errno));
		goto bad;
	}
	if (!S_ISREG(st.st_mode)) { /* replaced since the scan's stat */
		snprintf(err, sizeof(err), "not a regular file");
		goto bad;
	}
	sf_remember_stat(f, &st);
	if (st.st_size > POD_MAX_DOC_BYTES) {
		snprintf(err, sizeof(err), "file is %lld bytes, over the limit of %d",
		    (long long)st.st_size, POD_MAX_DOC_BYTES);
		goto bad;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		r = read(fd, buf + len, (size_t)st.st_size - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	close(fd);
	fd = -1;
	h = hash_bytes(buf, len, 0);
	if (f->f_content_hash == h && (f->f_pod != NULL || f->f_error != NULL)) {
		free(buf);
		return; /* unchanged: same pod, or the same error already reported */
	}
	f->f_content_hash = h;
	pod_unref(f->f_pod);
	f->f_pod = NULL;
	xfree_str(&f->f_doc);
	xfree_str(&f->f_error);
	if (len == 0) {
		snprintf(err, sizeof(err), "empty file");
		goto bad_reported;
	}
	if (source_file_decode(
	        buf, len, path, s->s_node, &pod, &f->f_doc, &f->f_doc_len, err, sizeof(err)) == -1)
		goto bad_reported;
	f->f_pod = pod;
	f->f_fresh = 1;
	log_v(
	    2, "manifest %s: pod %s/%s uid=%s", path, f->f_pod->ns, f->f_pod->name, f->f_pod->uid);
	free(buf);
	return;
bad:
	if (fd != -1)
		close(fd);
	f->f_read = 0;
	f->f_content_hash = 0;
	pod_unref(f->f_pod);
	f->f_pod = NULL;
	xfree_str(&f->f_doc);
	if (f->f_error != NULL && strcmp(f->f_error, err) == 0)
		return;
	free(f->f_error);
	f->f_error = xstrdup(err);
	sf_report(s, path, err);
	return;
bad_reported:
	free(buf);
	f->f_error = xstrdup(err);
	sf_report(s, path, err);
}

static int
sf_cmp_name(const void *a, const void *b)
{
	return strcmp((*(struct sf_file *const *)a)->f_name, (*(struct sf_file *const *)b)->f_name);
}

/* What stat says of a directory entry (name, below the directory dfd): NULL for a regular
 * file (st set), "" when the entry went away since readdir (nothing to say), else why it is
 * skipped. */
static const char *
sf_stat(int dfd, const char *name, struct stat *st)
{
	static char why[128];
	struct stat lst;

	if (fstatat(dfd, name, st, 0) == -1) {
		if (errno == ENOENT && fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW) == -1)
			return "";
		snprintf(why, sizeof(why), "%s",
		    errno == ENOENT ? "a dangling symbolic link" : strerror(errno));
		return why;
	}
	if (S_ISREG(st->st_mode))
		return NULL;
	if (S_ISDIR(st->st_mode))
		return "a directory (manifest directories are not recursed into)";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO, not a regular file";
	if (S_ISSOCK(st->st_mode))
		return "a socket, not a regular file";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device, not a regular file";
	return "not a regular file";
}

/* An entry that is not a manifest: said once (per reason) while it stays. 1 if that is
 * news (it gave a pod, or another reason), 0 if it was skipped as it is already. */
static int
sf_skip(struct sf_file *f, const char *path, const char *why)
{
	int had = f->f_pod != NULL || f->f_doc != NULL;

	f->f_content_hash = 0;
	pod_unref(f->f_pod);
	f->f_pod = NULL;
	xfree_str(&f->f_doc);
	if (f->f_error != NULL && strcmp(f->f_error, why) == 0)
		return had;
	free(f->f_error);
	f->f_error = xstrdup(why);
	log_warnx("manifest path %s is skipped: %s", path, why);
	return 1;
}

static int
sf_cmp_pod(const void *a, const void *b)
{
	const struct sf_file *x = *(struct sf_file *const *)a, *y = *(struct sf_file *const *)b;
	int                   c;

	if ((c = strcmp(x->f_pod->ns, y->f_pod->ns)) != 0 ||
	    (c = strcmp(x->f_pod->name, y->f_pod->name)) != 0)
		return c;
	if (x->f_first_scan != y->f_first_scan)
		return x->f_first_scan < y->f_first_scan ? -1 : 1;
	return strcmp(x->f_name, y->f_name);
}

/* Two manifests giving the same namespace/name (the kubelet's config merger refuses the
 * later one as a duplicate pod name): the file seen first keeps it, the file seen later
 * (or, in the same scan, later by name) is refused and reported once, naming both. */
static void
sf_find_dups(struct source_file *s)
{
	struct sf_file **v = xcalloc(s->s_nfiles + 1, sizeof(*v));
	size_t           i, n = 0, first = 0;

	for (i = 0; i < s->s_nfiles; i++)
		if (s->s_files[i]->f_pod != NULL)
			v[n++] = s->s_files[i];
		else
			xfree_str(&s->s_files[i]->f_dup_of);
	if (n > 1)
		qsort(v, n, sizeof(*v), sf_cmp_pod);
	for (i = 0; i < n; i++) {
		struct sf_file *f = v[i];
		char           *path, *other;

		if (i == 0 || strcmp(f->f_pod->ns, v[first]->f_pod->ns) != 0 ||
		    strcmp(f->f_pod->name, v[first]->f_pod->name) != 0) {
			first = i;
			if (f->f_dup_of != NULL)
				log_info("manifest %s/%s: pod %s/%s is no longer given by another "
				         "file; using it",
				    s->s_dir, f->f_name, f->f_pod->ns, f->f_pod->name);
			xfree_str(&f->f_dup_of);
			continue;
		}
		if (f->f_dup_of != NULL && strcmp(f->f_dup_of, v[first]->f_name) == 0)
			continue;
		free(f->f_dup_of);
		f->f_dup_of = xstrdup(v[first]->f_name);
		path = xsprintf("%s/%s", s->s_dir, f->f_name);
		other = xsprintf("duplicate pod name: %s/%s is already given by %s/%s; this "
		                 "manifest is ignored",
		    f->f_pod->ns, f->f_pod->name, s->s_dir, v[first]->f_name);
		sf_report(s, path, other);
		free(path);
		free(other);
	}
	free(v);
}

/* podconfig keeps a pod of its own for a new or changed manifest (this pod plus its local
 * annotations): when it was decoded from this file's document, hold that one instead, so
 * the two do not keep two copies of one pod. */
static void
sf_adopt(struct source_file *s, struct sf_file *f)
{
	const struct pod *kept;
	const char       *doc, *source;
	size_t            len;

	if (f->f_pod == NULL || !f->f_fresh)
		return;
	f->f_fresh = 0;
	kept = podconfig_get(s->s_pc, f->f_pod->uid);
	doc = podconfig_doc(s->s_pc, f->f_pod->uid, &len, NULL, &source);
	if (kept == NULL || kept == f->f_pod || doc == NULL || strcmp(source, "file") != 0 ||
	    len != f->f_doc_len || memcmp(doc, f->f_doc, len) != 0)
		return;
	pod_ref(kept);
	pod_unref(f->f_pod);
	f->f_pod = kept;
}

static void
sf_watch(struct source_file *s)
{
	if (s->s_ifd == -1 || s->s_wd != -1)
		return;
	s->s_wd = inotify_add_watch(s->s_ifd, s->s_dir,
	    IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
	        IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
	if (s->s_wd == -1 && errno != ENOENT)
		log_warn("inotify_add_watch %s", s->s_dir);
}

static void
sf_pending_clear(struct source_file *s)
{
	while (s->s_npending > 0)
		free(s->s_pending[--s->s_npending]);
	free(s->s_pending);
	s->s_pending = NULL;
	s->s_ipending = 0;
	s->s_scanning = 0;
	if (s->s_dfd >= 0)
		close(s->s_dfd);
	s->s_dfd = -1;
}

/* Starts a scan: the directory's entries become the names to look at. -1 when the
 * directory cannot be read for a passing reason (nothing changes then). */
static int
sf_scan_begin(struct source_file *s)
{
	struct dirent  *de;
	DIR            *dir;
	struct timespec ts;
	size_t          i, cap = 0;

	sf_pending_clear(s);
	s->s_changed = 0;
	s->s_scans++;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->s_scan_start = sf_ns(&ts);
	sf_watch(s);
	for (i = 0; i < s->s_nfiles; i++)
		s->s_files[i]->f_seen = 0;
	if ((dir = opendir(s->s_dir)) == NULL && SF_TRANSIENT(errno)) {
		/* Not "every manifest removed": the pods stay as they are until a scan works. */
		log_warn("--pod-manifest-path %s: scan failed, pods unchanged", s->s_dir);
		return -1;
	}
	s->s_scanning = 1;
	if (dir == NULL) {
		if (!s->s_dir_missing_logged)
			log_warnx("--pod-manifest-path %s: %s; looking again every %llds", s->s_dir,
			    strerror(errno), (long long)(s->s_check_ms / 1000));
		s->s_dir_missing_logged = 1;
		return 0;
	}
	s->s_dir_missing_logged = 0;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (s->s_npending == cap) {
			cap = cap < 64 ? 64 : cap * 2;
			s->s_pending = xreallocarray(s->s_pending, cap, sizeof(*s->s_pending));
		}
		s->s_pending[s->s_npending++] = xstrdup(de->d_name);
	}
	/* The names are looked at from the directory that listed them: one name to walk for
	 * each, not the whole path. */
	s->s_dfd = fcntl(dirfd(dir), F_DUPFD_CLOEXEC, 0);
	closedir(dir);
	return 0;
}

/* Looks at the pending names, reading the new and changed files, until budget_us is spent
 * (0: no limit). Returns 1 when every name was looked at. */
static int
sf_scan_step(struct source_file *s, int64_t budget_us)
{
	int64_t t0 = now_mono_us();

	while (s->s_ipending < s->s_npending) {
		const char     *name = s->s_pending[s->s_ipending++];
		struct stat     st;
		struct sf_file *f;
		char           *path = NULL; /* the whole path: only to read or name the file */
		const char     *skip;

		if (s->s_dfd >= 0)
			skip = sf_stat(s->s_dfd, name, &st);
		else
			skip = sf_stat(AT_FDCWD, path = xsprintf("%s/%s", s->s_dir, name), &st);
		if (skip != NULL && *skip == '\0') {
			free(path);
			continue; /* gone since readdir (st is not set) */
		}
		if ((f = sf_find(s, name)) == NULL) {
			f = xcalloc(1, sizeof(*f));
			f->f_name = xstrdup(name);
			f->f_first_scan = s->s_scans;
			s->s_files =
			    xreallocarray(s->s_files, s->s_nfiles + 1, sizeof(*s->s_files));
			s->s_files[s->s_nfiles++] = f;
			strindex_add(s->s_index, f->f_name, s->s_nfiles - 1);
			s->s_changed = 1;
		}
		f->f_seen = 1;
		if (skip != NULL || !sf_unchanged(s, f, &st)) { /* to skip, or to read */
			if (path == NULL)
				path = xsprintf("%s/%s", s->s_dir, name);
			if (skip != NULL) {
				if (sf_skip(f, path, skip))
					s->s_changed = 1;
			} else {
				sf_load(s, f, path);
				s->s_changed = 1;
			}
		}
		free(path);
		if (budget_us > 0 && loop_yield_due(t0, budget_us))
			break;
	}
	return s->s_ipending == s->s_npending;
}

/* Hands items to podconfig until the budget (0: none) is spent; 1 when all are. At least
 * one a call. */
static int
sf_apply_step(struct source_file *s, int64_t deadline_us)
{
	while (s->s_iitem < s->s_nitems) {
		podconfig_upsert(s->s_pc, "file", &s->s_items[s->s_iitem++]);
		if (deadline_us > 0 &&
		    (now_mono_us() >= deadline_us || loop_turn_used_us() >= LOOP_TURN_BUDGET_US))
			break;
	}
	return s->s_iitem == s->s_nitems;
}

/* The scan's set is podconfig's (or, from source_file_free, given up): the source is ready,
 * and each file holds the pod podconfig kept. */
static void
sf_apply_end(struct source_file *s, int complete)
{
	size_t i;

	if (complete)
		podconfig_source_ready(s->s_pc, "file");
	for (i = 0; i < s->s_nitems; i++)
		pod_unref(s->s_items[i].pod); /* NULL: podconfig took the reference */
	free(s->s_items);
	s->s_items = NULL;
	s->s_nitems = s->s_iitem = 0;
	s->s_applying = 0;
	s->s_scanning = 0;
	s->s_handed = complete;
	if (!complete)
		return;
	for (i = 0; i < s->s_nfiles; i++)
		sf_adopt(s, s->s_files[i]);
}

/* Ends a scan: files no longer there go, the pods of podconfig's "file" source that are not
 * in the set are removed, and the set is left to sf_apply_step. Returns the number of pods
 * it holds. */
static int
sf_scan_end(struct source_file *s)
{
	struct podconfig_item *items;
	size_t                 i, n = 0;

	sf_pending_clear(s);
	i = 0;
	while (i < s->s_nfiles) {
		if (!s->s_files[i]->f_seen) {
			log_v(2, "manifest %s/%s removed", s->s_dir, s->s_files[i]->f_name);
			sf_file_free(s->s_files[i]);
			s->s_files[i] = s->s_files[--s->s_nfiles];
			continue;
		}
		i++;
	}
	if (s->s_nfiles > 1)
		qsort(s->s_files, s->s_nfiles, sizeof(*s->s_files), sf_cmp_name);
	strindex_reset(s->s_index); /* positions moved */
	for (i = 0; i < s->s_nfiles; i++)
		strindex_add(s->s_index, s->s_files[i]->f_name, i);
	sf_find_dups(s);
	items = xcalloc(s->s_nfiles + 1, sizeof(*items));
	for (i = 0; i < s->s_nfiles; i++) {
		struct sf_file *f = s->s_files[i];

		if (f->f_dup_of != NULL)
			continue; /* refused: another file gives this namespace/name */
		if (f->f_pod == NULL)
			continue;
		items[n].pod = pod_ref(f->f_pod);
		items[n].doc = f->f_doc;
		items[n].doc_len = f->f_doc_len;
		items[n].format = "json";
		n++;
	}
	podconfig_set_source_begin(s->s_pc, "file", items, n);
	s->s_sets++;
	s->s_items = items;
	s->s_nitems = n;
	s->s_iitem = 0;
	s->s_applying = 1;
	s->s_scanning = 1; /* until the set is handed over */
	return (int)n;
}

int
source_file_scan(struct source_file *s)
{
	int n;

	if (s->s_applying) { /* an asynchronous one's set first */
		sf_apply_step(s, 0);
		sf_apply_end(s, 1);
	}
	if (sf_scan_begin(s) == -1)
		return -1;
	sf_scan_step(s, 0);
	n = sf_scan_end(s);
	sf_apply_step(s, 0);
	sf_apply_end(s, 1);
	return n;
}

/* Every file the last complete scan handed over is still there, and none was new, read
 * again or skipped anew: podconfig has this very set. */
static int
sf_scan_same(const struct source_file *s)
{
	size_t i;

	if (s->s_changed || !s->s_handed)
		return 0;
	for (i = 0; i < s->s_nfiles; i++)
		if (!s->s_files[i]->f_seen)
			return 0;
	return 1;
}

/* A scan from the loop: SF_BUDGET_US a turn; a change seen meanwhile asks for another. A
 * scan that found every file as it was hands nothing over (the kubelet's periodic listing
 * sends its whole set, and the config merger finds nothing changed in it). */
static void
sf_scan_async(struct source_file *s)
{
	struct timeval now = { 0, 0 };
	int64_t        t0 = now_mono_us();

	if (!s->s_scanning) {
		s->s_again = 0;
		if (sf_scan_begin(s) == -1)
			return;
	}
	if (!s->s_applying) {
		if (!sf_scan_step(s, SF_BUDGET_US)) {
			evtimer_add(s->s_more, &now);
			return;
		}
		if (sf_scan_same(s)) {
			sf_pending_clear(s);
			goto again;
		}
		sf_scan_end(s);
	}
	if (!sf_apply_step(s, t0 + SF_BUDGET_US)) {
		evtimer_add(s->s_more, &now);
		return;
	}
	sf_apply_end(s, 1);
again:
	if (s->s_again) {
		s->s_again = 0;
		evtimer_add(s->s_settle, &now);
	}
}

static void
sf_more_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	loop_note("manifest scan");
	sf_scan_async(arg);
	loop_note(NULL);
}

uint64_t
source_file_scans(const struct source_file *s)
{
	return s->s_scans;
}

uint64_t
source_file_sets(const struct source_file *s)
{
	return s->s_sets;
}

static void
sf_open_clear(struct source_file *s)
{
	while (s->s_nopen > 0)
		free(s->s_open[--s->s_nopen]);
	s->s_open_overflow = 0;
}

static void
sf_settle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct source_file *s = arg;

	(void)fd;
	(void)what;
	sf_open_clear(s); /* quiet long enough: whatever was being written is taken as it is */
	if (s->s_scanning) {
		s->s_again = 1; /* after the one in progress */
		return;
	}
	loop_note("manifest scan");
	sf_scan_async(s);
	loop_note(NULL);
}

/* Keeps the set of names written in place: opened for writing (IN_CREATE, IN_MODIFY) and
 * not closed, renamed away or removed since. */
static void
sf_track(struct source_file *s, const struct inotify_event *ie)
{
	size_t i;

	if (ie->len == 0 || ie->name[0] == '\0')
		return;
	for (i = 0; i < s->s_nopen; i++)
		if (strcmp(s->s_open[i], ie->name) == 0)
			break;
	if (ie->mask & (IN_CLOSE_WRITE | IN_MOVED_FROM | IN_DELETE | IN_MOVED_TO)) {
		if (i < s->s_nopen) {
			free(s->s_open[i]);
			s->s_open[i] = s->s_open[--s->s_nopen];
		}
		return;
	}
	if ((ie->mask & (IN_CREATE | IN_MODIFY)) == 0 || (ie->mask & IN_ISDIR) || i < s->s_nopen)
		return;
	if (s->s_nopen == SF_MAX_OPEN) {
		s->s_open_overflow = 1;
		return;
	}
	s->s_open[s->s_nopen++] = xstrdup(ie->name);
}

static void
sf_rescan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct source_file *s = arg;

	(void)fd;
	(void)what;
	loop_grid_add(s->s_rescan, (unsigned)s->s_check_ms);
	if (s->s_scanning) {
		s->s_again = 1;
		return;
	}
	loop_note("manifest scan");
	sf_scan_async(s);
	loop_note(NULL);
}

static void
sf_inotify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct source_file *s = arg;
	char                buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct timeval      tv = { 0, SF_SETTLE_MS * 1000 };
	int                 gone = 0;
	ssize_t             r;

	(void)what;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + r) {
			struct inotify_event *ie = (struct inotify_event *)p;

			if (ie->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
				gone = 1;
			if (ie->mask & IN_Q_OVERFLOW)
				s->s_open_overflow = 1; /* events lost: settle, then rescan */
			sf_track(s, ie);
			p += sizeof(*ie) + ie->len;
		}
	}
	if (gone && s->s_wd != -1) {
		inotify_rm_watch(s->s_ifd, s->s_wd);
		s->s_wd = -1;
	}
	/* Nothing half-written: scan on this turn's end (all events read so far coalesce). */
	if (s->s_nopen == 0 && !s->s_open_overflow)
		tv.tv_usec = 0;
	evtimer_add(s->s_settle, &tv);
}

struct source_file *
source_file_new(struct event_base *base, struct podconfig *pc, struct events *ev, const char *dir,
    const char *node, int64_t check_ms)
{
	struct source_file *s = xcalloc(1, sizeof(*s));
	struct timeval      now = { 0, 0 };

	s->s_base = base;
	s->s_pc = pc;
	s->s_ev = ev;
	s->s_dir = xstrdup(dir);
	s->s_node = xstrdup(node);
	s->s_check_ms = check_ms > 0 ? check_ms : 20000;
	s->s_wd = -1;
	s->s_dfd = -1;
	s->s_ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->s_ifd == -1) {
		log_warn("inotify_init1; relying on rescans every %llds",
		    (long long)(s->s_check_ms / 1000));
	} else {
		s->s_ievent = event_new(base, s->s_ifd, EV_READ | EV_PERSIST, sf_inotify_cb, s);
		if (s->s_ievent == NULL)
			fatalx("%s: event_new failed", __func__);
		event_add(s->s_ievent, NULL);
	}
	s->s_index = strindex_new();
	s->s_settle = evtimer_new(base, sf_settle_cb, s);
	s->s_rescan = evtimer_new(base, sf_rescan_cb, s); /* re-armed when it fires */
	s->s_more = evtimer_new(base, sf_more_cb, s);
	if (s->s_settle == NULL || s->s_rescan == NULL || s->s_more == NULL)
		fatalx("%s: event_new failed", __func__);
	loop_grid_add(s->s_rescan, (unsigned)s->s_check_ms);
	evtimer_add(s->s_settle, &now);
	log_info("static pods from %s (rescan every %lldms)", s->s_dir, (long long)s->s_check_ms);
	return s;
}

void
source_file_free(struct source_file *s)
{
	size_t i;

	if (s == NULL)
		return;
	if (s->s_ievent != NULL)
		event_free(s->s_ievent);
	if (s->s_settle != NULL)
		event_free(s->s_settle);
	if (s->s_rescan != NULL)
		event_free(s->s_rescan);
	if (s->s_more != NULL)
		event_free(s->s_more);
	if (s->s_applying)
		sf_apply_end(s, 0);
	sf_pending_clear(s);
	strindex_free(s->s_index);
	if (s->s_ifd != -1)
		close(s->s_ifd);
	sf_open_clear(s);
	for (i = 0; i < s->s_nfiles; i++)
		sf_file_free(s->s_files[i]);
	free(s->s_files);
	free(s->s_dir);
	free(s->s_node);
	free(s);
}
