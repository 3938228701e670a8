// SPDX-License-Identifier: GPL-2.0
/* A PVAS task that touches 32 MiB and sleeps until killed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char *p = malloc(32 << 20);

	if (p)
		memset(p, 1, 32 << 20);
	for (;;)
		pause();
}
