/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/ddt: the 16 DDTBench communication patterns.
 *
 * A pattern family (wrf.c, milc.c, nas.c, fft.c, specfem.c, lammps.c)
 * describes each test case with the spec's size table and, for ping-pong
 * patterns, four callbacks on a per-rank memory "arena":
 *   types   build and commit the send and receive datatypes (mpi_ddt and
 *           mpi_pack methods) for the index lists of one outer iteration;
 *   pack    hand-written gather of the send type map into a contiguous
 *           buffer (manual method), in the datatype's element order;
 *   unpack  hand-written scatter of a contiguous buffer into the receive
 *           type map.
 * pack/unpack take the arena as argument so that the checker can replay a
 * whole run on copies of both ranks' memory (check.c).
 * The collective FFT pattern runs its own loop (fft.c).
 */
#ifndef DDT_DDT_H
#define DDT_DDT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum ddt_method { M_DDT, M_MANUAL, M_PACK, M_REF, M_COUNT };
extern const char *const ddt_method_name[M_COUNT];

struct ddt_size {
	const char *label;  /* size name as printed, e.g. "2x2", "16x16x16x16" */
	size_t spec_bytes;  /* payload bytes from the spec's table */
	int p[8];           /* family parameters */
};

struct ddt_case;

struct ddt_types {
	MPI_Datatype st, rt; /* rt may equal st ("same type") */
	void *sbuf, *rbuf;   /* MPI_BOTTOM for absolute-address structs */
};

struct ddt_opts {
	int outer, inner;
	int inject;        /* hidden --inject-error: corrupt one payload byte */
	unsigned seed;     /* rank r seeds rand() with seed + r for its lists */
};

struct ddt_pattern {
	const char *name;
	int variant; /* which pattern of the family */
	int nsizes;
	const struct ddt_size *sizes;
	/* ping-pong patterns */
	void (*setup)(struct ddt_case *c);
	void (*teardown)(struct ddt_case *c);
	void (*types)(struct ddt_case *c, int who, int o, struct ddt_types *t);
	void (*pack)(const struct ddt_case *c, int who, int o, const unsigned char *arena,
		     void *buf);
	void (*unpack)(const struct ddt_case *c, int who, int o, unsigned char *arena,
		       const void *buf);
	/* collective patterns (FFT): run one method, fill samples[outer*inner]
	 * on rank 0; return 0 if the data check passed on every rank. */
	int (*collective)(const struct ddt_pattern *p, int size_idx, enum ddt_method m,
			  const struct ddt_opts *o, double *samples);
	/* collective patterns: payload bytes for the communicator size */
	size_t (*collective_bytes)(const struct ddt_pattern *p, int size_idx, int nprocs,
				   size_t *spec_bytes);
};

/* Define var, a ping-pong pattern of the family whose functions are named
 * pfx_setup, pfx_teardown, pfx_types, pfx_pack and pfx_unpack. */
#define DDT_PINGPONG_PATTERN(var, nm, v, tab, pfx)                                                 \
	const struct ddt_pattern var = {                                                           \
		.name = nm,                                                                        \
		.variant = v,                                                                      \
		.nsizes = sizeof(tab) / sizeof(tab[0]),                                            \
		.sizes = tab,                                                                      \
		.setup = pfx##_setup,                                                              \
		.teardown = pfx##_teardown,                                                        \
		.types = pfx##_types,                                                              \
		.pack = pfx##_pack,                                                                \
		.unpack = pfx##_unpack,                                                            \
	}

/* One ping-pong test case on one rank (0 or 1). */
struct ddt_case {
	const struct ddt_pattern *pat;
	const struct ddt_size *size;
	int rank;
	int outer;
	unsigned seed;
	size_t esize;       /* element size used for fill values: 4 or 8 */
	size_t bytes;       /* payload bytes computed from the parameters */
	size_t arena_bytes; /* set by setup */
	unsigned char *arena;
	void *priv;         /* family state (parameters, index lists) */
};

/* Index lists of ranks 0 and 1 for every outer iteration. */
struct ddt_lists {
	int nlists; /* lists per outer iteration */
	int *n;     /* n[l]: entries of list l */
	int **idx[2];  /* idx[who][o * nlists + l] */
};
/* Draw lists as DDTBench: per rank, srand(seed + who), then per outer
 * iteration the lists in order (n[l] unique indices in [0, g[l])). */
void ddt_lists_make(struct ddt_lists *l, int nlists, const int *n, const int *g, int outer,
		    unsigned seed);
void ddt_lists_free(struct ddt_lists *l, int outer);

/* Round x up to a multiple of 64 (arena layout). */
static inline size_t ddt_align(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* The pattern table, in the spec's order (patterns.c). */
extern const struct ddt_pattern *const ddt_patterns[];
extern const int ddt_npatterns;

/* Families */
extern const struct ddt_pattern ddt_wrf_y_vec, ddt_wrf_y_sa, ddt_wrf_x_vec, ddt_wrf_x_sa;
extern const struct ddt_pattern ddt_milc;
extern const struct ddt_pattern ddt_nas_lu_x, ddt_nas_lu_y, ddt_nas_mg_x, ddt_nas_mg_y,
	ddt_nas_mg_z;
extern const struct ddt_pattern ddt_lammps_full, ddt_lammps_atomic;
extern const struct ddt_pattern ddt_specfem_oc, ddt_specfem_cm, ddt_specfem_mt;
extern const struct ddt_pattern ddt_fft;

#endif
