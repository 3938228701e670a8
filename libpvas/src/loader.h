/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PVAS program loader: a "userland exec" into one partition.
 *
 * It maps a PIE program and its ELF interpreter into [lo, hi) and builds a
 * fresh initial stack (argv, envp, auxv) at the top of that range, exactly
 * as the kernel's execve would for a new process.  Both backends use it; it
 * runs in the freshly cloned task, so it never allocates from the heap and
 * reports failures in a fixed-size record instead of errno/messages.
 */
#ifndef PVAS_LOADER_H
#define PVAS_LOADER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Layout inside a partition (see docs/layout.md). */
#define PVAS_PART_LOW_GUARD (2UL << 20)  /* unmapped bottom of a partition */
#define PVAS_PART_HIGH_GUARD (1UL << 20) /* unmapped top of a partition */
#define PVAS_MAX_PHNUM 128
#define PVAS_MAX_STACK (1UL << 30)

/* What failed in the task before it started, sent back to the root. */
struct pvas_load_error {
	int err;            /* errno value, 0 if none */
	char op[160];       /* operation, e.g. "open interpreter" */
	char object[PATH_MAX]; /* file or object */
};

struct pvas_load_req {
	const char *path;     /* program */
	char *const *argv;
	char *const *envp;
	uintptr_t lo, hi;     /* the partition */
	size_t stack_size;
	int map_flag;         /* MAP_FIXED or MAP_FIXED_NOREPLACE */
};

struct pvas_load_result {
	uintptr_t entry;       /* first instruction: ld.so's (or static-PIE's) */
	uintptr_t sp;          /* initial stack pointer (points at argc) */
	uintptr_t prog_base;   /* load bias of the program */
	uintptr_t interp_base; /* load bias of the interpreter, 0 if none */
	uintptr_t stack_lo, stack_hi;
};

/* Bytes the initial stack needs for these strings and pointer arrays. */
size_t pvas_stack_bytes(char *const *argv, char *const *envp, const char *path);

/* Load; 0 on success, else -1 with *e filled in. */
int pvas_load(const struct pvas_load_req *req, struct pvas_load_result *res,
	      struct pvas_load_error *e);

/* Jump to the loaded image: never returns. */
_Noreturn void pvas_enter(uintptr_t entry, uintptr_t sp);

#endif
