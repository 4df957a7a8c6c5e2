/* hash.c — the container hash: which spec changes require a container restart. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "pod/hash.h"

/* A canonical serialization fed to FNV-64: every item is a tag, a length and bytes, so
 * adjacent fields cannot run into each other. NULL and "" hash alike (absent == empty). */
struct hasher {
	uint64_t h;
};

static void
hs_bytes(struct hasher *hs, uint8_t tag, const void *p, size_t n)
{
	uint8_t  hdr[9];
	uint64_t ln = n;
	int      i;

	hdr[0] = tag;
	for (i = 0; i < 8; i++)
		hdr[1 + i] = (uint8_t)(ln >> (8 * i));
	hs->h = fnv64(hs->h, hdr, sizeof(hdr));
	if (n > 0)
		hs->h = fnv64(hs->h, p, n);
}

static void
hs_str(struct hasher *hs, uint8_t tag, const char *s)
{
	hs_bytes(hs, tag, s, s != NULL ? strlen(s) : 0);
}

static void
hs_int(struct hasher *hs, uint8_t tag, int64_t v)
{
	uint8_t  b[8];
	uint64_t u = (uint64_t)v;
	int      i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (8 * i));
	hs_bytes(hs, tag, b, sizeof(b));
}

static void
hs_strv(struct hasher *hs, uint8_t tag, const struct strv *sv)
{
	size_t i;

	hs_int(hs, tag, (int64_t)sv->n);
	for (i = 0; i < sv->n; i++)
		hs_str(hs, tag, sv->v[i]);
}

static int
hs_quantity_cmp(const void *a, const void *b)
{
	const struct quantity *qa = *(const struct quantity *const *)a;
	const struct quantity *qb = *(const struct quantity *const *)b;

	return strcmp(qa->name != NULL ? qa->name : "", qb->name != NULL ? qb->name : "");
}

/* A resource list is a map: hashed sorted by name, so document order does not matter. */
static void
hs_resources(struct hasher *hs, uint8_t tag, const struct resource_list *rl)
{
	const struct quantity **v;
	size_t                  i;

	hs_int(hs, tag, (int64_t)rl->n);
	if (rl->n == 0)
		return;
	v = xreallocarray(NULL, rl->n, sizeof(*v));
	for (i = 0; i < rl->n; i++)
		v[i] = &rl->items[i];
	qsort(v, rl->n, sizeof(*v), hs_quantity_cmp);
	for (i = 0; i < rl->n; i++) {
		hs_str(hs, tag, v[i]->name);
		hs_int(hs, tag, v[i]->milli);
	}
	free(v);
}

static void
hs_handler(struct hasher *hs, uint8_t tag, const struct handler *h)
{
	size_t i;

	if (h == NULL) {
		hs_int(hs, tag, -1);
		return;
	}
	hs_int(hs, tag, h->h_kind);
	switch (h->h_kind) {
	case HANDLER_EXEC:
		hs_strv(hs, tag, &h->h_exec);
		break;
	case HANDLER_HTTP_GET:
		hs_str(hs, tag, h->h_path);
		hs_str(hs, tag, h->h_scheme);
		for (i = 0; i < h->h_nheaders; i++) {
			hs_str(hs, tag, h->h_headers[i].name);
			hs_str(hs, tag, h->h_headers[i].value);
		}
		/* FALLTHROUGH */
	case HANDLER_TCP_SOCKET:
		hs_str(hs, tag, h->h_host);
		hs_int(hs, tag, h->h_port.is_str);
		if (h->h_port.is_str)
			hs_str(hs, tag, h->h_port.str);
		else
			hs_int(hs, tag, h->h_port.num);
		break;
	case HANDLER_GRPC:
		hs_int(hs, tag, h->h_grpc_port);
		hs_str(hs, tag, h->h_grpc_service);
		break;
	case HANDLER_SLEEP:
		hs_int(hs, tag, h->h_sleep_seconds);
		break;
	case HANDLER_NONE:
		break;
	}
}

static void
hs_obool(struct hasher *hs, uint8_t tag, struct opt_bool b)
{
	hs_int(hs, tag, b.set ? b.v : -1);
}

static void
hs_oi64(struct hasher *hs, uint8_t tag, struct opt_i64 o)
{
	hs_int(hs, tag, o.set);
	if (o.set)
		hs_int(hs, tag, o.v);
}

uint64_t
container_hash(const struct container *c)
{
	struct hasher                  hs = { FNV64_INIT };
	const struct security_context *sc;
	size_t                         i;

	if (c == NULL)
		return 0;
	hs_str(&hs, 1, c->c_name);
	hs_str(&hs, 2, c->c_image);
	hs_strv(&hs, 3, &c->c_command);
	hs_strv(&hs, 4, &c->c_args);
	hs_str(&hs, 5, c->c_working_dir);
	hs_int(&hs, 6, (int64_t)c->c_nenv);
	for (i = 0; i < c->c_nenv; i++) {
		const struct env_var *e = &c->c_env[i];

		hs_str(&hs, 6, e->name);
		hs_int(&hs, 6, e->src);
		hs_str(&hs, 6, e->value);
		hs_str(&hs, 6, e->ref_name);
		hs_str(&hs, 6, e->ref_key);
		hs_str(&hs, 6, e->ref_container);
		hs_str(&hs, 6, e->ref_api_version);
		hs_int(&hs, 6, e->ref_divisor_milli);
		hs_int(&hs, 6, e->optional);
	}
	hs_int(&hs, 7, (int64_t)c->c_nenv_from);
	for (i = 0; i < c->c_nenv_from; i++) {
		hs_str(&hs, 7, c->c_env_from[i].prefix);
		hs_int(&hs, 7, c->c_env_from[i].is_secret);
		hs_str(&hs, 7, c->c_env_from[i].name);
		hs_int(&hs, 7, c->c_env_from[i].optional);
	}
	hs_int(&hs, 8, (int64_t)c->c_nports);
	for (i = 0; i < c->c_nports; i++) {
		hs_str(&hs, 8, c->c_ports[i].name);
		hs_int(&hs, 8, c->c_ports[i].container_port);
		hs_int(&hs, 8, c->c_ports[i].host_port);
		hs_int(&hs, 8, c->c_ports[i].protocol);
		hs_str(&hs, 8, c->c_ports[i].host_ip);
	}
	hs_resources(&hs, 9, &c->c_resources.requests);
	hs_resources(&hs, 10, &c->c_resources.limits);
	hs_int(&hs, 11, (int64_t)c->c_nmounts);
	for (i = 0; i < c->c_nmounts; i++) {
		hs_str(&hs, 11, c->c_mounts[i].name);
		hs_str(&hs, 11, c->c_mounts[i].mount_path);
		hs_str(&hs, 11, c->c_mounts[i].sub_path);
		hs_int(&hs, 11, c->c_mounts[i].read_only);
		hs_int(&hs, 11, c->c_mounts[i].propagation);
	}
	hs_handler(&hs, 12, c->c_post_start);
	hs_handler(&hs, 13, c->c_pre_stop);
	hs_str(&hs, 14, c->c_term_msg_path);
	hs_int(&hs, 15, c->c_term_msg_policy);
	hs_int(&hs, 16, c->c_pull_policy);
	sc = c->c_security;
	hs_int(&hs, 17, sc != NULL);
	if (sc != NULL) {
		hs_obool(&hs, 17, sc->privileged);
		hs_oi64(&hs, 17, sc->run_as_user);
		hs_oi64(&hs, 17, sc->run_as_group);
		hs_obool(&hs, 17, sc->run_as_non_root);
		hs_obool(&hs, 17, sc->read_only_root_fs);
		hs_obool(&hs, 17, sc->allow_privilege_escalation);
		hs_strv(&hs, 17, &sc->cap_add);
		hs_strv(&hs, 17, &sc->cap_drop);
		hs_str(&hs, 17, sc->seccomp.type);
		hs_str(&hs, 17, sc->seccomp.localhost);
		hs_str(&hs, 17, sc->proc_mount);
	}
	hs_int(&hs, 18, c->c_stdin);
	hs_int(&hs, 19, c->c_stdin_once);
	hs_int(&hs, 20, c->c_tty);
	hs_int(&hs, 21, c->c_has_restart_policy ? (int64_t)c->c_restart_policy : -1);
	return hs.h;
}
