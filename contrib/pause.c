/*
 * pause: the process that holds a pod sandbox's namespaces. It does nothing but wait:
 * SIGTERM or SIGINT ends it (exit 0), SIGCHLD makes it reap children (it is PID 1 of
 * the pod when the PID namespace is shared). Built static by contrib/mkimages.sh into
 * the klet.local/pause image.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	sigset_t set;
	int sig;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		puts("pause (klet) 3.9");
		return 0;
	}
	if (getpid() != 1)
		fprintf(stderr, "pause: warning: not PID 1\n");
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1) {
		perror("pause: sigprocmask");
		return 1;
	}
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGCHLD) {
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			continue;
		}
		fprintf(stderr, "pause: shutting down, got signal %d\n", sig);
		return 0;
	}
}
