/* shutdown_plan.h — the kubelet's graceful node shutdown order (pkg/kubelet/nodeshutdown) as
 * pure functions: shutdownGracePeriod and shutdownGracePeriodCriticalPods become two groups
 * by pod priority (migrateConfig), each pod goes to its group (groupByPriority), and each is
 * killed with the smaller of its group's grace and its own terminationGracePeriodSeconds.
 * The groups run one after the other, lowest priority first, each for at most its grace. */
#ifndef KLET_LOGIC_SHUTDOWN_PLAN_H
#define KLET_LOGIC_SHUTDOWN_PLAN_H

#include <stddef.h>
#include <stdint.h>

struct pod;

#define SHUTDOWN_CRITICAL_PRIORITY 2000000000 /* scheduling.SystemCriticalPriority */
#define SHUTDOWN_MAX_GROUPS        2

struct shutdown_group {
	int32_t priority; /* the lowest pod priority of the group */
	int64_t grace_s;  /* the group's time, and its pods' grace at most */
};

/* The groups of (period_s, critical_s), sorted by priority: {0, period - critical},
 * {2000000000, critical}. Returns their number: 0 when the feature is off (period 0) or the
 * values are inconsistent (critical above period), as the kubelet. */
size_t shutdown_plan_groups(
    int64_t period_s, int64_t critical_s, struct shutdown_group out[SHUTDOWN_MAX_GROUPS]);
/* The sum of the groups' grace: the inhibitor delay the plan needs. */
int64_t shutdown_plan_total(const struct shutdown_group *, size_t n);
/* logind lets a delay lock hold the shutdown for max_s at most (InhibitDelayMaxSec): the
 * groups are cut to fit, the lowest priority first (critical pods keep their time as long
 * as they can). Returns 1 when something was cut, else 0. */
int shutdown_plan_fit(struct shutdown_group *, size_t n, int64_t max_s);
/* The pod's priority for grouping: spec.priority; a pod without one (0) whose
 * priorityClassName is system-node-critical or system-cluster-critical (a static pod: no
 * API admission set its priority) counts with that class's value. */
int32_t shutdown_plan_priority(const struct pod *);
/* The group of a pod of this priority, groupByPriority's rule: the highest group whose
 * priority is at most the pod's; below the lowest, the lowest. n > 0. */
size_t shutdown_plan_group_of(const struct shutdown_group *, size_t n, int32_t priority);
/* The grace of a pod in group g: the group's, or the pod's own when it is smaller. */
int64_t shutdown_plan_grace(const struct shutdown_group *g, const struct pod *);

#endif
