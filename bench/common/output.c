/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "output.h"

static int nrows;

void ddt_output_begin(FILE *f, enum ddt_format fmt)
{
	nrows = 0;
	if (fmt == FMT_CSV)
		fprintf(f, "pattern,size,method,bytes,nprocs,samples,median_us,q25_us,q75_us,"
			   "min_us,max_us,check\n");
	else
		fprintf(f, "{\"unit\": \"us\", \"results\": [\n");
}

void ddt_output_row(FILE *f, enum ddt_format fmt, const struct ddt_row *r)
{
	const struct bench_stats *s = &r->st;
	if (fmt == FMT_CSV)
		fprintf(f, "%s,%s,%s,%zu,%d,%zu,%.3f,%.3f,%.3f,%.3f,%.3f,%s\n", r->pattern,
			r->size, r->method, r->bytes, r->nprocs, s->n, s->median, s->q25, s->q75,
			s->min, s->max, r->check_ok ? "ok" : "FAIL");
	else
		fprintf(f,
			"%s  {\"pattern\": \"%s\", \"size\": \"%s\", \"method\": \"%s\", "
			"\"bytes\": %zu, \"nprocs\": %d, \"samples\": %zu, \"median_us\": %.3f, "
			"\"q25_us\": %.3f, \"q75_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
			"\"check\": \"%s\"}",
			nrows ? ",\n" : "", r->pattern, r->size, r->method, r->bytes, r->nprocs,
			s->n, s->median, s->q25, s->q75, s->min, s->max,
			r->check_ok ? "ok" : "FAIL");
	nrows++;
	fflush(f);
}

void ddt_output_end(FILE *f, enum ddt_format fmt)
{
	if (fmt == FMT_JSON)
		fprintf(f, "\n]}\n");
	fflush(f);
}
