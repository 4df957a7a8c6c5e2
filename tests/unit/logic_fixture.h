/* logic_fixture.h — builds pods, runtime statuses and probe sets from short strings for the
 * table tests of the logic area (actions, podstatus). Test-only.
 *
 * Containers:  "web db:LS side:r"   name[:flags]; flags r = restartPolicy Always (sidecar),
 *              L/R/S = liveness/readiness/startup probe, i = image "img-NAME:2" (else
 *              "img-NAME:1"), c = cpu+memory requests=limits, q = cpu request only.
 * Sandboxes:   NULL = one ready sandbox "sb1", pod network, IP 10.0.0.5, attempt 0;
 *              "-" = none; else "id,R|N,P|H,ip,attempt;..." newest first (ip "-" = none).
 * Containers:  "name,r|c|e|u,exit[,flags];..." newest first; flags: O = OOMKilled,
 *              H = stale hash (spec changed since).
 *              The container ID is "NAME-POS" (POS = position in the string).
 * Probes:      "name,L,R,S;..." with - (no result), S (success), F (failure) for the newest
 *              instance of that container.
 */
#ifndef KLET_LOGIC_FIXTURE_H
#define KLET_LOGIC_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logic/actions.h"
#include "pod/pod.h"
#include "pod/hash.h"
#include "pod/runtime.h"
#include "core/util.h"

#define FX_UNUSED __attribute__((unused))

FX_UNUSED static struct probe *
fx_probe(void)
{
	struct probe *pr = xcalloc(1, sizeof(*pr));

	pr->pr_handler.h_kind = HANDLER_TCP_SOCKET;
	pr->pr_handler.h_port.num = 80;
	pr->pr_timeout = 1;
	pr->pr_period = 10;
	pr->pr_success_threshold = 1;
	pr->pr_failure_threshold = 3;
	return pr;
}

FX_UNUSED static void
fx_add_quantity(struct resource_list *rl, const char *name, int64_t milli)
{
	rl->items = xreallocarray(rl->items, rl->n + 1, sizeof(*rl->items));
	rl->items[rl->n].name = xstrdup(name);
	rl->items[rl->n].milli = milli;
	rl->n++;
}

FX_UNUSED static void
fx_containers(const char *spec, enum container_kind kind, struct container **out, size_t *nout)
{
	char *dup, *tok, *save = NULL;

	*out = NULL;
	*nout = 0;
	if (spec == NULL)
		return;
	dup = xstrdup(spec);
	for (tok = strtok_r(dup, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
		struct container *c;
		char             *flags = strchr(tok, ':');

		if (flags != NULL)
			*flags++ = '\0';
		*out = xreallocarray(*out, *nout + 1, sizeof(**out));
		c = &(*out)[(*nout)++];
		memset(c, 0, sizeof(*c));
		c->c_kind = kind;
		c->c_name = xstrdup(tok);
		c->c_image = xsprintf("img-%s:%d", tok, flags && strchr(flags, 'i') ? 2 : 1);
		c->c_pull_policy = PULL_IF_NOT_PRESENT;
		if (flags != NULL) {
			if (strchr(flags, 'r')) {
				c->c_has_restart_policy = 1;
				c->c_restart_policy = RESTART_ALWAYS;
			}
			if (strchr(flags, 'L'))
				c->c_liveness = fx_probe();
			if (strchr(flags, 'R'))
				c->c_readiness = fx_probe();
			if (strchr(flags, 'S'))
				c->c_startup = fx_probe();
			if (strchr(flags, 'c')) {
				fx_add_quantity(&c->c_resources.requests, "cpu", 100);
				fx_add_quantity(&c->c_resources.requests, "memory", 64000);
				fx_add_quantity(&c->c_resources.limits, "cpu", 100);
				fx_add_quantity(&c->c_resources.limits, "memory", 64000);
			}
			if (strchr(flags, 'q'))
				fx_add_quantity(&c->c_resources.requests, "cpu", 250);
		}
	}
	free(dup);
}

FX_UNUSED static struct pod *
fx_pod(enum restart_policy policy, const char *apps, const char *inits, const char *ephem)
{
	struct pod *p = xcalloc(1, sizeof(*p));

	p->refs = 1; /* as decoded: one reference */
	p->name = xstrdup("web");
	p->ns = xstrdup("default");
	p->uid = xstrdup("uid-1");
	p->restart_policy = policy;
	fx_containers(apps, CK_APP, &p->containers, &p->ncontainers);
	fx_containers(inits, CK_INIT, &p->init_containers, &p->ninit_containers);
	fx_containers(ephem, CK_EPHEMERAL, &p->ephemeral_containers, &p->nephemeral_containers);
	return p;
}

FX_UNUSED static const struct container *
fx_find(const struct pod *p, const char *name)
{
	return pod_find_container(p, name);
}

FX_UNUSED static enum rt_cstate
fx_state(char c)
{
	switch (c) {
	case 'r':
		return RT_RUNNING;
	case 'c':
		return RT_CREATED;
	case 'e':
		return RT_EXITED;
	default:
		return RT_UNKNOWN;
	}
}

/* Times: the container at position k of n was created at (n - k) * 100 s (ns units),
 * started 1 s later, finished (exited ones) 50 s later. */
FX_UNUSED static void
fx_rt(const struct pod *p, const char *sandboxes, const char *containers, struct rt_pod_status *rt)
{
	char  *dup, *ent, *save = NULL;
	size_t n = 0, k;

	memset(rt, 0, sizeof(*rt));
	rt->uid = xstrdup(p->uid);
	rt->name = xstrdup(p->name);
	rt->ns = xstrdup(p->ns);
	if (sandboxes == NULL) {
		rt->sandboxes = xcalloc(1, sizeof(*rt->sandboxes));
		rt->nsandboxes = 1;
		rt->sandboxes[0].id = xstrdup("sb1");
		rt->sandboxes[0].state = RT_SB_READY;
		rt->sandboxes[0].network_mode = p->host_network ? RT_NS_NODE : RT_NS_POD;
		rt->sandboxes[0].ip = xstrdup(p->host_network ? "" : "10.0.0.5");
		rt->sandboxes[0].created_at = 1000;
	} else if (strcmp(sandboxes, "-") != 0) {
		dup = xstrdup(sandboxes);
		for (ent = strtok_r(dup, ";", &save); ent; ent = strtok_r(NULL, ";", &save))
			n++;
		free(dup);
		rt->sandboxes = xcalloc(n, sizeof(*rt->sandboxes));
		dup = xstrdup(sandboxes);
		save = NULL;
		k = 0;
		for (ent = strtok_r(dup, ";", &save); ent; ent = strtok_r(NULL, ";", &save), k++) {
			struct rt_sandbox *sb = &rt->sandboxes[k];
			char               id[32], st, mode, ip[32];
			unsigned           att;

			if (sscanf(ent, "%31[^,],%c,%c,%31[^,],%u", id, &st, &mode, ip, &att) != 5)
				abort();
			sb->id = xstrdup(id);
			sb->state = st == 'R' ? RT_SB_READY : RT_SB_NOTREADY;
			sb->network_mode = mode == 'H' ? RT_NS_NODE : RT_NS_POD;
			sb->ip = xstrdup(strcmp(ip, "-") == 0 ? "" : ip);
			sb->attempt = att;
			sb->created_at = (int64_t)(n - k) * 1000;
		}
		rt->nsandboxes = n;
		free(dup);
	}
	if (containers == NULL || containers[0] == '\0')
		return;
	n = 0;
	dup = xstrdup(containers);
	save = NULL;
	for (ent = strtok_r(dup, ";", &save); ent; ent = strtok_r(NULL, ";", &save))
		n++;
	free(dup);
	rt->containers = xcalloc(n, sizeof(*rt->containers));
	dup = xstrdup(containers);
	save = NULL;
	k = 0;
	for (ent = strtok_r(dup, ";", &save); ent; ent = strtok_r(NULL, ";", &save), k++) {
		struct rt_container    *rc = &rt->containers[k];
		const struct container *c;
		char                    name[32], st, flags[8] = "";
		int                     code, got;

		got = sscanf(ent, "%31[^,],%c,%d,%7s", name, &st, &code, flags);
		if (got < 3)
			abort();
		c = fx_find(p, name);
		rc->id = xsprintf("%s-%zu", name, k);
		rc->name = xstrdup(name);
		rc->sandbox_id = xstrdup("sb1");
		rc->state = fx_state(st);
		rc->created_at = (int64_t)(n - k) * 100 * 1000000000LL;
		rc->started_at = rc->state == RT_CREATED ? 0 : rc->created_at + 1000000000LL;
		if (rc->state == RT_EXITED) {
			rc->finished_at = rc->created_at + 50 * 1000000000LL;
			rc->exit_code = code;
			rc->reason = xstrdup(strchr(flags, 'O') ? "OOMKilled"
			        : code == 0                     ? "Completed"
			                                        : "Error");
		} else if (strchr(flags, 'O'))
			rc->reason = xstrdup("OOMKilled");
		rc->image = xstrdup(c ? c->c_image : "img");
		rc->image_ref = xsprintf("sha256:%s", name);
		rc->hash = c ? container_hash(c) : 0;
		if (strchr(flags, 'H'))
			rc->hash ^= 1;
		rc->restart_count = 0;
	}
	rt->ncontainers = n;
	free(dup);
	/* restart counts: older instances of the same name count up. */
	for (k = n; k-- > 0;) {
		size_t j;
		int    older = 0;

		for (j = k + 1; j < n; j++)
			if (strcmp(rt->containers[j].name, rt->containers[k].name) == 0)
				older++;
		rt->containers[k].restart_count = older;
	}
}

FX_UNUSED static enum probe_res
fx_pres(char c)
{
	return c == 'S' ? PROBE_SUCCESS : c == 'F' ? PROBE_FAILURE : PROBE_NONE;
}

/* The returned set's strings point into rt; free ps->v only. */
FX_UNUSED static void
fx_probes(const struct rt_pod_status *rt, const char *spec, struct probe_set *ps)
{
	char               *dup, *ent, *save = NULL;
	struct probe_state *v = NULL;
	size_t              n = 0;

	ps->v = NULL;
	ps->n = 0;
	if (spec == NULL)
		return;
	dup = xstrdup(spec);
	for (ent = strtok_r(dup, ";", &save); ent; ent = strtok_r(NULL, ";", &save)) {
		char                       name[32], l, r, s;
		const struct rt_container *rc;

		if (sscanf(ent, "%31[^,],%c,%c,%c", name, &l, &r, &s) != 4)
			abort();
		rc = rt_find_container(rt, name);
		if (rc == NULL)
			continue;
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n].container_id = rc->id;
		v[n].liveness = fx_pres(l);
		v[n].readiness = fx_pres(r);
		v[n].startup = fx_pres(s);
		n++;
	}
	free(dup);
	ps->v = v;
	ps->n = n;
}

#endif
