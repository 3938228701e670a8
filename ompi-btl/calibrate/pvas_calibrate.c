/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pvas_calibrate: the measurements behind ob1's direct-rendezvous cost model
 * (pml_ob1_direct_model.c).  Driven by ompi-btl/calibrate/pvas-calibrate,
 * which fits the model's parameters from what this prints.
 *
 *   pvas_calibrate --local      (one process, singleton MPI_Init)
 *       g1 NS            ns per byte of memcpy, one thread
 *       g2 NS            ns per byte of each of two threads copying at once
 *       direct C NS      direct engine, ns per block of class C (one side
 *                        strided, the other contiguous) beyond a contiguous
 *                        copy of as many bytes timed right after each sample
 *       pack C NS        MPI_Pack, ns per block of class C, the same way
 *       index NS N       MPI_Pack of an index list (hindexed, no stride fits),
 *                        ns per block more than a vector of the same blocks;
 *                        N: the blocks the engine's shape counts as index list
 *       tlb PAGES NS     direct engine, ns per 8-byte block of a vector of
 *                        blocks a page and a line apart (one block on each
 *                        of PAGES pages) beyond a vector of as many blocks
 *                        a line apart: what the engine pays per page walk
 *                        once PAGES are more than the TLB holds
 *   pvas_calibrate --pingpong   (two ranks)
 *       pp KIND BLEN COUNT STRIDE NS SHAPE...
 *                        median one-way time of COUNT blocks of BLEN bytes
 *                        to the same type: KIND vector, STRIDE bytes apart,
 *                        floats or doubles, the same with blocks of a
 *                        contiguous type of MPI_FLOAT or MPI_DOUBLE, or
 *                        index, in random order over COUNT slots of
 *                        STRIDE bytes; SHAPE the engine's shape of the type
 *                        (opal_datatype_direct_shape_t): bytes blocks runs
 *                        sparse_lines index_blocks index_shared_lines
 *                        index_pages sparse_pages, the blocks of each
 *                        class and their bytes
 *   pvas_calibrate --small [--fbox LIST [--passes N]]   (two ranks)
 *       sm CUT KIND BYTES NS
 *                        median one-way time of a small message of BYTES
 *                        bytes: KIND contig, or vector of 40-byte blocks
 *                        80 bytes apart (below 2 KiB with the PML header:
 *                        what btl/pvas may send through a fast box), each
 *                        rank writing its send buffer before it sends and
 *                        receiving into another buffer; CUT the fast-box
 *                        cut-off in force (btl_pvas_fbox_max_send and
 *                        _inplace, set through MPI_T to each of LIST in
 *                        turn, N passes, the order rotating per pass; 0:
 *                        as configured, without --fbox)
 *   pvas_calibrate --packed     (two ranks)
 *       pk KIND BLEN COUNT STRIDE NS SHAPE...
 *                        as pp, for packed messages of 1-4 KiB that fit an
 *                        eager fragment (run with pml_ob1_direct_model own:
 *                        ob1's own eager send)
 *
 * Every timing is the median of --reps repetitions (default 31); a
 * repetition of --small or --packed is 200 round trips.
 */
#include <mpi.h>

#include "opal/constants.h"
#include "opal/datatype/opal_datatype.h"
#include "opal/datatype/opal_datatype_direct.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES (512 * 1024) /* per measurement: fits a 1 MiB L2 */
#define CLASSES OPAL_DATATYPE_DIRECT_CLASSES

/* Block lengths timed for each class of the model (its cost is their
 * mean), spread over the class: a copy's cost per block changes within a
 * class (blocks of 9-24 bytes cost the convertor about what 8-byte ones
 * do, 32-byte ones half as much, on AMD Zen 3). */
#define CLASS_SIZES 3
static const int class_blen[CLASSES][CLASS_SIZES] = {
    {8}, {12, 24, 32}, {48, 96, 128}, {192, 384, 512}, {1024, 1536, 2048}, {3072, 4096}, {16384}};

static int reps = 31;

static void die(const char *what, int rc)
{
	fprintf(stderr, "pvas_calibrate: %s failed (%d)\n", what, rc);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

/* t committed, after its constructor `what` returned rc. */
static MPI_Datatype committed(int rc, MPI_Datatype t, const char *what)
{
	if (rc == MPI_SUCCESS)
		rc = MPI_Type_commit(&t);
	if (rc != MPI_SUCCESS)
		die(what, rc);
	return t;
}

static MPI_Datatype vector_type(int blen, int count, int stride)
{
	MPI_Datatype t;
	int rc = MPI_Type_vector(count, blen, stride, MPI_BYTE, &t);

	return committed(rc, t, "MPI_Type_vector");
}

/* The engine's shape of (type, 1). */
static void type_shape(MPI_Datatype type, opal_datatype_direct_shape_t *shape)
{
	opal_datatype_direct_layout_t *l;
	int rc = opal_datatype_direct_layout_create((const opal_datatype_t *)type, 1, &l);

	if (rc != OPAL_SUCCESS)
		die("opal_datatype_direct_layout_create", rc);
	opal_datatype_direct_layout_shape(l, shape);
	opal_datatype_direct_layout_release(l);
}

/* ---- one process ---------------------------------------------------------- */

/* Two buffers of na and nb bytes in one allocation (returned, to free):
 * *a page-aligned and *b 256 bytes past a page boundary.  Where malloc
 * puts them, b - a may fall 1-31 bytes past a multiple of 4 KiB, and
 * glibc's memcpy of 2-512 KiB then runs 10 times slower on AMD Zen 3
 * (glibc BZ 30994): what a copy costs at most offsets is measured. */
static void *pair_alloc(size_t na, size_t nb, unsigned char **a, unsigned char **b)
{
	size_t skip = (na + 4095) / 4096 * 4096 + 256;
	unsigned char *p = aligned_alloc(4096, skip + (nb + 4095) / 4096 * 4096);

	if (!p)
		die("aligned_alloc", 0);
	*a = p;
	*b = p + skip;
	return p;
}

struct copier {
	unsigned char *dst, *src;
	void *mem;
	pthread_barrier_t *start;
	double ns;
};

static void *copy_thread(void *arg)
{
	struct copier *c = arg;
	double t[64];
	int n = reps < 64 ? reps : 64;

	for (int i = 0; i < n; i++) {
		pthread_barrier_wait(c->start);
		double t0 = now_ns();
		memcpy(c->dst, c->src, BYTES);
		t[i] = now_ns() - t0;
	}
	c->ns = median(t, n);
	return NULL;
}

/* ns per byte of memcpy with `threads` threads copying at once. */
static double stream_cost(int threads)
{
	pthread_barrier_t start;
	struct copier c[2];
	pthread_t tid[2];

	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		c[i].mem = pair_alloc(BYTES, BYTES, &c[i].src, &c[i].dst);
		memset(c[i].src, i + 1, BYTES);
		memset(c[i].dst, 0, BYTES);
		c[i].start = &start;
		if (pthread_create(&tid[i], NULL, copy_thread, &c[i]))
			die("pthread_create", 0);
	}
	double worst = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		worst = c[i].ns > worst ? c[i].ns : worst;
		free(c[i].mem);
	}
	pthread_barrier_destroy(&start);
	return worst / BYTES;
}

/* ns of one MPI_Pack of (buf, 1, type) into out (bytes). */
static double pack_once(const void *buf, MPI_Datatype type, void *out, int bytes)
{
	int pos = 0, rc;
	double t0 = now_ns();

	rc = MPI_Pack(buf, 1, type, out, bytes, &pos, MPI_COMM_SELF);
	if (rc != MPI_SUCCESS)
		die("MPI_Pack", rc);
	return now_ns() - t0;
}

/* Median ns of MPI_Pack of (buf, 1, type) into out (bytes). */
static double pack_ns(const void *buf, MPI_Datatype type, void *out, int bytes, double *t)
{
	for (int i = 0; i < reps; i++)
		t[i] = pack_once(buf, type, out, bytes);
	return median(t, reps);
}

/* ns of one engine copy of src laid out as ls into dst laid out as ld. */
static double copy_once(const opal_datatype_direct_layout_t *ls, const void *src,
			const opal_datatype_direct_layout_t *ld, void *dst, size_t bytes)
{
	double t0 = now_ns();
	int rc = opal_datatype_direct_layout_copy(ls, src, ld, dst, 0, bytes);

	if (rc != OPAL_SUCCESS)
		die("opal_datatype_direct_layout_copy", rc);
	return now_ns() - t0;
}

/* Index lists: 24-byte blocks 72 or 64 bytes apart (alternating, so that no
 * stride describes them) against a vector of as many blocks 68 apart (the
 * same span).  Also prints how many blocks the engine's shape counts as
 * index-list blocks, so that the caller sees the type is one. */
static void index_cost(void)
{
	enum { BLEN = 24, COUNT = 4096 };
	static MPI_Aint disp[COUNT];
	static int blens[COUNT];
	unsigned char *buf = calloc(COUNT + 1, 72), *out = malloc(BLEN * COUNT);
	double *t = malloc(sizeof(double) * (size_t)reps);
	MPI_Datatype idx, vec;
	opal_datatype_direct_shape_t shape;
	int rc;

	if (!buf || !out || !t)
		die("malloc", 0);
	for (int i = 0; i < COUNT; i++) {
		disp[i] = (MPI_Aint)i * 68 + (i & 1) * 4;
		blens[i] = BLEN;
	}
	rc = MPI_Type_create_hindexed(COUNT, blens, disp, MPI_BYTE, &idx);
	idx = committed(rc, idx, "MPI_Type_create_hindexed");
	vec = vector_type(BLEN, COUNT, 68);
	type_shape(idx, &shape);
	printf("index %.4f %zu\n",
	       (pack_ns(buf, idx, out, BLEN * COUNT, t) - pack_ns(buf, vec, out, BLEN * COUNT, t)) /
		       COUNT,
	       shape.index_blocks);
	MPI_Type_free(&idx);
	MPI_Type_free(&vec);
	free(buf);
	free(out);
	free(t);
}

/* The engine's and MPI_Pack's ns per block of a vector of blen-byte
 * blocks (at most BYTES in all, 2 * blen apart) beyond a contiguous copy
 * of as many bytes.  t, tp: room for reps values. */
static void block_costs(int blen, unsigned char *strided, unsigned char *packed, double *t,
			double *tp, double *direct, double *pack)
{
	int count = BYTES / blen, bytes = count * blen, rc;
	MPI_Datatype vec = vector_type(blen, count, 2 * blen), contig;
	opal_datatype_direct_layout_t *ls, *lc;

	MPI_Type_contiguous(bytes, MPI_BYTE, &contig);
	MPI_Type_commit(&contig);
	rc = opal_datatype_direct_layout_create((const opal_datatype_t *)vec, 1, &ls);
	if (rc == OPAL_SUCCESS)
		rc = opal_datatype_direct_layout_create((const opal_datatype_t *)contig, 1, &lc);
	if (rc != OPAL_SUCCESS)
		die("opal_datatype_direct_layout_create", rc);
	/* each sample the vector minus the contiguous copy of as many bytes,
	 * one right after the other: what a phase of the machine adds to both
	 * cancels (for blocks of KiBs the per-block cost is a few ns of a copy
	 * of hundreds of microseconds) */
	for (int i = 0; i < reps; i++) {
		t[i] = copy_once(ls, strided, lc, packed, bytes) -
		       copy_once(lc, strided, lc, packed, bytes);
		tp[i] = pack_once(strided, vec, packed, bytes) -
			pack_once(strided, contig, packed, bytes);
	}
	*direct = median(t, reps) / count;
	*pack = median(tp, reps) / count;
	opal_datatype_direct_layout_release(ls);
	opal_datatype_direct_layout_release(lc);
	MPI_Type_free(&vec);
	MPI_Type_free(&contig);
}

/* Pages of the page-strided sweeps of tlb_cost: spread around the
 * second-level TLBs of x86 cores (1536-4096 entries of 4-KiB pages). */
static const int tlb_pages[] = {512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384};

/* The engine's ns per block of a vector of PAGES 8-byte blocks 4160 bytes
 * apart (a page and a line: the lines fall in every cache set) beyond a
 * vector of as many blocks 64 bytes apart (the same lines on 1/64 of the
 * pages), each copied into a contiguous buffer: the cost of the TLB
 * misses of a strided run, as the engine meets them. */
static void tlb_cost(void)
{
	enum { BLEN = 8, FAR = 4096 + 64, NEAR = 64 };
	int most = tlb_pages[sizeof(tlb_pages) / sizeof(tlb_pages[0]) - 1];
	unsigned char *buf = aligned_alloc(4096, (size_t)most * FAR);
	unsigned char *out = malloc((size_t)most * BLEN);
	double *t = malloc(sizeof(double) * (size_t)reps);

	if (!buf || !out || !t)
		die("malloc", 0);
	memset(buf, 7, (size_t)most * FAR);
	for (size_t i = 0; i < sizeof(tlb_pages) / sizeof(tlb_pages[0]); i++) {
		int n = tlb_pages[i], rc;
		MPI_Datatype far = vector_type(BLEN, n, FAR), near = vector_type(BLEN, n, NEAR);
		MPI_Datatype contig;
		opal_datatype_direct_layout_t *lf, *ln, *lc;

		MPI_Type_contiguous(n * BLEN, MPI_BYTE, &contig);
		MPI_Type_commit(&contig);
		rc = opal_datatype_direct_layout_create((const opal_datatype_t *)far, 1, &lf);
		if (rc == OPAL_SUCCESS)
			rc = opal_datatype_direct_layout_create((const opal_datatype_t *)near, 1, &ln);
		if (rc == OPAL_SUCCESS)
			rc = opal_datatype_direct_layout_create((const opal_datatype_t *)contig, 1, &lc);
		if (rc != OPAL_SUCCESS)
			die("opal_datatype_direct_layout_create", rc);
		/* a pass of each first: the lines in the cache, as in the samples */
		copy_once(lf, buf, lc, out, (size_t)n * BLEN);
		copy_once(ln, buf, lc, out, (size_t)n * BLEN);
		for (int r = 0; r < reps; r++)
			t[r] = copy_once(lf, buf, lc, out, (size_t)n * BLEN) -
			       copy_once(ln, buf, lc, out, (size_t)n * BLEN);
		printf("tlb %d %.4f\n", n, median(t, reps) / n);
		opal_datatype_direct_layout_release(lf);
		opal_datatype_direct_layout_release(ln);
		opal_datatype_direct_layout_release(lc);
		MPI_Type_free(&far);
		MPI_Type_free(&near);
		MPI_Type_free(&contig);
	}
	free(buf);
	free(out);
	free(t);
}

static void local(void)
{
	double g1 = stream_cost(1), g2 = stream_cost(2);
	unsigned char *strided, *packed;
	void *mem = pair_alloc(2 * BYTES, BYTES, &strided, &packed);
	double *t = malloc(sizeof(double) * (size_t)reps);
	double *tp = malloc(sizeof(double) * (size_t)reps);

	if (!t || !tp)
		die("malloc", 0);
	memset(strided, 7, 2 * BYTES);
	printf("g1 %.6f\ng2 %.6f\n", g1, g2);
	for (int c = 0; c < CLASSES; c++) {
		double direct = 0, pack = 0;
		int sizes = 0;

		for (; sizes < CLASS_SIZES && class_blen[c][sizes]; sizes++) {
			double d, p;

			block_costs(class_blen[c][sizes], strided, packed, t, tp, &d, &p);
			direct += d;
			pack += p;
		}
		printf("direct %d %.4f\n", c, direct / sizes);
		printf("pack %d %.4f\n", c, pack / sizes);
	}
	free(mem);
	free(t);
	free(tp);
	index_cost();
	tlb_cost();
}

/* ---- two ranks ------------------------------------------------------------ */

/* COUNT blocks of BLEN bytes in COUNT slots of SPREAD bytes, the slots
 * in a random order (the same on every rank): an index list. */
static MPI_Datatype index_type(int blen, int count, int spread)
{
	int *disp = malloc(sizeof(int) * (size_t)count), rc;
	uint64_t x = 0x9e3779b97f4a7c15u;
	MPI_Datatype t;

	if (!disp)
		die("malloc", 0);
	for (int i = 0; i < count; i++)
		disp[i] = i * spread;
	for (int i = count - 1; i > 0; i--) { /* Fisher-Yates, xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int j = (int)(x % (uint64_t)(i + 1)), d = disp[i];

		disp[i] = disp[j];
		disp[j] = d;
	}
	rc = MPI_Type_create_indexed_block(count, blen, disp, MPI_BYTE, &t);
	free(disp);
	return committed(rc, t, "MPI_Type_create_indexed_block");
}

/* The layouts the ping-pongs time: vectors of bytes, index lists, and
 * vectors whose blocks are a contiguous type of floats or doubles, as
 * applications describe a particle or a row. */
enum kind { VECTOR, INDEX, FLOATS, DOUBLES };
static const char *const kind_name[] = {"vector", "index", "floats", "doubles"};

/* count blocks of blen bytes, stride bytes apart, of elements of `elem`
 * (blen a multiple of its size). */
static MPI_Datatype elem_vector_type(MPI_Datatype elem, int size, int blen, int count, int stride)
{
	MPI_Datatype block, t;
	int rc = MPI_Type_contiguous(blen / size, elem, &block);

	if (rc == MPI_SUCCESS)
		rc = MPI_Type_create_hvector(count, 1, stride, block, &t);
	if (rc == MPI_SUCCESS)
		MPI_Type_free(&block);
	return committed(rc, t, "MPI_Type_create_hvector");
}

static MPI_Datatype shape_type(enum kind kind, int blen, int count, int stride)
{
	switch (kind) {
	case INDEX:
		return index_type(blen, count, stride);
	case FLOATS:
		return elem_vector_type(MPI_FLOAT, 4, blen, count, stride);
	case DOUBLES:
		return elem_vector_type(MPI_DOUBLE, 8, blen, count, stride);
	default:
		return vector_type(blen, count, stride);
	}
}

/* The engine's shape of (type, 1): the SHAPE fields of a pp line. */
static void print_shape(MPI_Datatype type)
{
	opal_datatype_direct_shape_t s;

	type_shape(type, &s);
	printf(" %zu %zu %zu %zu %zu %zu %zu %zu", s.bytes, s.blocks, s.runs, s.sparse_lines,
	       s.index_blocks, s.index_shared_lines, s.index_pages, s.sparse_pages);
	for (int c = 0; c < CLASSES; c++)
		printf(" %zu", s.blocks_by_class[c]);
	for (int c = 0; c < CLASSES; c++)
		printf(" %zu", s.bytes_by_class[c]);
	printf("\n");
}

/* This rank's number; aborts unless there are exactly two. */
static int two_ranks(const char *mode)
{
	int rank, size;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "pvas_calibrate %s: needs 2 ranks, got %d\n", mode, size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return rank;
}

/* Median one-way ns of (sbuf, 1, type) sent back and forth between ranks
 * 0 and 1 and received into rbuf (rank 0's figure): reps samples of batch
 * round trips each, after warm such samples.  Back to back, as DDTBench
 * and bench/ddt time: a barrier before each round trip would add its exit
 * skew to every sample.  Each rank writes the first `write` bytes of sbuf
 * before it sends.  t: room for reps values. */
static double pingpong_ns(void *sbuf, void *rbuf, size_t write, MPI_Datatype type, int rank,
			  int warm, int batch, double *t)
{
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = -warm; i < reps; i++) {
		double t0 = now_ns();

		for (int k = 0; k < batch; k++) {
			if (rank == 0) {
				memset(sbuf, k, write);
				MPI_Send(sbuf, 1, type, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(rbuf, 1, type, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(rbuf, 1, type, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				memset(sbuf, k, write);
				MPI_Send(sbuf, 1, type, 0, 0, MPI_COMM_WORLD);
			}
		}
		if (i >= 0)
			t[i] = (now_ns() - t0) / (2.0 * batch);
	}
	return median(t, reps);
}

/* A message of count blocks of blen bytes, stride bytes apart. */
struct shape_spec {
	enum kind kind;
	int blen, count, stride;
};

/* Ping-pong each of the n shapes (warm and batch as pingpong_ns) and print,
 * on rank 0, "TAG KIND BLEN COUNT STRIDE NS SHAPE...". */
static void time_shapes(const char *mode, const char *tag, const struct shape_spec *shapes,
			size_t n, int warm, int batch)
{
	double *t = malloc(sizeof(double) * (size_t)reps);
	int rank = two_ranks(mode);

	for (size_t s = 0; s < n; s++) {
		int blen = shapes[s].blen, count = shapes[s].count, stride = shapes[s].stride;
		size_t span = (size_t)stride * (size_t)count;
		MPI_Datatype type = shape_type(shapes[s].kind, blen, count, stride);
		unsigned char *buf = malloc(span);

		if (!buf || !t)
			die("malloc", 0);
		memset(buf, rank + 1, span);
		double ns = pingpong_ns(buf, buf, 0, type, rank, warm, batch, t);

		if (rank == 0) {
			printf("%s %s %d %d %d %.1f", tag, kind_name[shapes[s].kind], blen, count,
			       stride, ns);
			print_shape(type);
		}
		free(buf);
		MPI_Type_free(&type);
	}
	free(t);
}

static void pingpong(void)
{
	/* dense and sparse (one block per cache line or more), small and large,
	 * strided and in random order, lines that fit in the cache and lines
	 * that do not, on pages the TLB covers (1 and 2.4 MiB of lines, past
	 * an L2 of 512 KiB or 2 MiB, over 3 and 7.6 MiB) and on more (a block
	 * a page apart on 4096 and on 16384 pages: the second is beyond the
	 * TLB of every x86 core), blocks of each size class: the fit
	 * separates per-message, per-fragment, per-byte, per-line and
	 * per-page costs, and the crossing per byte of each class.
	 * The sparse vectors beyond the cache are not a power of two apart:
	 * at such a stride their lines crowd into a fraction of the cache's
	 * sets, which the model does not describe (8-byte blocks 256 apart
	 * took 190 us one way, 264 apart 101; AMD EPYC family 25 model 1) */
	static const struct shape_spec shapes[] = {
	    {VECTOR, 8, 512, 16},       {VECTOR, 8, 8192, 16},     {VECTOR, 64, 2048, 128},
	    {VECTOR, 512, 256, 1024},   {VECTOR, 4096, 64, 8192},  {VECTOR, 8, 2048, 128},
	    {VECTOR, 12, 8192, 136},    {VECTOR, 24, 4096, 264},   {VECTOR, 256, 512, 512},
	    {VECTOR, 1024, 16, 2048},   {VECTOR, 16384, 64, 32768}, {VECTOR, 8, 4096, 4160},
	    {VECTOR, 8, 65536, 264},    {VECTOR, 16, 49152, 520},  {VECTOR, 92, 1024, 128},
	    {INDEX, 8, 512, 64},        {INDEX, 4, 2048, 32},      {INDEX, 12, 8192, 64},
	    {INDEX, 12, 16384, 520},    {FLOATS, 12, 5600, 24},    {FLOATS, 44, 1024, 96},
	    {DOUBLES, 40, 33, 1400},    {DOUBLES, 40, 408, 1400},  {DOUBLES, 256, 8, 512},
	    {DOUBLES, 1024, 4, 2048},   {VECTOR, 8, 16384, 192},   {VECTOR, 12, 40000, 200},
	    {VECTOR, 8, 16384, 4160},   {VECTOR, 2048, 64, 6144}};

	time_shapes("--pingpong", "pp", shapes, sizeof(shapes) / sizeof(shapes[0]), 3, 1);
}

/* Small messages, contiguous and of 40-byte blocks, at sizes that a fast
 * box cut-off of 512, 1024 or 2048 bytes (PML header included) lets
 * through and the next smaller one does not.  Exchanged as a halo is:
 * each rank writes its send buffer and receives into another.  Sent back
 * from the buffer it was received into, a message copied in place finds
 * its lines last read by the other core, which a ghost region does not.
 * cut: the cut-off in force, printed (0: as configured). */
static void small_messages(unsigned char *sbuf, unsigned char *rbuf, double *t, int rank,
			   unsigned int cut)
{
	static const int sizes[] = {448, 960, 1984};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int vec = 0; vec < 2; vec++) {
			MPI_Datatype type = vec ? vector_type(40, sizes[s] / 40, 80)
						: vector_type(sizes[s], 1, sizes[s]);
			size_t write = (size_t)(vec ? 2 * sizes[s] : sizes[s]);
			int bytes;
			/* 2 x 200 warm-up round trips: btl/pvas makes a fast box
			 * after its first few messages to a peer */
			double ns = pingpong_ns(sbuf, rbuf, write, type, rank, 2, 200, t);

			MPI_Type_size(type, &bytes);
			if (rank == 0)
				printf("sm %u %s %d %.1f\n", cut, vec ? "vector" : "contig", bytes,
				       ns);
			MPI_Type_free(&type);
		}
	}
}

/* An unsigned MPI_T control variable of this process, by name. */
static MPI_T_cvar_handle uint_cvar(const char *name)
{
	MPI_T_cvar_handle handle;
	MPI_T_enum enumtype;
	MPI_Datatype type;
	int index, count, len = 0, dlen = 0, verbosity, bind, scope;
	int rc = MPI_T_cvar_get_index(name, &index);

	if (MPI_SUCCESS != rc) {
		fprintf(stderr, "pvas_calibrate: MPI_T_cvar_get_index(%s): no such variable (%d)\n",
			name, rc);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	rc = MPI_T_cvar_get_info(index, NULL, &len, &verbosity, &type, &enumtype, NULL, &dlen,
				 &bind, &scope);
	if (MPI_SUCCESS != rc || MPI_UNSIGNED != type || MPI_T_BIND_NO_OBJECT != bind)
		die("MPI_T_cvar_get_info of an unsigned variable bound to no object", rc);
	rc = MPI_T_cvar_handle_alloc(index, NULL, &handle, &count);
	if (MPI_SUCCESS != rc || 1 != count)
		die("MPI_T_cvar_handle_alloc", rc);
	return handle;
}

/* The small messages in one launch under each fast-box cut-off of cut,
 * set through MPI_T (btl/pvas reads btl_pvas_fbox_max_send and _inplace
 * at every send), passes times, the order rotating per pass: the launches
 * of a machine differ more than the passes of one do. */
static void small_cutoffs(unsigned char *sbuf, unsigned char *rbuf, double *t, int rank,
			  const unsigned int *cut, int ncut, int passes)
{
	MPI_T_cvar_handle send_max, inplace_max;
	int provided, rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);

	if (MPI_SUCCESS != rc)
		die("MPI_T_init_thread", rc);
	send_max = uint_cvar("btl_pvas_fbox_max_send");
	inplace_max = uint_cvar("btl_pvas_fbox_max_inplace");
	for (int pass = 0; pass < passes; pass++) {
		for (int c = 0; c < ncut; c++) {
			unsigned int n = cut[(pass + c) % ncut];

			if (MPI_SUCCESS != (rc = MPI_T_cvar_write(send_max, &n)))
				die("MPI_T_cvar_write(btl_pvas_fbox_max_send)", rc);
			if (MPI_SUCCESS != (rc = MPI_T_cvar_write(inplace_max, &n)))
				die("MPI_T_cvar_write(btl_pvas_fbox_max_inplace)", rc);
			MPI_Barrier(MPI_COMM_WORLD);
			small_messages(sbuf, rbuf, t, rank, n);
		}
	}
	MPI_T_cvar_handle_free(&send_max);
	MPI_T_cvar_handle_free(&inplace_max);
	MPI_T_finalize();
}

/* --small: the small messages as configured (ncut 0), or under each
 * cut-off of cut in turn. */
static void small(const unsigned int *cut, int ncut, int passes)
{
	unsigned char *sbuf = malloc(2 * 2048), *rbuf = malloc(2 * 2048);
	double *t = malloc(sizeof(double) * (size_t)reps);
	int rank = two_ranks("--small");

	if (!sbuf || !rbuf || !t)
		die("malloc", 0);
	memset(sbuf, rank + 1, 2 * 2048);
	memset(rbuf, rank + 1, 2 * 2048);
	if (ncut == 0)
		small_messages(sbuf, rbuf, t, rank, 0);
	else
		small_cutoffs(sbuf, rbuf, t, rank, cut, ncut, passes);
	free(sbuf);
	free(rbuf);
	free(t);
}

/* Packed messages of 1-4 KiB that fit an eager fragment, as pp lines
 * ("pk" instead of "pp"): run with pml_ob1_direct_model own, they time
 * ob1's own eager send (the convertor packs, the engine unpacks). */
static void packed(void)
{
	static const struct shape_spec shapes[] = {
	    {VECTOR, 40, 26, 80},    {VECTOR, 40, 50, 80}, {VECTOR, 40, 100, 80},
	    {DOUBLES, 40, 33, 1400}, {VECTOR, 8, 256, 64}, {INDEX, 4, 493, 32}};

	time_shapes("--packed", "pk", shapes, sizeof(shapes) / sizeof(shapes[0]), 2, 200);
}

#define MAX_CUTS 16

static void usage(void)
{
	fprintf(stderr, "usage: pvas_calibrate --local | --pingpong | --small [--fbox LIST "
			"[--passes N]] | --packed [--reps N]\n");
}

static void bad_arguments(void)
{
	usage();
	MPI_Abort(MPI_COMM_WORLD, 2);
}

/* --fbox LIST: comma-separated cut-offs, each 1 or more. */
static int cut_list(const char *list, unsigned int *cut)
{
	int n = 0;

	for (const char *p = list; *p;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || v < 1 || v > 65536 || n == MAX_CUTS || (*end && *end != ','))
			return -1;
		cut[n++] = (unsigned int)v;
		p = *end ? end + 1 : end;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned int cut[MAX_CUTS];
	int mode = 0, ncut = 0, passes = 1;

	MPI_Init(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--local")) {
			mode = 1;
		} else if (!strcmp(argv[i], "--pingpong")) {
			mode = 2;
		} else if (!strcmp(argv[i], "--small")) {
			mode = 3;
		} else if (!strcmp(argv[i], "--packed")) {
			mode = 4;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--fbox") && i + 1 < argc) {
			if ((ncut = cut_list(argv[++i], cut)) <= 0)
				bad_arguments();
		} else if (!strcmp(argv[i], "--passes") && i + 1 < argc) {
			if ((passes = atoi(argv[++i])) <= 0)
				bad_arguments();
		} else {
			bad_arguments();
		}
	}
	if (reps < 3)
		reps = 3;
	if (mode == 1)
		local();
	else if (mode == 2)
		pingpong();
	else if (mode == 3)
		small(cut, ncut, passes);
	else if (mode == 4)
		packed();
	else
		usage();
	MPI_Finalize();
	return mode ? 0 : 2;
}
