/* tapc.c — see tapc.h. */
#include <stdarg.h>
#include <stdio.h>

#include <event2/event.h>

#include "tapc.h"
#include "util.h"

static int tap_pass, tap_fail;

void
tap_check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		tap_pass++;
	else
		tap_fail++;
}

int
tap_failed(void)
{
	return tap_fail;
}

int
tap_finish(void)
{
	printf("%d passed, %d failed\n", tap_pass, tap_fail);
	return tap_fail != 0;
}

static void
tap_tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
}

int
tap_run_until(struct event_base *base, int (*cond)(void *), void *arg, int64_t ms)
{
	struct event *t = event_new(base, -1, EV_PERSIST, tap_tick, NULL);
	struct timeval tv = { 0, 20000 };
	int64_t end = now_mono_ms() + ms;
	int r;

	event_add(t, &tv);
	while (!(r = cond(arg)) && now_mono_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return r;
}

int
tap_never(void *arg)
{
	(void)arg;
	return 0;
}
