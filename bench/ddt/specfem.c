/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SPECFEM3D_oc: indexed_block(n, 1, idx) of a[G] floats, same type/memory.
 * SPECFEM3D_cm: struct{cm: iblk(nc, 3, 3*idx_c); ic: iblk(ni, 3, 3*idx_i)}
 *   of cm[Gc][3], ic[Gi][3] from MPI_BOTTOM, same type/memory.
 * SPECFEM3D_mt: send vec(N, 1, 2, contig(3, f)) of s[N][2][3], receive
 *   contig(3N, f) into a separate r[N][3].
 */
#include "ddt.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

enum { OC, CM, MT };

/* n, G */
static const struct ddt_size oc_sizes[] = {
	{"3225/88881", 12900, {3225, 88881}},
	{"1897/38585", 7588, {1897, 38585}},
	{"877/12857", 3508, {877, 12857}},
	{"493/3697", 1972, {493, 3697}},
};
/* nc, ni, Gc, Gi */
static const struct ddt_size cm_sizes[] = {
	{"11797+3009", 177672, {11797, 3009, 834917, 51153}},
	{"7125+1729", 106248, {7125, 1729, 396849, 22477}},
	{"3801+801", 55224, {3801, 801, 152001, 7209}},
	{"1957+245", 26424, {1957, 245, 39929, 1225}},
};
/* N */
static const struct ddt_size mt_sizes[] = {
	{"7600", 91200, {7600}},
	{"6400", 76800, {6400}},
	{"5600", 67200, {5600}},
	{"6200", 74400, {6200}},
};

struct specfem {
	struct ddt_lists lists;
	int has_lists;
	size_t off2; /* byte offset of the second array (ic or r) */
};

static void sf_setup(struct ddt_case *c)
{
	const int *p = c->size->p;
	struct specfem *s = ddt_alloc(sizeof(*s), "specfem params");
	memset(s, 0, sizeof(*s));
	c->esize = 4;
	switch (c->pat->variant) {
	case OC: {
		int n[1] = {p[0]}, g[1] = {p[1]};
		ddt_lists_make(&s->lists, 1, n, g, c->outer, c->seed);
		s->has_lists = 1;
		c->arena_bytes = (size_t)p[1] * 4;
		c->bytes = (size_t)p[0] * 4;
		break;
	}
	case CM: {
		int n[2] = {p[0], p[1]}, g[2] = {p[2], p[3]};
		ddt_lists_make(&s->lists, 2, n, g, c->outer, c->seed);
		s->has_lists = 1;
		s->off2 = ddt_align((size_t)p[2] * 12);
		c->arena_bytes = s->off2 + (size_t)p[3] * 12;
		c->bytes = 12 * (size_t)(p[0] + p[1]);
		break;
	}
	default:
		s->off2 = ddt_align((size_t)p[0] * 24);
		c->arena_bytes = s->off2 + (size_t)p[0] * 12;
		c->bytes = 12 * (size_t)p[0];
		break;
	}
	c->priv = s;
}

static void sf_teardown(struct ddt_case *c)
{
	struct specfem *s = c->priv;
	if (s->has_lists)
		ddt_lists_free(&s->lists, c->outer);
	free(s);
}

static const int *list(const struct ddt_case *c, int who, int o, int l)
{
	const struct specfem *s = c->priv;
	return s->lists.idx[who][o * s->lists.nlists + l];
}

static void sf_types(struct ddt_case *c, int who, int o, struct ddt_types *t)
{
	const struct specfem *s = c->priv;
	const int *p = c->size->p;
	switch (c->pat->variant) {
	case OC:
		MPI_CHECK(MPI_Type_create_indexed_block(p[0], 1, list(c, who, o, 0), MPI_FLOAT,
							&t->st));
		MPI_CHECK(MPI_Type_commit(&t->st));
		t->rt = t->st;
		t->sbuf = t->rbuf = c->arena;
		break;
	case CM: {
		MPI_Datatype ty[2];
		int bl[2] = {1, 1};
		MPI_Aint disp[2];
		for (int l = 0; l < 2; l++) {
			int n = p[l];
			const int *idx = list(c, who, o, l);
			int *d3 = ddt_alloc(sizeof(int) * (size_t)n, "displacements");
			for (int i = 0; i < n; i++)
				d3[i] = 3 * idx[i];
			MPI_CHECK(MPI_Type_create_indexed_block(n, 3, d3, MPI_FLOAT, &ty[l]));
			free(d3);
		}
		MPI_CHECK(MPI_Get_address(c->arena, &disp[0]));
		MPI_CHECK(MPI_Get_address(c->arena + s->off2, &disp[1]));
		MPI_CHECK(MPI_Type_create_struct(2, bl, disp, ty, &t->st));
		MPI_CHECK(MPI_Type_commit(&t->st));
		MPI_CHECK(MPI_Type_free(&ty[0]));
		MPI_CHECK(MPI_Type_free(&ty[1]));
		t->rt = t->st;
		t->sbuf = t->rbuf = MPI_BOTTOM;
		break;
	}
	default: {
		MPI_Datatype v3;
		MPI_CHECK(MPI_Type_contiguous(3, MPI_FLOAT, &v3));
		MPI_CHECK(MPI_Type_vector(p[0], 1, 2, v3, &t->st));
		MPI_CHECK(MPI_Type_commit(&t->st));
		MPI_CHECK(MPI_Type_free(&v3));
		MPI_CHECK(MPI_Type_contiguous(3 * p[0], MPI_FLOAT, &t->rt));
		MPI_CHECK(MPI_Type_commit(&t->rt));
		t->sbuf = c->arena;
		t->rbuf = c->arena + s->off2;
		break;
	}
	}
}

static void sf_pack(const struct ddt_case *c, int who, int o, const unsigned char *arena,
		    void *vbuf)
{
	const struct specfem *s = c->priv;
	const int *p = c->size->p;
	float *buf = vbuf;
	const float *a = (const float *)arena;
	switch (c->pat->variant) {
	case OC: {
		const int *idx = list(c, who, o, 0);
		for (int i = 0; i < p[0]; i++)
			buf[i] = a[idx[i]];
		break;
	}
	case CM: {
		const float *arr[2] = {a, (const float *)(arena + s->off2)};
		for (int l = 0; l < 2; l++) {
			const int *idx = list(c, who, o, l);
			for (int i = 0; i < p[l]; i++) {
				const float *e = arr[l] + 3 * (size_t)idx[i];
				buf[0] = e[0];
				buf[1] = e[1];
				buf[2] = e[2];
				buf += 3;
			}
		}
		break;
	}
	default:
		for (int i = 0; i < p[0]; i++)
			memcpy(buf + 3 * i, a + 6 * (size_t)i, 12);
		break;
	}
}

static void sf_unpack(const struct ddt_case *c, int who, int o, unsigned char *arena,
		      const void *vbuf)
{
	const struct specfem *s = c->priv;
	const int *p = c->size->p;
	const float *buf = vbuf;
	float *a = (float *)arena;
	switch (c->pat->variant) {
	case OC: {
		/* DDTBench's rank-0 unpack skips index 0; this one does not */
		const int *idx = list(c, who, o, 0);
		for (int i = 0; i < p[0]; i++)
			a[idx[i]] = buf[i];
		break;
	}
	case CM: {
		float *arr[2] = {a, (float *)(arena + s->off2)};
		for (int l = 0; l < 2; l++) {
			const int *idx = list(c, who, o, l);
			for (int i = 0; i < p[l]; i++) {
				float *e = arr[l] + 3 * (size_t)idx[i];
				e[0] = buf[0];
				e[1] = buf[1];
				e[2] = buf[2];
				buf += 3;
			}
		}
		break;
	}
	default:
		/* DDTBench's manual code has no unpack here; we copy into r */
		memcpy(arena + s->off2, buf, 12 * (size_t)p[0]);
		break;
	}
}

#define SF(var, nm, v, tab) DDT_PINGPONG_PATTERN(var, nm, v, tab, sf)
SF(ddt_specfem_oc, "SPECFEM3D_oc", OC, oc_sizes);
SF(ddt_specfem_cm, "SPECFEM3D_cm", CM, cm_sizes);
SF(ddt_specfem_mt, "SPECFEM3D_mt", MT, mt_sizes);
