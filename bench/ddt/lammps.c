/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LAMMPS_full / LAMMPS_atomic: x[G+n][3] and per-atom scalars (doubles).
 * Send struct{x: iblk(n, 3, 3*idx); each scalar: iblk(n, 1, idx)} at the
 * array bases (MPI_BOTTOM); receive struct{&x[G]: contig(3n); &s[G]:
 * contig(n) each}: the ghosts are appended after G.  Entry order x, tag,
 * type, mask, q, molecule (full) / x, tag, type, mask (atomic).
 */
#include "ddt.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

enum { FULL, ATOMIC };
#define MAXARR 6

/* n, G */
static const struct ddt_size full_sizes[] = {
	{"3062/3534", 195968, {3062, 3534}},
	{"2243/2597", 143552, {2243, 2597}},
	{"1662/1907", 106368, {1662, 1907}},
};
static const struct ddt_size atomic_sizes[] = {
	{"243/4084", 11664, {243, 4084}},
	{"145/2157", 6960, {145, 2157}},
	{"114/1217", 5472, {114, 1217}},
};

struct lammps {
	struct ddt_lists lists;
	int narr; /* x plus scalars */
	int n, g;
	size_t off[MAXARR]; /* byte offsets: x, then scalars */
};

static void lmp_setup(struct ddt_case *c)
{
	struct lammps *l = ddt_alloc(sizeof(*l), "lammps params");
	l->n = c->size->p[0];
	l->g = c->size->p[1];
	l->narr = c->pat->variant == FULL ? 6 : 4;
	ddt_lists_make(&l->lists, 1, &l->n, &l->g, c->outer, c->seed);
	size_t off = 0, len = (size_t)(l->g + l->n);
	for (int a = 0; a < l->narr; a++) {
		l->off[a] = off;
		off += ddt_align(len * (a == 0 ? 3 : 1) * 8);
	}
	c->arena_bytes = off;
	c->esize = 8;
	c->bytes = (size_t)l->n * (size_t)(3 + l->narr - 1) * 8;
	c->priv = l;
}

static void lmp_teardown(struct ddt_case *c)
{
	struct lammps *l = c->priv;
	ddt_lists_free(&l->lists, c->outer);
	free(l);
}

static void lmp_types(struct ddt_case *c, int who, int o, struct ddt_types *t)
{
	const struct lammps *l = c->priv;
	const int *idx = l->lists.idx[who][o];
	MPI_Datatype sty[MAXARR], rty[MAXARR];
	MPI_Aint sd[MAXARR], rd[MAXARR];
	int bl[MAXARR];
	int *d3 = ddt_alloc(sizeof(int) * (size_t)l->n, "displacements");
	for (int i = 0; i < l->n; i++)
		d3[i] = 3 * idx[i];
	MPI_CHECK(MPI_Type_create_indexed_block(l->n, 3, d3, MPI_DOUBLE, &sty[0]));
	free(d3);
	MPI_CHECK(MPI_Type_create_indexed_block(l->n, 1, idx, MPI_DOUBLE, &sty[1]));
	MPI_CHECK(MPI_Type_contiguous(3 * l->n, MPI_DOUBLE, &rty[0]));
	MPI_CHECK(MPI_Type_contiguous(l->n, MPI_DOUBLE, &rty[1]));
	for (int a = 0; a < l->narr; a++) {
		double *base = (double *)(c->arena + l->off[a]);
		MPI_CHECK(MPI_Get_address(base, &sd[a]));
		MPI_CHECK(MPI_Get_address(base + (size_t)l->g * (a == 0 ? 3 : 1), &rd[a]));
		bl[a] = 1;
		if (a > 1) {
			sty[a] = sty[1];
			rty[a] = rty[1];
		}
	}
	MPI_CHECK(MPI_Type_create_struct(l->narr, bl, sd, sty, &t->st));
	MPI_CHECK(MPI_Type_create_struct(l->narr, bl, rd, rty, &t->rt));
	MPI_CHECK(MPI_Type_commit(&t->st));
	MPI_CHECK(MPI_Type_commit(&t->rt));
	for (int a = 0; a < 2; a++) {
		MPI_CHECK(MPI_Type_free(&sty[a]));
		MPI_CHECK(MPI_Type_free(&rty[a]));
	}
	t->sbuf = t->rbuf = MPI_BOTTOM;
}

/* Wire order = the datatype's order (all x, then each scalar); DDTBench's
 * manual code packs per atom instead. */
static void lmp_pack(const struct ddt_case *c, int who, int o, const unsigned char *arena,
		     void *vbuf)
{
	const struct lammps *l = c->priv;
	const int *idx = l->lists.idx[who][o];
	double *buf = vbuf;
	const double *x = (const double *)(arena + l->off[0]);
	for (int i = 0; i < l->n; i++) {
		const double *e = x + 3 * (size_t)idx[i];
		buf[0] = e[0];
		buf[1] = e[1];
		buf[2] = e[2];
		buf += 3;
	}
	for (int a = 1; a < l->narr; a++) {
		const double *s = (const double *)(arena + l->off[a]);
		for (int i = 0; i < l->n; i++)
			*buf++ = s[idx[i]];
	}
}

static void lmp_unpack(const struct ddt_case *c, int who, int o, unsigned char *arena,
		       const void *vbuf)
{
	(void)who;
	(void)o;
	const struct lammps *l = c->priv;
	const double *buf = vbuf;
	for (int a = 0; a < l->narr; a++) {
		size_t w = a == 0 ? 3 : 1;
		double *s = (double *)(arena + l->off[a]) + (size_t)l->g * w;
		memcpy(s, buf, (size_t)l->n * w * 8);
		buf += (size_t)l->n * w;
	}
}

#define LMP(var, nm, v, tab) DDT_PINGPONG_PATTERN(var, nm, v, tab, lmp)
LMP(ddt_lammps_full, "LAMMPS_full", FULL, full_sizes);
LMP(ddt_lammps_atomic, "LAMMPS_atomic", ATOMIC, atomic_sizes);
