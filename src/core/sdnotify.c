/* sdnotify.c — see sdnotify.h. */
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/sdnotify.h"

int
sdnotify(const char *fmt, ...)
{
	struct sockaddr_un sun;
	const char        *path = getenv("NOTIFY_SOCKET");
	char               msg[1024];
	va_list            ap;
	size_t             plen;
	socklen_t          slen;
	ssize_t            n;
	int                fd, len, saved;

	if (path == NULL || path[0] == '\0')
		return 0;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sun.sun_path)) {
		errno = EINVAL;
		return -1;
	}
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(msg)) {
		errno = EMSGSIZE;
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, plen);
	if (path[0] == '@')
		sun.sun_path[0] = '\0'; /* abstract namespace: no terminating NUL counted */
	slen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + (path[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1)
		return -1;
	n = sendto(fd, msg, (size_t)len, MSG_NOSIGNAL, (struct sockaddr *)&sun, slen);
	saved = errno;
	close(fd);
	if (n != (ssize_t)len) {
		errno = n == -1 ? saved : EMSGSIZE;
		return -1;
	}
	return 1;
}

int64_t
sdnotify_watchdog_usec(void)
{
	const char *s = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char       *end;
	long long   v;

	if (s == NULL)
		return 0;
	if (pid != NULL && strtoll(pid, NULL, 10) != (long long)getpid())
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0)
		return 0;
	return v;
}
