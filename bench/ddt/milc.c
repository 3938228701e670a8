/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MILC_su3_zd: 2 parity halves of V/2 sites of 6 floats, each Lt slices of
 * Lx*Ly*Lz/2 sites; the first Lx*Ly/2 sites of every slice are exchanged.
 * hvec(2, 1, 24*V/2 B, vec(Lt, Lx*Ly/2, Lx*Ly*Lz/2, contig(6, f))) at the
 * array base; same type and memory both ways.
 */
#include "ddt.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Lx, Ly, Lz, Lt */
static const struct ddt_size milc_sizes[] = {
	{"16x16x16x16", 98304, {16, 16, 16, 16}},
	{"8x16x16x16", 49152, {8, 16, 16, 16}},
	{"8x8x8x16", 24576, {8, 8, 8, 16}},
	{"8x8x8x8", 12288, {8, 8, 8, 8}},
};

struct milc {
	size_t half;  /* sites per parity half: V/2 */
	size_t slice; /* sites per t slice of a half: Lx*Ly*Lz/2 */
	size_t face;  /* exchanged sites per slice: Lx*Ly/2 */
	int lt;
};

#define SITE (6 * sizeof(float))

static void milc_setup(struct ddt_case *c)
{
	const int *p = c->size->p;
	struct milc *m = ddt_alloc(sizeof(*m), "milc params");
	size_t v = (size_t)p[0] * p[1] * p[2] * p[3];
	m->half = v / 2;
	m->slice = (size_t)p[0] * p[1] * p[2] / 2;
	m->face = (size_t)p[0] * p[1] / 2;
	m->lt = p[3];
	c->priv = m;
	c->esize = 4;
	c->arena_bytes = v * SITE;
	c->bytes = 2 * (size_t)m->lt * m->face * SITE; /* = 24*Lx*Ly*Lt */
}

static void milc_teardown(struct ddt_case *c)
{
	free(c->priv);
}

static void milc_types(struct ddt_case *c, int who, int o, struct ddt_types *t)
{
	(void)who;
	(void)o;
	const struct milc *m = c->priv;
	MPI_Datatype site, vec;
	MPI_CHECK(MPI_Type_contiguous(6, MPI_FLOAT, &site));
	MPI_CHECK(MPI_Type_vector(m->lt, (int)m->face, (int)m->slice, site, &vec));
	MPI_CHECK(MPI_Type_create_hvector(2, 1, (MPI_Aint)(m->half * SITE), vec, &t->st));
	MPI_CHECK(MPI_Type_commit(&t->st));
	MPI_CHECK(MPI_Type_free(&vec));
	MPI_CHECK(MPI_Type_free(&site));
	t->rt = t->st;
	t->sbuf = t->rbuf = c->arena;
}

static void milc_copy(const struct milc *m, unsigned char *arena, unsigned char *buf, int dir)
{
	size_t blk = m->face * SITE;
	for (int h = 0; h < 2; h++)
		for (int s = 0; s < m->lt; s++) {
			unsigned char *p = arena + ((size_t)h * m->half + (size_t)s * m->slice) * SITE;
			if (dir == 0)
				memcpy(buf, p, blk);
			else
				memcpy(p, buf, blk);
			buf += blk;
		}
}

static void milc_pack(const struct ddt_case *c, int who, int o, const unsigned char *arena,
		      void *buf)
{
	(void)who;
	(void)o;
	milc_copy(c->priv, (unsigned char *)arena, buf, 0);
}

static void milc_unpack(const struct ddt_case *c, int who, int o, unsigned char *arena,
			const void *buf)
{
	(void)who;
	(void)o;
	milc_copy(c->priv, arena, (unsigned char *)buf, 1);
}

const struct ddt_pattern ddt_milc = {
	.name = "MILC_su3_zd",
	.nsizes = sizeof(milc_sizes) / sizeof(milc_sizes[0]),
	.sizes = milc_sizes,
	.setup = milc_setup,
	.teardown = milc_teardown,
	.types = milc_types,
	.pack = milc_pack,
	.unpack = milc_unpack,
};
