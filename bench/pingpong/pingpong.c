/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pingpong: MPI_Send/MPI_Recv ping-pong between ranks 0 and 1, message
 * sizes from --min to --max bytes in powers of --step (2 or 4): contiguous,
 * or with --block B a vector of B-byte blocks at --stride (default 2 B),
 * the same type on both sides (B bytes times the whole blocks in a size).
 * Reports the median (and quartiles) of the round-trip time per size;
 * bandwidth = size / (median round trip / 2).  The last received message
 * of every size is checked against the peer's fill pattern, and a vector's
 * gaps against the bytes they held.
 */
#include "cli.h"
#include "fail.h"
#include "output.h"
#include "stats.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bench_prog = "pingpong";

static const char usage_text[] =
	"usage: mpirun -np 2 pingpong [OPTION]...\n"
	"Ping-pong between ranks 0 and 1 (other ranks idle).\n"
	"  --min B        smallest message (default 1)\n"
	"  --max B        largest message (default 16777216 = 16 MiB)\n"
	"  --step K       size factor, 2 (default) or 4\n"
	"  --block B      send a vector of B-byte blocks (default: contiguous)\n"
	"  --stride S     bytes from block to block (default 2 B; at least B)\n"
	"  -i, --iters N  timed round trips per size (default: 1000 below 64 KiB,\n"
	"                 fewer for large messages, at least 20)\n"
	"  --format F     csv (default) | json\n"
	"  --out FILE     results to FILE instead of stdout\n"
	"  -h, --help     this text\n"
	"Progress and bandwidth (MB/s = 1e6 B/s) go to stderr.\n";

static unsigned char fillbyte(size_t i, int rank)
{
	return (unsigned char)((i * 31u) ^ (i >> 8) ^ (unsigned)(rank * 0x5b + 1));
}

int main(int argc, char **argv)
{
	int rank, p, step = 2, iters = 0, ch;
	long long minb = 1, maxb = 16 << 20, block = 0, stride = 0;
	struct bench_opts o = {.fmt = FMT_CSV};
	enum { O_MIN = BENCH_OPT_OWN, O_MAX, O_STEP, O_BLOCK, O_STRIDE };
	static const struct option lo[] = {
		{"min", required_argument, 0, O_MIN},	{"max", required_argument, 0, O_MAX},
		{"step", required_argument, 0, O_STEP}, {"iters", required_argument, 0, 'i'},
		{"block", required_argument, 0, O_BLOCK}, {"stride", required_argument, 0, O_STRIDE},
		BENCH_OPTIONS};

	bench_mpi_start(&argc, &argv, &rank, &p);
	while ((ch = bench_getopt(argc, argv, "i:", lo, rank, usage_text, &o)) != -1) {
		if (ch == O_MIN)
			minb = atoll(optarg);
		else if (ch == O_MAX)
			maxb = atoll(optarg);
		else if (ch == O_STEP)
			step = atoi(optarg);
		else if (ch == O_BLOCK)
			block = atoll(optarg);
		else if (ch == O_STRIDE)
			stride = atoll(optarg);
		else if (ch == 'i')
			iters = atoi(optarg);
	}
	if (block > 0 && stride == 0)
		stride = 2 * block;
	const char *outpath = o.out;
	enum ddt_format fmt = o.fmt;
	int inject = o.inject;
	/* stride is bounded before the product, which then cannot overflow */
	if (p < 2 || minb < 1 || maxb < minb || maxb > (1LL << 30) || (step != 2 && step != 4) ||
	    block < 0 || (block == 0 && stride != 0) ||
	    (block > 0 && (stride < block || stride > (1LL << 31) ||
			   maxb / block * stride > (1LL << 31))))
		bench_die("bad arguments: need >= 2 ranks (have %d), 1 <= --min <= --max <= 1 GiB, "
			  "--step 2 or 4, --stride only with --block and >= it, spans of at most "
			  "2 GiB",
			  p);
	size_t max = (size_t)maxb, span = block ? (size_t)(maxb / block * stride) : max;
	unsigned char *sbuf = malloc(span), *rbuf = malloc(span);
	double *samples = malloc(sizeof(double) * 100000);
	if (!sbuf || !rbuf || !samples)
		bench_die("malloc buffers of %zu bytes: %s", span, strerror(errno));
	for (size_t i = 0; i < span; i++)
		sbuf[i] = fillbyte(i, rank);
	FILE *out = stdout;
	if (rank == 0) {
		if (outpath && !(out = fopen(outpath, "w")))
			bench_die("open --out %s for writing: %s", outpath, strerror(errno));
		ddt_output_begin(out, fmt);
	}
	int peer = 1 - rank, failures = 0;
	for (size_t size = (size_t)minb; size <= max; size *= (size_t)step) {
		/* the message: n contiguous bytes, or count blocks of a vector */
		int count = block ? (int)(size / (size_t)block) : (int)size;
		size_t n = block ? (size_t)count * (size_t)block : size,
		       extent = block && count ? (size_t)(count - 1) * (size_t)stride + (size_t)block
					       : n;
		MPI_Datatype type = MPI_BYTE;
		if (block && count == 0)
			continue;
		if (block) {
			MPI_Datatype b;
			MPI_CHECK(MPI_Type_contiguous((int)block, MPI_BYTE, &b));
			MPI_CHECK(MPI_Type_create_hvector(count, 1, (MPI_Aint)stride, b, &type));
			MPI_CHECK(MPI_Type_commit(&type));
			MPI_CHECK(MPI_Type_free(&b));
		}
		int elems = block ? 1 : (int)n;
		int it = iters > 0 ? iters : n <= 65536 ? 1000 : (int)(64 * 1048576 / n);
		if (it < 20 && iters <= 0)
			it = 20;
		if (it > 100000)
			it = 100000;
		int warm = it / 10 + 2;
		memset(rbuf, 0, extent);
		MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank < 2)
			for (int k = -warm; k < it; k++) {
				if (rank == 0) {
					double t0 = bench_now_us();
					MPI_CHECK(MPI_Send(sbuf, elems, type, peer, 0, MPI_COMM_WORLD));
					MPI_CHECK(MPI_Recv(rbuf, elems, type, peer, 0, MPI_COMM_WORLD,
							   MPI_STATUS_IGNORE));
					if (k >= 0)
						samples[k] = bench_now_us() - t0;
				} else {
					MPI_CHECK(MPI_Recv(rbuf, elems, type, peer, 0, MPI_COMM_WORLD,
							   MPI_STATUS_IGNORE));
					if (inject && k == it - 1)
						rbuf[0] ^= 1;
					MPI_CHECK(MPI_Send(rbuf, elems, type, peer, 0, MPI_COMM_WORLD));
				}
			}
		/* rank 1 echoes what it received, so rank 0 gets its own data back;
		 * a vector's gaps keep the zeros they were cleared to */
		int bad = 0, anybad;
		if (rank < 2)
			for (size_t i = 0; i < extent; i++) {
				int in = !block || i % (size_t)stride < (size_t)block;
				unsigned char want = in ? fillbyte(i, 0) : 0;
				if (rbuf[i] != want) {
					fprintf(stderr,
						"pingpong: CHECK FAILED: rank %d, %zu-byte message: byte %zu "
						"(%s) is 0x%02x, expected 0x%02x\n",
						rank, n, i, in ? "data" : "gap", rbuf[i], want);
					bad = 1;
					break;
				}
			}
		MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
		failures += anybad;
		if (rank == 0) {
			char label[48];
			if (block)
				snprintf(label, sizeof(label), "%dx%lld/%lld", count, block, stride);
			else
				snprintf(label, sizeof(label), "%zu", n);
			struct ddt_row row = {.pattern = "pingpong", .size = label,
					      .method = block ? "vector" : "contig", .bytes = n,
					      .nprocs = p, .check_ok = !anybad};
			bench_stats(samples, (size_t)it, &row.st);
			ddt_output_row(out, fmt, &row);
			fprintf(stderr, "pingpong: %10zu B  round trip median %10.2f us  %9.1f MB/s\n",
				n, row.st.median, (double)n / (row.st.median / 2));
		}
		if (block)
			MPI_CHECK(MPI_Type_free(&type));
		if (size > max / (size_t)step)
			break;
	}
	if (rank == 0) {
		ddt_output_end(out, fmt);
		if (out != stdout)
			fclose(out);
	}
	free(sbuf);
	free(rbuf);
	free(samples);
	MPI_CHECK(MPI_Finalize());
	return failures ? 1 : 0;
}
