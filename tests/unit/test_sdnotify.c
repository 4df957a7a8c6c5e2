/* test_sdnotify.c — the notification datagrams, read back from a socket of our own. */
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/sdnotify.h"

static int
listen_dgram(const char *name, int abstract)
{
	struct sockaddr_un sun;
	socklen_t          len;
	int                fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (abstract) {
		memcpy(sun.sun_path + 1, name, strlen(name));
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	} else {
		unlink(name);
		strcpy(sun.sun_path, name);
		len = sizeof(sun);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, len), 0);
	return fd;
}

static void
recv_is(int fd, const char *want)
{
	char    buf[2048];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void
test_path_socket(void **state)
{
	char path[64];
	int  fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/klet-sdnotify-%d.sock", (int)getpid());
	fd = listen_dgram(path, 0);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(sdnotify("READY=1\nSTATUS=running %d pods", 3), 1);
	recv_is(fd, "READY=1\nSTATUS=running 3 pods");
	assert_int_equal(sdnotify("WATCHDOG=1"), 1);
	recv_is(fd, "WATCHDOG=1");
	close(fd);
	unlink(path);
	/* The reader went away: an error, never a crash or a block. */
	assert_int_equal(sdnotify("WATCHDOG=1"), -1);
	unsetenv("NOTIFY_SOCKET");
}

static void
test_abstract_socket(void **state)
{
	char name[64], env[80];
	int  fd;

	(void)state;
	snprintf(name, sizeof(name), "klet-sdnotify-test-%d", (int)getpid());
	fd = listen_dgram(name, 1);
	snprintf(env, sizeof(env), "@%s", name);
	setenv("NOTIFY_SOCKET", env, 1);
	assert_int_equal(sdnotify("STOPPING=1"), 1);
	recv_is(fd, "STOPPING=1");
	close(fd);
	unsetenv("NOTIFY_SOCKET");
}

static void
test_unset_and_bad(void **state)
{
	char big[2048];

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(sdnotify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(sdnotify("READY=1"), -1);
	assert_int_equal(errno, EINVAL);
	setenv("NOTIFY_SOCKET", "/tmp/x", 1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(sdnotify("STATUS=%s", big), -1);
	assert_int_equal(errno, EMSGSIZE);
	unsetenv("NOTIFY_SOCKET");
}

static void
test_watchdog_usec(void **state)
{
	char pid[32];

	(void)state;
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	assert_int_equal(sdnotify_watchdog_usec(), 0);
	setenv("WATCHDOG_USEC", "20000000", 1);
	assert_int_equal(sdnotify_watchdog_usec(), 20000000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_PID", pid, 1);
	assert_int_equal(sdnotify_watchdog_usec(), 20000000);
	setenv("WATCHDOG_PID", "1", 1); /* meant for another process */
	assert_int_equal(sdnotify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_PID");
	setenv("WATCHDOG_USEC", "abc", 1);
	assert_int_equal(sdnotify_watchdog_usec(), 0);
	unsetenv("WATCHDOG_USEC");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_socket),
		cmocka_unit_test(test_abstract_socket),
		cmocka_unit_test(test_unset_and_bad),
		cmocka_unit_test(test_watchdog_usec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
