/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench: result rows as CSV or JSON (the format bench/compare reads). */
#ifndef BENCH_OUTPUT_H
#define BENCH_OUTPUT_H

#include "stats.h"

#include <stdio.h>

enum ddt_format { FMT_CSV, FMT_JSON };

struct ddt_row {
	const char *pattern, *size, *method;
	size_t bytes;
	int nprocs;
	struct bench_stats st;
	int check_ok;
};

void ddt_output_begin(FILE *f, enum ddt_format fmt);
void ddt_output_row(FILE *f, enum ddt_format fmt, const struct ddt_row *r);
void ddt_output_end(FILE *f, enum ddt_format fmt);

#endif
