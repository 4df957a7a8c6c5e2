/* sdnotify.h — systemd's service notification protocol (sd_notify(3)), spoken directly.
 *
 * Written here rather than linking libsystemd: the protocol is one datagram of "KEY=VALUE\n"
 * lines to the unix socket named by $NOTIFY_SOCKET (a path, or '@' for the abstract
 * namespace), documented as stable; libsystemd would map about 1 MiB more of shared
 * libraries (and their own dependencies) into a daemon whose footprint is the product. */
#ifndef KLET_SDNOTIFY_H
#define KLET_SDNOTIFY_H

#include <stdint.h>

/* Sends one notification (e.g. "READY=1\nSTATUS=running"). Returns 1 when sent, 0 when
 * $NOTIFY_SOCKET is not set (not run by systemd: nothing to do), -1 on error (errno set;
 * never fatal: the caller may log it once). Never blocks. */
int sdnotify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The watchdog interval systemd asked for ($WATCHDOG_USEC, when $WATCHDOG_PID is unset or
 * this process), in microseconds; 0 when there is none. */
int64_t sdnotify_watchdog_usec(void);

#endif
