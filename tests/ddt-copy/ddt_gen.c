/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddt_gen.c: random equal-signature datatype pairs, guarded
 * buffers and the MPI_Pack -> MPI_Unpack reference (ddt_gen.h).  MPI API
 * only.  Used by tests/ddt-copy/ddt_fuzz.c and tests/mpi/src/ddt_sendrecv_fuzz.c.
 *
 * The order and number of random draws are part of the interface: the same
 * seed must give the same cases in both programs' past and future runs
 * (failing cases are reproduced from the seed), so change the draws only
 * knowingly.
 */
#include "ddt_gen.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers: splitmix64 ------------------------------------------ */
uint64_t ddt_rng_state;
int ddt_fill_words;

uint64_t ddt_rnd64(void)
{
	uint64_t z = (ddt_rng_state += DDT_GOLDEN);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

long ddt_rnd(long lo, long hi)
{
	return lo + (long)(ddt_rnd64() % (uint64_t)(hi - lo + 1));
}

int ddt_chance(int pct)
{
	return ddt_rnd(0, 99) < pct;
}

void ddt_fill(unsigned char *p, size_t n)
{
	if (!ddt_fill_words) {
		for (size_t i = 0; i < n; i++)
			p[i] = (unsigned char)ddt_rnd64();
		return;
	}
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v = ddt_rnd64();
		memcpy(p + i, &v, 8);
	}
	if (i < n) {
		uint64_t v = ddt_rnd64();
		memcpy(p + i, &v, n - i);
	}
}

uint64_t ddt_fill_draws(size_t n)
{
	return ddt_fill_words ? (n + 7) / 8 : n;
}

/* ---- descriptions ------------------------------------------------------------ */
char ddt_desc[2][DDT_DESC_MAX];
int ddt_side;
static size_t desc_len[2];

void ddt_desc_reset(void)
{
	desc_len[0] = desc_len[1] = 0;
	ddt_desc[0][0] = ddt_desc[1][0] = 0;
}

void ddt_say(const char *fmt, ...)
{
	va_list ap;
	int s = ddt_side;
	if (desc_len[s] >= DDT_DESC_MAX - 1)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(ddt_desc[s] + desc_len[s], DDT_DESC_MAX - desc_len[s], fmt, ap);
	va_end(ap);
	if (n > 0)
		desc_len[s] += (size_t)n;
	if (desc_len[s] >= DDT_DESC_MAX)
		desc_len[s] = DDT_DESC_MAX - 1;
}

/* ---- type pool ----------------------------------------------------------------- */
static MPI_Datatype pool[4096];
static int npool;

MPI_Datatype ddt_keep(MPI_Datatype t)
{
	if (npool == (int)(sizeof(pool) / sizeof(pool[0]))) {
		fprintf(stderr, "type pool full\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	pool[npool++] = t;
	return t;
}

void ddt_free_pool(void)
{
	for (int i = 0; i < npool; i++)
		MPI_Type_free(&pool[i]);
	npool = 0;
}

/* ---- units ------------------------------------------------------------------------ */
enum ddt_unit_kind ddt_unit;
int ddt_unit_size;

int ddt_unit_bytes(enum ddt_unit_kind u)
{
	switch (u) {
	case DDT_U_CHAR:
		return 1;
	case DDT_U_SHORT:
		return 2;
	case DDT_U_INT:
		return 4;
	case DDT_U_DOUBLE:
		return 8;
	case DDT_U_CPLX:
		return 16;
	case DDT_U_MIXED:
		break;
	}
	return 13;
}

MPI_Datatype ddt_make_unit(void)
{
	MPI_Datatype t;
	switch (ddt_unit) {
	case DDT_U_CHAR:
		ddt_say("char");
		return MPI_CHAR;
	case DDT_U_SHORT:
		ddt_say("short");
		return MPI_SHORT;
	case DDT_U_INT:
		ddt_say("int");
		return MPI_INT;
	case DDT_U_DOUBLE:
		ddt_say("double");
		return MPI_DOUBLE;
	case DDT_U_CPLX:
		ddt_say("cplx16");
		return MPI_C_DOUBLE_COMPLEX;
	case DDT_U_MIXED:
		break;
	}
	/* three fields at disjoint random places in [0, 40): sizes 4, 8, 1 */
	int sz[3] = {4, 8, 1}, order[3] = {0, 1, 2};
	MPI_Aint d[3];
	MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
	int bl[3] = {1, 1, 1};
	for (int i = 2; i > 0; i--) {
		int j = (int)ddt_rnd(0, i), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	MPI_Aint pos = ddt_rnd(-4, 4);
	for (int k = 0; k < 3; k++) {
		int f = order[k];
		d[f] = pos;
		pos += sz[f] + ddt_rnd(0, 1) * ddt_rnd(1, 5);
	}
	DDT_CHECK(MPI_Type_create_struct(3, bl, d, ty, &t));
	ddt_say("struct{int@%ld,double@%ld,char@%ld}", (long)d[0], (long)d[1], (long)d[2]);
	return ddt_keep(t);
}

/* ---- types --------------------------------------------------------------------------- */
MPI_Aint ddt_extent_of(MPI_Datatype t)
{
	MPI_Aint lb, ext;
	DDT_CHECK(MPI_Type_get_extent(t, &lb, &ext));
	return ext;
}

/* True extent; 0 at 0 for a zero-size type (whose true bounds are
 * sentinels that would poison displacements computed from them). */
MPI_Aint ddt_true_extent_of(MPI_Datatype t, MPI_Aint *tlb)
{
	MPI_Aint ext;
	int size;
	DDT_CHECK(MPI_Type_size(t, &size));
	if (size == 0) {
		*tlb = 0;
		return 0;
	}
	DDT_CHECK(MPI_Type_get_true_extent(t, tlb, &ext));
	return ext;
}

/* A type whose extent is not positive: give it its true extent. */
static MPI_Datatype positive_extent(MPI_Datatype in)
{
	MPI_Aint tlb, text = ddt_true_extent_of(in, &tlb);
	if (ddt_extent_of(in) > 0)
		return in;
	MPI_Datatype r;
	DDT_CHECK(MPI_Type_create_resized(in, tlb, text > 0 ? text : 1, &r));
	ddt_say("[positive]");
	return ddt_keep(r);
}

long ddt_units_of(MPI_Datatype t)
{
	int s;
	DDT_CHECK(MPI_Type_size(t, &s));
	return s / ddt_unit_size;
}

/* A random permutation of n slots laid out with gaps: block i (in typemap
 * order) gets slot position pos[i] (in units of `w`: block widths). */
static void scatter_blocks(int n, const int *len, long *pos)
{
	int perm[64];
	for (int i = 0; i < n; i++)
		perm[i] = i;
	if (ddt_chance(60))
		for (int i = n - 1; i > 0; i--) {
			int j = (int)ddt_rnd(0, i), x = perm[i];
			perm[i] = perm[j];
			perm[j] = x;
		}
	long at = ddt_rnd(-3, 3);
	for (int k = 0; k < n; k++) {
		pos[perm[k]] = at;
		at += len[perm[k]] + (ddt_chance(50) ? ddt_rnd(0, 3) : 0);
	}
}

/* An index list, the DDTBench SPECFEM3D/LAMMPS shape: indexed_block of n
 * blocks of b units at distinct, unsorted block slots of [0, g), and
 * sometimes two of them in a struct (LAMMPS: coordinates and a scalar
 * field of the same atoms, at their arrays' bases).  One list in five has
 * longer blocks (4 to 20 units: the engine's inline copies of mid-sized
 * blocks). */
static MPI_Datatype index_list_one(void)
{
	int n = (int)ddt_rnd(2, 400), g = n * (int)ddt_rnd(1, 4);
	int b = ddt_chance(20) ? (int)ddt_rnd(4, 20) : (int)ddt_rnd(1, 3);
	int *slot = malloc(sizeof(int) * (size_t)g);
	MPI_Datatype u, t;
	if (!slot) {
		fprintf(stderr, "index_list: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (int i = 0; i < g; i++)
		slot[i] = i;
	for (int i = g - 1; i > 0; i--) {
		int j = (int)ddt_rnd(0, i), x = slot[i];
		slot[i] = slot[j];
		slot[j] = x;
	}
	for (int i = 0; i < n; i++)
		slot[i] *= b;
	ddt_say("index_list(%d x %d of %d slots,", n, b, g);
	u = ddt_make_unit();
	DDT_CHECK(MPI_Type_create_indexed_block(n, b, slot, u, &t));
	ddt_say(")");
	free(slot);
	return ddt_keep(t);
}

static MPI_Datatype index_list_gen(void)
{
	MPI_Datatype t[2], s;
	MPI_Aint d[2], ext0, lb0, lb1;
	int bl[2] = {1, 1};
	if (ddt_chance(70))
		return index_list_one();
	ddt_say("struct(");
	t[0] = index_list_one();
	ext0 = ddt_true_extent_of(t[0], &lb0);
	t[1] = index_list_one();
	(void)ddt_true_extent_of(t[1], &lb1);
	d[0] = 0;
	d[1] = lb0 + ext0 + ddt_rnd(0, 3) * 8 - lb1; /* the second array after the first */
	ddt_say(")");
	DDT_CHECK(MPI_Type_create_struct(2, bl, d, t, &s));
	return ddt_keep(s);
}

MPI_Datatype ddt_gen(int depth, long budget)
{
	MPI_Datatype t, in;
	if (depth <= 0 || budget <= 1 || ddt_chance(15))
		return ddt_make_unit();
	int c = (int)ddt_rnd(0, 11);
	switch (c) {
	case 0: { /* contiguous */
		int n = ddt_chance(25) ? (int)ddt_rnd(5, 12) : (int)ddt_rnd(1, 4);
		ddt_say("contig(%d,", n);
		in = ddt_gen(depth - 1, budget / n);
		DDT_CHECK(MPI_Type_contiguous(n, in, &t));
		break;
	}
	case 1:
	case 2: { /* vector / hvector, maybe negative stride */
		int n = ddt_chance(25) ? (int)ddt_rnd(5, 12) : (int)ddt_rnd(1, 4),
		    bl = (int)ddt_rnd(1, 3);
		int hv = c == 2;
		ddt_say(hv ? "hvector(" : "vector(");
		in = positive_extent(ddt_gen(depth - 1, budget / (n * bl)));
		MPI_Aint ext = ddt_extent_of(in), tlb;
		MPI_Aint text = ddt_true_extent_of(in, &tlb);
		(void)tlb;
		int strd = bl + (int)ddt_rnd(0, 3);
		if (ddt_chance(30))
			strd = -strd;
		if (hv) {
			MPI_Aint span = (bl - 1) * ext + text; /* bytes of one block */
			MPI_Aint s = span + ddt_rnd(0, 2) * ddt_rnd(0, 8);
			if (ddt_chance(30))
				s = -s;
			ddt_say("%d,%d,%ldB,", n, bl, (long)s);
			DDT_CHECK(MPI_Type_create_hvector(n, bl, s, in, &t));
		} else {
			if (ext < text) /* shrunk extent: keep blocks apart */
				strd = strd < 0 ? -(bl * (int)((text + ext - 1) / ext) + 1)
						: bl * (int)((text + ext - 1) / ext) + 1;
			ddt_say("%d,%d,%d,", n, bl, strd);
			DDT_CHECK(MPI_Type_vector(n, bl, strd, in, &t));
		}
		break;
	}
	case 3:
	case 4:
	case 5:
	case 6: { /* indexed, hindexed, indexed_block, hindexed_block */
		int n = (int)ddt_rnd(1, 6), len[64], blk = c >= 5;
		int bytes = c == 4 || c == 6;
		long pos[64];
		int common = (int)ddt_rnd(1, 3);
		long tot = 0;
		for (int i = 0; i < n; i++) {
			len[i] = blk ? common : (int)ddt_rnd(0, 3);
			tot += len[i];
		}
		static const char *nm[] = {"indexed", "hindexed", "indexed_block",
					   "hindexed_block"};
		ddt_say("%s(%d,", nm[c - 3], n);
		in = positive_extent(ddt_gen(depth - 1, budget / (tot ? tot : 1)));
		MPI_Aint ext = ddt_extent_of(in), tlb, text = ddt_true_extent_of(in, &tlb);
		int w =
		    ext >= text ? 1 : (int)((text + ext - 1) / ext) + 1; /* extents per element */
		int wl[64];
		for (int i = 0; i < n; i++)
			wl[i] = len[i] * w;
		scatter_blocks(n, wl, pos);
		int id[64];
		MPI_Aint hd[64];
		for (int i = 0; i < n; i++) {
			id[i] = (int)pos[i];
			hd[i] = (MPI_Aint)pos[i] * ext;
			if (bytes && ddt_chance(30))
				hd[i] += 0; /* keep block-aligned: unaligned done via struct */
			ddt_say("%d@%ld%s", len[i], bytes ? (long)hd[i] : pos[i],
				i + 1 < n ? ";" : ",");
		}
		if (c == 3)
			DDT_CHECK(MPI_Type_indexed(n, len, id, in, &t));
		else if (c == 4)
			DDT_CHECK(MPI_Type_create_hindexed(n, len, hd, in, &t));
		else if (c == 5)
			DDT_CHECK(MPI_Type_create_indexed_block(n, common, id, in, &t));
		else
			DDT_CHECK(MPI_Type_create_hindexed_block(n, common, hd, in, &t));
		break;
	}
	case 7: { /* struct of different subtypes, byte displacements */
		int n = (int)ddt_rnd(1, 4), bl[8];
		MPI_Datatype ty[8];
		MPI_Aint d[8], lo[8], span[8];
		long pos[8];
		int order[8];
		ddt_say("struct(%d,", n);
		for (int i = 0; i < n; i++) {
			bl[i] = (int)ddt_rnd(0, 2);
			ty[i] =
			    positive_extent(ddt_gen(depth - 1, budget / (n * (bl[i] ? bl[i] : 1))));
			MPI_Aint ext = ddt_extent_of(ty[i]), tlb,
				 text = ddt_true_extent_of(ty[i], &tlb);
			if (ext < text) /* shrunk: one element per field */
				bl[i] = bl[i] ? 1 : 0;
			lo[i] = tlb;
			span[i] = bl[i] ? (bl[i] - 1) * ext + text : 0;
			order[i] = i;
			ddt_say("%d*%s", bl[i], i + 1 < n ? ";" : "");
		}
		for (int i = n - 1; i > 0; i--) {
			int j = (int)ddt_rnd(0, i), x = order[i];
			order[i] = order[j];
			order[j] = x;
		}
		long at = ddt_rnd(-16, 16);
		for (int k = 0; k < n; k++) {
			int f = order[k];
			pos[f] = at;
			at += span[f] + (ddt_chance(50) ? ddt_rnd(0, 7) : 0);
		}
		for (int i = 0; i < n; i++)
			d[i] = (MPI_Aint)pos[i] - lo[i];
		ddt_say(",disp");
		for (int i = 0; i < n; i++)
			ddt_say("%s%ld", i ? ";" : "=", (long)d[i]);
		ddt_say(",");
		DDT_CHECK(MPI_Type_create_struct(n, bl, d, ty, &t));
		ddt_say(")");
		return ddt_keep(t);
	}
	case 8: { /* subarray */
		int nd = (int)ddt_rnd(1, 3), sizes[3], sub[3], st[3];
		int order = ddt_chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
		long tot = 1;
		for (int i = 0; i < nd; i++) {
			sizes[i] = (int)ddt_rnd(1, 5);
			sub[i] = (int)ddt_rnd(1, sizes[i]);
			st[i] = (int)ddt_rnd(0, sizes[i] - sub[i]);
			tot *= sub[i];
		}
		ddt_say("subarray(%d,%s,[", nd, order == MPI_ORDER_C ? "C" : "F");
		for (int i = 0; i < nd; i++)
			ddt_say("%d/%d+%d%s", sub[i], sizes[i], st[i], i + 1 < nd ? " " : "],");
		in = ddt_gen(depth - 1, budget / tot);
		MPI_Aint ext = ddt_extent_of(in), tlb, text = ddt_true_extent_of(in, &tlb);
		if (ext < text) { /* subarray needs non-overlap: resize up */
			MPI_Datatype r;
			DDT_CHECK(MPI_Type_create_resized(in, tlb, text, &r));
			in = ddt_keep(r);
			ddt_say("[grown]");
		}
		DDT_CHECK(MPI_Type_create_subarray(nd, sizes, sub, st, order, in, &t));
		break;
	}
	case 9: { /* darray */
		int size = (int)ddt_rnd(1, 4), rank = (int)ddt_rnd(0, size - 1),
		    nd = (int)ddt_rnd(1, 2);
		int gs[2], dist[2], darg[2], ps[2];
		int order = ddt_chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
		if (nd == 1) {
			ps[0] = size;
		} else {
			ps[0] = size == 4 ? 2 : (ddt_chance(50) ? size : 1);
			ps[1] = size / ps[0];
		}
		for (int i = 0; i < nd; i++) {
			gs[i] = (int)ddt_rnd(1, 7);
			int dk = (int)ddt_rnd(0, 2);
			if (ps[i] == 1 && dk == 2) {
				dist[i] = MPI_DISTRIBUTE_NONE;
				darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
			} else if (dk == 0) {
				dist[i] = MPI_DISTRIBUTE_BLOCK;
				int minb = (gs[i] + ps[i] - 1) / ps[i];
				darg[i] = ddt_chance(50) ? MPI_DISTRIBUTE_DFLT_DARG
							 : minb + (int)ddt_rnd(0, 1);
			} else {
				dist[i] = MPI_DISTRIBUTE_CYCLIC;
				darg[i] =
				    ddt_chance(40) ? MPI_DISTRIBUTE_DFLT_DARG : (int)ddt_rnd(1, 3);
			}
		}
		ddt_say("darray(%d/%d,%s,", rank, size, order == MPI_ORDER_C ? "C" : "F");
		for (int i = 0; i < nd; i++)
			ddt_say("g%d d%d a%d p%d;", gs[i], dist[i], darg[i], ps[i]);
		in = ddt_gen(depth - 1, budget / 8);
		if (ddt_units_of(in) == 0) { /* darray wants a type with data */
			ddt_say("[unit]");
			in = ddt_make_unit();
		}
		MPI_Aint ext = ddt_extent_of(in), tlb, text = ddt_true_extent_of(in, &tlb);
		if (ext < text) {
			MPI_Datatype r;
			DDT_CHECK(MPI_Type_create_resized(in, tlb, text, &r));
			in = ddt_keep(r);
			ddt_say("[grown]");
		}
		DDT_CHECK(
		    MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order, in, &t));
		break;
	}
	case 10: { /* resized: negative lb, bigger (or, send side, smaller) extent */
		ddt_say("resized(");
		in = ddt_gen(depth - 1, budget);
		MPI_Aint tlb, text = ddt_true_extent_of(in, &tlb);
		MPI_Aint lb = tlb - ddt_rnd(0, 1) * ddt_rnd(1, 24);
		MPI_Aint ext = (tlb - lb) + text + ddt_rnd(0, 2) * ddt_rnd(0, 16);
		if (ddt_side == 0 && ddt_chance(20))
			ext =
			    ddt_rnd(1, text > 1 ? text - 1 : 1); /* overlapping copies: send only */
		ddt_say(",lb=%ld,ext=%ld", (long)lb, (long)ext);
		DDT_CHECK(MPI_Type_create_resized(in, lb, ext, &t));
		break;
	}
	default: { /* dup */
		ddt_say("dup(");
		in = ddt_gen(depth - 1, budget);
		DDT_CHECK(MPI_Type_dup(in, &t));
		break;
	}
	}
	ddt_say(")");
	return ddt_keep(t);
}

/* FFT-like transpose pair: rows = resized(vector(R, C, N, u), 0, C*us),
 * columns = contig(R, resized(vector(C, 1, M, u), 0, us)); either may be
 * the send side.  Returns the count k of both. */
long ddt_transpose_pair(MPI_Datatype *st, MPI_Datatype *rt)
{
	static const MPI_Datatype units[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE,
					     MPI_C_DOUBLE_COMPLEX};
	static const int usz[] = {1, 2, 4, 8, 16};
	int ui = (int)ddt_rnd(0, 4), R = (int)ddt_rnd(1, 12), C = (int)ddt_rnd(1, 12),
	    k = (int)ddt_rnd(1, 3);
	int N = k * C + (int)ddt_rnd(0, 3), M = k * R + (int)ddt_rnd(0, 3);
	MPI_Datatype u = units[ui], v, rows, col, colr, cols;
	ddt_unit_size = usz[ui];
	DDT_CHECK(MPI_Type_vector(R, C, N, u, &v));
	DDT_CHECK(MPI_Type_create_resized(ddt_keep(v), 0, (MPI_Aint)C * ddt_unit_size, &rows));
	DDT_CHECK(MPI_Type_vector(C, 1, M, u, &col));
	DDT_CHECK(MPI_Type_create_resized(ddt_keep(col), 0, ddt_unit_size, &colr));
	DDT_CHECK(MPI_Type_contiguous(R, ddt_keep(colr), &cols));
	ddt_keep(rows);
	ddt_keep(cols);
	int swap = ddt_chance(50);
	*st = swap ? cols : rows;
	*rt = swap ? rows : cols;
	ddt_side = 0;
	ddt_say("%s R=%d C=%d N=%d M=%d unit %d B", swap ? "columns" : "rows", R, C, N, M,
		ddt_unit_size);
	ddt_side = 1;
	ddt_say("%s", swap ? "rows" : "columns");
	return k;
}

MPI_Datatype ddt_absolute(MPI_Datatype t, int count, void *base)
{
	MPI_Datatype s;
	MPI_Aint a;
	DDT_CHECK(MPI_Get_address(base, &a));
	DDT_CHECK(MPI_Type_create_struct(1, &count, &a, &t, &s));
	DDT_CHECK(MPI_Type_commit(&s));
	return ddt_keep(s);
}

void ddt_span(MPI_Datatype t, long count, MPI_Aint *plo, MPI_Aint *phi)
{
	MPI_Aint lb, ext, tlb, text;
	DDT_CHECK(MPI_Type_get_extent(t, &lb, &ext));
	text = ddt_true_extent_of(t, &tlb);
	MPI_Aint lo = tlb + (ext < 0 ? (count - 1) * ext : 0);
	MPI_Aint hi = tlb + text + (ext > 0 ? (count - 1) * ext : 0);
	int size;
	DDT_CHECK(MPI_Type_size(t, &size));
	/* Open MPI packs a NO_GAPS type as count*size bytes from true_lb, even
	 * when explicit bounds made its extent smaller than its size. */
	if (size && tlb + (MPI_Aint)size * count > hi)
		hi = tlb + (MPI_Aint)size * count;
	*plo = lo;
	*phi = hi;
}

/* ---- guarded buffers ------------------------------------------------------------ */
size_t ddt_max_buffer = 8 << 20;

int ddt_buf_for(struct ddt_buf *b, MPI_Datatype t, long count)
{
	MPI_Aint lo, hi;
	ddt_span(t, count, &lo, &hi);
	if (hi - lo > (MPI_Aint)ddt_max_buffer)
		return -1;
	b->len = (size_t)(hi - lo) + 2 * DDT_GUARD;
	b->mem = malloc(b->len);
	if (!b->mem)
		return -1;
	b->base = b->mem + DDT_GUARD - lo;
	return 0;
}

/* Receive typemap must not overlap: unpack random bytes, pack them back. */
int ddt_overlaps(MPI_Datatype t, long count, const struct ddt_buf *b, size_t n)
{
	unsigned char *in = malloc(n + 1), *out = malloc(n + 1), *mem = malloc(b->len);
	int pos = 0, bad;
	if (!in || !out || !mem) {
		fprintf(stderr, "ddt_overlaps: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	ddt_fill(in, n);
	memset(mem, 0, b->len);
	unsigned char *base = mem + (b->base - b->mem);
	DDT_CHECK(MPI_Unpack(in, (int)n, &pos, base, (int)count, t, MPI_COMM_SELF));
	pos = 0;
	DDT_CHECK(MPI_Pack(base, (int)count, t, out, (int)n, &pos, MPI_COMM_SELF));
	bad = memcmp(in, out, n) != 0;
	free(in);
	free(out);
	free(mem);
	return bad;
}

long ddt_gcd(long a, long b)
{
	while (b) {
		long t = a % b;
		a = b;
		b = t;
	}
	return a;
}

long ddt_first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

/* ---- pairs ------------------------------------------------------------------------ */
int ddt_pair_types(struct ddt_pair *p, enum ddt_pair_mode mode, char *why, size_t whylen)
{
	MPI_Datatype st, rt;
	long ns, nr, cs, cr, tk = 0;

	memset(p, 0, sizeof(*p));
	p->st = p->rt = MPI_DATATYPE_NULL;
	ddt_desc_reset();
	ddt_unit_size = ddt_unit_bytes(ddt_unit);
	snprintf(why, whylen, "types built");

	int depth = (int)ddt_rnd(1, 4);
	ddt_side = 0;
	if (mode == DDT_PAIR_TRANSPOSE)
		tk = ddt_transpose_pair(&st, &rt);
	else if (mode == DDT_PAIR_INDEX)
		st = index_list_gen();
	else if (mode == DDT_PAIR_CONTIG_SEND)
		st = MPI_DATATYPE_NULL;
	else
		st = ddt_gen(depth, 64);
	ddt_side = 1;
	if (mode == DDT_PAIR_TRANSPOSE) {
		/* built above */
	} else if (mode == DDT_PAIR_SAME) {
		rt = st;
		ddt_say("(same)");
	} else if (mode == DDT_PAIR_CONTIG_RECV) {
		rt = MPI_DATATYPE_NULL;
	} else if (mode == DDT_PAIR_INDEX) {
		long r = ddt_rnd(0, 2);
		if (r == 0) {
			rt = st;
			ddt_say("(same)");
		} else {
			rt = r == 1 ? MPI_DATATYPE_NULL : index_list_gen();
		}
	} else {
		rt = ddt_gen((int)ddt_rnd(1, 4), 64);
	}
	/* one side contiguous: N units, contiguous */
	if (st == MPI_DATATYPE_NULL || rt == MPI_DATATYPE_NULL) {
		int other = st == MPI_DATATYPE_NULL;
		MPI_Datatype o = other ? rt : st;
		DDT_CHECK(MPI_Type_commit(&o));
		long n = ddt_units_of(o);
		MPI_Datatype u, c;
		ddt_side = other ? 0 : 1;
		u = ddt_make_unit();
		if (ddt_unit == DDT_U_MIXED)
			DDT_CHECK(MPI_Type_commit(&u));
		DDT_CHECK(MPI_Type_contiguous((int)n, u, &c));
		ddt_say("contig(%ld)", n);
		ddt_keep(c);
		if (other)
			st = c;
		else
			rt = c;
	}
	DDT_CHECK(MPI_Type_commit(&st));
	DDT_CHECK(MPI_Type_commit(&rt));
	p->st = st;
	p->rt = rt;
	ns = ddt_units_of(st);
	nr = ddt_units_of(rt);
	if (mode == DDT_PAIR_ZERO) {
		/* both must be zero-size: make zero-size variants */
		if (ns) {
			MPI_Datatype z;
			int zero = 0;
			MPI_Aint d = 0;
			DDT_CHECK(MPI_Type_create_hindexed(1, &zero, &d, st, &z));
			DDT_CHECK(MPI_Type_commit(&z));
			p->st = ddt_keep(z);
		}
		if (nr) {
			MPI_Datatype z;
			DDT_CHECK(MPI_Type_contiguous(0, rt, &z));
			DDT_CHECK(MPI_Type_commit(&z));
			p->rt = ddt_keep(z);
		}
		ns = nr = 0;
		cs = ddt_rnd(0, 3);
		cr = ddt_rnd(0, 3);
	} else {
		if (ns == 0 || nr == 0) {
			snprintf(why, whylen, "zero-size side");
			return DDT_SKIP;
		}
		long g = ddt_gcd(ns, nr);
		cs = nr / g;
		cr = ns / g;
		if (mode == DDT_PAIR_SAME)
			cs = cr = ddt_rnd(1, 3);
		else if (mode == DDT_PAIR_TRANSPOSE)
			cs = cr = tk;
		else if (cs * ns < 256 && ddt_chance(30)) {
			long m = ddt_rnd(2, 3);
			cs *= m;
			cr *= m;
		}
		if (cs * ns > 40000) {
			snprintf(why, whylen, "too many units");
			return DDT_SKIP;
		}
	}
	p->ns = ns;
	p->nr = nr;
	p->cs = cs;
	p->cr = cr;
	p->n = (size_t)(cs * ns * ddt_unit_size);
	return DDT_PASS;
}

int ddt_pair_buffers(struct ddt_pair *p, int flags, char *why, size_t whylen)
{
	p->ns = ddt_units_of(p->st);
	p->nr = ddt_units_of(p->rt);
	p->n = (size_t)(p->cs * p->ns * ddt_unit_size);
	if ((size_t)(p->cr * p->nr * ddt_unit_size) != p->n) {
		snprintf(why, whylen, "signatures differ: %ld x %ld vs %ld x %ld units", p->cs,
			 p->ns, p->cr, p->nr);
		return DDT_FAIL;
	}
	size_t n = p->n;
	if (ddt_buf_for(&p->sb, p->st, p->cs ? p->cs : 1) ||
	    ddt_buf_for(&p->rb, p->rt, p->cr ? p->cr : 1)) {
		snprintf(why, whylen, "buffers too large");
		return DDT_SKIP;
	}
	if (n && ddt_overlaps(p->rt, p->cr, &p->rb, n)) {
		snprintf(why, whylen, "receive typemap overlaps");
		return DDT_SKIP;
	}
	ddt_fill(p->sb.mem, p->sb.len);
	if (flags & DDT_PAIR_NO_REFERENCE) {
		ddt_rng_skip(ddt_fill_draws(p->rb.len));
		return DDT_PASS;
	}
	p->rinit = malloc(p->rb.len);
	p->rref = malloc(p->rb.len);
	p->packed = malloc(n + 1);
	if (!p->rinit || !p->rref || !p->packed) {
		snprintf(why, whylen, "out of memory");
		return DDT_FAIL;
	}
	ddt_fill(p->rinit, p->rb.len);
	memcpy(p->rref, p->rinit, p->rb.len);
	/* the reference: pack then unpack */
	int pos = 0;
	unsigned char *rbase = p->rref + (p->rb.base - p->rb.mem);
	DDT_CHECK(
	    MPI_Pack(p->sb.base, (int)p->cs, p->st, p->packed, (int)n + 1, &pos, MPI_COMM_SELF));
	if ((size_t)pos != n) {
		snprintf(why, whylen, "MPI_Pack gave %d bytes, expected %zu", pos, n);
		return DDT_FAIL;
	}
	pos = 0;
	DDT_CHECK(MPI_Unpack(p->packed, (int)n, &pos, rbase, (int)p->cr, p->rt, MPI_COMM_SELF));
	return DDT_PASS;
}

void ddt_pair_free(struct ddt_pair *p)
{
	free(p->sb.mem);
	free(p->rb.mem);
	free(p->rinit);
	free(p->rref);
	free(p->packed);
	p->sb.mem = p->rb.mem = p->rinit = p->rref = p->packed = NULL;
	ddt_free_pool();
}
