/* bench_wake.c — the floor under an idle process's CPU time: a process that does nothing but
 * sleep and wake up RATE times a second, for SECONDS seconds (nanosleep; the same
 * timer, scheduler and, in a virtual machine, exit costs as any other wake-up), prints
 * "wake_floor rate=R secs=S cpu_ms_per_s=C us_per_wake=U" with its own CPU time over the loop
 * (/proc/self/schedstat, nanoseconds). bench_footprint.sh runs it at kletd's rate of wake-ups
 * in the idle window, beside kletd's idle CPU.
 *   cc -O2 -o bench_wake bench_wake.c && ./bench_wake 3.2 20
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long
bw_cpu_ns(void)
{
	FILE     *f = fopen("/proc/self/schedstat", "r");
	long long ns = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

int
main(int argc, char **argv)
{
	double          rate, secs;
	long long       c0, c1, n, i;
	struct timespec ts;

	if (argc != 3 || (rate = atof(argv[1])) <= 0 || rate > 10000 ||
	    (secs = atof(argv[2])) <= 0 || secs > 3600) {
		fprintf(stderr, "usage: bench_wake RATE(wake-ups/s, 0-10000) SECONDS(0-3600)\n");
		return 2;
	}
	n = (long long)(rate * secs + 0.5);
	if (n < 1)
		n = 1;
	ts.tv_sec = (time_t)(1 / rate);
	ts.tv_nsec = (long)((1 / rate - (double)ts.tv_sec) * 1e9);
	if ((c0 = bw_cpu_ns()) < 0) {
		fprintf(stderr, "bench_wake: /proc/self/schedstat cannot be read\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		nanosleep(&ts, NULL);
	c1 = bw_cpu_ns();
	printf("wake_floor rate=%.2f secs=%.1f cpu_ms_per_s=%.3f us_per_wake=%.1f\n", rate,
	    (double)n / rate, (double)(c1 - c0) / 1e6 / ((double)n / rate),
	    (double)(c1 - c0) / 1e3 / (double)n);
	return 0;
}
