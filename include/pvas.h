/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libpvas: run real processes in partitions of ONE virtual address space.
 *
 * A group is created by its root.  The root spawns PIE programs as tasks:
 * each task is a real process (own pid, fd table, signal handlers, own copy
 * of every global of the program and of its libraries) but shares the
 * root's address space, so any task can load from and store to any other
 * task's memory.  Each task is loaded into its own partition of the group's
 * address range.
 *
 * Conventions: functions returning int return 0 (or a non-negative value)
 * on success and -1 on failure with errno set; pvas_errmsg() then returns a
 * message naming the operation, the object and the errno text, e.g.
 *   "pvas_spawn: open ./a.out: No such file or directory".
 */
#ifndef PVAS_H
#define PVAS_H

#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PVAS_VERSION_MAJOR 0
#define PVAS_VERSION_MINOR 1

/* Environment variable that forces a backend: "user" or "kmod". */
#define PVAS_ENV_BACKEND "PVAS_BACKEND"

enum pvas_backend_kind {
	PVAS_BACKEND_AUTO = 0, /* kmod if /dev/pvas exists, else user */
	PVAS_BACKEND_USER = 1, /* pure userspace loader, no module */
	PVAS_BACKEND_KMOD = 2, /* pvas.ko: enforced partitions, reclaim */
};

/* Group attributes.  Zero fields take the defaults (docs/layout.md). */
struct pvas_group_attr {
	size_t partition_size;    /* bytes, power of two, >= 1 GiB */
	unsigned partition_count; /* number of task partitions */
	enum pvas_backend_kind backend;
	unsigned flags; /* reserved, must be 0 */
};

#define PVAS_DEFAULT_PARTITION_SIZE (16UL << 30) /* 16 GiB */
#define PVAS_DEFAULT_PARTITION_COUNT 512U
#define PVAS_MAX_PARTITION_COUNT 4096U

/* Spawn attributes.  pvas_spawn_attr_init() sets every field to "inherit". */
struct pvas_spawn_attr {
	int partition;           /* -1: first free partition, else that one */
	const char *cwd;         /* NULL: the root's cwd */
	const cpu_set_t *cpuset; /* NULL: the root's affinity */
	size_t cpuset_size;      /* bytes of *cpuset */
	int fd_stdin;            /* -1: inherit, else dup2'ed onto 0 */
	int fd_stdout;           /* -1: inherit, else dup2'ed onto 1 */
	int fd_stderr;           /* -1: inherit, else dup2'ed onto 2 */
	size_t stack_size;       /* 0: RLIMIT_STACK (capped at 1/4 partition) */
	const sigset_t *sigmask; /* NULL: the caller's signal mask */
	unsigned flags;          /* PVAS_SPAWN_* */
};

/* Keep the task when the root dies (default: the task gets SIGKILL). */
#define PVAS_SPAWN_NO_PDEATHSIG 0x1u

typedef struct pvas_group pvas_group_t;

/* Root side ------------------------------------------------------------ */

void pvas_group_attr_init(struct pvas_group_attr *attr);
void pvas_spawn_attr_init(struct pvas_spawn_attr *attr);

/* Create a group; the caller becomes its root.  attr may be NULL. */
int pvas_create(const struct pvas_group_attr *attr, pvas_group_t **group);

/*
 * Destroy a group.  Fails with EBUSY while tasks are alive unless force is
 * non-zero, in which case they are killed (SIGKILL) and reaped first.
 */
int pvas_destroy(pvas_group_t *group, int force);

/*
 * Spawn the PIE program at path as a task.  argv and envp are NULL-
 * terminated (envp NULL: the root's environ).  On success stores the pid and
 * the task id (= partition index) and returns 0.
 */
int pvas_spawn(pvas_group_t *group, const char *path, char *const argv[], char *const envp[],
	       const struct pvas_spawn_attr *attr, pid_t *pid, int *task_id);

/*
 * Wait for a task (task_id >= 0) or any task (task_id == -1) to end and reap
 * it; its partition is reclaimed.  options: 0 or WNOHANG.  Returns the task
 * id, 0 <= id, or -1 (ECHILD: no task left; with WNOHANG and nothing ended,
 * returns -1 with errno EAGAIN).  *status is a waitpid() status.
 */
int pvas_wait(pvas_group_t *group, int task_id, int *status, int options);

/* Send sig to a task (task_id >= 0) or every live task (-1). */
int pvas_kill(pvas_group_t *group, int task_id, int sig);

/* Live tasks and the partition layout, as seen by the root. */
int pvas_group_ntasks(const pvas_group_t *group);
pid_t pvas_task_pid(const pvas_group_t *group, int task_id);

/* Root and tasks ------------------------------------------------------- */

struct pvas_info {
	uint64_t group_id;
	int task_id;   /* -1 in the root */
	int ntasks;    /* live tasks in the group */
	pid_t root_pid;
	uintptr_t base; /* start of partition 0 */
	size_t partition_size;
	unsigned partition_count;
	uintptr_t part_lo, part_hi; /* own partition [lo, hi); 0,0 in root */
	const char *backend;        /* "user" or "kmod" */
};

/*
 * Identity.  In a task, or in a root that holds a group (the most recent
 * one it created).  Fails with ENOENT outside any group.
 */
int pvas_self(struct pvas_info *info);
int pvas_self_task_id(void); /* -1 (errno ENOENT) outside a task */

/*
 * Which task's partition holds addr: the task id, or -1 with errno ENOENT
 * when addr lies in no live task's partition (e.g. the root's memory, or
 * memory the userspace backend could not confine; see docs/layout.md).
 */
int pvas_owner(const void *addr);

/* 1 if pid shares this process's address space (kcmp KCMP_VM), 0 if not. */
int pvas_same_vm(pid_t pid);

/* Publish one pointer for the other tasks (the export slot), and read it. */
int pvas_export(void *ptr);
/*
 * The pointer task_id exported; waits up to timeout_ms (0: don't wait,
 * -1: forever) for it to be non-NULL; a partition with no task yet is
 * waited for too.  NULL with errno ETIMEDOUT, ENOENT (task id out of
 * range) or ESRCH (the task ended while we waited).
 */
void *pvas_import(int task_id, int timeout_ms);

/* Diagnostics --------------------------------------------------------- */

/* Message for the calling thread's last failure (never NULL). */
const char *pvas_errmsg(void);
/* Name of the backend pvas_create() would pick now ("user" or "kmod"). */
const char *pvas_backend_name(enum pvas_backend_kind kind);

#ifdef __cplusplus
}
#endif
#endif /* PVAS_H */
