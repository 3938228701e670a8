/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ddt_check_fill(struct ddt_case *c)
{
	ddt_fill(c->arena, c->arena_bytes, c->esize, c->rank, DDT_SALT_ARENA);
}

unsigned char *ddt_check_expected(const struct ddt_case *c)
{
	unsigned char *m[2];
	for (int r = 0; r < 2; r++) {
		m[r] = ddt_alloc(c->arena_bytes, "simulated arena");
		ddt_fill(m[r], c->arena_bytes, c->esize, r, DDT_SALT_ARENA);
	}
	void *buf = ddt_alloc(c->bytes, "simulated message");
	/* Every inner iteration repeats the first one's effect (the second
	 * transfer sends back what the first one wrote, or the send and
	 * receive maps are disjoint), so one round trip per outer iteration. */
	for (int o = 0; o < c->outer; o++) {
		c->pat->pack(c, 0, o, m[0], buf);
		c->pat->unpack(c, 1, o, m[1], buf);
		c->pat->pack(c, 1, o, m[1], buf);
		c->pat->unpack(c, 0, o, m[0], buf);
	}
	free(buf);
	free(m[1 - c->rank]);
	return m[c->rank];
}

int ddt_check_bytes(const struct ddt_case *c, const char *method, const char *what,
		    const void *got, const void *want, size_t n)
{
	size_t off = ddt_first_diff(got, want, n);
	if (off == (size_t)-1)
		return 0;
	size_t bad = 0;
	const unsigned char *g = got, *w = want;
	for (size_t i = off; i < n; i++)
		bad += g[i] != w[i];
	fprintf(stderr,
		"ddt: CHECK FAILED: pattern %s size %s method %s rank %d: %s differs at byte "
		"offset %zu (element %zu of %zu B): got 0x%02x, expected 0x%02x; %zu bytes "
		"differ\n",
		c->pat->name, c->size->label, method, c->rank, what, off, off / c->esize,
		c->esize, g[off], w[off], bad);
	return -1;
}

static int consistency_at(struct ddt_case *c, int o)
{
	struct ddt_types t;
	int rc = 0, psize, pos = 0;
	c->pat->types(c, c->rank, o, &t);
	MPI_CHECK(MPI_Pack_size(1, t.st, MPI_COMM_SELF, &psize));
	unsigned char *mpi = ddt_alloc((size_t)psize, "MPI_Pack buffer");
	unsigned char *man = ddt_alloc(c->bytes, "manual pack buffer");
	unsigned char *save = ddt_alloc(c->arena_bytes, "arena copy");

	ddt_check_fill(c);
	MPI_CHECK(MPI_Pack(t.sbuf, 1, t.st, mpi, psize, &pos, MPI_COMM_SELF));
	c->pat->pack(c, c->rank, o, c->arena, man);
	if ((size_t)pos != c->bytes) {
		fprintf(stderr, "ddt: CHECK FAILED: pattern %s size %s: MPI_Pack wrote %d bytes, "
				"payload is %zu\n",
			c->pat->name, c->size->label, pos, c->bytes);
		rc = -1;
	} else {
		rc |= ddt_check_bytes(c, "manual", "hand pack vs MPI_Pack", man, mpi, c->bytes);
	}
	/* unpack the peer's values both ways and compare the arenas */
	ddt_fill(man, c->bytes, c->esize, 1 - c->rank, DDT_SALT_REF);
	c->pat->unpack(c, c->rank, o, c->arena, man);
	memcpy(save, c->arena, c->arena_bytes);
	ddt_check_fill(c);
	pos = 0;
	MPI_CHECK(MPI_Unpack(man, (int)c->bytes, &pos, t.rbuf, 1, t.rt, MPI_COMM_SELF));
	rc |= ddt_check_bytes(c, "manual", "hand unpack vs MPI_Unpack", save, c->arena,
			      c->arena_bytes);
	if (t.rt != t.st)
		MPI_CHECK(MPI_Type_free(&t.rt));
	MPI_CHECK(MPI_Type_free(&t.st));
	free(mpi);
	free(man);
	free(save);
	return rc ? -1 : 0;
}

int ddt_check_consistency(struct ddt_case *c)
{
	int rc = consistency_at(c, 0);
	if (c->outer > 1)
		rc |= consistency_at(c, c->outer - 1);
	return rc ? -1 : 0;
}
