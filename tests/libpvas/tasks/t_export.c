// SPDX-License-Identifier: LGPL-2.1-or-later
/* Task 1 writes through the pointer task 0 exported; task 0 sees it. */
#include "task_util.h"

static struct {
	_Atomic int written, seen, bye;
	char buf[1 << 16];
} box;

int main(void)
{
	int rank = env_int("PVAS_RANK");
	size_t i;

	if (rank == 0) {
		CHECK(pvas_export(&box) == 0);
		wait_at_least(&box.written, 1);
		for (i = 0; i < sizeof(box.buf); i++)
			if (box.buf[i] != (char)(i * 7 + 3))
				FAIL("byte %zu is %d", i, box.buf[i]);
		add_and_wake(&box.seen, 1);
		printf("task 0 saw the data task 1 wrote\n");
		wait_at_least(&box.bye, 1); /* task 1 no longer reads our memory */
	} else {
		__typeof__(box) *peer = pvas_import(0, 60000);

		CHECK(peer != NULL);
		for (i = 0; i < sizeof(peer->buf); i++)
			peer->buf[i] = (char)(i * 7 + 3);
		add_and_wake(&peer->written, 1);
		wait_at_least(&peer->seen, 1);
		add_and_wake(&peer->bye, 1);
	}
	return 0;
}
