/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddt_gen: random pairs of nested MPI datatypes with equal
 * type signatures, guarded buffers and the MPI_Pack -> MPI_Unpack reference
 * result.  Shared by the copy-engine fuzzer (tests/ddt-copy/ddt_fuzz) and the
 * MPI send/receive fuzzer (tests/mpi/src/ddt_sendrecv_fuzz.c).  MPI API only.
 *
 * Everything is driven by one splitmix64 stream (ddt_rng_state): two
 * processes that seed it alike and make the same calls build the same types
 * and the same buffer contents.  The generator keeps its state in globals
 * (one case at a time, single-threaded).
 */
#ifndef PVAS_DDT_GEN_H
#define PVAS_DDT_GEN_H

#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DDT_CHECK(x)                                                                               \
	do {                                                                                       \
		int rc_ = (x);                                                                     \
		if (rc_ != MPI_SUCCESS) {                                                          \
			fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #x, rc_);   \
			MPI_Abort(MPI_COMM_WORLD, 2);                                              \
		}                                                                                  \
	} while (0)

/* ---- random numbers: splitmix64 ------------------------------------------ */
#define DDT_GOLDEN 0x9e3779b97f4a7c15ull
extern uint64_t ddt_rng_state;
uint64_t ddt_rnd64(void);
long ddt_rnd(long lo, long hi); /* uniform in [lo, hi] */
int ddt_chance(int pct);	/* true with probability pct % */
/* Advance the stream as n calls of ddt_rnd64() would. */
static inline void ddt_rng_skip(uint64_t n)
{
	ddt_rng_state += n * DDT_GOLDEN;
}
/* Random bytes: one draw per byte, or (ddt_fill_words = 1) one per 8 bytes. */
extern int ddt_fill_words;
void ddt_fill(unsigned char *p, size_t n);
/* Draws ddt_fill(p, n) makes (for ddt_rng_skip). */
uint64_t ddt_fill_draws(size_t n);

/* ---- description of the types being built ------------------------------- */
#define DDT_DESC_MAX 8192
extern char ddt_desc[2][DDT_DESC_MAX]; /* [0] send type, [1] receive type */
extern int ddt_side;		       /* 0 send, 1 receive: which one is built */
void ddt_desc_reset(void);
void ddt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- derived types of the current case, freed together -------------------- */
MPI_Datatype ddt_keep(MPI_Datatype t);
void ddt_free_pool(void);

/* ---- the unit: what every type is built of -------------------------------- */
enum ddt_unit_kind { DDT_U_CHAR, DDT_U_SHORT, DDT_U_INT, DDT_U_DOUBLE, DDT_U_CPLX, DDT_U_MIXED };
#define DDT_NUNITS 6
extern enum ddt_unit_kind ddt_unit; /* set before building a pair */
extern int ddt_unit_size;	    /* bytes of one unit's signature */
int ddt_unit_bytes(enum ddt_unit_kind u);
/* A basic type, or struct {int, double, char} laid out at random. */
MPI_Datatype ddt_make_unit(void);

/* ---- types ---------------------------------------------------------------- */
MPI_Aint ddt_extent_of(MPI_Datatype t);
/* True extent; 0 at 0 for a zero-size type. */
MPI_Aint ddt_true_extent_of(MPI_Datatype t, MPI_Aint *tlb);
long ddt_units_of(MPI_Datatype t);
/* A random datatype of about `budget` units or fewer, `depth` levels, from
 * every constructor (contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, hindexed_block, struct, subarray, darray, resized, dup),
 * negative strides and lower bounds included.  Registered with ddt_keep. */
MPI_Datatype ddt_gen(int depth, long budget);
/* FFT-like transpose pair (sets ddt_unit_size); returns the count of both. */
long ddt_transpose_pair(MPI_Datatype *st, MPI_Datatype *rt);
/* MPI_BOTTOM: struct {count x t at the absolute address of base}, committed. */
MPI_Datatype ddt_absolute(MPI_Datatype t, int count, void *base);
/* Bytes [lo, hi) relative to the buffer argument that count elements of t
 * may touch (what ddt_buf_for allocates, guards excluded). */
void ddt_span(MPI_Datatype t, long count, MPI_Aint *lo, MPI_Aint *hi);

/* ---- guarded buffers -------------------------------------------------------- */
#define DDT_GUARD 64
struct ddt_buf {
	unsigned char *mem; /* allocation: DDT_GUARD, the span, DDT_GUARD */
	size_t len;
	unsigned char *base; /* buffer argument for count elements of the type */
};
extern size_t ddt_max_buffer; /* ddt_buf_for refuses larger spans (default 8 MiB) */
int ddt_buf_for(struct ddt_buf *b, MPI_Datatype t, long count); /* 0, or -1: too large */
/* True when count elements of t write some byte twice (erroneous receive). */
int ddt_overlaps(MPI_Datatype t, long count, const struct ddt_buf *b, size_t n);
long ddt_first_diff(const unsigned char *a, const unsigned char *b, size_t n); /* -1: equal */
long ddt_gcd(long a, long b);

/* ---- pairs -------------------------------------------------------------- */
enum ddt_pair_mode {
	DDT_PAIR_RANDOM,      /* two random types */
	DDT_PAIR_SAME,	      /* one random type on both sides, same count */
	DDT_PAIR_CONTIG_RECV, /* random send type, contiguous receive */
	DDT_PAIR_CONTIG_SEND, /* contiguous send, random receive type */
	DDT_PAIR_ZERO,	      /* zero-size variants of two random types, counts 0-3 */
	DDT_PAIR_TRANSPOSE,   /* FFT-shaped rows/columns (the unit is a basic type) */
	DDT_PAIR_INDEX,	      /* index lists (SPECFEM3D/LAMMPS): same type, contiguous or
				 another index list on the receive side */
};
enum { DDT_PASS, DDT_SKIP, DDT_FAIL };

struct ddt_pair {
	MPI_Datatype st, rt; /* committed */
	long ns, nr;	     /* units of one element of st, rt */
	long cs, cr;	     /* counts: cs * ns == cr * nr */
	size_t n;	     /* signature bytes: cs * ns * ddt_unit_size */
	struct ddt_buf sb, rb;
	unsigned char *rinit;  /* initial receive buffer (rb.len bytes, random) */
	unsigned char *rref;   /* rinit after MPI_Pack(sb) -> MPI_Unpack */
	unsigned char *packed; /* the packed message (n bytes) */
};

/* Phase 1: the types and counts (ddt_desc describes them).  Set ddt_unit
 * and the random state first.  Returns DDT_PASS or DDT_SKIP (why says why). */
int ddt_pair_types(struct ddt_pair *p, enum ddt_pair_mode mode, char *why, size_t whylen);

/* Phase 2 (after optional changes of types and counts that keep the
 * signatures equal): n, guarded buffers, overlap check, random send buffer
 * contents, random initial receive buffer, and the reference.  With
 * DDT_PAIR_NO_REFERENCE, rinit/rref/packed stay NULL (the random stream
 * still advances as without it).  Returns DDT_PASS, DDT_SKIP or DDT_FAIL. */
#define DDT_PAIR_NO_REFERENCE 1
int ddt_pair_buffers(struct ddt_pair *p, int flags, char *why, size_t whylen);

/* Frees the buffers and every type of the case (ddt_free_pool). */
void ddt_pair_free(struct ddt_pair *p);

#endif
