/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which peers share my address space, in a job over several hosts
 * (tests/multinode/run.sh).
 *
 * Every rank gathers every rank's host name (MPI_Get_processor_name), pid
 * and PVAS group, asks pvas_same_vm() about every peer, and checks that the
 * peers sharing its address space are exactly the ranks on its own host:
 * one PVAS group per host, a different group on every host.  Rank 0 prints
 * one line per rank, in rank order:
 *
 *   peers: rank R host H group G: address space {a,b}; host {a,b}
 *
 * Then every rank sends --messages messages of a strided vector type to
 * every peer and receives each into a contiguous buffer (a derived
 * datatype message above pml_ob1_direct_min_size: the direct Rendezvous
 * when ob1 reaches the peer through btl/pvas), and checks the data.  Rank 0
 * prints "exchange: M messages of B bytes per ordered pair" so that the
 * suite can compare each rank's pml_ob1_direct_stats line with
 * M x (peers on its host).
 *
 * Usage: peers [--messages M]   (default 4)
 */
#include <unistd.h>

#include <pvas.h>

#include "common.h"

#define LINE 1024
#define BLOCKS 2048 /* vector blocks per message */
#define BLOCK 4	    /* uint64 per block; stride 2 x BLOCK */

struct ident {
	char host[MPI_MAX_PROCESSOR_NAME];
	uint64_t group_id;
	int64_t pid;
	int64_t in_group;
};

static void set_list(char *out, size_t len, const int *member, int n)
{
	size_t o = 0;

	o += (size_t)snprintf(out + o, len - o, "{");
	for (int p = 0, first = 1; p < n && o < len; p++) {
		if (!member[p])
			continue;
		o += (size_t)snprintf(out + o, len - o, "%s%d", first ? "" : ",", p);
		first = 0;
	}
	if (o < len)
		snprintf(out + o, len - o, "}");
}

static uint64_t key_of(int src, int dst, int m)
{
	return ((uint64_t)src << 40) | ((uint64_t)dst << 20) | (uint64_t)m;
}

/* M messages to and from every peer; returns the bytes per message. */
static size_t exchange(int messages)
{
	size_t n = (size_t)BLOCKS * BLOCK, bytes = n * sizeof(uint64_t);
	int npeers = t_size - 1, k = 0;
	uint64_t *sbuf = t_malloc(2 * bytes * (size_t)messages);
	uint64_t *rbuf = t_malloc(bytes * (size_t)messages * (size_t)t_size);
	uint64_t *tmp = t_malloc(bytes);
	MPI_Request *req = t_malloc(sizeof(*req) * 2 * (size_t)npeers * (size_t)messages);
	MPI_Datatype vec;

	MPI_Type_vector(BLOCKS, BLOCK, 2 * BLOCK, MPI_UINT64_T, &vec);
	MPI_Type_commit(&vec);
	for (int p = 0; p < t_size; p++) {
		if (p == t_rank)
			continue;
		for (int m = 0; m < messages; m++)
			MPI_Irecv(rbuf + ((size_t)p * (size_t)messages + (size_t)m) * n, (int)n,
				  MPI_UINT64_T, p, m, MPI_COMM_WORLD, &req[k++]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int d = 1; d < t_size; d++) {
		int p = (t_rank + d) % t_size;

		for (int m = 0; m < messages; m++) {
			uint64_t *s = sbuf + 2 * n * (size_t)m;

			/* the blocks carry the message; the gaps hold junk */
			t_fill(tmp, bytes, key_of(t_rank, p, m));
			for (size_t b = 0; b < BLOCKS; b++) {
				memcpy(s + 2 * BLOCK * b, tmp + BLOCK * b, BLOCK * sizeof(uint64_t));
				memset(s + 2 * BLOCK * b + BLOCK, 0xa5, BLOCK * sizeof(uint64_t));
			}
			MPI_Isend(s, 1, vec, p, m, MPI_COMM_WORLD, &req[k++]);
			/* the send buffer is reused for the next peer: wait */
			MPI_Wait(&req[k - 1], MPI_STATUS_IGNORE);
		}
	}
	MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
	for (int p = 0; p < t_size; p++) {
		if (p == t_rank)
			continue;
		for (int m = 0; m < messages; m++) {
			size_t bad = t_verify(rbuf + ((size_t)p * (size_t)messages + (size_t)m) * n,
					      bytes, key_of(p, t_rank, m));

			T_CHECK(bad == 0, "message %d from rank %d: %zu of %zu words differ", m, p,
				bad, n);
			t_mix_u64(key_of(p, t_rank, m) ^ bad);
		}
	}
	MPI_Type_free(&vec);
	free(req);
	free(tmp);
	free(rbuf);
	free(sbuf);
	return bytes;
}

int main(int argc, char **argv)
{
	int messages = 4, len;
	struct pvas_info info;
	struct ident me, *all;
	char line[LINE], same_as[LINE / 4], same_host[LINE / 4], *lines = NULL;
	int *as, *host;
	size_t bytes;

	MPI_Init(&argc, &argv);
	t_init_ids();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--messages") && i + 1 < argc) {
			messages = atoi(argv[++i]);
		} else {
			if (t_rank == 0)
				fprintf(stderr, "usage: peers [--messages M]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	memset(&me, 0, sizeof(me));
	MPI_Get_processor_name(me.host, &len);
	me.pid = getpid();
	me.in_group = pvas_self(&info) == 0;
	me.group_id = me.in_group ? info.group_id : 0;
	all = t_malloc(sizeof(*all) * (size_t)t_size);
	MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE,
		      MPI_COMM_WORLD);

	as = t_malloc(sizeof(int) * (size_t)t_size);
	host = t_malloc(sizeof(int) * (size_t)t_size);
	T_CHECK(me.in_group, "not a PVAS task: %s", pvas_errmsg());
	for (int p = 0; p < t_size; p++) {
		int same = p == t_rank ? 0 : pvas_same_vm((pid_t)all[p].pid);

		T_CHECK(same >= 0, "pvas_same_vm(rank %d, pid %lld): %s", p,
			(long long)all[p].pid, pvas_errmsg());
		as[p] = same == 1;
		host[p] = p != t_rank && !strcmp(all[p].host, me.host);
		T_CHECK(as[p] == host[p], "rank %d on %s, pid %lld: pvas_same_vm %d, same host %d",
			p, all[p].host, (long long)all[p].pid, same, host[p]);
		T_CHECK((all[p].group_id == me.group_id) == !strcmp(all[p].host, me.host),
			"rank %d on %s: group %llx, mine %llx on %s", p, all[p].host,
			(unsigned long long)all[p].group_id, (unsigned long long)me.group_id,
			me.host);
		/* the summary: the host layout, not pids or group ids */
		t_mix_u64((uint64_t)as[p] << 1 | (uint64_t)host[p]);
	}
	set_list(same_as, sizeof(same_as), as, t_size);
	set_list(same_host, sizeof(same_host), host, t_size);
	snprintf(line, sizeof(line), "peers: rank %d host %s group %llx: address space %s; host %s",
		 t_rank, me.host, (unsigned long long)me.group_id, same_as, same_host);
	if (t_rank == 0)
		lines = t_malloc(LINE * (size_t)t_size);
	MPI_Gather(line, LINE, MPI_CHAR, lines, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (t_rank == 0) {
		for (int p = 0; p < t_size; p++)
			printf("%s\n", lines + (size_t)p * LINE);
		fflush(stdout);
		free(lines);
	}

	bytes = exchange(messages);
	if (t_rank == 0) {
		printf("exchange: %d messages of %zu bytes per ordered pair\n", messages, bytes);
		fflush(stdout);
	}
	free(host);
	free(as);
	free(all);
	return t_finish("peers");
}
