/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fft2d: distributed 2-D FFT mini-app.
 *
 * An N x N complex matrix is distributed by rows (R = N/P rows per rank).
 * One forward 2-D FFT = 1-D FFTs of the local rows (FFTW), a transpose with
 * MPI_Alltoall of the FFT pattern's vector+resized datatypes, 1-D FFTs of
 * the rows of the transposed matrix.  The result (the transpose of the 2-D
 * FFT, by rows) is checked against FFTW's serial 2-D FFT of the whole
 * matrix, which every rank computes and compares with its own rows.
 * Timed: median/quartiles of the whole 2-D FFT and of the transpose alone.
 */
#include "cli.h"
#include "fail.h"
#include "output.h"
#include "stats.h"

#include <complex.h>
#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bench_prog = "fft2d";

static const char usage_text[] =
	"usage: mpirun -np P fft2d [OPTION]...\n"
	"Distributed 2-D FFT: row FFTs (FFTW), MPI_Alltoall transpose with derived\n"
	"datatypes (the DDT FFT pattern), row FFTs; verified against FFTW's serial\n"
	"2-D FFT of the whole matrix.  Exit status 1 if the check fails.\n"
	"  -n, --size N     matrix size N x N, a multiple of P (default 256)\n"
	"  -i, --iters N    timed 2-D FFTs (default 20)\n"
	"  --format F       csv (default) | json\n"
	"  --out FILE       results to FILE instead of stdout\n"
	"  --tolerance T    max error relative to max |X| (default 1e-10)\n"
	"  -h, --help       this text\n";

static void *xalloc(size_t n, const char *what)
{
	void *p = fftw_malloc(n);
	if (!p)
		bench_die("fftw_malloc %s (%zu bytes): %s", what, n, strerror(errno));
	return p;
}

/* Deterministic input value of global element (row, col). */
static fftw_complex input(size_t row, size_t col, size_t n)
{
	double a = (double)((row * 131 + col * 71) % 1009) / 1009.0;
	double b = sin((double)(row * n + col) * 0.001);
	return (a - 0.5) + I * b;
}

int main(int argc, char **argv)
{
	int rank, p, n = 256, iters = 20, ch;
	double tol = 1e-10;
	struct bench_opts o = {.fmt = FMT_CSV};
	enum { O_TOL = BENCH_OPT_OWN };
	static const struct option lo[] = {{"size", required_argument, 0, 'n'},
					   {"iters", required_argument, 0, 'i'},
					   {"tolerance", required_argument, 0, O_TOL},
					   BENCH_OPTIONS};

	bench_mpi_start(&argc, &argv, &rank, &p);
	while ((ch = bench_getopt(argc, argv, "n:i:", lo, rank, usage_text, &o)) != -1) {
		if (ch == 'n')
			n = atoi(optarg);
		else if (ch == 'i')
			iters = atoi(optarg);
		else if (ch == O_TOL)
			tol = atof(optarg);
	}
	const char *outpath = o.out;
	enum ddt_format fmt = o.fmt;
	int inject = o.inject;
	if (n < p || n % p || iters < 1)
		bench_die("bad arguments: --size %d must be a positive multiple of the %d ranks, "
			  "--iters %d >= 1", n, p, iters);

	size_t N = (size_t)n, R = N / (size_t)p, local = R * N;
	fftw_complex *m = xalloc(local * sizeof(fftw_complex), "local rows");
	fftw_complex *t = xalloc(local * sizeof(fftw_complex), "transposed rows");
	/* plans: R row FFTs of length N, in place */
	fftw_plan pm = fftw_plan_many_dft(1, &n, (int)R, m, NULL, 1, n, m, NULL, 1, n,
					  FFTW_FORWARD, FFTW_ESTIMATE);
	fftw_plan pt = fftw_plan_many_dft(1, &n, (int)R, t, NULL, 1, n, t, NULL, 1, n,
					  FFTW_FORWARD, FFTW_ESTIMATE);
	if (!pm || !pt)
		bench_die("fftw_plan_many_dft %d rows of length %d: no plan", (int)R, n);

	/* the DDT FFT pattern's types */
	MPI_Datatype cx, v, gather, col, colr, scatter;
	MPI_CHECK(MPI_Type_contiguous(2, MPI_DOUBLE, &cx));
	MPI_CHECK(MPI_Type_vector((int)R, (int)R, n, cx, &v));
	MPI_CHECK(MPI_Type_create_resized(v, 0, (MPI_Aint)(R * sizeof(fftw_complex)), &gather));
	MPI_CHECK(MPI_Type_vector((int)R, 1, n, cx, &col));
	MPI_CHECK(MPI_Type_create_resized(col, 0, sizeof(fftw_complex), &colr));
	MPI_CHECK(MPI_Type_contiguous((int)R, colr, &scatter));
	MPI_CHECK(MPI_Type_commit(&gather));
	MPI_CHECK(MPI_Type_commit(&scatter));

	double *tot = malloc(sizeof(double) * (size_t)iters);
	double *tr = malloc(sizeof(double) * (size_t)iters);
	if (!tot || !tr)
		bench_die("malloc sample arrays (%d): %s", iters, strerror(errno));
	size_t g0 = (size_t)rank * R;
	for (int it = 0; it < iters; it++) {
		for (size_t i = 0; i < R; i++)
			for (size_t c = 0; c < N; c++)
				m[i * N + c] = input(g0 + i, c, N);
		MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
		double t0 = bench_now_us();
		fftw_execute(pm);
		double t1 = bench_now_us();
		MPI_CHECK(MPI_Alltoall(m, 1, gather, t, 1, scatter, MPI_COMM_WORLD));
		double t2 = bench_now_us();
		if (inject && rank == 0 && it == iters - 1)
			t[R / 2] += 1e-3;
		fftw_execute(pt);
		double t3 = bench_now_us();
		tot[it] = t3 - t0;
		tr[it] = t2 - t1;
	}

	/* serial reference: the whole matrix, FFTW 2-D; t[i][c] = X[c][g0+i] */
	fftw_complex *full = xalloc(N * N * sizeof(fftw_complex), "serial matrix");
	fftw_plan pf = fftw_plan_dft_2d(n, n, full, full, FFTW_FORWARD, FFTW_ESTIMATE);
	if (!pf)
		bench_die("fftw_plan_dft_2d %dx%d: no plan", n, n);
	for (size_t r = 0; r < N; r++)
		for (size_t c = 0; c < N; c++)
			full[r * N + c] = input(r, c, N);
	fftw_execute(pf);
	double maxabs = 0, maxerr = 0;
	size_t bad_i = 0, bad_c = 0;
	for (size_t k = 0; k < N * N; k++)
		maxabs = fmax(maxabs, cabs(full[k]));
	for (size_t i = 0; i < R; i++)
		for (size_t c = 0; c < N; c++) {
			double e = cabs(t[i * N + c] - full[c * N + g0 + i]);
			if (e > maxerr) {
				maxerr = e;
				bad_i = i;
				bad_c = c;
			}
		}
	double rel = maxabs > 0 ? maxerr / maxabs : maxerr, worst;
	int bad = !(rel <= tol), anybad;
	if (bad)
		fprintf(stderr,
			"fft2d: CHECK FAILED: rank %d: N=%d P=%d: element (row %zu, col %zu) of "
			"the transposed result differs from the serial 2-D FFT: relative error "
			"%.3e > tolerance %.1e\n",
			rank, n, p, g0 + bad_i, bad_c, rel, tol);
	MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	MPI_CHECK(MPI_Reduce(&rel, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));

	if (rank == 0) {
		FILE *out = outpath ? fopen(outpath, "w") : stdout;
		if (!out)
			bench_die("open --out %s for writing: %s", outpath, strerror(errno));
		char size[32];
		snprintf(size, sizeof(size), "%d", n);
		struct ddt_row row = {.pattern = "fft2d", .size = size, .nprocs = p,
				      .bytes = N * N * sizeof(fftw_complex) / (size_t)p,
				      .check_ok = !anybad};
		ddt_output_begin(out, fmt);
		row.method = "fft2d_total";
		bench_stats(tot, (size_t)iters, &row.st);
		ddt_output_row(out, fmt, &row);
		row.method = "transpose";
		bench_stats(tr, (size_t)iters, &row.st);
		ddt_output_row(out, fmt, &row);
		ddt_output_end(out, fmt);
		if (out != stdout)
			fclose(out);
		fprintf(stderr, "fft2d: N=%d P=%d iters=%d: max relative error %.3e (tolerance %.1e): %s\n",
			n, p, iters, worst, tol, anybad ? "CHECK FAILED" : "ok");
	}
	fftw_destroy_plan(pm);
	fftw_destroy_plan(pt);
	fftw_destroy_plan(pf);
	fftw_free(m);
	fftw_free(t);
	fftw_free(full);
	free(tot);
	free(tr);
	MPI_CHECK(MPI_Type_free(&gather));
	MPI_CHECK(MPI_Type_free(&scatter));
	MPI_CHECK(MPI_Type_free(&cx));
	MPI_CHECK(MPI_Type_free(&v));
	MPI_CHECK(MPI_Type_free(&col));
	MPI_CHECK(MPI_Type_free(&colr));
	MPI_CHECK(MPI_Finalize());
	return anybad ? 1 : 0;
}
