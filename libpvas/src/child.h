/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The clone(CLONE_VM) child that becomes a task: what it needs, what it says. */
#ifndef PVAS_CHILD_H
#define PVAS_CHILD_H

#include <signal.h>

#include "internal.h"
#include "loader.h"

/* What the child reports through the status pipe before it enters ld.so. */
struct pvas_child_status {
	int ok;
	struct pvas_load_error e;
};

/* Prepared by the root on its own stack; the child reads it only before it
 * reports its status (after that the root's frame may be gone). */
struct pvas_child_ctx {
	struct pvas_group *g;
	unsigned slot;
	struct pvas_spawn_attr attr;
	struct pvas_load_req req;
	int status_fd;   /* write end of the status pipe */
	sigset_t mask;   /* signal mask the task starts with */
	pid_t root_pid;
};

/* clone() entry point; arg is a struct pvas_child_ctx. */
int pvas_child_main(void *arg);

#endif
