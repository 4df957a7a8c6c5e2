/* tapc.h — TAP-style checks for the C test drivers run by shell tests: "ok"/"not ok" lines and
 * a closing "N passed, N failed", plus running a libevent loop until a condition holds. */
#ifndef KLET_TAPC_H
#define KLET_TAPC_H

#include <stdint.h>

struct event_base;

/* Prints "ok - MSG" or "not ok - MSG" and counts it. */
void tap_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Checks that failed so far. */
int  tap_failed(void);
/* Prints "N passed, N failed"; returns the exit status (0 when nothing failed). */
int  tap_finish(void);
/* Runs base until cond(arg) holds or ms pass (a hang guard, not a timing check); returns
 * cond's last value. */
int  tap_run_until(struct event_base *base, int (*cond)(void *), void *arg, int64_t ms);
/* A condition that never holds: tap_run_until(base, tap_never, NULL, ms) runs for ms. */
int  tap_never(void *arg);

#endif
