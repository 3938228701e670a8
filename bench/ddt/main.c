/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/ddt driver: option parsing, pattern/size selection, payload-byte
 * assertion against the spec's table, method loop, results.
 */
#include "check.h"
#include "cli.h"
#include "cvar.h"
#include "ddt.h"
#include "output.h"
#include "runner.h"
#include "stats.h"
#include "util.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_text[] =
	"usage: mpirun -np P ddt [OPTION]...   (P >= 2)\n"
	"The 16 DDTBench communication patterns, each with the methods mpi_ddt,\n"
	"manual (hand pack/unpack), mpi_pack (MPI_Pack/MPI_Unpack) and reference\n"
	"(contiguous, same byte count).  Ranks 0 and 1 ping-pong; FFT uses all\n"
	"ranks (MPI_Alltoall).  After every method's timed loop the received data\n"
	"is checked; a mismatch is reported and makes the exit status 1.\n"
	"Results (per-iteration round-trip latency, microseconds) go to stdout or\n"
	"--out; progress and payload-byte checks go to stderr.\n"
	"\n"
	"  --patterns LIST  comma-separated names or shell globs (default: all):\n"
	"                   WRF_y_vec WRF_y_sa WRF_x_vec WRF_x_sa MILC_su3_zd\n"
	"                   NAS_LU_x NAS_LU_y NAS_MG_x NAS_MG_y NAS_MG_z\n"
	"                   LAMMPS_full LAMMPS_atomic SPECFEM3D_oc SPECFEM3D_cm\n"
	"                   SPECFEM3D_mt FFT (also matched as FFT<P>)\n"
	"  --sizes S        comma list of all (default), smallest, largest (by\n"
	"                   payload) and indices into the spec's table of each\n"
	"                   pattern (0 = first), e.g. smallest,largest or 0,2\n"
	"  --methods LIST   subset of mpi_ddt,manual,mpi_pack,reference (default all)\n"
	"  --outer N        outer iterations (default 10)\n"
	"  --inner N        inner iterations (default 20)\n"
	"  --check-only     few repetitions (outer 2, inner 2), for tests\n"
	"  --format F       csv (default) | json\n"
	"  --out FILE       write results to FILE instead of stdout\n"
	"  --seed N         base seed of the index lists (default time(NULL))\n"
	"  --cvar N=V1,V2   run each method once per value of the MPI_T control\n"
	"                   variable N (an int or enumeration), in this order, in\n"
	"                   one launch; the method column reads METHOD@VALUE\n"
	"  --warmup V       with --cvar: first one untimed run of each method at V\n"
	"                   (ping-pong patterns)\n"
	"  --list           print patterns, sizes and spec payload bytes, then exit\n"
	"  -h, --help       this text\n";

struct cfg {
	const char *patterns, *sizes, *methods, *out, *cvar, *warmup;
	enum ddt_format fmt;
	struct ddt_cvar cv; /* --cvar: nvalues 0 without it */
	struct ddt_opts o;
	int list, seed_set;
};

static int match_list(const char *list, const char *name, const char *alt)
{
	if (!list)
		return 1;
	char *dup = strdup(list), *save = NULL;
	int hit = 0;
	if (!dup)
		ddt_die("strdup pattern list: %s", strerror(errno));
	for (char *t = strtok_r(dup, ",", &save); t && !hit; t = strtok_r(NULL, ",", &save))
		hit = fnmatch(t, name, 0) == 0 || (alt && fnmatch(t, alt, 0) == 0);
	free(dup);
	return hit;
}

static int parse_int(const char *opt, const char *s, int min)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > 1000000000) {
		fprintf(stderr, "ddt: bad value for %s: '%s' (integer >= %d)\n", opt, s, min);
		exit(2);
	}
	return (int)v;
}

static void parse(int argc, char **argv, struct cfg *c, int rank)
{
	enum { O_PAT = BENCH_OPT_OWN, O_SIZES, O_METH, O_OUTER, O_INNER, O_CHECK, O_SEED, O_LIST,
	       O_CVAR, O_WARMUP };
	static const struct option lo[] = {
		{"patterns", required_argument, 0, O_PAT}, {"sizes", required_argument, 0, O_SIZES},
		{"methods", required_argument, 0, O_METH}, {"outer", required_argument, 0, O_OUTER},
		{"inner", required_argument, 0, O_INNER},  {"check-only", no_argument, 0, O_CHECK},
		{"seed", required_argument, 0, O_SEED},	   {"list", no_argument, 0, O_LIST},
		{"cvar", required_argument, 0, O_CVAR}, {"warmup", required_argument, 0, O_WARMUP},
		BENCH_OPTIONS};
	struct bench_opts bo = {.fmt = FMT_CSV};
	int outer = -1, inner = -1, check = 0, ch;
	memset(c, 0, sizeof(*c));
	c->cv.warmup = -1;
	while ((ch = bench_getopt(argc, argv, "", lo, rank, usage_text, &bo)) != -1) {
		switch (ch) {
		case O_PAT: c->patterns = optarg; break;
		case O_SIZES: c->sizes = optarg; break;
		case O_METH: c->methods = optarg; break;
		case O_OUTER: outer = parse_int("--outer", optarg, 1); break;
		case O_INNER: inner = parse_int("--inner", optarg, 1); break;
		case O_CHECK: check = 1; break;
		case O_SEED:
			c->o.seed = (unsigned)parse_int("--seed", optarg, 0);
			c->seed_set = 1;
			break;
		case O_LIST: c->list = 1; break;
		case O_CVAR: c->cvar = optarg; break;
		case O_WARMUP: c->warmup = optarg; break;
		}
	}
	c->fmt = bo.fmt;
	c->out = bo.out;
	c->o.inject = bo.inject;
	c->o.outer = outer > 0 ? outer : check ? 2 : 10;
	c->o.inner = inner > 0 ? inner : check ? 2 : 20;
}

/* Is size index i of pattern p selected?  bytes[] = payload of each size.
 * sel: comma list of all, smallest, largest and indices. */
static int size_selected(const char *sel, int i, const size_t *bytes, int n)
{
	if (!sel)
		return 1;
	char *dup = strdup(sel), *save = NULL;
	int hit = 0;
	if (!dup)
		ddt_die("strdup size list: %s", strerror(errno));
	for (char *t = strtok_r(dup, ",", &save); t && !hit; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "all")) {
			hit = 1;
		} else if (!strcmp(t, "smallest") || !strcmp(t, "largest")) {
			int best = 0, small = t[0] == 's';
			for (int k = 1; k < n; k++)
				if (small ? bytes[k] < bytes[best] : bytes[k] > bytes[best])
					best = k;
			hit = i == best;
		} else {
			hit = atoi(t) == i;
		}
	}
	free(dup);
	return hit;
}

static void validate(const struct cfg *c)
{
	if (c->sizes) {
		char *dup = strdup(c->sizes), *save = NULL;
		if (!dup)
			ddt_die("strdup size list: %s", strerror(errno));
		for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save))
			if (strcmp(t, "all") && strcmp(t, "smallest") && strcmp(t, "largest") &&
			    (!*t || strspn(t, "0123456789") != strlen(t))) {
				fprintf(stderr,
					"ddt: bad --sizes element '%s' (all, smallest, largest or an "
					"index 0,1,..)\n",
					t);
				exit(2);
			}
		free(dup);
	}
	int any = 0;
	for (int m = 0; m < M_COUNT; m++)
		any |= match_list(c->methods, ddt_method_name[m], NULL);
	if (!any) {
		fprintf(stderr, "ddt: --methods '%s' selects no method (see --help)\n", c->methods);
		exit(2);
	}
	any = 0;
	for (int p = 0; p < ddt_npatterns; p++)
		any |= match_list(c->patterns, ddt_patterns[p]->name, NULL);
	if (!any && !match_list(c->patterns, "FFT2", NULL)) {
		fprintf(stderr, "ddt: --patterns '%s' selects no pattern (see --list)\n",
			c->patterns);
		exit(2);
	}
}

/* --cvar: sets value k on every rank of comm before a method's run
 * (untimed); the runs of one launch then differ only in the variable. */
static void cvar_select(const struct cfg *c, int k, MPI_Comm comm)
{
	if (!c->cv.nvalues)
		return;
	ddt_cvar_set(&c->cv, k);
	MPI_CHECK(MPI_Barrier(comm));
}

/* payload of a ping-pong case from its parameters, without allocating */
static size_t pp_bytes(const struct ddt_pattern *p, int s)
{
	struct ddt_case c = {.pat = p, .size = &p->sizes[s], .outer = 1};
	p->setup(&c);
	size_t b = c.bytes;
	p->teardown(&c);
	return b;
}

static void list_patterns(int nprocs)
{
	printf("pattern,size,spec_bytes,computed_bytes\n");
	for (int p = 0; p < ddt_npatterns; p++) {
		const struct ddt_pattern *pat = ddt_patterns[p];
		for (int s = 0; s < pat->nsizes; s++) {
			size_t spec = pat->sizes[s].spec_bytes, b;
			if (pat->collective)
				b = pat->collective_bytes(pat, s, nprocs, &spec);
			else
				b = pp_bytes(pat, s);
			printf("%s%s,%s,%zu,%zu\n", pat->name,
			       pat->collective ? (nprocs == 2 ? "2" : "<P>") : "", pat->sizes[s].label,
			       spec, b);
		}
	}
}

struct totals {
	int cases, runs, failures, byte_errors;
};

/* One result row; with --cvar the method is named METHOD@VALUE (value k). */
static void emit(FILE *out, const struct cfg *c, const char *name, const char *size,
		 enum ddt_method m, int k, size_t bytes, int nprocs, double *samples, int ok)
{
	char method[64];
	if (c->cv.nvalues)
		snprintf(method, sizeof(method), "%s@%s", ddt_method_name[m], c->cv.label[k]);
	else
		snprintf(method, sizeof(method), "%s", ddt_method_name[m]);
	struct ddt_row r = {.pattern = name, .size = size, .method = method,
			    .bytes = bytes, .nprocs = nprocs, .check_ok = ok};
	bench_stats(samples, (size_t)c->o.outer * (size_t)c->o.inner, &r.st);
	ddt_output_row(out, c->fmt, &r);
}

static void bytes_line(int rank, const char *name, const char *size, size_t b, size_t spec,
		       size_t tsize)
{
	if (rank == 0)
		fprintf(stderr, "ddt: %-14s %-12s bytes %zu (spec %zu, MPI_Type_size %zu): %s\n",
			name, size, b, spec, tsize, b == spec && tsize == b ? "ok" : "MISMATCH");
}

static void run_pingpong_case(const struct cfg *cf, const struct ddt_pattern *p, int s, int rank,
			      MPI_Comm pair, FILE *out, double *samples, struct totals *t)
{
	struct ddt_case c = {.pat = p, .size = &p->sizes[s], .rank = rank, .outer = cf->o.outer,
			     .seed = cf->o.seed};
	p->setup(&c);
	c.arena = ddt_alloc(c.arena_bytes, "arena");
	ddt_check_fill(&c);
	/* payload bytes: parameters vs the spec's table vs the datatypes */
	struct ddt_types ty;
	int ss, rs;
	p->types(&c, rank, 0, &ty);
	MPI_CHECK(MPI_Type_size(ty.st, &ss));
	MPI_CHECK(MPI_Type_size(ty.rt, &rs));
	if (ty.rt != ty.st)
		MPI_CHECK(MPI_Type_free(&ty.rt));
	MPI_CHECK(MPI_Type_free(&ty.st));
	bytes_line(rank, p->name, c.size->label, c.bytes, c.size->spec_bytes,
		   ss == rs ? (size_t)ss : 0);
	t->cases++;
	if (c.bytes != c.size->spec_bytes || (size_t)ss != c.bytes || (size_t)rs != c.bytes) {
		t->byte_errors++;
		t->failures++;
		goto out;
	}
	int bad = ddt_check_consistency(&c) ? 1 : 0, anybad;
	MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, pair));
	if (anybad) {
		t->failures++;
		goto out;
	}
	unsigned char *expected = ddt_check_expected(&c);
	for (int m = 0; m < M_COUNT; m++) {
		if (!match_list(cf->methods, ddt_method_name[m], NULL))
			continue;
		/* --warmup: an untimed run first (its data is checked too) */
		for (int k = cf->cv.warmup >= 0 ? -1 : 0; k < (cf->cv.nvalues ? cf->cv.nvalues : 1);
		     k++) {
			cvar_select(cf, k < 0 ? cf->cv.warmup : k, pair);
			bad = ddt_run_pingpong(&c, (enum ddt_method)m, pair, &cf->o, expected,
					       samples) ? 1 : 0;
			MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, pair));
			t->failures += anybad;
			if (k < 0)
				continue;
			t->runs++;
			if (rank == 0)
				emit(out, cf, p->name, c.size->label, (enum ddt_method)m, k,
				     c.bytes, 2, samples, !anybad);
		}
	}
	free(expected);
out:
	free(c.arena);
	p->teardown(&c);
}

static void run_collective_case(const struct cfg *cf, const struct ddt_pattern *p, int s,
				int rank, int nprocs, FILE *out, double *samples, struct totals *t)
{
	char name[32];
	size_t spec, b = p->collective_bytes(p, s, nprocs, &spec);
	snprintf(name, sizeof(name), "%s%d", p->name, nprocs);
	bytes_line(rank, name, p->sizes[s].label, b, spec, b);
	t->cases++;
	if (b != spec) {
		t->byte_errors++;
		t->failures++;
		return;
	}
	for (int m = 0; m < M_COUNT; m++) {
		if (!match_list(cf->methods, ddt_method_name[m], NULL))
			continue;
		for (int k = 0; k < (cf->cv.nvalues ? cf->cv.nvalues : 1); k++) {
			cvar_select(cf, k, MPI_COMM_WORLD);
			int bad = p->collective(p, s, (enum ddt_method)m, &cf->o, samples) ? 1 : 0;
			t->runs++;
			t->failures += bad;
			if (rank == 0)
				emit(out, cf, name, p->sizes[s].label, (enum ddt_method)m, k, b,
				     nprocs, samples, !bad);
		}
	}
}

const char *bench_prog = "ddt";

int main(int argc, char **argv)
{
	int rank, nprocs;
	struct cfg cf;
	bench_mpi_start(&argc, &argv, &rank, &nprocs);
	parse(argc, argv, &cf, rank);
	validate(&cf);
	if (cf.list) {
		if (rank == 0)
			list_patterns(nprocs);
		MPI_Finalize();
		return 0;
	}
	if (nprocs < 2)
		ddt_die("needs at least 2 ranks (mpirun -np 2), has %d", nprocs);
	if (!cf.seed_set)
		cf.o.seed = (unsigned)time(NULL);
	MPI_CHECK(MPI_Bcast(&cf.o.seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD));
	if (cf.cvar)
		ddt_cvar_open(cf.cvar, &cf.cv);
	ddt_cvar_warmup(&cf.cv, cf.warmup);

	MPI_Comm pair;
	MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : 1, rank, &pair));
	MPI_CHECK(MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN));

	FILE *out = stdout;
	if (rank == 0 && cf.out) {
		out = fopen(cf.out, "w");
		if (!out)
			ddt_die("open --out %s for writing: %s", cf.out, strerror(errno));
	}
	if (rank == 0) {
		fprintf(stderr, "ddt: %d ranks, outer %d, inner %d, seed %u%s\n", nprocs,
			cf.o.outer, cf.o.inner, cf.o.seed, cf.o.inject ? ", INJECTING AN ERROR" : "");
		ddt_output_begin(out, cf.fmt);
	}
	double *samples = ddt_alloc(sizeof(double) * (size_t)cf.o.outer * (size_t)cf.o.inner,
				    "samples");
	struct totals t = {0};
	char fftname[32];
	snprintf(fftname, sizeof(fftname), "FFT%d", nprocs);
	for (int pi = 0; pi < ddt_npatterns; pi++) {
		const struct ddt_pattern *p = ddt_patterns[pi];
		if (!match_list(cf.patterns, p->name, p->collective ? fftname : NULL))
			continue;
		size_t bytes[16], spec;
		for (int s = 0; s < p->nsizes; s++)
			bytes[s] = p->collective ? p->collective_bytes(p, s, nprocs, &spec)
						 : p->sizes[s].spec_bytes;
		for (int s = 0; s < p->nsizes; s++) {
			if (!size_selected(cf.sizes, s, bytes, p->nsizes))
				continue;
			if (p->collective)
				run_collective_case(&cf, p, s, rank, nprocs, out, samples, &t);
			else if (rank < 2)
				run_pingpong_case(&cf, p, s, rank, pair, out, samples, &t);
		}
	}
	if (rank == 0) {
		ddt_output_end(out, cf.fmt);
		if (out != stdout && fclose(out) != 0)
			ddt_die("close --out %s: %s", cf.out, strerror(errno));
		fprintf(stderr,
			"ddt: %d cases, %d method runs, %d payload-byte mismatches, %d failures: "
			"%s\n",
			t.cases, t.runs, t.byte_errors, t.failures,
			t.failures ? "DATA CHECK FAILED" : "all checks passed");
	}
	int anyfail = 0;
	MPI_CHECK(MPI_Allreduce(&t.failures, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	free(samples);
	ddt_cvar_close(&cf.cv);
	MPI_CHECK(MPI_Comm_free(&pair));
	MPI_CHECK(MPI_Finalize());
	return anyfail ? 1 : 0;
}
