/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * NAS_MG_x/_y/_z: faces of a[D3][D2][D1] (doubles), interior of the other
 * axes, boundary plane -> ghost plane with the same type.
 * NAS_LU_x/_y: faces of u[D3+2][D2+2][5], same type at different bases.
 */
#include "ddt.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

enum { MG_X, MG_Y, MG_Z, LU_X, LU_Y };

/* D1, D2, D3 */
static const struct ddt_size mg_x_sizes[] = {
	{"34x18x18", 2048, {34, 18, 18}},
	{"130x66x66", 32768, {130, 66, 66}},
	{"258x130x130", 131072, {258, 130, 130}},
	{"514x258x258", 524288, {514, 258, 258}},
};
static const struct ddt_size mg_y_sizes[] = {
	{"34x18x18", 4096, {34, 18, 18}},
	{"130x66x66", 65536, {130, 66, 66}},
	{"258x130x130", 262144, {258, 130, 130}},
	{"514x258x258", 1048576, {514, 258, 258}},
};
static const struct ddt_size mg_z_sizes[] = {
	{"34x18x18", 4096, {34, 18, 18}},
	{"130x66x66", 65536, {130, 66, 66}},
	{"258x130x130", 262144, {258, 130, 130}},
	{"514x258x258", 1048576, {514, 258, 258}},
};
/* D2 = D3 */
static const struct ddt_size lu_sizes[] = {
	{"12", 480, {12}},     {"33", 1320, {33}},     {"64", 2560, {64}},
	{"102", 4080, {102}},  {"162", 6480, {162}},   {"408", 16320, {408}},
	{"1020", 40800, {1020}},
};

struct nas {
	size_t d1, d2, d3;
	size_t soff, roff; /* element offsets of the send and receive starts */
};

static size_t mg_at(const struct nas *n, size_t x, size_t y, size_t z)
{
	return (z * n->d2 + y) * n->d1 + x;
}

static size_t lu_at(const struct nas *n, size_t z, size_t y)
{
	return (z * (n->d2 + 2) + y) * 5;
}

static void nas_setup(struct ddt_case *c)
{
	const int *p = c->size->p;
	struct nas *n = ddt_alloc(sizeof(*n), "nas params");
	int v = c->pat->variant;
	c->esize = 8;
	if (v <= MG_Z) {
		n->d1 = (size_t)p[0];
		n->d2 = (size_t)p[1];
		n->d3 = (size_t)p[2];
		c->arena_bytes = n->d1 * n->d2 * n->d3 * 8;
		if (v == MG_X) {
			n->soff = mg_at(n, n->d1 - 2, 1, 1);
			n->roff = mg_at(n, n->d1 - 1, 1, 1);
			c->bytes = 8 * (n->d2 - 2) * (n->d3 - 2);
		} else if (v == MG_Y) {
			n->soff = mg_at(n, 1, n->d2 - 2, 1);
			n->roff = mg_at(n, 1, n->d2 - 1, 1);
			c->bytes = 8 * (n->d1 - 2) * (n->d3 - 2);
		} else {
			n->soff = mg_at(n, 1, 1, 1);
			n->roff = mg_at(n, 1, 1, 0);
			c->bytes = 8 * (n->d1 - 2) * (n->d2 - 2);
		}
	} else {
		n->d1 = 5;
		n->d2 = n->d3 = (size_t)p[0];
		c->arena_bytes = (n->d3 + 2) * (n->d2 + 2) * 5 * 8;
		if (v == LU_X) {
			n->soff = lu_at(n, n->d3, 1);
			n->roff = lu_at(n, 0, 1);
			c->bytes = 40 * n->d2;
		} else {
			n->soff = lu_at(n, 1, n->d2);
			n->roff = lu_at(n, 1, 0);
			c->bytes = 40 * n->d3;
		}
	}
	c->priv = n;
}

static void nas_teardown(struct ddt_case *c)
{
	free(c->priv);
}

static void nas_types(struct ddt_case *c, int who, int o, struct ddt_types *t)
{
	(void)who;
	(void)o;
	const struct nas *n = c->priv;
	MPI_Datatype in;
	int d1 = (int)n->d1, d2 = (int)n->d2, d3 = (int)n->d3;
	switch (c->pat->variant) {
	case MG_X:
		MPI_CHECK(MPI_Type_vector(d2 - 2, 1, d1, MPI_DOUBLE, &in));
		MPI_CHECK(MPI_Type_create_hvector(d3 - 2, 1, (MPI_Aint)d1 * d2 * 8, in, &t->st));
		MPI_CHECK(MPI_Type_free(&in));
		break;
	case MG_Y:
		MPI_CHECK(MPI_Type_vector(d3 - 2, d1 - 2, d1 * d2, MPI_DOUBLE, &t->st));
		break;
	case MG_Z:
		MPI_CHECK(MPI_Type_vector(d2 - 2, d1 - 2, d1, MPI_DOUBLE, &t->st));
		break;
	case LU_X:
		MPI_CHECK(MPI_Type_contiguous(5 * d2, MPI_DOUBLE, &t->st));
		break;
	default:
		MPI_CHECK(MPI_Type_contiguous(5, MPI_DOUBLE, &in));
		MPI_CHECK(MPI_Type_vector(d3, 1, d2 + 2, in, &t->st));
		MPI_CHECK(MPI_Type_free(&in));
		break;
	}
	MPI_CHECK(MPI_Type_commit(&t->st));
	t->rt = t->st;
	t->sbuf = (double *)c->arena + n->soff;
	t->rbuf = (double *)c->arena + n->roff;
}

/* Copy the face starting at element offset `start` to/from buf. */
static void nas_copy(const struct ddt_case *c, double *a, size_t start, double *buf, int dir)
{
	const struct nas *n = c->priv;
	double *f = a + start;
	size_t plane = n->d1 * n->d2;
#define MOVE(dst_is_buf, p, len)                                                                   \
	do {                                                                                       \
		if (dir == 0)                                                                      \
			memcpy(buf, (p), (len) * sizeof(double));                                  \
		else                                                                               \
			memcpy((p), buf, (len) * sizeof(double));                                  \
		buf += (len);                                                                      \
	} while (0)
	switch (c->pat->variant) {
	case MG_X:
		for (size_t z = 0; z < n->d3 - 2; z++) {
			double *q = f + z * plane;
			if (dir == 0)
				for (size_t y = 0; y < n->d2 - 2; y++)
					*buf++ = q[y * n->d1];
			else
				for (size_t y = 0; y < n->d2 - 2; y++)
					q[y * n->d1] = *buf++;
		}
		break;
	case MG_Y:
		for (size_t z = 0; z < n->d3 - 2; z++)
			MOVE(0, f + z * plane, n->d1 - 2);
		break;
	case MG_Z:
		for (size_t y = 0; y < n->d2 - 2; y++)
			MOVE(0, f + y * n->d1, n->d1 - 2);
		break;
	case LU_X:
		MOVE(0, f, 5 * n->d2);
		break;
	default:
		for (size_t z = 0; z < n->d3; z++)
			MOVE(0, f + z * (n->d2 + 2) * 5, 5);
		break;
	}
#undef MOVE
}

static void nas_pack(const struct ddt_case *c, int who, int o, const unsigned char *arena,
		     void *buf)
{
	(void)who;
	(void)o;
	const struct nas *n = c->priv;
	nas_copy(c, (double *)arena, n->soff, buf, 0);
}

static void nas_unpack(const struct ddt_case *c, int who, int o, unsigned char *arena,
		       const void *buf)
{
	(void)who;
	(void)o;
	const struct nas *n = c->priv;
	nas_copy(c, (double *)arena, n->roff, (double *)buf, 1);
}

#define NAS(var, nm, v, tab) DDT_PINGPONG_PATTERN(var, nm, v, tab, nas)
NAS(ddt_nas_mg_x, "NAS_MG_x", MG_X, mg_x_sizes);
NAS(ddt_nas_mg_y, "NAS_MG_y", MG_Y, mg_y_sizes);
NAS(ddt_nas_mg_z, "NAS_MG_z", MG_Z, mg_z_sizes);
NAS(ddt_nas_lu_x, "NAS_LU_x", LU_X, lu_sizes);
NAS(ddt_nas_lu_y, "NAS_LU_y", LU_Y, lu_sizes);
