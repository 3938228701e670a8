/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddt_fuzz: datatype fuzzer of the direct two-layout copy
 * engine (opal_datatype_copy_direct, ompi-btl/patches/0002).
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

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Debug hook: link a ddc_dump() (engine internals) to see layouts with -v. */
void ddc_dump(const opal_datatype_t *dt, size_t count) __attribute__((weak));

/* ompi_datatype_t starts with its opal_datatype_t. */
#define OPAL_DT(t) ((const opal_datatype_t *)(t))

/* ---- random numbers: splitmix64 per case ---------------------------- */
static uint64_t rng_state;
static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static long rnd(long lo, long hi) /* [lo, hi] */
{
	return lo + (long)(rnd64() % (uint64_t)(hi - lo + 1));
}
static int chance(int pct)
{
	return rnd(0, 99) < pct;
}

/* ---- description of the case, for -v -------------------------------- */
static int verbose;
static char desc[2][8192];
static size_t desc_len[2];
static int side; /* 0 send, 1 receive: which desc[] is being built */
static void say(const char *fmt, ...)
{
	va_list ap;
	if (desc_len[side] >= sizeof(desc[side]) - 1)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(desc[side] + desc_len[side], sizeof(desc[side]) - desc_len[side], fmt, ap);
	va_end(ap);
	if (n > 0)
		desc_len[side] += (size_t)n;
	if (desc_len[side] >= sizeof(desc[side]))
		desc_len[side] = sizeof(desc[side]) - 1;
}

/* ---- types to free at the end of a case ------------------------------ */
static MPI_Datatype pool[4096];
static int npool;
static MPI_Datatype keep(MPI_Datatype t)
{
	if (npool == (int)(sizeof(pool) / sizeof(pool[0]))) {
		fprintf(stderr, "type pool full\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	pool[npool++] = t;
	return t;
}
static void free_pool(void)
{
	for (int i = 0; i < npool; i++)
		MPI_Type_free(&pool[i]);
	npool = 0;
}

#define CHECK(x)                                                                    \
	do {                                                                        \
		int rc_ = (x);                                                      \
		if (rc_ != MPI_SUCCESS) {                                           \
			fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, rc_); \
			MPI_Abort(MPI_COMM_WORLD, 2);                               \
		}                                                                   \
	} while (0)

/* ---- families ---------------------------------------------------------- */
enum unit_kind { U_CHAR, U_SHORT, U_INT, U_DOUBLE, U_CPLX, U_MIXED };
struct family {
	const char *name;
	enum unit_kind unit;
	int mode; /* F_* */
};
enum { F_RANDOM, F_SAME, F_CONTIG_RECV, F_CONTIG_SEND, F_BOTTOM, F_ZERO, F_LAYOUT, F_TRANSPOSE };
static const struct family families[] = {
	{"char units", U_CHAR, F_RANDOM},
	{"short units", U_SHORT, F_RANDOM},
	{"int units", U_INT, F_RANDOM},
	{"double units", U_DOUBLE, F_RANDOM},
	{"complex16 units", U_CPLX, F_RANDOM},
	{"mixed struct units (int,double,char)", U_MIXED, F_RANDOM},
	{"same datatype both sides", U_DOUBLE, F_SAME},
	{"contiguous receive (unpack side)", U_INT, F_CONTIG_RECV},
	{"contiguous send (pack side)", U_DOUBLE, F_CONTIG_SEND},
	{"MPI_BOTTOM absolute addresses", U_MIXED, F_BOTTOM},
	{"zero-size datatypes", U_INT, F_ZERO},
	{"compiled layouts reused for many splits", U_MIXED, F_LAYOUT},
	{"transposes (FFT shape, both directions)", U_DOUBLE, F_TRANSPOSE},
};
#define NFAM ((int)(sizeof(families) / sizeof(families[0])))

static const struct family *fam;
static int unit_size; /* bytes of one unit's signature */

/* The unit: a basic type, or struct {int, double, char} laid out at random
 * (per side: different layouts, same signature). */
static MPI_Datatype make_unit(void)
{
	MPI_Datatype t;
	switch (fam->unit) {
	case U_CHAR: say("char"); return MPI_CHAR;
	case U_SHORT: say("short"); return MPI_SHORT;
	case U_INT: say("int"); return MPI_INT;
	case U_DOUBLE: say("double"); return MPI_DOUBLE;
	case U_CPLX: say("cplx16"); return MPI_C_DOUBLE_COMPLEX;
	case U_MIXED: break;
	}
	/* three fields at disjoint random places in [0, 40): sizes 4, 8, 1 */
	int sz[3] = {4, 8, 1}, order[3] = {0, 1, 2};
	MPI_Aint d[3];
	MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
	int bl[3] = {1, 1, 1};
	for (int i = 2; i > 0; i--) {
		int j = (int)rnd(0, i), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	MPI_Aint pos = rnd(-4, 4);
	for (int k = 0; k < 3; k++) {
		int f = order[k];
		d[f] = pos;
		pos += sz[f] + rnd(0, 1) * rnd(1, 5);
	}
	CHECK(MPI_Type_create_struct(3, bl, d, ty, &t));
	say("struct{int@%ld,double@%ld,char@%ld}", (long)d[0], (long)d[1], (long)d[2]);
	return keep(t);
}

static MPI_Aint extent_of(MPI_Datatype t)
{
	MPI_Aint lb, ext;
	CHECK(MPI_Type_get_extent(t, &lb, &ext));
	return ext;
}
/* True extent; 0 at 0 for a zero-size type (whose true bounds are
 * sentinels that would poison displacements computed from them). */
static MPI_Aint true_extent_of(MPI_Datatype t, MPI_Aint *tlb)
{
	MPI_Aint ext;
	int size;
	CHECK(MPI_Type_size(t, &size));
	if (size == 0) {
		*tlb = 0;
		return 0;
	}
	CHECK(MPI_Type_get_true_extent(t, tlb, &ext));
	return ext;
}
/* A type whose extent is not positive: give it its true extent. */
static MPI_Datatype positive_extent(MPI_Datatype in)
{
	MPI_Aint tlb, text = true_extent_of(in, &tlb);
	if (extent_of(in) > 0)
		return in;
	MPI_Datatype r;
	CHECK(MPI_Type_create_resized(in, tlb, text > 0 ? text : 1, &r));
	say("[positive]");
	return keep(r);
}

static long units_of(MPI_Datatype t)
{
	int s;
	CHECK(MPI_Type_size(t, &s));
	return s / unit_size;
}

/* A random permutation of n slots laid out with gaps: block i (in typemap
 * order) gets slot position pos[i] (in units of `w`: block widths). */
static void scatter_blocks(int n, const int *len, long *pos)
{
	int perm[64];
	for (int i = 0; i < n; i++)
		perm[i] = i;
	if (chance(60))
		for (int i = n - 1; i > 0; i--) {
			int j = (int)rnd(0, i), x = perm[i];
			perm[i] = perm[j];
			perm[j] = x;
		}
	long at = rnd(-3, 3);
	for (int k = 0; k < n; k++) {
		pos[perm[k]] = at;
		at += len[perm[k]] + (chance(50) ? rnd(0, 3) : 0);
	}
}

/* Build a random datatype of about `budget` units or fewer, depth levels. */
static MPI_Datatype gen(int depth, long budget)
{
	MPI_Datatype t, in;
	if (depth <= 0 || budget <= 1 || chance(15))
		return make_unit();
	int c = (int)rnd(0, 11);
	switch (c) {
	case 0: { /* contiguous */
		int n = chance(25) ? (int)rnd(5, 12) : (int)rnd(1, 4);
		say("contig(%d,", n);
		in = gen(depth - 1, budget / n);
		CHECK(MPI_Type_contiguous(n, in, &t));
		break;
	}
	case 1:
	case 2: { /* vector / hvector, maybe negative stride */
		int n = chance(25) ? (int)rnd(5, 12) : (int)rnd(1, 4), bl = (int)rnd(1, 3);
		int hv = c == 2;
		say(hv ? "hvector(" : "vector(");
		in = positive_extent(gen(depth - 1, budget / (n * bl)));
		MPI_Aint ext = extent_of(in), tlb;
		MPI_Aint text = true_extent_of(in, &tlb);
		(void)tlb;
		int strd = bl + (int)rnd(0, 3);
		if (chance(30))
			strd = -strd;
		if (hv) {
			MPI_Aint span = (bl - 1) * ext + text; /* bytes of one block */
			MPI_Aint s = span + rnd(0, 2) * rnd(0, 8);
			if (chance(30))
				s = -s;
			say("%d,%d,%ldB,", n, bl, (long)s);
			CHECK(MPI_Type_create_hvector(n, bl, s, in, &t));
		} else {
			if (ext < text) /* shrunk extent: keep blocks apart */
				strd = strd < 0 ? -(bl * (int)((text + ext - 1) / ext) + 1)
						: bl * (int)((text + ext - 1) / ext) + 1;
			say("%d,%d,%d,", n, bl, strd);
			CHECK(MPI_Type_vector(n, bl, strd, in, &t));
		}
		break;
	}
	case 3:
	case 4:
	case 5:
	case 6: { /* indexed, hindexed, indexed_block, hindexed_block */
		int n = (int)rnd(1, 6), len[64], blk = c >= 5;
		int bytes = c == 4 || c == 6;
		long pos[64];
		int common = (int)rnd(1, 3);
		long tot = 0;
		for (int i = 0; i < n; i++) {
			len[i] = blk ? common : (int)rnd(0, 3);
			tot += len[i];
		}
		static const char *nm[] = {"indexed", "hindexed", "indexed_block", "hindexed_block"};
		say("%s(%d,", nm[c - 3], n);
		in = positive_extent(gen(depth - 1, budget / (tot ? tot : 1)));
		MPI_Aint ext = extent_of(in), tlb, text = true_extent_of(in, &tlb);
		int w = ext >= text ? 1 : (int)((text + ext - 1) / ext) + 1; /* extents per element */
		int wl[64];
		for (int i = 0; i < n; i++)
			wl[i] = len[i] * w;
		scatter_blocks(n, wl, pos);
		int id[64];
		MPI_Aint hd[64];
		for (int i = 0; i < n; i++) {
			id[i] = (int)pos[i];
			hd[i] = (MPI_Aint)pos[i] * ext;
			if (bytes && chance(30))
				hd[i] += 0; /* keep block-aligned: unaligned done via struct */
			say("%d@%ld%s", len[i], bytes ? (long)hd[i] : pos[i], i + 1 < n ? ";" : ",");
		}
		if (c == 3)
			CHECK(MPI_Type_indexed(n, len, id, in, &t));
		else if (c == 4)
			CHECK(MPI_Type_create_hindexed(n, len, hd, in, &t));
		else if (c == 5)
			CHECK(MPI_Type_create_indexed_block(n, common, id, in, &t));
		else
			CHECK(MPI_Type_create_hindexed_block(n, common, hd, in, &t));
		break;
	}
	case 7: { /* struct of different subtypes, byte displacements */
		int n = (int)rnd(1, 4), bl[8];
		MPI_Datatype ty[8];
		MPI_Aint d[8], lo[8], span[8];
		long pos[8];
		int order[8];
		say("struct(%d,", n);
		for (int i = 0; i < n; i++) {
			bl[i] = (int)rnd(0, 2);
			ty[i] = positive_extent(gen(depth - 1, budget / (n * (bl[i] ? bl[i] : 1))));
			MPI_Aint ext = extent_of(ty[i]), tlb, text = true_extent_of(ty[i], &tlb);
			if (ext < text) /* shrunk: one element per field */
				bl[i] = bl[i] ? 1 : 0;
			lo[i] = tlb;
			span[i] = bl[i] ? (bl[i] - 1) * ext + text : 0;
			order[i] = i;
			say("%d*%s", bl[i], i + 1 < n ? ";" : "");
		}
		for (int i = n - 1; i > 0; i--) {
			int j = (int)rnd(0, i), x = order[i];
			order[i] = order[j];
			order[j] = x;
		}
		long at = rnd(-16, 16);
		for (int k = 0; k < n; k++) {
			int f = order[k];
			pos[f] = at;
			at += span[f] + (chance(50) ? rnd(0, 7) : 0);
		}
		for (int i = 0; i < n; i++)
			d[i] = (MPI_Aint)pos[i] - lo[i];
		say(",disp");
		for (int i = 0; i < n; i++)
			say("%s%ld", i ? ";" : "=", (long)d[i]);
		say(",");
		CHECK(MPI_Type_create_struct(n, bl, d, ty, &t));
		say(")");
		return keep(t);
	}
	case 8: { /* subarray */
		int nd = (int)rnd(1, 3), sizes[3], sub[3], st[3];
		int order = chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
		long tot = 1;
		for (int i = 0; i < nd; i++) {
			sizes[i] = (int)rnd(1, 5);
			sub[i] = (int)rnd(1, sizes[i]);
			st[i] = (int)rnd(0, sizes[i] - sub[i]);
			tot *= sub[i];
		}
		say("subarray(%d,%s,[", nd, order == MPI_ORDER_C ? "C" : "F");
		for (int i = 0; i < nd; i++)
			say("%d/%d+%d%s", sub[i], sizes[i], st[i], i + 1 < nd ? " " : "],");
		in = gen(depth - 1, budget / tot);
		MPI_Aint ext = extent_of(in), tlb, text = true_extent_of(in, &tlb);
		if (ext < text) { /* subarray needs non-overlap: resize up */
			MPI_Datatype r;
			CHECK(MPI_Type_create_resized(in, tlb, text, &r));
			in = keep(r);
			say("[grown]");
		}
		CHECK(MPI_Type_create_subarray(nd, sizes, sub, st, order, in, &t));
		break;
	}
	case 9: { /* darray */
		int size = (int)rnd(1, 4), rank = (int)rnd(0, size - 1), nd = (int)rnd(1, 2);
		int gs[2], dist[2], darg[2], ps[2];
		int order = chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
		if (nd == 1) {
			ps[0] = size;
		} else {
			ps[0] = size == 4 ? 2 : (chance(50) ? size : 1);
			ps[1] = size / ps[0];
		}
		for (int i = 0; i < nd; i++) {
			gs[i] = (int)rnd(1, 7);
			int dk = (int)rnd(0, 2);
			if (ps[i] == 1 && dk == 2) {
				dist[i] = MPI_DISTRIBUTE_NONE;
				darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
			} else if (dk == 0) {
				dist[i] = MPI_DISTRIBUTE_BLOCK;
				int minb = (gs[i] + ps[i] - 1) / ps[i];
				darg[i] = chance(50) ? MPI_DISTRIBUTE_DFLT_DARG : minb + (int)rnd(0, 1);
			} else {
				dist[i] = MPI_DISTRIBUTE_CYCLIC;
				darg[i] = chance(40) ? MPI_DISTRIBUTE_DFLT_DARG : (int)rnd(1, 3);
			}
		}
		say("darray(%d/%d,%s,", rank, size, order == MPI_ORDER_C ? "C" : "F");
		for (int i = 0; i < nd; i++)
			say("g%d d%d a%d p%d;", gs[i], dist[i], darg[i], ps[i]);
		in = gen(depth - 1, budget / 8);
		if (units_of(in) == 0) { /* darray wants a type with data */
			say("[unit]");
			in = make_unit();
		}
		MPI_Aint ext = extent_of(in), tlb, text = true_extent_of(in, &tlb);
		if (ext < text) {
			MPI_Datatype r;
			CHECK(MPI_Type_create_resized(in, tlb, text, &r));
			in = keep(r);
			say("[grown]");
		}
		CHECK(MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order, in, &t));
		break;
	}
	case 10: { /* resized: negative lb, bigger (or, send side, smaller) extent */
		say("resized(");
		in = gen(depth - 1, budget);
		MPI_Aint tlb, text = true_extent_of(in, &tlb);
		MPI_Aint lb = tlb - rnd(0, 1) * rnd(1, 24);
		MPI_Aint ext = (tlb - lb) + text + rnd(0, 2) * rnd(0, 16);
		if (side == 0 && chance(20))
			ext = rnd(1, text > 1 ? text - 1 : 1); /* overlapping copies: send only */
		say(",lb=%ld,ext=%ld", (long)lb, (long)ext);
		CHECK(MPI_Type_create_resized(in, lb, ext, &t));
		break;
	}
	default: { /* dup */
		say("dup(");
		in = gen(depth - 1, budget);
		CHECK(MPI_Type_dup(in, &t));
		break;
	}
	}
	say(")");
	return keep(t);
}

/* ---- buffers ----------------------------------------------------------- */
struct buf {
	unsigned char *mem; /* allocation */
	size_t len;
	unsigned char *base; /* buffer argument (before MPI_BOTTOM rewrite) */
};

#define GUARD 64

/* Allocate memory covering count elements of t (plus guards). */
static int buf_for(struct buf *b, MPI_Datatype t, long count)
{
	MPI_Aint lb, ext, tlb, text;
	CHECK(MPI_Type_get_extent(t, &lb, &ext));
	text = true_extent_of(t, &tlb);
	MPI_Aint lo = tlb + (ext < 0 ? (count - 1) * ext : 0);
	MPI_Aint hi = tlb + text + (ext > 0 ? (count - 1) * ext : 0);
	int size;
	CHECK(MPI_Type_size(t, &size));
	/* Open MPI packs a NO_GAPS type as count*size bytes from true_lb, even
	 * when explicit bounds made its extent smaller than its size. */
	if (size && tlb + (MPI_Aint)size * count > hi)
		hi = tlb + (MPI_Aint)size * count;
	if (hi - lo > (8 << 20))
		return -1;
	b->len = (size_t)(hi - lo) + 2 * GUARD;
	b->mem = malloc(b->len);
	if (!b->mem)
		return -1;
	b->base = b->mem + GUARD - lo;
	return 0;
}

static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)rnd64();
}

/* Receive typemap must not overlap: unpack random bytes, pack them back. */
static int overlaps(MPI_Datatype t, long count, const struct buf *b, size_t n)
{
	unsigned char *in = malloc(n + 1), *out = malloc(n + 1), *mem = malloc(b->len);
	int pos = 0, bad;
	fill(in, n);
	memset(mem, 0, b->len);
	unsigned char *base = mem + (b->base - b->mem);
	CHECK(MPI_Unpack(in, (int)n, &pos, base, (int)count, t, MPI_COMM_SELF));
	pos = 0;
	CHECK(MPI_Pack(base, (int)count, t, out, (int)n, &pos, MPI_COMM_SELF));
	bad = memcmp(in, out, n) != 0;
	free(in);
	free(out);
	free(mem);
	return bad;
}

static long gcdl(long a, long b)
{
	while (b) {
		long t = a % b;
		a = b;
		b = t;
	}
	return a;
}

enum { RES_PASS, RES_SKIP, RES_FAIL };

static int first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (int)i;
	return -1;
}

/* MPI_BOTTOM: wrap t into struct {1 x t at absolute address base}. */
static MPI_Datatype absolute(MPI_Datatype t, void *base)
{
	MPI_Datatype s;
	int one = 1;
	MPI_Aint a;
	CHECK(MPI_Get_address(base, &a));
	CHECK(MPI_Type_create_struct(1, &one, &a, &t, &s));
	CHECK(MPI_Type_commit(&s));
	return keep(s);
}

/* A cut point in [0, n]: anywhere, on a unit boundary, or on (or one
 * byte off) a boundary between two elements of the send count. */
static size_t pick_cut(size_t n, size_t per_elem)
{
	long r = rnd(0, 9);
	if (r < 4 || n < 2)
		return (size_t)rnd(0, (long)n);
	if (r < 7)
		return (size_t)rnd(0, (long)(n / (size_t)unit_size)) * (size_t)unit_size;
	size_t c = (size_t)rnd(0, (long)(n / per_elem)) * per_elem;
	if (r == 8 && c > 0)
		c--;
	else if (r == 9 && c < n)
		c++;
	return c;
}

/* FFT-like transpose pair: rows = resized(vector(R, C, N, u), 0, C*us),
 * columns = contig(R, resized(vector(C, 1, M, u), 0, us)); either may be
 * the send side.  Returns the count k of both. */
static long transpose_pair(MPI_Datatype *st, MPI_Datatype *rt)
{
	static const MPI_Datatype units[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE,
					     MPI_C_DOUBLE_COMPLEX};
	static const int usz[] = {1, 2, 4, 8, 16};
	int ui = (int)rnd(0, 4), R = (int)rnd(1, 12), C = (int)rnd(1, 12), k = (int)rnd(1, 3);
	int N = k * C + (int)rnd(0, 3), M = k * R + (int)rnd(0, 3);
	MPI_Datatype u = units[ui], v, rows, col, colr, cols;
	unit_size = usz[ui];
	CHECK(MPI_Type_vector(R, C, N, u, &v));
	CHECK(MPI_Type_create_resized(keep(v), 0, (MPI_Aint)C * unit_size, &rows));
	CHECK(MPI_Type_vector(C, 1, M, u, &col));
	CHECK(MPI_Type_create_resized(keep(col), 0, unit_size, &colr));
	CHECK(MPI_Type_contiguous(R, keep(colr), &cols));
	keep(rows);
	keep(cols);
	int swap = chance(50);
	*st = swap ? cols : rows;
	*rt = swap ? rows : cols;
	side = 0;
	say("%s R=%d C=%d N=%d M=%d unit %d B", swap ? "columns" : "rows", R, C, N, M, unit_size);
	side = 1;
	say("%s", swap ? "rows" : "columns");
	return k;
}

static uint64_t case_seed(uint64_t seed, int f, long k)
{
	return seed ^ ((uint64_t)(f + 1) * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)k * 0xd1b54a32d192ed03ull);
}

static int run_case(uint64_t seed, int f, long k, char *why, size_t whylen)
{
	MPI_Datatype st, rt;
	long ns, nr, cs, cr;
	int res = RES_PASS;
	struct buf sb = {0}, rb = {0};
	unsigned char *packed = NULL, *rref = NULL, *rinit = NULL, *rout = NULL;
	void *sarg, *rarg;
	opal_datatype_direct_layout_t *sl = NULL, *rl = NULL;
	opal_convertor_t *sconv = NULL, *rconv = NULL;

	fam = &families[f];
	rng_state = case_seed(seed, f, k);
	desc_len[0] = desc_len[1] = 0;
	desc[0][0] = desc[1][0] = 0;
	unit_size = fam->unit == U_CHAR ? 1 : fam->unit == U_SHORT ? 2 : fam->unit == U_INT ? 4
		: fam->unit == U_DOUBLE ? 8 : fam->unit == U_CPLX ? 16 : 13;

	int depth = (int)rnd(1, 4);
	long tk = 0;
	side = 0;
	if (fam->mode == F_TRANSPOSE) {
		tk = transpose_pair(&st, &rt);
	} else if (fam->mode == F_CONTIG_SEND) {
		st = MPI_DATATYPE_NULL;
	} else {
		st = gen(depth, 64);
	}
	side = 1;
	if (fam->mode == F_TRANSPOSE) {
		/* built above */
	} else if (fam->mode == F_SAME) {
		rt = st;
		say("(same)");
	} else if (fam->mode == F_CONTIG_RECV) {
		rt = MPI_DATATYPE_NULL;
	} else {
		rt = gen((int)rnd(1, 4), 64);
	}
	/* one side contiguous: N units, contiguous */
	if (st == MPI_DATATYPE_NULL || rt == MPI_DATATYPE_NULL) {
		int other = st == MPI_DATATYPE_NULL;
		MPI_Datatype o = other ? rt : st;
		CHECK(MPI_Type_commit(&o));
		long n = units_of(o);
		MPI_Datatype u, c;
		side = other ? 0 : 1;
		u = make_unit();
		if (fam->unit == U_MIXED)
			CHECK(MPI_Type_commit(&u));
		CHECK(MPI_Type_contiguous((int)n, u, &c));
		say("contig(%ld)", n);
		keep(c);
		if (other)
			st = c;
		else
			rt = c;
	}
	CHECK(MPI_Type_commit(&st));
	CHECK(MPI_Type_commit(&rt));
	ns = units_of(st);
	nr = units_of(rt);
	if (fam->mode == F_ZERO) {
		/* both must be zero-size: make zero-size variants */
		if (ns) {
			MPI_Datatype z;
			int zero = 0;
			MPI_Aint d = 0;
			CHECK(MPI_Type_create_hindexed(1, &zero, &d, st, &z));
			CHECK(MPI_Type_commit(&z));
			st = keep(z);
		}
		if (nr) {
			MPI_Datatype z;
			CHECK(MPI_Type_contiguous(0, rt, &z));
			CHECK(MPI_Type_commit(&z));
			rt = keep(z);
		}
		ns = nr = 0;
		cs = rnd(0, 3);
		cr = rnd(0, 3);
	} else {
		if (ns == 0 || nr == 0) {
			res = RES_SKIP;
			snprintf(why, whylen, "zero-size side");
			goto out;
		}
		long g = gcdl(ns, nr);
		cs = nr / g;
		cr = ns / g;
		if (fam->mode == F_SAME)
			cs = cr = rnd(1, 3);
		else if (fam->mode == F_TRANSPOSE)
			cs = cr = tk;
		else if (cs * ns < 256 && chance(30)) {
			long m = rnd(2, 3);
			cs *= m;
			cr *= m;
		}
		if (cs * ns > 40000) {
			res = RES_SKIP;
			snprintf(why, whylen, "too many units");
			goto out;
		}
	}
	size_t n = (size_t)(cs * ns * unit_size);
	if (buf_for(&sb, st, cs ? cs : 1) || buf_for(&rb, rt, cr ? cr : 1)) {
		res = RES_SKIP;
		snprintf(why, whylen, "buffers too large");
		goto out;
	}
	if (n && overlaps(rt, cr, &rb, n)) {
		res = RES_SKIP;
		snprintf(why, whylen, "receive typemap overlaps");
		goto out;
	}
	fill(sb.mem, sb.len);
	rinit = malloc(rb.len);
	rref = malloc(rb.len);
	rout = malloc(rb.len);
	packed = malloc(n + 1);
	fill(rinit, rb.len);
	memcpy(rref, rinit, rb.len);
	/* the reference: pack then unpack */
	{
		int pos = 0;
		unsigned char *rbase = rref + (rb.base - rb.mem);
		CHECK(MPI_Pack(sb.base, (int)cs, st, packed, (int)n + 1, &pos, MPI_COMM_SELF));
		if ((size_t)pos != n) {
			res = RES_FAIL;
			snprintf(why, whylen, "MPI_Pack gave %d bytes, expected %zu", pos, n);
			goto out;
		}
		pos = 0;
		CHECK(MPI_Unpack(packed, (int)n, &pos, rbase, (int)cr, rt, MPI_COMM_SELF));
	}
	/* MPI_BOTTOM variants (the receive base is rout's) */
	MPI_Datatype se = st, re = rt;
	sarg = sb.base;
	rarg = rout + (rb.base - rb.mem);
	int sbottom = fam->mode == F_BOTTOM && chance(70) && cs == 1;
	int rbottom = fam->mode == F_BOTTOM && chance(70) && cr == 1;
	if (sbottom) {
		se = absolute(st, sarg);
		sarg = NULL;
	}
	if (rbottom) {
		re = absolute(rt, rarg);
		rarg = NULL;
	}
	if (fam->mode == F_LAYOUT) {
		if (opal_datatype_direct_layout_create(OPAL_DT(se), (size_t)cs, &sl) ||
		    opal_datatype_direct_layout_create(OPAL_DT(re), (size_t)cr, &rl)) {
			res = RES_FAIL;
			snprintf(why, whylen, "layout_create failed");
			goto out;
		}
	}
	/* a third of the random and zero-size cases go through two prepared
	 * convertors (opal_convertor_copy_direct) */
	if ((fam->mode == F_RANDOM || fam->mode == F_ZERO) && chance(33)) {
		sconv = opal_convertor_create(opal_local_arch, 0);
		rconv = opal_convertor_create(opal_local_arch, 0);
		if (opal_convertor_prepare_for_send(sconv, OPAL_DT(se), (size_t)cs, sarg) ||
		    opal_convertor_prepare_for_recv(rconv, OPAL_DT(re), (size_t)cr, rarg)) {
			res = RES_FAIL;
			snprintf(why, whylen, "opal_convertor_prepare failed");
			goto out;
		}
	}
	/* whole range, then splits */
	int rounds = fam->mode == F_LAYOUT ? 8 : 3;
	for (int round = 0; round < rounds; round++) {
		size_t cut[4] = {0, 0, 0, n};
		memcpy(rout, rinit, rb.len);
		if (round > 0 && n > 0) {
			size_t a = pick_cut(n, (size_t)(ns * unit_size));
			size_t b = pick_cut(n, (size_t)(nr * unit_size));
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
			int j = (int)rnd(0, i), x = ord[i];
			ord[i] = ord[j];
			ord[j] = x;
		}
		for (int i = 0; i < 3; i++) {
			size_t from = cut[ord[i]], to = cut[ord[i] + 1];
			int rc;
			if (sl)
				rc = opal_datatype_direct_layout_copy(sl, sarg, rl, rarg, from, to);
			else if (sconv)
				rc = opal_convertor_copy_direct(sconv, rconv, from, to);
			else
				rc = opal_datatype_copy_direct(OPAL_DT(se), (size_t)cs, sarg, OPAL_DT(re),
							       (size_t)cr, rarg, from, to);
			if (rc != 0) {
				res = RES_FAIL;
				snprintf(why, whylen, "engine returned %d for [%zu,%zu)", rc, from, to);
				goto out;
			}
		}
		int d = first_diff(rout, rref, rb.len);
		if (d >= 0) {
			res = RES_FAIL;
			snprintf(why, whylen,
				 "round %d cuts [0,%zu,%zu,%zu): receive buffer differs at byte %ld of the "
				 "typemap range (%s)", round, cut[1], cut[2], n,
				 (long)(d - GUARD), d < GUARD || (size_t)d >= rb.len - GUARD ? "guard" : "inside");
			goto out;
		}
	}
	snprintf(why, whylen, "n=%zu cs=%ld cr=%ld", n, cs, cr);
out:
	if (verbose || (res == RES_FAIL)) {
		fprintf(stderr, "# family %d case %ld: %s\n#   send %s x%ld\n#   recv %s x%ld\n", f, k,
			why, desc[0], res == RES_SKIP ? 0L : cs, desc[1], res == RES_SKIP ? 0L : cr);
		if (verbose && ddc_dump && res != RES_SKIP) {
			ddc_dump(OPAL_DT(st), (size_t)cs);
			ddc_dump(OPAL_DT(rt), (size_t)cr);
		}
	}
	opal_datatype_direct_layout_release(sl);
	opal_datatype_direct_layout_release(rl);
	if (sconv)
		OBJ_RELEASE(sconv);
	if (rconv)
		OBJ_RELEASE(rconv);
	free(sb.mem);
	free(rb.mem);
	free(packed);
	free(rref);
	free(rinit);
	free(rout);
	free_pool();
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
			fprintf(stderr, "usage: %s [--seed S] [--cases N] [--family F] [--case K] [-v]\n",
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
				if (r == RES_PASS)
					pass++;
				else if (r == RES_SKIP)
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
				printf("not ok %d - %s: %ld of %ld cases failed; first: --seed %" PRIu64
				       " --family %d --case %ld: %s\n",
				       test, families[f].name, fail, k1 - k0, seeds[si], f, first_fail, fwhy);
			} else {
				printf("ok %d - %s: %ld cases passed, %ld skipped (seed %" PRIu64 ")\n", test,
				       families[f].name, pass, skip, seeds[si]);
			}
			fflush(stdout);
		}
	}
	MPI_Finalize();
	return failed ? 1 : 0;
}
