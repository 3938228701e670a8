/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/ddt --cvar NAME=V1,V2,...: an MPI_T control variable (an
 * enumeration or an integer) set to each value in turn within one launch,
 * so that the values are compared in the same run of the machine.
 */
#ifndef DDT_CVAR_H
#define DDT_CVAR_H

#include <mpi.h>

#define DDT_CVAR_MAX 8 /* values of --cvar (one more slot: the --warmup value) */

struct ddt_cvar {
	char name[256];
	int nvalues;
	char label[DDT_CVAR_MAX + 1][32]; /* each value as given */
	int value[DDT_CVAR_MAX + 1];      /* each as the variable's integer */
	int warmup;                   /* --warmup V: index DDT_CVAR_MAX holds V; -1 none */
	MPI_T_cvar_handle handle;
	MPI_T_enum enumtype; /* MPI_T_ENUM_NULL: an integer variable */
};

/* Parses spec, starts MPI_T and finds the variable; dies with a message
 * naming the variable and the MPI_T error when it cannot be set. */
void ddt_cvar_open(const char *spec, struct ddt_cvar *cv);
/* --warmup: the value of an untimed run before the timed ones (NULL: none). */
void ddt_cvar_warmup(struct ddt_cvar *cv, const char *label);
/* Sets the variable to value i on this process. */
void ddt_cvar_set(const struct ddt_cvar *cv, int i);
void ddt_cvar_close(struct ddt_cvar *cv);

#endif
