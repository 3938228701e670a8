/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lu: halo-exchange mini-app in the style of NAS LU/SSOR.
 *
 * A global NX x NY grid of 5 doubles per point (u[x][y][5], as NAS LU) is
 * block-distributed on a 2-D process grid (MPI_Dims_create,
 * MPI_Cart_create).  Each iteration exchanges the halo with the up to 4
 * neighbours (MPI_Sendrecv) -- x faces are contiguous rows, y faces are
 * strided columns sent as MPI_Type_vector, _create_hvector or
 * _create_hindexed (--face) -- then does a Jacobi relaxation sweep of
 * -laplace(u) = f with fixed (Dirichlet) boundary values.  Jacobi (not
 * SSOR's Gauss-Seidel order) makes the distributed result independent of
 * the decomposition, so every rank compares its block with a serial run
 * of the same iterations, and rank 0 compares the residual norm with the
 * serial one; the residual must also have decreased.
 */
#include "cli.h"
#include "fail.h"
#include "output.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bench_prog = "lu";

static const char usage_text[] =
	"usage: mpirun -np P lu [OPTION]...\n"
	"Halo exchange + Jacobi relaxation on a 2-D process grid; verified against\n"
	"a serial run of the same iterations.  Exit status 1 if the check fails.\n"
	"  --nx N, --ny N   global grid (default 128 x 128)\n"
	"  -i, --iters N    iterations (default 100)\n"
	"  --face KIND      y-face datatype: vector (default) | hvector | hindexed\n"
	"  --format F       csv (default) | json\n"
	"  --out FILE       results to FILE instead of stdout\n"
	"  --tolerance T    relative tolerance of the checks (default 1e-12)\n"
	"  -h, --help       this text\n";

#define NC 5

struct grid {
	int lx, ly;     /* interior size */
	int x0, y0;     /* global index of interior (1,1) minus 1 */
	double *u, *un, *f;
};

static size_t at(const struct grid *g, int x, int y)
{
	return ((size_t)x * (size_t)(g->ly + 2) + (size_t)y) * NC;
}

static double bnd(int gx, int gy, int c)
{
	return 0.01 * (c + 1) * (gx - gy) + 0.5 * c;
}

static double src(int gx, int gy, int c)
{
	return 1e-3 * ((gx * 7 + gy * 13 + c * 3) % 17);
}

static void *xcalloc(size_t n, const char *what)
{
	void *p = calloc(n, sizeof(double));
	if (!p)
		bench_die("calloc %s (%zu doubles): %s", what, n, strerror(errno));
	return p;
}

/* boundary ghosts of the global grid from bnd(); interior 0 */
static void grid_init(struct grid *g, int nx, int ny)
{
	size_t n = at(g, g->lx + 2, 0);
	g->u = xcalloc(n, "u");
	g->un = xcalloc(n, "u new");
	g->f = xcalloc(n, "f");
	for (int x = 0; x < g->lx + 2; x++)
		for (int y = 0; y < g->ly + 2; y++) {
			int gx = g->x0 + x, gy = g->y0 + y;
			int edge = gx == 0 || gy == 0 || gx == nx + 1 || gy == ny + 1;
			for (int c = 0; c < NC; c++) {
				g->u[at(g, x, y) + c] = edge ? bnd(gx, gy, c) : 0.0;
				g->f[at(g, x, y) + c] = src(gx, gy, c);
			}
		}
	memcpy(g->un, g->u, n * sizeof(double));
}

static void sweep(struct grid *g)
{
	for (int x = 1; x <= g->lx; x++)
		for (int y = 1; y <= g->ly; y++)
			for (int c = 0; c < NC; c++) {
				size_t k = at(g, x, y) + c;
				g->un[k] = 0.25 * (g->u[at(g, x - 1, y) + c] + g->u[at(g, x + 1, y) + c] +
						   g->u[at(g, x, y - 1) + c] + g->u[at(g, x, y + 1) + c] +
						   g->f[k]);
			}
	double *t = g->u;
	g->u = g->un;
	g->un = t;
}

/* sum of squared residuals of -laplace(u) = f over the interior */
static double residual2(const struct grid *g)
{
	double s = 0;
	for (int x = 1; x <= g->lx; x++)
		for (int y = 1; y <= g->ly; y++)
			for (int c = 0; c < NC; c++) {
				size_t k = at(g, x, y) + c;
				double r = g->u[at(g, x - 1, y) + c] + g->u[at(g, x + 1, y) + c] +
					   g->u[at(g, x, y - 1) + c] + g->u[at(g, x, y + 1) + c] -
					   4 * g->u[k] + g->f[k];
				s += r * r;
			}
	return s;
}

struct halo {
	MPI_Comm cart;
	int xlo, xhi, ylo, yhi;
	MPI_Datatype xface, yface;
};

static void exchange(const struct grid *g, const struct halo *h)
{
	double *u = g->u;
	MPI_Comm c = h->cart;
	/* x: rows 1 and lx are contiguous */
	MPI_CHECK(MPI_Sendrecv(u + at(g, g->lx, 1), 1, h->xface, h->xhi, 0, u + at(g, 0, 1), 1,
			       h->xface, h->xlo, 0, c, MPI_STATUS_IGNORE));
	MPI_CHECK(MPI_Sendrecv(u + at(g, 1, 1), 1, h->xface, h->xlo, 1, u + at(g, g->lx + 1, 1), 1,
			       h->xface, h->xhi, 1, c, MPI_STATUS_IGNORE));
	/* y: columns 1 and ly are strided */
	MPI_CHECK(MPI_Sendrecv(u + at(g, 1, g->ly), 1, h->yface, h->yhi, 2, u + at(g, 1, 0), 1,
			       h->yface, h->ylo, 2, c, MPI_STATUS_IGNORE));
	MPI_CHECK(MPI_Sendrecv(u + at(g, 1, 1), 1, h->yface, h->ylo, 3, u + at(g, 1, g->ly + 1), 1,
			       h->yface, h->yhi, 3, c, MPI_STATUS_IGNORE));
}

static void block(int n, int parts, int coord, int *len, int *start)
{
	int base = n / parts, rem = n % parts;
	*len = base + (coord < rem);
	*start = coord * base + (coord < rem ? coord : rem);
}

int main(int argc, char **argv)
{
	int rank, p, nx = 128, ny = 128, iters = 100, ch;
	double tol = 1e-12;
	const char *face = "vector";
	struct bench_opts o = {.fmt = FMT_CSV};
	enum { O_NX = BENCH_OPT_OWN, O_NY, O_FACE, O_TOL };
	static const struct option lo[] = {
		{"nx", required_argument, 0, O_NX},	  {"ny", required_argument, 0, O_NY},
		{"iters", required_argument, 0, 'i'},	  {"face", required_argument, 0, O_FACE},
		{"tolerance", required_argument, 0, O_TOL}, BENCH_OPTIONS};

	bench_mpi_start(&argc, &argv, &rank, &p);
	while ((ch = bench_getopt(argc, argv, "i:", lo, rank, usage_text, &o)) != -1) {
		if (ch == O_NX)
			nx = atoi(optarg);
		else if (ch == O_NY)
			ny = atoi(optarg);
		else if (ch == 'i')
			iters = atoi(optarg);
		else if (ch == O_FACE)
			face = optarg;
		else if (ch == O_TOL)
			tol = atof(optarg);
	}
	const char *outpath = o.out;
	enum ddt_format fmt = o.fmt;
	int inject = o.inject;
	if (strcmp(face, "vector") && strcmp(face, "hvector") && strcmp(face, "hindexed"))
		bench_die("bad --face %s (vector, hvector or hindexed)", face);

	int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
	struct halo h;
	MPI_CHECK(MPI_Dims_create(p, 2, dims));
	if (nx < dims[0] || ny < dims[1] || iters < 1)
		bench_die("grid %dx%d too small for the %dx%d process grid (or --iters %d < 1)", nx,
			  ny, dims[0], dims[1], iters);
	MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &h.cart));
	MPI_CHECK(MPI_Comm_set_errhandler(h.cart, MPI_ERRORS_RETURN));
	MPI_CHECK(MPI_Cart_coords(h.cart, rank, 2, coords));
	MPI_CHECK(MPI_Cart_shift(h.cart, 0, 1, &h.xlo, &h.xhi));
	MPI_CHECK(MPI_Cart_shift(h.cart, 1, 1, &h.ylo, &h.yhi));

	struct grid g;
	block(nx, dims[0], coords[0], &g.lx, &g.x0);
	block(ny, dims[1], coords[1], &g.ly, &g.y0);
	grid_init(&g, nx, ny);

	MPI_CHECK(MPI_Type_contiguous(NC * g.ly, MPI_DOUBLE, &h.xface));
	MPI_Aint stride = (MPI_Aint)NC * (g.ly + 2) * (MPI_Aint)sizeof(double);
	if (!strcmp(face, "vector")) {
		MPI_CHECK(MPI_Type_vector(g.lx, NC, NC * (g.ly + 2), MPI_DOUBLE, &h.yface));
	} else if (!strcmp(face, "hvector")) {
		MPI_CHECK(MPI_Type_create_hvector(g.lx, NC, stride, MPI_DOUBLE, &h.yface));
	} else {
		int *bl = malloc(sizeof(int) * (size_t)g.lx);
		MPI_Aint *d = malloc(sizeof(MPI_Aint) * (size_t)g.lx);
		if (!bl || !d)
			bench_die("malloc hindexed arrays (%d): %s", g.lx, strerror(errno));
		for (int i = 0; i < g.lx; i++) {
			bl[i] = NC;
			d[i] = i * stride;
		}
		MPI_CHECK(MPI_Type_create_hindexed(g.lx, bl, d, MPI_DOUBLE, &h.yface));
		free(bl);
		free(d);
	}
	MPI_CHECK(MPI_Type_commit(&h.xface));
	MPI_CHECK(MPI_Type_commit(&h.yface));

	/* initial residual (after one exchange) */
	exchange(&g, &h);
	double r0l = residual2(&g), r0;
	MPI_CHECK(MPI_Allreduce(&r0l, &r0, 1, MPI_DOUBLE, MPI_SUM, h.cart));

	double *tit = malloc(sizeof(double) * (size_t)iters);
	double *thalo = malloc(sizeof(double) * (size_t)iters);
	if (!tit || !thalo)
		bench_die("malloc sample arrays (%d): %s", iters, strerror(errno));
	MPI_CHECK(MPI_Barrier(h.cart));
	for (int it = 0; it < iters; it++) {
		double t0 = bench_now_us();
		exchange(&g, &h);
		double t1 = bench_now_us();
		if (inject && rank == 0 && it == iters / 2)
			g.u[h.xhi != MPI_PROC_NULL ? at(&g, g.lx + 1, 1) : at(&g, 1, g.ly + 1)] += 1.0;
		sweep(&g);
		tit[it] = bench_now_us() - t0;
		thalo[it] = t1 - t0;
	}
	exchange(&g, &h);
	double rl = residual2(&g), r;
	MPI_CHECK(MPI_Allreduce(&rl, &r, 1, MPI_DOUBLE, MPI_SUM, h.cart));

	/* serial run of the same iterations on the whole grid */
	struct grid s = {.lx = nx, .ly = ny, .x0 = 0, .y0 = 0};
	grid_init(&s, nx, ny);
	for (int it = 0; it < iters; it++)
		sweep(&s);
	double rs = residual2(&s), maxu = 0, maxd = 0;
	int bx = 0, by = 0;
	for (int x = 1; x <= g.lx; x++)
		for (int y = 1; y <= g.ly; y++)
			for (int c = 0; c < NC; c++) {
				double a = g.u[at(&g, x, y) + c];
				double b = s.u[at(&s, g.x0 + x, g.y0 + y) + c];
				maxu = fmax(maxu, fabs(b));
				if (fabs(a - b) > maxd) {
					maxd = fabs(a - b);
					bx = g.x0 + x;
					by = g.y0 + y;
				}
			}
	int bad = maxd > tol * fmax(maxu, 1.0);
	if (bad)
		fprintf(stderr,
			"lu: CHECK FAILED: rank %d: u at global (%d,%d) differs from the serial run "
			"by %.3e (> %.1e relative)\n",
			rank, bx, by, maxd, tol);
	if (rank == 0) {
		double rel = fabs(sqrt(r) - sqrt(rs)) / fmax(sqrt(rs), 1e-300);
		if (rel > 1e-9) {
			fprintf(stderr,
				"lu: CHECK FAILED: residual norm %.15e differs from the serial run's "
				"%.15e (relative %.2e > 1e-9)\n",
				sqrt(r), sqrt(rs), rel);
			bad = 1;
		}
		if (!(r < r0)) {
			fprintf(stderr, "lu: CHECK FAILED: residual norm did not decrease: %.6e -> %.6e\n",
				sqrt(r0), sqrt(r));
			bad = 1;
		}
	}
	int anybad;
	MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, h.cart));

	/* halo payload sent by rank 0 per iteration */
	int xs, ys;
	MPI_CHECK(MPI_Type_size(h.xface, &xs));
	MPI_CHECK(MPI_Type_size(h.yface, &ys));
	size_t hb = (size_t)xs * ((h.xlo != MPI_PROC_NULL) + (h.xhi != MPI_PROC_NULL)) +
		    (size_t)ys * ((h.ylo != MPI_PROC_NULL) + (h.yhi != MPI_PROC_NULL));
	if (rank == 0) {
		FILE *out = outpath ? fopen(outpath, "w") : stdout;
		if (!out)
			bench_die("open --out %s for writing: %s", outpath, strerror(errno));
		char size[64], m1[64], m2[64];
		snprintf(size, sizeof(size), "%dx%d", nx, ny);
		snprintf(m1, sizeof(m1), "iteration_%s", face);
		snprintf(m2, sizeof(m2), "halo_%s", face);
		struct ddt_row row = {.pattern = "lu", .size = size, .nprocs = p, .bytes = hb,
				      .check_ok = !anybad};
		ddt_output_begin(out, fmt);
		row.method = m1;
		bench_stats(tit, (size_t)iters, &row.st);
		ddt_output_row(out, fmt, &row);
		row.method = m2;
		bench_stats(thalo, (size_t)iters, &row.st);
		ddt_output_row(out, fmt, &row);
		ddt_output_end(out, fmt);
		if (out != stdout)
			fclose(out);
		fprintf(stderr,
			"lu: %dx%d on %dx%d ranks, face %s, %d iterations: residual %.6e -> %.6e "
			"(serial %.6e): %s\n",
			nx, ny, dims[0], dims[1], face, iters, sqrt(r0), sqrt(r), sqrt(rs),
			anybad ? "CHECK FAILED" : "ok");
	}
	free(g.u);
	free(g.un);
	free(g.f);
	free(s.u);
	free(s.un);
	free(s.f);
	free(tit);
	free(thalo);
	MPI_CHECK(MPI_Type_free(&h.xface));
	MPI_CHECK(MPI_Type_free(&h.yface));
	MPI_CHECK(MPI_Comm_free(&h.cart));
	MPI_CHECK(MPI_Finalize());
	return anybad ? 1 : 0;
}
