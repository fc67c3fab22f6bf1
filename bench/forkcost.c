/* Fork cost against the size of the forking process (bench/README.md, harness CPU).
 *
 * forkcost N ANON_KIB EXTRA: touches ANON_KIB of heap and makes EXTRA 8 KiB anonymous
 * mappings split in two by mprotect (2 x EXTRA mappings, each with anonymous pages), then
 * forks N children that wait on a pipe, closes it and reaps them. Prints the parent's thread
 * CPU time per fork and per reap, us. Build: gcc -O2 -o /tmp/forkcost bench/forkcost.c
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: forkcost N ANON_KIB EXTRA\n");
		return 2;
	}
	int n = atoi(argv[1]), extra = atoi(argv[3]);
	long anon_kib = atol(argv[2]);
	if (anon_kib) {
		char *p = malloc(anon_kib * 1024);
		memset(p, 1, anon_kib * 1024);
	}
	for (int i = 0; i < extra; i++) {
		char *p = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		p[0] = 1;
		mprotect(p + 4096, 4096, PROT_READ);
	}
	int fd[2];
	if (pipe(fd) != 0)
		return 1;
	long long t0 = thread_cpu_ns();
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			char c;
			close(fd[1]);
			(void)!read(fd[0], &c, 1);
			_exit(0);
		}
	}
	long long t1 = thread_cpu_ns();
	close(fd[1]);
	while (wait(NULL) > 0)
		;
	long long t2 = thread_cpu_ns();
	printf("anon %ld KiB, +%d vmas: fork %.1f us, reap %.1f us per child\n", anon_kib, extra,
	       (t1 - t0) / 1e3 / n, (t2 - t1) / 1e3 / n);
	return 0;
}
