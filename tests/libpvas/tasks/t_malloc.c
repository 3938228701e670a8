// SPDX-License-Identifier: LGPL-2.1-or-later
/* Heavy malloc/free with content checks: each task's heap is its own. */
#include <stdint.h>

#include "task_util.h"

#define SLOTS 512
#define OPS 20000

int main(void)
{
	static unsigned char *p[SLOTS];
	static size_t len[SLOTS];
	unsigned seed = (unsigned)env_int("PVAS_RANK") * 2654435761u + 1;
	int op;

	for (op = 0; op < OPS; op++) {
		int s = (int)(rand_r(&seed) % SLOTS);
		size_t k;

		if (p[s]) {
			for (k = 0; k < len[s]; k += 61)
				if (p[s][k] != (unsigned char)(s ^ k))
					FAIL("slot %d byte %zu corrupted", s, k);
			free(p[s]);
		}
		len[s] = (rand_r(&seed) % 32 == 0) ? 1 + rand_r(&seed) % (1 << 20)
						    : 1 + rand_r(&seed) % 4096;
		p[s] = malloc(len[s]);
		CHECK(p[s] != NULL);
		for (k = 0; k < len[s]; k += 61)
			p[s][k] = (unsigned char)(s ^ k);
	}
	for (op = 0; op < SLOTS; op++)
		free(p[op]);
	return 0;
}
