/* logind.c — systemd-logind's shutdown inhibitor through sd-bus, loaded at run time (see
 * logind.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/log.h"
#include "core/util.h"
#include "node/logind.h"

#define LOGIND_DEST  "org.freedesktop.login1"
#define LOGIND_PATH  "/org/freedesktop/login1"
#define LOGIND_IFACE "org.freedesktop.login1.Manager"

/* sd-bus's types and the functions used, as sd-bus(3) documents them (ABI stable since
 * systemd 221; sd_bus_match_signal_async 237, sd_bus_close_unref 241). */
typedef struct sd_bus         sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot    sd_bus_slot;
typedef struct {
	const char *name;
	const char *message;
	int         _need_free;
} sd_bus_error;
typedef int (*sd_bus_message_handler_t)(sd_bus_message *, void *, sd_bus_error *);

static struct logind_sd {
	int (*open_system)(sd_bus **);
	int (*get_fd)(sd_bus *);
	int (*get_events)(sd_bus *);
	int (*get_timeout)(sd_bus *, uint64_t *);
	int (*process)(sd_bus *, sd_bus_message **);
	sd_bus *(*close_unref)(sd_bus *);
	int (*call_method_async)(sd_bus *, sd_bus_slot **, const char *, const char *, const char *,
	    const char *, sd_bus_message_handler_t, void *, const char *, ...);
	int (*match_signal_async)(sd_bus *, sd_bus_slot **, const char *, const char *,
	    const char *, const char *, sd_bus_message_handler_t, sd_bus_message_handler_t, void *);
	int (*message_read)(sd_bus_message *, const char *, ...);
	int (*message_is_method_error)(sd_bus_message *, const char *);
	const sd_bus_error *(*message_get_error)(sd_bus_message *);
	int loaded; /* 1 loaded, -1 failed */
} logind_sd;

struct logind {
	struct event_base *l_base;
	sd_bus            *l_bus;
	struct event      *l_read;
	struct event      *l_write;
	struct event      *l_timer;
	struct event      *l_fail_ev; /* reports a failure on a later turn */
	char              *l_who;
	char              *l_why;
	char              *l_failed; /* why, once failed */
	uint64_t           l_delay_us;
	int                l_have_delay;
	logind_cb          l_cb;
	void              *l_arg;
};

/* Loads libsystemd once per process; it stays loaded. 0, or -1 with err set. */
static int
logind_load(char *err, size_t errlen)
{
	static char why[256];
	void       *h;

	if (logind_sd.loaded == 0) {
		logind_sd.loaded = -1;
		if ((h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL)) == NULL) {
			snprintf(
			    why, sizeof(why), "libsystemd.so.0 cannot be loaded: %s", dlerror());
			goto out;
		}
#define LOGIND_SYM(field, name)                                                                    \
	if ((*(void **)&logind_sd.field = dlsym(h, name)) == NULL) {                               \
		snprintf(                                                                          \
		    why, sizeof(why), "libsystemd.so.0 lacks %s (systemd older than 241)", name);  \
		goto out;                                                                          \
	}
		LOGIND_SYM(open_system, "sd_bus_open_system");
		LOGIND_SYM(get_fd, "sd_bus_get_fd");
		LOGIND_SYM(get_events, "sd_bus_get_events");
		LOGIND_SYM(get_timeout, "sd_bus_get_timeout");
		LOGIND_SYM(process, "sd_bus_process");
		LOGIND_SYM(close_unref, "sd_bus_close_unref");
		LOGIND_SYM(call_method_async, "sd_bus_call_method_async");
		LOGIND_SYM(match_signal_async, "sd_bus_match_signal_async");
		LOGIND_SYM(message_read, "sd_bus_message_read");
		LOGIND_SYM(message_is_method_error, "sd_bus_message_is_method_error");
		LOGIND_SYM(message_get_error, "sd_bus_message_get_error");
#undef LOGIND_SYM
		logind_sd.loaded = 1;
	}
out:
	if (logind_sd.loaded == 1)
		return 0;
	snprintf(err, errlen, "%s", why);
	return -1;
}

/* Marks the object failed; the callback runs on a later turn (never inside sd-bus). */
static void logind_fail(struct logind *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
logind_fail(struct logind *l, const char *fmt, ...)
{
	va_list ap;

	if (l->l_failed != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&l->l_failed, fmt, ap) == -1)
		l->l_failed = xstrdup("failed");
	va_end(ap);
	event_active(l->l_fail_ev, EV_TIMEOUT, 0);
}

static void
logind_fail_cb(evutil_socket_t fd, short what, void *arg)
{
	struct logind *l = arg;

	(void)fd;
	(void)what;
	if (l->l_bus != NULL) {
		event_del(l->l_read);
		event_del(l->l_write);
		event_del(l->l_timer);
		logind_sd.close_unref(l->l_bus);
		l->l_bus = NULL;
	}
	l->l_cb(LOGIND_FAILED, -1, 0, l->l_failed, l->l_arg);
}

/* The reply's error as "NAME: message", or NULL when it is no error. */
static const char *
logind_reply_error(sd_bus_message *m, char *buf, size_t len)
{
	const sd_bus_error *e;

	if (!logind_sd.message_is_method_error(m, NULL))
		return NULL;
	e = logind_sd.message_get_error(m);
	snprintf(buf, len, "%s: %s", e != NULL && e->name != NULL ? e->name : "error",
	    e != NULL && e->message != NULL ? e->message : "(no message)");
	return buf;
}

static int
logind_inhibit_reply(sd_bus_message *m, void *arg, sd_bus_error *ret)
{
	struct logind *l = arg;
	char           buf[512];
	const char    *e;
	int            fd = -1, dup_fd;

	(void)ret;
	if (l->l_failed != NULL)
		return 0;
	if ((e = logind_reply_error(m, buf, sizeof(buf))) != NULL) {
		logind_fail(l, "systemd-logind refused the inhibitor lock: %s", e);
		return 0;
	}
	if (logind_sd.message_read(m, "h", &fd) < 0 || fd < 0) {
		logind_fail(l, "systemd-logind's Inhibit reply has no file descriptor");
		return 0;
	}
	/* The message owns fd: the lock is a copy that lives until its owner closes it. */
	if ((dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1) {
		logind_fail(l, "inhibitor lock: %s", strerror(errno));
		return 0;
	}
	l->l_cb(LOGIND_LOCKED, dup_fd, l->l_delay_us, NULL, l->l_arg);
	return 0;
}

void
logind_inhibit(struct logind *l)
{
	int r;

	if (l->l_failed != NULL || l->l_bus == NULL)
		return;
	r = logind_sd.call_method_async(l->l_bus, NULL, LOGIND_DEST, LOGIND_PATH, LOGIND_IFACE,
	    "Inhibit", logind_inhibit_reply, l, "ssss", "shutdown", l->l_who, l->l_why, "delay");
	if (r < 0)
		logind_fail(l, "Inhibit: %s", strerror(-r));
}

static int
logind_delay_reply(sd_bus_message *m, void *arg, sd_bus_error *ret)
{
	struct logind *l = arg;
	char           buf[512];
	const char    *e;
	uint64_t       usec = 0;

	(void)ret;
	if (l->l_failed != NULL)
		return 0;
	if ((e = logind_reply_error(m, buf, sizeof(buf))) != NULL) {
		if (strstr(e, "ServiceUnknown") != NULL || strstr(e, "NameHasNoOwner") != NULL)
			logind_fail(l, "systemd-logind is not on the system bus (%s)", e);
		else
			logind_fail(l, "systemd-logind's InhibitDelayMaxUSec: %s", e);
		return 0;
	}
	if (logind_sd.message_read(m, "v", "t", &usec) < 0) {
		logind_fail(l, "systemd-logind's InhibitDelayMaxUSec is not a uint64");
		return 0;
	}
	l->l_delay_us = usec;
	l->l_have_delay = 1;
	logind_inhibit(l);
	return 0;
}

static int
logind_signal(sd_bus_message *m, void *arg, sd_bus_error *ret)
{
	struct logind *l = arg;
	int            active = 0;

	(void)ret;
	if (l->l_failed != NULL)
		return 0;
	if (logind_sd.message_read(m, "b", &active) < 0) {
		log_warnx("logind: PrepareForShutdown without its boolean; ignored");
		return 0;
	}
	l->l_cb(active ? LOGIND_SHUTDOWN : LOGIND_CANCELLED, -1, 0, NULL, l->l_arg);
	return 0;
}

/* Runs sd-bus until it has nothing to do, then waits for what it asks for. */
static void
logind_pump(struct logind *l)
{
	uint64_t        until;
	int             r, ev;
	struct timespec ts;

	while (l->l_failed == NULL && l->l_bus != NULL) {
		r = logind_sd.process(l->l_bus, NULL);
		if (r < 0) {
			logind_fail(l, "system bus connection lost: %s", strerror(-r));
			return;
		}
		if (r == 0)
			break;
	}
	if (l->l_failed != NULL || l->l_bus == NULL)
		return;
	ev = logind_sd.get_events(l->l_bus);
	if (ev > 0 && (ev & POLLOUT))
		event_add(l->l_write, NULL);
	else
		event_del(l->l_write);
	event_del(l->l_timer);
	if (logind_sd.get_timeout(l->l_bus, &until) >= 0 && until != UINT64_MAX) {
		int64_t now_us, wait_us;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		wait_us = (int64_t)until > now_us ? (int64_t)until - now_us : 0;
		{
			struct timeval tv = { wait_us / 1000000, wait_us % 1000000 };

			event_add(l->l_timer, &tv);
		}
	}
}

static void
logind_io(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	logind_pump(arg);
}

struct logind *
logind_new(struct event_base *base, const char *who, const char *why, logind_cb cb, void *arg,
    char *err, size_t errlen)
{
	struct logind *l;
	const char    *addr = getenv("DBUS_SYSTEM_BUS_ADDRESS");
	int            r, fd;

	if (logind_load(err, errlen) == -1)
		return NULL;
	l = xcalloc(1, sizeof(*l));
	l->l_base = base;
	l->l_cb = cb;
	l->l_arg = arg;
	l->l_who = xstrdup(who);
	l->l_why = xstrdup(why);
	l->l_fail_ev = event_new(base, -1, 0, logind_fail_cb, l);
	if ((r = logind_sd.open_system(&l->l_bus)) < 0) {
		snprintf(err, errlen, "no system bus at %s: %s",
		    addr != NULL ? addr : "/run/dbus/system_bus_socket", strerror(-r));
		l->l_bus = NULL;
		logind_free(l);
		return NULL;
	}
	fd = logind_sd.get_fd(l->l_bus);
	l->l_read = event_new(base, fd, EV_READ | EV_PERSIST, logind_io, l);
	l->l_write = event_new(base, fd, EV_WRITE, logind_io, l);
	l->l_timer = evtimer_new(base, logind_io, l);
	event_add(l->l_read, NULL);
	/* Subscribe before anything can announce a shutdown; then the delay, then the lock. */
	r = logind_sd.match_signal_async(l->l_bus, NULL, LOGIND_DEST, LOGIND_PATH, LOGIND_IFACE,
	    "PrepareForShutdown", logind_signal, NULL, l);
	if (r >= 0)
		r = logind_sd.call_method_async(l->l_bus, NULL, LOGIND_DEST, LOGIND_PATH,
		    "org.freedesktop.DBus.Properties", "Get", logind_delay_reply, l, "ss",
		    LOGIND_IFACE, "InhibitDelayMaxUSec");
	if (r < 0) {
		snprintf(err, errlen, "system bus: %s", strerror(-r));
		logind_free(l);
		return NULL;
	}
	event_active(l->l_timer, EV_TIMEOUT, 0); /* the first turn: nothing runs from here */
	return l;
}

void
logind_free(struct logind *l)
{
	if (l == NULL)
		return;
	if (l->l_bus != NULL)
		logind_sd.close_unref(l->l_bus);
	if (l->l_read != NULL)
		event_free(l->l_read);
	if (l->l_write != NULL)
		event_free(l->l_write);
	if (l->l_timer != NULL)
		event_free(l->l_timer);
	event_free(l->l_fail_ev);
	free(l->l_who);
	free(l->l_why);
	free(l->l_failed);
	free(l);
}
