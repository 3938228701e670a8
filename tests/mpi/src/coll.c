/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Collectives: bcast, allreduce, alltoall, alltoallv, gather (integer data:
 * results do not depend on the reduction order). */
#include "common.h"

static void bcast(void)
{
	static const size_t sz[] = {1, 1000, 40000, 100000, 4 << 20};

	for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
		int root = (int)i % t_size;
		unsigned char *b = t_malloc(sz[i]);

		if (t_rank == root)
			t_fill(b, sz[i], 1000 + i);
		else
			memset(b, 0, sz[i]);
		MPI_Bcast(b, (int)sz[i], MPI_BYTE, root, MPI_COMM_WORLD);
		T_CHECK(t_verify(b, sz[i], 1000 + i) == 0, "bcast %zu from %d", sz[i], root);
		t_mix_u64(sz[i] * 7 + (uint64_t)root);
		free(b);
	}
}

static void allreduce(void)
{
	static const int cnt[] = {1, 1000, 100000, 1 << 20};

	for (size_t i = 0; i < sizeof(cnt) / sizeof(cnt[0]); i++) {
		int n = cnt[i];
		int64_t *in = t_malloc(sizeof(int64_t) * (size_t)n),
			*out = t_malloc(sizeof(int64_t) * (size_t)n);
		int bad = 0;

		for (int j = 0; j < n; j++)
			in[j] = (int64_t)j * (t_rank + 1) - t_rank;
		MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		for (int j = 0; j < n; j++) {
			int64_t want = (int64_t)j * t_size * (t_size + 1) / 2 -
				       (int64_t)t_size * (t_size - 1) / 2;

			bad += out[j] != want;
		}
		T_CHECK(bad == 0, "allreduce %d: %d wrong", n, bad);
		t_mix(out, sizeof(int64_t) * (size_t)(n < 64 ? n : 64));
		free(in);
		free(out);
	}
	{
		int v = t_rank, mx = -1;

		MPI_Allreduce(&v, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		T_CHECK(mx == t_size - 1, "allreduce max %d", mx);
	}
}

static void alltoall(void)
{
	static const int cnt[] = {1, 1000, 20000};

	for (size_t i = 0; i < sizeof(cnt) / sizeof(cnt[0]); i++) {
		size_t n = (size_t)cnt[i] * sizeof(int) * (size_t)t_size;
		int *s = t_malloc(n), *r = t_malloc(n);
		int bad = 0;

		for (int p = 0; p < t_size; p++)
			for (int j = 0; j < cnt[i]; j++)
				s[p * cnt[i] + j] = t_rank * 1000003 + p * 1009 + j;
		MPI_Alltoall(s, cnt[i], MPI_INT, r, cnt[i], MPI_INT, MPI_COMM_WORLD);
		for (int p = 0; p < t_size; p++)
			for (int j = 0; j < cnt[i]; j++)
				bad += r[p * cnt[i] + j] != p * 1000003 + t_rank * 1009 + j;
		T_CHECK(bad == 0, "alltoall %d: %d wrong", cnt[i], bad);
		t_mix_u64((uint64_t)cnt[i] ^ (uint64_t)bad << 32);
		free(s);
		free(r);
	}
}

static void alltoallv(void)
{
	/* rank p sends (p + q + 1) * 997 ints to rank q */
	int *sc = t_malloc(sizeof(int) * (size_t)t_size),
	    *sd = t_malloc(sizeof(int) * (size_t)t_size);
	int *rc = t_malloc(sizeof(int) * (size_t)t_size),
	    *rd = t_malloc(sizeof(int) * (size_t)t_size);
	int stot = 0, rtot = 0, bad = 0;
	int *s, *r;

	for (int q = 0; q < t_size; q++) {
		sc[q] = (t_rank + q + 1) * 997;
		sd[q] = stot;
		stot += sc[q];
		rc[q] = (q + t_rank + 1) * 997;
		rd[q] = rtot;
		rtot += rc[q];
	}
	s = t_malloc(sizeof(int) * (size_t)stot);
	r = t_malloc(sizeof(int) * (size_t)rtot);
	for (int q = 0; q < t_size; q++)
		for (int j = 0; j < sc[q]; j++)
			s[sd[q] + j] = t_rank * 7919 + q * 31 + j;
	MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD);
	for (int q = 0; q < t_size; q++)
		for (int j = 0; j < rc[q]; j++)
			bad += r[rd[q] + j] != q * 7919 + t_rank * 31 + j;
	T_CHECK(bad == 0, "alltoallv: %d wrong", bad);
	t_mix_u64((uint64_t)rtot ^ (uint64_t)bad << 32);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(s);
	free(r);
}

static void gather(void)
{
	static const int cnt[] = {100, 100000};

	for (size_t i = 0; i < sizeof(cnt) / sizeof(cnt[0]); i++) {
		int root = t_size - 1 - (int)i % t_size;
		size_t n = (size_t)cnt[i] * sizeof(int);
		int *s = t_malloc(n), *r = t_malloc(n * (size_t)t_size);

		t_fill(s, n, 5000 + (uint64_t)t_rank);
		MPI_Gather(s, cnt[i], MPI_INT, r, cnt[i], MPI_INT, root, MPI_COMM_WORLD);
		if (t_rank == root)
			for (int p = 0; p < t_size; p++)
				T_CHECK(
				    t_verify((char *)r + n * (size_t)p, n, 5000 + (uint64_t)p) == 0,
				    "gather %d: block of %d", cnt[i], p);
		t_mix_u64((uint64_t)cnt[i] * 3 + (uint64_t)root);
		free(s);
		free(r);
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	t_init_ids();
	for (int rep = 0; rep < 3; rep++) {
		bcast();
		allreduce();
		alltoall();
		alltoallv();
		gather();
	}
	return t_finish("coll");
}
