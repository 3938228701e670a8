/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * WRF_x_vec, WRF_y_vec, WRF_x_sa, WRF_y_sa: halo of 4 2-D, 3 3-D and
 * 2 4-D float fields (of the 4-D fields only scalar slice 1), sent as one
 * struct of absolute addresses from MPI_BOTTOM; same type and memory both
 * ways.  _vec builds the faces from (h)vectors, _sa from subarrays.
 */
#include "ddt.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define WRF_K 65
enum { N2 = 4, N3 = 3, N4 = 2, NARR = N2 + N3 + N4 };

/* ims, ime, jms, jme, is, ie, js, je (inclusive bounds) */
static const struct ddt_size wrf_y_sizes[] = {
	{"2x2", 90804, {-4, 27, 34, 85, 1, 23, 41, 43}},
	{"3x3", 75012, {8, 34, 21, 61, 12, 30, 28, 30}},
	{"4x4", 63168, {4, 27, 14, 47, 8, 23, 21, 23}},
	{"5x5", 55272, {10, 31, 10, 39, 14, 27, 17, 19}},
	{"8x8", 43428, {4, 22, 4, 27, 8, 18, 11, 13}},
};
static const struct ddt_size wrf_x_sizes[] = {
	{"2x2", 173712, {-4, 27, 34, 85, 18, 20, 38, 81}},
	{"4x4", 102648, {4, 27, 14, 47, 18, 20, 18, 43}},
	{"8x8", 63168, {4, 22, 4, 27, 13, 15, 8, 23}},
};

struct wrf {
	int I, J, K, i0, j0, si, sj;
	size_t off[NARR]; /* byte offset of each array in the arena */
};

static size_t arr_elems(const struct wrf *w, int a)
{
	size_t plane = (size_t)w->J * (size_t)w->I;
	if (a < N2)
		return plane;
	if (a < N2 + N3)
		return plane * (size_t)w->K;
	return 2 * plane * (size_t)w->K;
}

static void wrf_setup(struct ddt_case *c)
{
	const int *p = c->size->p;
	struct wrf *w = ddt_alloc(sizeof(*w), "wrf params");
	w->I = p[1] - p[0] + 1;
	w->J = p[3] - p[2] + 1;
	w->K = WRF_K;
	w->i0 = p[4] - p[0];
	w->j0 = p[6] - p[2];
	w->si = p[5] - p[4] + 1;
	w->sj = p[7] - p[6] + 1;
	size_t off = 0;
	for (int a = 0; a < NARR; a++) {
		w->off[a] = off;
		off += ddt_align(arr_elems(w, a) * 4);
	}
	c->arena_bytes = off;
	c->esize = 4;
	c->bytes = (size_t)(N2 + N3 * WRF_K + N4 * WRF_K) * (size_t)w->si * (size_t)w->sj * 4;
	c->priv = w;
}

static void wrf_teardown(struct ddt_case *c)
{
	free(c->priv);
}

/* element offset of (slice l, j, k, i) in array a (l, k ignored where absent) */
static size_t at(const struct wrf *w, int a, int l, int j, int k, int i)
{
	size_t I = (size_t)w->I, J = (size_t)w->J, K = (size_t)w->K;
	if (a < N2)
		return (size_t)j * I + (size_t)i;
	if (a < N2 + N3)
		return ((size_t)j * K + (size_t)k) * I + (size_t)i;
	return (((size_t)l * J + (size_t)j) * K + (size_t)k) * I + (size_t)i;
}

static void wrf_types(struct ddt_case *c, int who, int o, struct ddt_types *t)
{
	(void)who;
	(void)o;
	const struct wrf *w = c->priv;
	MPI_Datatype ty[NARR], t2, t3, t4, tk;
	MPI_Aint disp[NARR];
	int bl[NARR];
	int sa = c->pat->variant & 1;

	if (!sa) {
		MPI_CHECK(MPI_Type_vector(w->sj, w->si, w->I, MPI_FLOAT, &t2));
		MPI_CHECK(MPI_Type_vector(w->K, w->si, w->I, MPI_FLOAT, &tk));
		MPI_CHECK(MPI_Type_create_hvector(w->sj, 1, (MPI_Aint)w->I * w->K * 4, tk, &t3));
		MPI_CHECK(MPI_Type_create_hvector(1, 1, (MPI_Aint)w->I * w->K * w->J * 4, t3, &t4));
		MPI_CHECK(MPI_Type_free(&tk));
	} else {
		int s2[2] = {w->J, w->I}, ss2[2] = {w->sj, w->si}, st2[2] = {w->j0, w->i0};
		int s3[3] = {w->J, w->K, w->I}, ss3[3] = {w->sj, w->K, w->si},
		    st3[3] = {w->j0, 0, w->i0};
		int s4[4] = {2, w->J, w->K, w->I}, ss4[4] = {1, w->sj, w->K, w->si},
		    st4[4] = {1, w->j0, 0, w->i0};
		MPI_CHECK(MPI_Type_create_subarray(2, s2, ss2, st2, MPI_ORDER_C, MPI_FLOAT, &t2));
		MPI_CHECK(MPI_Type_create_subarray(3, s3, ss3, st3, MPI_ORDER_C, MPI_FLOAT, &t3));
		MPI_CHECK(MPI_Type_create_subarray(4, s4, ss4, st4, MPI_ORDER_C, MPI_FLOAT, &t4));
	}
	for (int a = 0; a < NARR; a++) {
		float *base = (float *)(c->arena + w->off[a]);
		/* _vec: address of the first element; _sa: the array base */
		float *start = sa ? base : base + at(w, a, 1, w->j0, 0, w->i0);
		MPI_CHECK(MPI_Get_address(start, &disp[a]));
		bl[a] = 1;
		ty[a] = a < N2 ? t2 : a < N2 + N3 ? t3 : t4;
	}
	MPI_CHECK(MPI_Type_create_struct(NARR, bl, disp, ty, &t->st));
	MPI_CHECK(MPI_Type_commit(&t->st));
	MPI_CHECK(MPI_Type_free(&t2));
	MPI_CHECK(MPI_Type_free(&t3));
	MPI_CHECK(MPI_Type_free(&t4));
	t->rt = t->st;
	t->sbuf = t->rbuf = MPI_BOTTOM;
}

/* pack (dir 0) or unpack (dir 1) the 9 faces in the struct's order */
static void wrf_copy(const struct wrf *w, unsigned char *arena, float *buf, int dir)
{
	size_t row = (size_t)w->si * sizeof(float);
	for (int a = 0; a < NARR; a++) {
		float *base = (float *)(arena + w->off[a]);
		int nk = a < N2 ? 1 : w->K;
		for (int j = 0; j < w->sj; j++)
			for (int k = 0; k < nk; k++) {
				float *p = base + at(w, a, 1, w->j0 + j, k, w->i0);
				if (dir == 0)
					memcpy(buf, p, row);
				else
					memcpy(p, buf, row);
				buf += w->si;
			}
	}
}

static void wrf_pack(const struct ddt_case *c, int who, int o, const unsigned char *arena,
		     void *buf)
{
	(void)who;
	(void)o;
	wrf_copy(c->priv, (unsigned char *)arena, buf, 0);
}

static void wrf_unpack(const struct ddt_case *c, int who, int o, unsigned char *arena,
		       const void *buf)
{
	(void)who;
	(void)o;
	wrf_copy(c->priv, arena, (float *)buf, 1);
}

#define WRF(var, nm, v, tab) DDT_PINGPONG_PATTERN(var, nm, v, tab, wrf)
WRF(ddt_wrf_y_vec, "WRF_y_vec", 0, wrf_y_sizes);
WRF(ddt_wrf_y_sa, "WRF_y_sa", 1, wrf_y_sizes);
WRF(ddt_wrf_x_vec, "WRF_x_vec", 0, wrf_x_sizes);
WRF(ddt_wrf_x_sa, "WRF_x_sa", 1, wrf_x_sizes);
