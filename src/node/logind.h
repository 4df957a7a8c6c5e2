/* logind.h — systemd-logind's shutdown inhibitor over the system bus (D-Bus), for the node
 * shutdown manager (node/nodeshutdown.c): the InhibitDelayMaxUSec property, a "delay" lock
 * for "shutdown" (org.freedesktop.login1.Manager.Inhibit, a file descriptor that holds the
 * shutdown back until it is closed or logind's delay runs out) and the PrepareForShutdown
 * signal.
 *
 * D-Bus is spoken by libsystemd's sd-bus, loaded with dlopen("libsystemd.so.0") only when
 * logind_new is called (shutdownGracePeriod > 0): a kletd without the feature maps nothing
 * more, and there is no build dependency (the few sd-bus prototypes, a stable ABI, are
 * declared in logind.c; libsystemd-dev would pull the whole systemd stack's upgrade on a
 * build machine). sd-bus rather than libdbus-1 or hand-written marshalling: on every host
 * with logind it is already there (systemd's own library), it handles authentication, fd
 * passing and match rules, and it is driven by one descriptor and one timeout, which fit
 * the loop. The bus is $DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket.
 */
#ifndef KLET_NODE_LOGIND_H
#define KLET_NODE_LOGIND_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct logind;

enum logind_event {
	/* The lock is held: fd (owned by the receiver from now on: closing it releases the
	 * lock) and logind's InhibitDelayMaxUSec in delay_us. */
	LOGIND_LOCKED,
	/* PrepareForShutdown(true): the shutdown is about to start. */
	LOGIND_SHUTDOWN,
	/* PrepareForShutdown(false): a shutdown was cancelled. */
	LOGIND_CANCELLED,
	/* Failed (why says what): no logind on the bus, the property or the lock refused, or
	 * the connection lost. Nothing more comes from this object; free it. */
	LOGIND_FAILED,
};

/* Called from the loop (never from logind_new); fd and delay_us only for LOGIND_LOCKED,
 * why only for LOGIND_FAILED (borrowed for the call). The callback may call logind_inhibit
 * but must not free the object (do it on a later turn). */
typedef void (*logind_cb)(enum logind_event, int fd, uint64_t delay_us, const char *why, void *arg);

/* Loads sd-bus, connects to the system bus and starts: subscribe to PrepareForShutdown,
 * read InhibitDelayMaxUSec, take a delay lock (who, why: what logind shows for the lock).
 * Returns NULL with a one-line reason in err when libsystemd cannot be loaded or there is
 * no system bus; everything later comes through cb. */
struct logind *logind_new(struct event_base *, const char *who, const char *why, logind_cb,
    void *arg, char *err, size_t errlen);
/* Asks for another delay lock (after a cancelled shutdown); comes as LOGIND_LOCKED. */
void logind_inhibit(struct logind *);
/* Closes the connection; calls in flight are dropped without their callbacks. Locks already
 * handed out stay with their owners. NULL is a no-op. */
void logind_free(struct logind *);

#endif
