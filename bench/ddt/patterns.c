/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The 16 patterns in the spec's run order (ddt-patterns.md, section 2). */
#include "ddt.h"
#include "util.h"

#include <stdlib.h>

const char *const ddt_method_name[M_COUNT] = {"mpi_ddt", "manual", "mpi_pack", "reference"};

const struct ddt_pattern *const ddt_patterns[] = {
	&ddt_wrf_y_vec,   &ddt_wrf_y_sa,      &ddt_wrf_x_vec,  &ddt_wrf_x_sa,   &ddt_milc,
	&ddt_nas_lu_x,    &ddt_nas_lu_y,      &ddt_nas_mg_x,   &ddt_nas_mg_y,   &ddt_nas_mg_z,
	&ddt_lammps_full, &ddt_lammps_atomic, &ddt_specfem_oc, &ddt_specfem_cm, &ddt_specfem_mt,
	&ddt_fft,
};
const int ddt_npatterns = sizeof(ddt_patterns) / sizeof(ddt_patterns[0]);

void ddt_lists_make(struct ddt_lists *l, int nlists, const int *n, const int *g, int outer,
		    unsigned seed)
{
	l->nlists = nlists;
	l->n = ddt_alloc(sizeof(int) * (size_t)nlists, "list lengths");
	for (int k = 0; k < nlists; k++)
		l->n[k] = n[k];
	for (int who = 0; who < 2; who++) {
		l->idx[who] = ddt_alloc(sizeof(int *) * (size_t)(outer * nlists), "list table");
		srand(seed + (unsigned)who);
		for (int o = 0; o < outer; o++)
			for (int k = 0; k < nlists; k++)
				l->idx[who][o * nlists + k] = ddt_index_list(n[k], g[k]);
	}
}

void ddt_lists_free(struct ddt_lists *l, int outer)
{
	for (int who = 0; who < 2; who++) {
		for (int i = 0; i < outer * l->nlists; i++)
			free(l->idx[who][i]);
		free(l->idx[who]);
	}
	free(l->n);
}
