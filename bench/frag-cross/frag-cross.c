/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * frag-cross: what packed blocks cost when they pass between two cores
 * through a buffer, as in ob1's copy-in/copy-out and staged paths, against
 * the same packing and unpacking on one core.
 *
 * For each block size, --bytes of blocks (stride: twice the block, at
 * least 64 bytes) are packed from a strided array into one shared buffer
 * and unpacked from it into another strided array:
 *   - one core: a thread on the first CPU packs and unpacks, --handoffs
 *     times;
 *   - two cores: threads on the two CPUs take turns: each unpacks what the
 *     other packed, then packs its own blocks and hands the buffer over
 *     (--handoffs hand-offs);
 *   - hand-off: the two threads pass the turn alone (no data).
 * excess = two cores - one core - hand-off: what the crossing adds per
 * --bytes, and per cache line of them.  Each figure is the median over
 * --reps of a timed loop.  The turn is a spinning flag: the benchmark times
 * cache lines moving between two cores, which a sleeping wait would hide
 * behind the scheduler.  --copy rep-movsb copies each block with the x86
 * string move instead of memcpy: glibc's memcpy switches to it only above
 * its rep_movsb_threshold (`ld.so --list-diagnostics`) and runs a vector
 * loop below it.  After the loops every unpacked block is checked
 * (CHECK FAILED and exit status 1 on a mismatch; --inject-error flips one
 * byte first).
 */

#include "stats.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t bytes = 32768;
static int reps = 11, handoffs = 2000, cpu[2] = {0, 1}, inject, rep_movsb;

/* One block size's arrays and buffer. */
struct run {
	size_t bs, nb, stride, span; /* blocks packed from [0, span), unpacked to [span, 2 span) */
	unsigned char *arr[2], *buf;
	_Atomic int turn;
	int move; /* 0: hand-offs only */
	pthread_barrier_t bar;
	double ns[2];
};

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* One block: memcpy, or with --copy rep-movsb the string move. */
static inline void copy_block(unsigned char *d, const unsigned char *s, size_t n)
{
#if defined(__x86_64__)
	if (rep_movsb) {
		__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
		return;
	}
#endif
	memcpy(d, s, n);
}

static void pack(const struct run *r, const unsigned char *arr)
{
	for (size_t i = 0; i < r->nb; i++)
		copy_block(r->buf + i * r->bs, arr + i * r->stride, r->bs);
}

static void unpack(const struct run *r, unsigned char *arr)
{
	for (size_t i = 0; i < r->nb; i++)
		copy_block(arr + i * r->stride, r->buf + i * r->bs, r->bs);
}

/* Binds the calling thread to CPU c; says why not and returns -1. */
static int pin(int c)
{
	cpu_set_t set;
	int rc;

	CPU_ZERO(&set);
	CPU_SET(c, &set);
	rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (rc)
		fprintf(stderr, "frag-cross: pthread_setaffinity_np CPU %d: %s\n", c, strerror(rc));
	return rc ? -1 : 0;
}

struct side {
	struct run *r;
	int me;
};

static void *turns(void *arg)
{
	struct side *s = arg;
	struct run *r = s->r;

	if (pin(cpu[s->me]))
		exit(1);
	pthread_barrier_wait(&r->bar);
	double t0 = bench_now_us();
	for (int h = s->me; h < handoffs; h += 2) {
		while (atomic_load_explicit(&r->turn, memory_order_acquire) != h)
			cpu_relax();
		if (r->move) {
			if (h > 0)
				unpack(r, r->arr[s->me] + r->span);
			pack(r, r->arr[s->me]);
		}
		atomic_store_explicit(&r->turn, h + 1, memory_order_release);
	}
	while (atomic_load_explicit(&r->turn, memory_order_acquire) < handoffs)
		cpu_relax();
	r->ns[s->me] = (bench_now_us() - t0) * 1e3 / handoffs;
	return NULL;
}

/* ns per hand-off on two cores (move: with the blocks). */
static double two_cores(struct run *r, int move)
{
	pthread_t th[2];
	struct side s[2] = {{r, 0}, {r, 1}};
	int rc = pthread_barrier_init(&r->bar, NULL, 2);

	r->move = move;
	atomic_store(&r->turn, 0);
	for (int i = 0; !rc && i < 2; i++)
		rc = pthread_create(&th[i], NULL, turns, &s[i]);
	if (rc) {
		fprintf(stderr, "frag-cross: pthread_barrier_init/create: %s\n", strerror(rc));
		exit(1);
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	pthread_barrier_destroy(&r->bar);
	return r->ns[0] > r->ns[1] ? r->ns[0] : r->ns[1];
}

/* ns per pack + unpack on the first CPU alone. */
static double one_core(struct run *r)
{
	double t0 = bench_now_us();

	for (int h = 0; h < handoffs; h++) {
		unpack(r, r->arr[1] + r->span);
		pack(r, r->arr[0]);
	}
	return (bench_now_us() - t0) * 1e3 / handoffs;
}

/* Every block unpacked into arr[me] holds the other side's fill byte. */
static int check(const struct run *r, int me)
{
	for (size_t i = 0; i < r->nb; i++)
		for (size_t b = 0; b < r->bs; b++)
			if (r->arr[me][r->span + i * r->stride + b] != (unsigned char)(2 - me))
				return -1;
	return 0;
}

static int measure(size_t bs)
{
	struct run r = {.bs = bs, .nb = bytes / bs, .stride = 2 * bs < 64 ? 64 : 2 * bs};
	double *t[3];
	size_t span = (r.nb * r.stride + 4095) & ~(size_t)4095;
	int rc = 0;

	r.span = span;
	r.buf = aligned_alloc(64, (r.nb * bs + 63) & ~(size_t)63);
	for (int i = 0; i < 2; i++)
		r.arr[i] = aligned_alloc(4096, 2 * span);
	for (int i = 0; i < 3; i++)
		t[i] = malloc(sizeof(double) * (size_t)reps);
	if (!r.buf || !r.arr[0] || !r.arr[1] || !t[0] || !t[1] || !t[2]) {
		fprintf(stderr, "frag-cross: malloc of 4 x %zu bytes: %s\n", span, strerror(errno));
		rc = -1;
		goto out;
	}
	rc = pin(cpu[0]);
	if (rc)
		goto out;
	for (int k = 0; k < reps; k++) {
		for (int i = 0; i < 2; i++)
			memset(r.arr[i], i + 1, 2 * span);
		t[0][k] = one_core(&r);
		t[1][k] = two_cores(&r, 1);
		t[2][k] = two_cores(&r, 0);
	}
	/* the unpacked blocks: each side's hold the other's fill (the one core
	 * run's were refilled by the memset since) */
	for (size_t i = 0; i < r.nb; i++) {
		memset(r.arr[0] + span + i * r.stride, 0, bs);
		memset(r.arr[1] + span + i * r.stride, 0, bs);
	}
	two_cores(&r, 1);
	if (inject)
		r.arr[1][span + (r.nb - 1) * r.stride] ^= 1;
	if (check(&r, 0) || check(&r, 1)) {
		fprintf(stderr,
			"frag-cross: CHECK FAILED: %zu-byte blocks: unpacked data differ "
			"from the packed\n",
			bs);
		rc = 1;
	}
	struct bench_stats s[3];
	for (int i = 0; i < 3; i++)
		bench_stats(t[i], (size_t)reps, &s[i]);
	double excess = s[1].median - s[0].median - s[2].median;
	printf("%zu,%zu,%zu,%.1f,%.1f,%.1f,%.1f,%.2f\n", bs, r.nb, r.nb * bs, s[0].median,
	       s[1].median, s[2].median, excess, excess / ((double)(r.nb * bs) / 64));
	fflush(stdout);
out:
	for (int i = 0; i < 3; i++)
		free(t[i]);
	free(r.buf);
	free(r.arr[0]);
	free(r.arr[1]);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"bytes", required_argument, 0, 'b'}, {"blocks", required_argument, 0, 'B'},
	    {"reps", required_argument, 0, 'r'},  {"handoffs", required_argument, 0, 'n'},
	    {"cpus", required_argument, 0, 'c'},  {"inject-error", no_argument, 0, 'i'},
	    {"copy", required_argument, 0, 'C'},  {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0}};
	const char *blocks = "8,32,64,128,256,512,1024,4096";
	int ch, rc = 0;

	while ((ch = getopt_long(argc, argv, "b:B:r:n:c:C:ih", lo, NULL)) != -1) {
		switch (ch) {
		case 'b':
			bytes = (size_t)atoll(optarg);
			break;
		case 'B':
			blocks = optarg;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'n':
			handoffs = atoi(optarg);
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &cpu[0], &cpu[1]) != 2) {
				fprintf(stderr, "frag-cross: --cpus A,B: two CPU numbers\n");
				return 2;
			}
			break;
		case 'i':
			inject = 1;
			break;
		case 'C':
			if (!strcmp(optarg, "rep-movsb")) {
#if defined(__x86_64__)
				rep_movsb = 1;
#else
				fprintf(stderr, "frag-cross: --copy rep-movsb: x86-64 only\n");
				return 2;
#endif
			} else if (strcmp(optarg, "memcpy")) {
				fprintf(stderr,
					"frag-cross: --copy '%s': memcpy or rep-movsb\n", optarg);
				return 2;
			}
			break;
		case 'h':
			printf(
			    "usage: frag-cross [--bytes B (default 32768)] [--blocks LIST (default "
			    "8,32,64,128,256,512,1024,4096)]\n"
			    "                  [--reps N (default 11)] [--handoffs K (default "
			    "2000)] "
			    "[--cpus A,B (default 0,1)]\n"
			    "                  [--copy memcpy|rep-movsb (default memcpy)] "
			    "[--inject-error (flip one unpacked byte: the check must fail)]\n"
			    "Packed blocks passed between two cores through a buffer, against one "
			    "core; ns per hand-off (median of N).\n"
			    "CSV: block_bytes,blocks,bytes,one_core_ns,two_cores_ns,handoff_ns,"
			    "excess_ns,excess_ns_per_line\n");
			return 0;
		default:
			return 2;
		}
	}
	if (bytes < 8 || reps < 1 || handoffs < 3 || cpu[0] < 0 || cpu[1] < 0) {
		fprintf(stderr, "frag-cross: bad arguments: --bytes >= 8, --reps >= 1, "
				"--handoffs >= 3, CPUs >= 0\n");
		return 2;
	}
	printf("block_bytes,blocks,bytes,one_core_ns,two_cores_ns,handoff_ns,excess_ns,"
	       "excess_ns_per_line\n");
	for (const char *p = blocks; *p;) {
		char *end;
		long bs = strtol(p, &end, 10);
		if (end == p || bs < 1 || (size_t)bs > bytes) {
			fprintf(stderr, "frag-cross: --blocks: '%s': sizes from 1 to --bytes\n", p);
			return 2;
		}
		int m = measure((size_t)bs);
		if (m < 0)
			return 1;
		rc |= m;
		p = *end == ',' ? end + 1 : end;
	}
	return rc;
}
