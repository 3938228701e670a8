/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The protocol between `pvasrun --ompi-agent` (one stub per MPI rank, the
 * process ORTE starts) and the node-local root (one per job per node),
 * over an abstract AF_UNIX SOCK_SEQPACKET socket "@pvas-<uid>-<job key>".
 *
 *   stub -> root  AGENT_SPAWN  + SCM_RIGHTS {stdin, stdout, stderr}
 *   root -> stub  AGENT_REPLY  (pid and task id, or errno and message)
 *   stub -> root  AGENT_SIGNAL (a signal the stub received, to forward)
 *   root -> stub  AGENT_EXIT   (the task's wait status; then close)
 * A stub whose socket closes loses its task (the root kills it); a root
 * whose last task ended and that has no client exits.
 */
#ifndef PVAS_AGENT_PROTO_H
#define PVAS_AGENT_PROTO_H

#include <sched.h>
#include <stdint.h>

#define AGENT_MAGIC 0x50564147u /* "PVAG" */
#define AGENT_VERSION 1
#define AGENT_MAX_MSG (1U << 20)

enum agent_type { AGENT_SPAWN = 1, AGENT_REPLY, AGENT_SIGNAL, AGENT_EXIT };

struct agent_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t type;
	int32_t value; /* SIGNAL: signal; EXIT: wait status; REPLY: errno */
};

/* AGENT_SPAWN: followed by strings_len bytes: path, cwd, argv..., envp... */
struct agent_spawn {
	struct agent_hdr h;
	uint32_t argc, envc, strings_len, has_cpuset;
	cpu_set_t cpuset;
	char strings[];
};

struct agent_reply {
	struct agent_hdr h; /* value: 0 or errno */
	int32_t pid, task_id;
	char msg[512];
};

/*
 * Ranks started through a script (docs/ompi-launch.md): the agent execs the
 * script with PVAS_RANK_HANDOFF_LIB (relative to the prefix of its own
 * executable) in LD_PRELOAD and its own path in PVAS_ENV_RANK_AGENT; the
 * library re-enters the agent as `pvasrun --ompi-rank EXE ARGV...` from
 * the first program that links libmpi.
 */
#define PVAS_ENV_RANK_AGENT "PVAS_OMPI_RANK_AGENT"
#define PVAS_RANK_HANDOFF_LIB "lib/pvas/rank-handoff.so"

/* Root side: serve the job's ranks on listening socket lfd; never returns. */
_Noreturn void pvas_node_root(int lfd, const char *key);
/* Stub side: run argv as a PVAS task (or exec it); returns an exit code. */
int pvas_ompi_agent(int argc, char **argv);
/* Stub side, re-entered from a script: argv = EXE ARGV0 ARGS... */
int pvas_ompi_rank(int argc, char **argv);

#endif
