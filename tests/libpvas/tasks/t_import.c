// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Waits (no timeout) for task 0's export, which never comes: task 0 is
 * killed by the test.  Prints the error and exits 0 if it is ESRCH naming
 * task 0, else 1.
 */
#include "task_util.h"

int main(void)
{
	void *p = pvas_import(0, -1);
	int err = errno;

	printf("pvas_import: %s\n", p ? "returned a pointer" : pvas_errmsg());
	return !p && err == ESRCH && strstr(pvas_errmsg(), "task 0 ended") ? 0 : 1;
}
