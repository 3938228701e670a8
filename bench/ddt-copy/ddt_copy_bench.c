/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/ddt-copy: the direct two-layout copy engine (opal_datatype_copy_direct,
 * ompi-btl/opal/datatype/opal_datatype_direct.c) against MPI_Pack +
 * MPI_Unpack (pack into a buffer, unpack out of it) on datatypes of the
 * DDTBench patterns (bench/ddt), single process.
 *
 * Columns (median of --reps timed repetitions, microseconds, same run):
 *   pack+unpk  MPI_Pack of the send type + MPI_Unpack into the receive type
 *   direct     opal_datatype_copy_direct, whole message (compiles both
 *              layouts on every call, as the one-shot API does)
 *   layout     opal_datatype_direct_layout_copy with layouts compiled once
 *   2 halves   layout copy of [0,n/2) then [n/2,n) (what the two sides of
 *              a split transfer do; sum of both, run one after the other)
 *   memcpy     memcpy of the message size (a floor)
 * Every engine result is checked against pack+unpack first.
 *
 * Usage: ddt_copy_bench [--reps N]
 */
#include <mpi.h>

#include "opal/datatype/opal_datatype.h"
#include "opal/datatype/opal_datatype_direct.h"
#include "stats.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPAL_DT(t) ((const opal_datatype_t *)(t))
#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if ((x) != MPI_SUCCESS) {                                                          \
			fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);             \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

struct pat {
	char name[64];
	MPI_Datatype st, rt;
	void *sbuf, *rbuf; /* buffer arguments */
	unsigned char *smem, *rmem;
	size_t slen, rlen; /* allocations (whole arenas) */
	size_t bytes;
};

static void arenas(struct pat *p, size_t slen, size_t rlen)
{
	p->slen = slen;
	p->rlen = rlen;
	p->smem = malloc(slen);
	p->rmem = malloc(rlen);
	for (size_t i = 0; i < slen; i++)
		p->smem[i] = (unsigned char)(i * 131 + 7);
	memset(p->rmem, 0xee, rlen);
}

/* NAS MG faces of a[d3][d2][d1] doubles, same type both sides. */
static void mg(struct pat *p, int v, int d1, int d2, int d3)
{
	MPI_Datatype in;
	size_t a = (size_t)d1 * d2 * d3 * 8;
	arenas(p, a, a);
	if (v == 0) {
		CHECK(MPI_Type_vector(d2 - 2, 1, d1, MPI_DOUBLE, &in));
		CHECK(MPI_Type_create_hvector(d3 - 2, 1, (MPI_Aint)d1 * d2 * 8, in, &p->st));
		CHECK(MPI_Type_free(&in));
		p->sbuf = p->smem + 8 * (size_t)((1 * d2 + 1) * d1 + d1 - 2);
		p->rbuf = p->rmem + 8 * (size_t)((1 * d2 + 1) * d1 + d1 - 1);
	} else if (v == 1) {
		CHECK(MPI_Type_vector(d3 - 2, d1 - 2, d1 * d2, MPI_DOUBLE, &p->st));
		p->sbuf = p->smem + 8 * (size_t)((1 * d2 + d2 - 2) * d1 + 1);
		p->rbuf = p->rmem + 8 * (size_t)((1 * d2 + d2 - 1) * d1 + 1);
	} else {
		CHECK(MPI_Type_vector(d2 - 2, d1 - 2, d1, MPI_DOUBLE, &p->st));
		p->sbuf = p->smem + 8 * (size_t)((1 * d2 + 1) * d1 + 1);
		p->rbuf = p->rmem + 8 * (size_t)(1 * d1 + 1);
	}
	p->rt = p->st;
	snprintf(p->name, sizeof(p->name), "NAS_MG_%c %dx%dx%d", "xyz"[v], d1, d2, d3);
}

/* NAS LU_y: u[d3+2][d2+2][5] doubles, contig(5) vector, d2 = d3 = n. */
static void lu_y(struct pat *p, int n)
{
	MPI_Datatype in;
	size_t a = (size_t)(n + 2) * (n + 2) * 5 * 8;
	arenas(p, a, a);
	CHECK(MPI_Type_contiguous(5, MPI_DOUBLE, &in));
	CHECK(MPI_Type_vector(n, 1, n + 2, in, &p->st));
	CHECK(MPI_Type_free(&in));
	p->rt = p->st;
	p->sbuf = p->smem + 8 * 5 * (size_t)((n + 2) + n);
	p->rbuf = p->rmem + 8 * 5 * (size_t)((n + 2) + n + 1);
	snprintf(p->name, sizeof(p->name), "NAS_LU_y %d", n);
}

/* FFT transpose, one peer's block: gather = resized(vector(R,R,N',cx)),
 * scatter = contig(R, resized(vector(R,1,N',cx))); R = N'/P. */
static void fft(struct pat *p, int np, int nproc)
{
	MPI_Datatype cx, v, col, colr;
	int r = np / nproc;
	size_t a = (size_t)np * r * 16;
	arenas(p, a, a);
	CHECK(MPI_Type_contiguous(2, MPI_DOUBLE, &cx));
	CHECK(MPI_Type_vector(r, r, np, cx, &v));
	CHECK(MPI_Type_create_resized(v, 0, (MPI_Aint)16 * r, &p->st));
	CHECK(MPI_Type_vector(r, 1, np, cx, &col));
	CHECK(MPI_Type_create_resized(col, 0, 16, &colr));
	CHECK(MPI_Type_contiguous(r, colr, &p->rt));
	CHECK(MPI_Type_free(&cx));
	CHECK(MPI_Type_free(&v));
	CHECK(MPI_Type_free(&col));
	CHECK(MPI_Type_free(&colr));
	/* local matrices are R rows x N' columns; one peer's block */
	p->sbuf = p->smem;
	p->rbuf = p->rmem;
	snprintf(p->name, sizeof(p->name), "FFT N'=%d P=%d", np, nproc);
}

/* WRF_{x,y}_vec: struct of 4 2-D, 3 3-D, 2 4-D float faces (vectors and
 * hvectors); displacements relative to the arena here (bench/ddt uses
 * absolute addresses from MPI_BOTTOM), same type both sides. */
static void wrf(struct pat *p, int x, const int *b)
{
	int I = b[1] - b[0] + 1, J = b[3] - b[2] + 1, K = 65;
	int si = b[5] - b[4] + 1, sj = b[7] - b[6] + 1;
	int i0 = b[4] - b[0], j0 = b[6] - b[2];
	MPI_Datatype t2, tk, t3, ty[9];
	MPI_Aint disp[9], off = 0;
	int bl[9];
	size_t a2 = (size_t)J * I * 4, a3 = (size_t)J * K * I * 4, a4 = 2 * a3;
	size_t total = 4 * a2 + 3 * a3 + 2 * a4;
	arenas(p, total, total);
	CHECK(MPI_Type_vector(sj, si, I, MPI_FLOAT, &t2));
	CHECK(MPI_Type_vector(K, si, I, MPI_FLOAT, &tk));
	CHECK(MPI_Type_create_hvector(sj, 1, (MPI_Aint)I * K * 4, tk, &t3));
	for (int k = 0; k < 9; k++) {
		bl[k] = 1;
		if (k < 4) {
			disp[k] = off + 4 * ((MPI_Aint)j0 * I + i0);
			ty[k] = t2;
			off += (MPI_Aint)a2;
		} else {
			/* 4-D: scalar slice 1 */
			MPI_Aint s = k < 7 ? 0 : (MPI_Aint)a3;
			disp[k] = off + s + 4 * ((MPI_Aint)j0 * K * I + i0);
			ty[k] = t3;
			off += (MPI_Aint)(k < 7 ? a3 : a4);
		}
	}
	CHECK(MPI_Type_create_struct(9, bl, disp, ty, &p->st));
	CHECK(MPI_Type_free(&t2));
	CHECK(MPI_Type_free(&tk));
	CHECK(MPI_Type_free(&t3));
	p->rt = p->st;
	p->sbuf = p->smem;
	p->rbuf = p->rmem;
	snprintf(p->name, sizeof(p->name), "WRF_%c_vec 2x2", x ? 'x' : 'y');
}

/* A random permutation of [0, g): its first n entries are n distinct
 * unsorted indices (the DDTBench index lists). */
static int *index_list(int g, unsigned seed)
{
	int *perm = malloc(sizeof(int) * (size_t)g);
	srand(seed);
	for (int i = 0; i < g; i++)
		perm[i] = i;
	for (int i = 0; i < g; i++) {
		int j = rand() % g, x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
	return perm; /* the first n are the list */
}

/* SPECFEM3D_oc: iblk(n, 1, idx, float) in a[g], same type both sides. */
static void specfem_oc(struct pat *p, int n, int g)
{
	int *idx = index_list(g, 7);
	arenas(p, (size_t)g * 4, (size_t)g * 4);
	CHECK(MPI_Type_create_indexed_block(n, 1, idx, MPI_FLOAT, &p->st));
	free(idx);
	p->rt = p->st;
	p->sbuf = p->smem;
	p->rbuf = p->rmem;
	snprintf(p->name, sizeof(p->name), "SPECFEM3D_oc %d/%d", n, g);
}

/* LAMMPS_full: send struct{x: iblk(n, 3, 3 idx, d); 5 x iblk(n, 1, idx, d)}
 * from arrays of g atoms; receive six contiguous runs (x, then the scalars). */
static void lammps(struct pat *p, int n, int g)
{
	int *idx = index_list(g, 11), *idx3 = malloc(sizeof(int) * (size_t)n);
	MPI_Datatype ty[6], rty[6];
	MPI_Aint disp[6], rdisp[6];
	int bl[6] = {1, 1, 1, 1, 1, 1};
	size_t arr = (size_t)g * 8; /* one scalar array */
	arenas(p, arr * 8, (size_t)n * 64);
	for (int i = 0; i < n; i++)
		idx3[i] = 3 * idx[i];
	CHECK(MPI_Type_create_indexed_block(n, 3, idx3, MPI_DOUBLE, &ty[0]));
	disp[0] = 0;
	CHECK(MPI_Type_contiguous(3 * n, MPI_DOUBLE, &rty[0]));
	rdisp[0] = 0;
	for (int k = 1; k < 6; k++) {
		CHECK(MPI_Type_create_indexed_block(n, 1, idx, MPI_DOUBLE, &ty[k]));
		disp[k] = (MPI_Aint)(arr * (size_t)(2 + k));
		CHECK(MPI_Type_contiguous(n, MPI_DOUBLE, &rty[k]));
		rdisp[k] = (MPI_Aint)((size_t)n * 8 * (size_t)(2 + k));
	}
	CHECK(MPI_Type_create_struct(6, bl, disp, ty, &p->st));
	CHECK(MPI_Type_create_struct(6, bl, rdisp, rty, &p->rt));
	for (int k = 0; k < 6; k++) {
		CHECK(MPI_Type_free(&ty[k]));
		CHECK(MPI_Type_free(&rty[k]));
	}
	free(idx);
	free(idx3);
	p->sbuf = p->smem;
	p->rbuf = p->rmem;
	snprintf(p->name, sizeof(p->name), "LAMMPS_full %d/%d", n, g);
}

static int reps = 200;

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--reps N]\n", argv[0]);
			return 2;
		}
	}
	MPI_Init(&argc, &argv);
	static const int wrf_y[8] = {-4, 27, 34, 85, 1, 23, 41, 43};
	static const int wrf_x[8] = {-4, 27, 34, 85, 18, 20, 38, 81};
	struct pat pats[16];
	int np = 0;
	mg(&pats[np++], 0, 130, 66, 66);
	mg(&pats[np++], 1, 130, 66, 66);
	mg(&pats[np++], 2, 130, 66, 66);
	mg(&pats[np++], 0, 34, 18, 18);
	lu_y(&pats[np++], 408);
	fft(&pats[np++], 64, 2);
	fft(&pats[np++], 256, 2);
	fft(&pats[np++], 512, 4);
	wrf(&pats[np++], 0, wrf_y);
	wrf(&pats[np++], 1, wrf_x);
	specfem_oc(&pats[np++], 3225, 88881);
	lammps(&pats[np++], 3062, 3534);

	printf("# median of %d reps, microseconds; x = pack+unpk / layout\n", reps);
	printf("%-24s %9s %10s %10s %10s %10s %10s %7s\n", "pattern", "bytes", "pack+unpk",
	       "direct", "layout", "2 halves", "memcpy", "x");
	double *t = malloc(sizeof(double) * (size_t)reps * 5);
	int bad = 0;
	for (int k = 0; k < np; k++) {
		struct pat *p = &pats[k];
		int sz, pos;
		CHECK(MPI_Type_commit(&p->st));
		if (p->rt != p->st)
			CHECK(MPI_Type_commit(&p->rt));
		CHECK(MPI_Type_size(p->st, &sz));
		size_t n = (size_t)sz;
		p->bytes = n;
		unsigned char *tmp = malloc(n), *ref = malloc(p->rlen), *src2 = malloc(n);
		opal_datatype_direct_layout_t *sl, *rl;
		if (opal_datatype_direct_layout_create(OPAL_DT(p->st), 1, &sl) ||
		    opal_datatype_direct_layout_create(OPAL_DT(p->rt), 1, &rl)) {
			fprintf(stderr, "%s: layout_create failed\n", p->name);
			return 1;
		}
		/* check */
		pos = 0;
		CHECK(MPI_Pack(p->sbuf, 1, p->st, tmp, (int)n, &pos, MPI_COMM_SELF));
		pos = 0;
		CHECK(MPI_Unpack(tmp, (int)n, &pos, p->rbuf, 1, p->rt, MPI_COMM_SELF));
		memcpy(ref, p->rmem, p->rlen);
		memset(p->rmem, 0xee, p->rlen);
		opal_datatype_copy_direct(OPAL_DT(p->st), 1, p->sbuf, OPAL_DT(p->rt), 1, p->rbuf, 0,
					  n);
		if (memcmp(ref, p->rmem, p->rlen)) {
			fprintf(stderr, "%s: engine result differs from pack+unpack\n", p->name);
			bad = 1;
		}
		for (int r = 0; r < reps; r++) {
			double t0 = bench_now_us();
			pos = 0;
			MPI_Pack(p->sbuf, 1, p->st, tmp, (int)n, &pos, MPI_COMM_SELF);
			pos = 0;
			MPI_Unpack(tmp, (int)n, &pos, p->rbuf, 1, p->rt, MPI_COMM_SELF);
			double t1 = bench_now_us();
			opal_datatype_copy_direct(OPAL_DT(p->st), 1, p->sbuf, OPAL_DT(p->rt), 1,
						  p->rbuf, 0, n);
			double t2 = bench_now_us();
			opal_datatype_direct_layout_copy(sl, p->sbuf, rl, p->rbuf, 0, n);
			double t3 = bench_now_us();
			opal_datatype_direct_layout_copy(sl, p->sbuf, rl, p->rbuf, 0, n / 2);
			opal_datatype_direct_layout_copy(sl, p->sbuf, rl, p->rbuf, n / 2, n);
			double t4 = bench_now_us();
			memcpy(tmp, src2, n);
			double t5 = bench_now_us();
			t[r] = t1 - t0;
			t[reps + r] = t2 - t1;
			t[2 * reps + r] = t3 - t2;
			t[3 * reps + r] = t4 - t3;
			t[4 * reps + r] = t5 - t4;
		}
		if (memcmp(ref, p->rmem, p->rlen)) {
			fprintf(stderr, "%s: engine result differs after the timed loop\n",
				p->name);
			bad = 1;
		}
		double med[5];
		for (int m = 0; m < 5; m++) {
			struct bench_stats st;
			bench_stats(t + m * reps, (size_t)reps, &st);
			med[m] = st.median;
		}
		printf("%-24s %9zu %10.2f %10.2f %10.2f %10.2f %10.2f %7.1f\n", p->name, n, med[0],
		       med[1], med[2], med[3], med[4], med[0] / med[2]);
		opal_datatype_direct_layout_release(sl);
		opal_datatype_direct_layout_release(rl);
		free(tmp);
		free(ref);
		free(src2);
		if (p->rt != p->st)
			MPI_Type_free(&p->rt);
		MPI_Type_free(&p->st);
		free(p->smem);
		free(p->rmem);
	}
	free(t);
	MPI_Finalize();
	return bad;
}
