// SPDX-License-Identifier: LGPL-2.1-or-later
/* Per-thread error messages: every failure names operation, object, errno. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char errmsg[512] = "no error";

void pvas_set_error(const char *op, const char *object, int err)
{
	if (object && *object)
		snprintf(errmsg, sizeof(errmsg), "%s: %s: %s", op, object, strerror(err));
	else
		snprintf(errmsg, sizeof(errmsg), "%s: %s", op, strerror(err));
	errno = err;
}

void pvas_set_errorf(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(errmsg))
		snprintf(errmsg + n, sizeof(errmsg) - (size_t)n, ": %s", strerror(err));
	errno = err;
}

const char *pvas_errmsg(void)
{
	return errmsg;
}
