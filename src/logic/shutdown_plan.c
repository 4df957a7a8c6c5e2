/* shutdown_plan.c — the kubelet's graceful node shutdown order (see shutdown_plan.h). */
#include <string.h>

#include "logic/shutdown_plan.h"
#include "pod/pod.h"

size_t
shutdown_plan_groups(
    int64_t period_s, int64_t critical_s, struct shutdown_group out[SHUTDOWN_MAX_GROUPS])
{
	if (period_s <= 0 || critical_s < 0 || critical_s > period_s)
		return 0;
	out[0].priority = 0; /* DefaultPriorityWhenNoDefaultClassExists */
	out[0].grace_s = period_s - critical_s;
	out[1].priority = SHUTDOWN_CRITICAL_PRIORITY;
	out[1].grace_s = critical_s;
	return 2;
}

int64_t
shutdown_plan_total(const struct shutdown_group *g, size_t n)
{
	int64_t sum = 0;
	size_t  i;

	for (i = 0; i < n; i++)
		sum += g[i].grace_s;
	return sum;
}

int
shutdown_plan_fit(struct shutdown_group *g, size_t n, int64_t max_s)
{
	int64_t excess = shutdown_plan_total(g, n) - (max_s > 0 ? max_s : 0);
	size_t  i;

	if (excess <= 0)
		return 0;
	for (i = 0; i < n && excess > 0; i++) {
		int64_t cut = g[i].grace_s < excess ? g[i].grace_s : excess;

		g[i].grace_s -= cut;
		excess -= cut;
	}
	return 1;
}

int32_t
shutdown_plan_priority(const struct pod *p)
{
	if (p->priority != 0 || p->priority_class == NULL)
		return p->priority;
	if (strcmp(p->priority_class, "system-node-critical") == 0)
		return SHUTDOWN_CRITICAL_PRIORITY + 1000;
	if (strcmp(p->priority_class, "system-cluster-critical") == 0)
		return SHUTDOWN_CRITICAL_PRIORITY;
	return 0;
}

size_t
shutdown_plan_group_of(const struct shutdown_group *g, size_t n, int32_t priority)
{
	size_t i = 0;

	/* The first group at or above the priority (sort.Search), then one down unless it is
	 * the pod's priority exactly; above every group, the highest. */
	while (i < n && g[i].priority < priority)
		i++;
	if (i == n)
		return n - 1;
	if (i > 0 && g[i].priority > priority)
		i--;
	return i;
}

int64_t
shutdown_plan_grace(const struct shutdown_group *g, const struct pod *p)
{
	int64_t grace = g->grace_s;

	if (p->termination_grace.set && p->termination_grace.v <= grace)
		grace = p->termination_grace.v;
	return grace;
}
