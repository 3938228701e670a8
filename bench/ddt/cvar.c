/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cvar.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The integer of enumeration item `label` of enumtype, or of `label` as a
 * number when the variable is no enumeration. */
static int cvar_value(const struct ddt_cvar *cv, MPI_T_enum enumtype, const char *label)
{
	if (MPI_T_ENUM_NULL != enumtype) {
		char ename[256];
		int n, len = (int)sizeof(ename);
		if (MPI_SUCCESS != MPI_T_enum_get_info(enumtype, &n, ename, &len))
			ddt_die("MPI_T_enum_get_info of %s failed", cv->name);
		for (int i = 0; i < n; i++) {
			char item[256];
			int v, ilen = (int)sizeof(item);
			if (MPI_SUCCESS == MPI_T_enum_get_item(enumtype, i, &v, item, &ilen) &&
			    !strcmp(item, label))
				return v;
		}
		ddt_die("--cvar: %s has no value '%s'", cv->name, label);
	}
	char *end;
	errno = 0;
	long v = strtol(label, &end, 10);
	if (errno || *end || end == label)
		ddt_die("--cvar: %s takes integers, not '%s'", cv->name, label);
	return (int)v;
}

void ddt_cvar_open(const char *spec, struct ddt_cvar *cv)
{
	const char *eq = strchr(spec, '=');
	memset(cv, 0, sizeof(*cv));
	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof(cv->name) || !eq[1])
		ddt_die("--cvar: '%s' is not NAME=VALUE[,VALUE...]", spec);
	memcpy(cv->name, spec, (size_t)(eq - spec));
	cv->warmup = -1;

	int provided, index, count, len = 0, dlen = 0, verbosity, bind, scope;
	MPI_Datatype type;
	MPI_T_enum enumtype;
	if (MPI_SUCCESS != MPI_T_init_thread(MPI_THREAD_SINGLE, &provided))
		ddt_die("MPI_T_init_thread failed");
	int rc = MPI_T_cvar_get_index(cv->name, &index);
	if (MPI_SUCCESS != rc)
		ddt_die("--cvar: MPI_T_cvar_get_index(%s) failed (MPI_T error %d): no such variable",
			cv->name, rc);
	rc = MPI_T_cvar_get_info(index, NULL, &len, &verbosity, &type, &enumtype, NULL, &dlen,
				 &bind, &scope);
	if (MPI_SUCCESS != rc || MPI_T_BIND_NO_OBJECT != bind || MPI_INT != type)
		ddt_die("--cvar: %s is not an int variable bound to no object (MPI_T error %d)",
			cv->name, rc);

	char *dup = strdup(eq + 1), *save = NULL;
	if (!dup)
		ddt_die("strdup --cvar values: %s", strerror(errno));
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (cv->nvalues == DDT_CVAR_MAX || strlen(t) >= sizeof(cv->label[0]))
			ddt_die("--cvar: at most %d values of at most %zu characters", DDT_CVAR_MAX,
				sizeof(cv->label[0]) - 1);
		strcpy(cv->label[cv->nvalues], t);
		cv->value[cv->nvalues++] = cvar_value(cv, enumtype, t);
	}
	free(dup);
	cv->enumtype = enumtype;
	if (!cv->nvalues)
		ddt_die("--cvar: %s has no values", cv->name);
	rc = MPI_T_cvar_handle_alloc(index, NULL, &cv->handle, &count);
	if (MPI_SUCCESS != rc || 1 != count)
		ddt_die("--cvar: MPI_T_cvar_handle_alloc(%s) failed (MPI_T error %d)", cv->name, rc);
	ddt_cvar_set(cv, 0); /* fails here, before any timing, when it cannot be set */
}

void ddt_cvar_warmup(struct ddt_cvar *cv, const char *label)
{
	if (!label)
		return;
	if (!cv->nvalues)
		ddt_die("--warmup needs --cvar");
	if (strlen(label) >= sizeof(cv->label[0]))
		ddt_die("--warmup: '%s' is longer than %zu characters", label,
			sizeof(cv->label[0]) - 1);
	strcpy(cv->label[DDT_CVAR_MAX], label);
	cv->value[DDT_CVAR_MAX] = cvar_value(cv, cv->enumtype, label);
	cv->warmup = DDT_CVAR_MAX;
}

void ddt_cvar_set(const struct ddt_cvar *cv, int i)
{
	int rc = MPI_T_cvar_write(cv->handle, &cv->value[i]);
	if (MPI_SUCCESS != rc)
		ddt_die("--cvar: MPI_T_cvar_write(%s = %s) failed (MPI_T error %d%s)", cv->name,
			cv->label[i], rc,
			MPI_T_ERR_CVAR_SET_NEVER == rc || MPI_T_ERR_CVAR_SET_NOT_NOW == rc
				? ": the variable cannot be set at run time"
				: "");
}

void ddt_cvar_close(struct ddt_cvar *cv)
{
	if (!cv->nvalues)
		return;
	MPI_T_cvar_handle_free(&cv->handle);
	MPI_T_finalize();
	cv->nvalues = 0;
}
