/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddt_fuzz: datatype fuzzer of the direct two-layout copy
 * engine (opal_datatype_copy_direct, ompi-btl/opal/datatype/).
 *
 * Each case builds a random pair of nested datatypes (send, receive) with
 * equal type signatures, from every MPI constructor (contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
 * subarray, darray, resized, dup) over a "unit" (a basic type, or a struct
 * of int, double, char with its own layout on each side), with counts that
 * equalise the signatures.  The reference result is MPI_Pack (send) then
 * MPI_Unpack (receive) into a copy of the guarded receive buffer; the engine
 * must produce the same buffer, byte for byte, guards included, copying the
 * whole range, and the ranges [0,a) [a,b) [b,n) in random order (the two
 * sides of a split transfer).
 *
 * Families: six unit kinds, same datatype both sides, one side contiguous
 * (either), MPI_BOTTOM, zero-size, compiled layouts reused for 8 split
 * rounds, FFT-shaped transposes; a third of the random and zero-size cases
 * go through opal_convertor_copy_direct on two prepared convertors.
 * Receive typemaps that overlap are skipped (erroneous in MPI).
 *
 * The generator (types, buffers, reference) is tests/ddt-copy/ddt_gen.c,
 * shared with the MPI send/receive fuzzer tests/mpi/src/ddt_sendrecv_fuzz.c.
 *
 * Usage: ddt_fuzz [--seed S] [--cases N] [--family F] [--case K] [-v]
 * Runs N (default 2000) cases per family with the fixed seed, then with a
 * random seed (printed), unless --seed is given.  Cases are numbered per
 * family; case K of family F with seed S is reproducible alone:
 * ddt_fuzz --seed S --family F --case K -v.
 * Output: TAP, one test per family and seed.
 */
#include <mpi.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/datatype/opal_datatype.h"
#include "opal/datatype/opal_datatype_direct.h"

#include "ddt_gen.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Debug hook: link a ddc_dump() (engine internals) to see layouts with -v. */
void ddc_dump(const opal_datatype_t *dt, size_t count) __attribute__((weak));

/* ompi_datatype_t starts with its opal_datatype_t. */
#define OPAL_DT(t) ((const opal_datatype_t *)(t))

static int verbose;

/* ---- families ---------------------------------------------------------- */
struct family {
	const char *name;
	enum ddt_unit_kind unit;
	int mode; /* F_* */
};
enum {
	F_RANDOM,
	F_SAME,
	F_CONTIG_RECV,
	F_CONTIG_SEND,
	F_BOTTOM,
	F_ZERO,
	F_LAYOUT,
	F_TRANSPOSE,
	F_INDEX,
	F_STAGED
};
static const struct family families[] = {
    {"char units", DDT_U_CHAR, F_RANDOM},
    {"short units", DDT_U_SHORT, F_RANDOM},
    {"int units", DDT_U_INT, F_RANDOM},
    {"double units", DDT_U_DOUBLE, F_RANDOM},
    {"complex16 units", DDT_U_CPLX, F_RANDOM},
    {"mixed struct units (int,double,char)", DDT_U_MIXED, F_RANDOM},
    {"same datatype both sides", DDT_U_DOUBLE, F_SAME},
    {"contiguous receive (unpack side)", DDT_U_INT, F_CONTIG_RECV},
    {"contiguous send (pack side)", DDT_U_DOUBLE, F_CONTIG_SEND},
    {"MPI_BOTTOM absolute addresses", DDT_U_MIXED, F_BOTTOM},
    {"zero-size datatypes", DDT_U_INT, F_ZERO},
    {"compiled layouts reused for many splits", DDT_U_MIXED, F_LAYOUT},
    {"transposes (FFT shape, both directions)", DDT_U_DOUBLE, F_TRANSPOSE},
    {"index lists of small blocks (SPECFEM3D, LAMMPS shape)", DDT_U_INT, F_INDEX},
    {"index lists, double units", DDT_U_DOUBLE, F_INDEX},
    {"pack and unpack through a buffer of the range (staged path)", DDT_U_MIXED, F_STAGED},
};
#define NFAM ((int)(sizeof(families) / sizeof(families[0])))

static enum ddt_pair_mode pair_mode(int mode)
{
	switch (mode) {
	case F_SAME:
		return DDT_PAIR_SAME;
	case F_CONTIG_RECV:
		return DDT_PAIR_CONTIG_RECV;
	case F_CONTIG_SEND:
		return DDT_PAIR_CONTIG_SEND;
	case F_ZERO:
		return DDT_PAIR_ZERO;
	case F_TRANSPOSE:
		return DDT_PAIR_TRANSPOSE;
	case F_INDEX:
		return DDT_PAIR_INDEX;
	default:
		return DDT_PAIR_RANDOM; /* F_RANDOM, F_BOTTOM, F_LAYOUT, F_STAGED */
	}
}

/* A cut point in [0, n]: anywhere, on a unit boundary, or on (or one
 * byte off) a boundary between two elements of the send count. */
static size_t pick_cut(size_t n, size_t per_elem)
{
	long r = ddt_rnd(0, 9);
	if (r < 4 || n < 2)
		return (size_t)ddt_rnd(0, (long)n);
	if (r < 7)
		return (size_t)ddt_rnd(0, (long)(n / (size_t)ddt_unit_size)) *
		       (size_t)ddt_unit_size;
	size_t c = (size_t)ddt_rnd(0, (long)(n / per_elem)) * per_elem;
	if (r == 8 && c > 0)
		c--;
	else if (r == 9 && c < n)
		c++;
	return c;
}

static uint64_t case_seed(uint64_t seed, int f, long k)
{
	return seed ^ ((uint64_t)(f + 1) * 0x9e3779b97f4a7c15ull) ^
	       ((uint64_t)k * 0xd1b54a32d192ed03ull);
}

/* The cost model's view of a layout agrees with the layout: its bytes, its
 * blocks and their bytes by class add up, no more runs than blocks, blocks
 * iff bytes. */
static int shape_consistent(const opal_datatype_direct_layout_t *l)
{
	opal_datatype_direct_shape_t sh;
	size_t sum = 0, bytes = 0;

	opal_datatype_direct_layout_shape(l, &sh);
	for (int c = 0; c < OPAL_DATATYPE_DIRECT_CLASSES; c++) {
		sum += sh.blocks_by_class[c];
		bytes += sh.bytes_by_class[c];
	}
	return sh.bytes == opal_datatype_direct_layout_size(l) && sum == sh.blocks &&
	       bytes == sh.bytes && sh.runs <= sh.blocks && (sh.bytes > 0) == (sh.blocks > 0);
}

/* The staged path's two halves: pack [from, to) of the send layout into a
 * buffer of just that range (guarded), unpack it into the receive layout. */
static int staged_copy(const opal_datatype_direct_layout_t *sl, const void *sbuf,
		       const opal_datatype_direct_layout_t *rl, void *rbuf, size_t from, size_t to)
{
	unsigned char *tmp = malloc(to - from + 2 * DDT_GUARD);
	int rc;

	if (!tmp)
		return -1;
	memset(tmp, 0xa5, to - from + 2 * DDT_GUARD);
	rc = opal_datatype_direct_layout_pack(sl, sbuf, from, to, tmp + DDT_GUARD);
	for (size_t i = 0; rc == 0 && i < DDT_GUARD; i++)
		if (tmp[i] != 0xa5 || tmp[DDT_GUARD + to - from + i] != 0xa5)
			rc = -2; /* pack wrote outside the range */
	if (rc == 0)
		rc = opal_datatype_direct_layout_unpack(rl, rbuf, from, to, tmp + DDT_GUARD);
	free(tmp);
	return rc;
}

/* The newest layout serial this process has seen. */
static uint64_t last_serial;

static int run_case(uint64_t seed, int f, long k, char *why, size_t whylen)
{
	const struct family *fam = &families[f];
	struct ddt_pair p;
	int res;
	unsigned char *rout = NULL;
	void *sarg, *rarg;
	opal_datatype_direct_layout_t *sl = NULL, *rl = NULL;
	opal_convertor_t *sconv = NULL, *rconv = NULL;

	ddt_rng_state = case_seed(seed, f, k);
	ddt_unit = fam->unit;
	res = ddt_pair_types(&p, pair_mode(fam->mode), why, whylen);
	if (res == DDT_PASS)
		res = ddt_pair_buffers(&p, 0, why, whylen);
	if (res != DDT_PASS)
		goto out;
	MPI_Datatype st = p.st, rt = p.rt;
	long cs = p.cs, cr = p.cr, ns = p.ns, nr = p.nr;
	size_t n = p.n;
	struct ddt_buf *rb = &p.rb;
	rout = malloc(rb->len);
	/* MPI_BOTTOM variants (the receive base is rout's) */
	MPI_Datatype se = st, re = rt;
	sarg = p.sb.base;
	rarg = rout + (rb->base - rb->mem);
	int sbottom = fam->mode == F_BOTTOM && ddt_chance(70) && cs == 1;
	int rbottom = fam->mode == F_BOTTOM && ddt_chance(70) && cr == 1;
	if (sbottom) {
		se = ddt_absolute(st, 1, sarg);
		sarg = NULL;
	}
	if (rbottom) {
		re = ddt_absolute(rt, 1, rarg);
		rarg = NULL;
	}
	if (fam->mode == F_LAYOUT || fam->mode == F_STAGED) {
		if (opal_datatype_direct_layout_create(OPAL_DT(se), (size_t)cs, &sl) ||
		    opal_datatype_direct_layout_create(OPAL_DT(re), (size_t)cr, &rl)) {
			res = DDT_FAIL;
			snprintf(why, whylen, "layout_create failed");
			goto out;
		}
		if (!shape_consistent(sl) || !shape_consistent(rl)) {
			res = DDT_FAIL;
			snprintf(why, whylen, "layout shape inconsistent (bytes, blocks by class, runs)");
			goto out;
		}
		/* serials: the model's cache keys (with the address) */
		if (opal_datatype_direct_layout_serial(rl) <= opal_datatype_direct_layout_serial(sl) ||
		    opal_datatype_direct_layout_serial(sl) <= last_serial) {
			res = DDT_FAIL;
			snprintf(why, whylen, "layout serials not increasing");
			goto out;
		}
		last_serial = opal_datatype_direct_layout_serial(rl);
	}
	/* a third of the random and zero-size cases go through two prepared
	 * convertors (opal_convertor_copy_direct) */
	if ((fam->mode == F_RANDOM || fam->mode == F_ZERO) && ddt_chance(33)) {
		sconv = opal_convertor_create(opal_local_arch, 0);
		rconv = opal_convertor_create(opal_local_arch, 0);
		if (opal_convertor_prepare_for_send(sconv, OPAL_DT(se), (size_t)cs, sarg) ||
		    opal_convertor_prepare_for_recv(rconv, OPAL_DT(re), (size_t)cr, rarg)) {
			res = DDT_FAIL;
			snprintf(why, whylen, "opal_convertor_prepare failed");
			goto out;
		}
	}
	/* whole range, then splits */
	int rounds = fam->mode == F_LAYOUT ? 8 : 3;
	for (int round = 0; round < rounds; round++) {
		size_t cut[4] = {0, 0, 0, n};
		memcpy(rout, p.rinit, rb->len);
		if (round > 0 && n > 0) {
			size_t a = pick_cut(n, (size_t)(ns * ddt_unit_size));
			size_t b = pick_cut(n, (size_t)(nr * ddt_unit_size));
			if (round == 2 && n > 2) { /* cuts one byte into a block */
				a = 1;
				b = n - 1;
			}
			cut[1] = a < b ? a : b;
			cut[2] = a < b ? b : a;
		} else {
			cut[1] = cut[2] = n;
		}
		int ord[3] = {0, 1, 2};
		for (int i = 2; i > 0; i--) {
			int j = (int)ddt_rnd(0, i), x = ord[i];
			ord[i] = ord[j];
			ord[j] = x;
		}
		for (int i = 0; i < 3; i++) {
			size_t from = cut[ord[i]], to = cut[ord[i] + 1];
			int rc;
			if (sl && fam->mode == F_STAGED)
				rc = staged_copy(sl, sarg, rl, rarg, from, to);
			else if (sl)
				rc = opal_datatype_direct_layout_copy(sl, sarg, rl, rarg, from, to);
			else if (sconv)
				rc = opal_convertor_copy_direct(sconv, rconv, from, to);
			else
				rc = opal_datatype_copy_direct(OPAL_DT(se), (size_t)cs, sarg,
							       OPAL_DT(re), (size_t)cr, rarg, from,
							       to);
			if (rc != 0) {
				res = DDT_FAIL;
				snprintf(why, whylen, "engine returned %d for [%zu,%zu)", rc, from,
					 to);
				goto out;
			}
		}
		long d = ddt_first_diff(rout, p.rref, rb->len);
		if (d >= 0) {
			res = DDT_FAIL;
			snprintf(why, whylen,
				 "round %d cuts [0,%zu,%zu,%zu): receive buffer differs at byte "
				 "%ld of the "
				 "typemap range (%s)",
				 round, cut[1], cut[2], n, d - DDT_GUARD,
				 d < DDT_GUARD || (size_t)d >= rb->len - DDT_GUARD ? "guard"
										   : "inside");
			goto out;
		}
	}
	snprintf(why, whylen, "n=%zu cs=%ld cr=%ld", n, cs, cr);
out:
	if (verbose || (res == DDT_FAIL)) {
		fprintf(stderr, "# family %d case %ld: %s\n#   send %s x%ld\n#   recv %s x%ld\n", f,
			k, why, ddt_desc[0], res == DDT_SKIP ? 0L : p.cs, ddt_desc[1],
			res == DDT_SKIP ? 0L : p.cr);
		if (verbose && ddc_dump && res != DDT_SKIP) {
			ddc_dump(OPAL_DT(p.st), (size_t)p.cs);
			ddc_dump(OPAL_DT(p.rt), (size_t)p.cr);
		}
	}
	opal_datatype_direct_layout_release(sl);
	opal_datatype_direct_layout_release(rl);
	if (sconv)
		OBJ_RELEASE(sconv);
	if (rconv)
		OBJ_RELEASE(rconv);
	free(rout);
	ddt_pair_free(&p);
	return res;
}

int main(int argc, char **argv)
{
	uint64_t seed = 20261122;
	long ncases = 2000, only_case = -1;
	int only_fam = -1, random_seed = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			random_seed = 0;
		} else if (!strcmp(argv[i], "--cases") && i + 1 < argc) {
			ncases = strtol(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
			only_case = strtol(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--family") && i + 1 < argc) {
			only_fam = (int)strtol(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "-v")) {
			verbose = 1;
		} else {
			fprintf(stderr,
				"usage: %s [--seed S] [--cases N] [--family F] [--case K] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	MPI_Init(&argc, &argv);

	/* The fixed seed always; a random seed too unless --seed was given. */
	uint64_t seeds[2] = {seed, 0};
	int nseeds = 1;
	if (random_seed && only_case < 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seeds[1] = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
		nseeds = 2;
	}
	int nf0 = only_fam >= 0 ? only_fam : 0, nf1 = only_fam >= 0 ? only_fam + 1 : NFAM;
	printf("TAP version 13\n1..%d\n", (nf1 - nf0) * nseeds);
	int test = 0, failed = 0;
	for (int si = 0; si < nseeds; si++) {
		for (int f = nf0; f < nf1; f++) {
			long pass = 0, skip = 0, fail = 0, k0 = 0, k1 = ncases;
			long first_fail = -1;
			char why[512], fwhy[512] = "";
			if (only_case >= 0) {
				k0 = only_case;
				k1 = only_case + 1;
			}
			for (long k = k0; k < k1; k++) {
				int r = run_case(seeds[si], f, k, why, sizeof(why));
				if (r == DDT_PASS)
					pass++;
				else if (r == DDT_SKIP)
					skip++;
				else {
					if (first_fail < 0) {
						first_fail = k;
						snprintf(fwhy, sizeof(fwhy), "%s", why);
					}
					fail++;
				}
			}
			test++;
			if (fail) {
				failed++;
				printf("not ok %d - %s: %ld of %ld cases failed; first: --seed "
				       "%" PRIu64 " --family %d --case %ld: %s\n",
				       test, families[f].name, fail, k1 - k0, seeds[si], f,
				       first_fail, fwhy);
			} else {
				printf("ok %d - %s: %ld cases passed, %ld skipped (seed %" PRIu64
				       ")\n",
				       test, families[f].name, pass, skip, seeds[si]);
			}
			fflush(stdout);
		}
	}
	MPI_Finalize();
	return failed ? 1 : 0;
}
