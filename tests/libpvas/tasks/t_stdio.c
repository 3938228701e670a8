// SPDX-License-Identifier: LGPL-2.1-or-later
/* Copies stdin to stdout in upper case. */
#include <ctype.h>
#include <stdio.h>

int main(void)
{
	int c;

	while ((c = getchar()) != EOF)
		putchar(toupper(c));
	return 0;
}
