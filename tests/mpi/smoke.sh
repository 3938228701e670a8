#!/usr/bin/env bash
# tests/mpi/smoke.sh : smoke test of PVAS's Open MPI build (prints TAP).
#
# Compiles a C and a Fortran hello with the prefix's mpicc and mpif90 and
# runs each on 2 ranks with --mca btl self,vader, once with vader's default
# single-copy mechanism and once with it off (btl_vader_single_copy_mechanism
# none), checking every rank's output; the C program also sends 1 MiB
# (rendezvous, single copy) and 100 bytes (eager) each way.  A last test
# runs 3 ranks, more than the 2 cores, which works through the prefix's
# rmaps_base_oversubscribe = 1.
#
# The prefix is $OMPI_PREFIX, else `scripts/build-ompi --print-prefix`;
# when it is not built, every test is skipped (build it: make ompi).
# Built programs go to $BUILD/tests/mpi (BUILD defaults to build).
set -euo pipefail

cd "$(dirname "$0")/../.."
prefix=${OMPI_PREFIX:-$(scripts/build-ompi --print-prefix)}
out=${BUILD:-build}/tests/mpi
timeout_s=${PVAS_MPI_TIMEOUT:-120}

# We run as root in the sandbox and CI.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=$prefix/bin:$PATH

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	[ -z "${2:-}" ] || sed 's/^/# /' "$2"
}

tests=(compile-c compile-fortran c-vader c-vader-nocopy f-vader f-vader-nocopy c-oversubscribed)
echo "1..${#tests[@]}"

if [ ! -f "$prefix/.pvas-build-stamp" ] || [ ! -x "$prefix/bin/mpirun" ]; then
	for t in "${tests[@]}"; do
		ok "$t # SKIP Open MPI not built at $prefix (make ompi)"
	done
	exit 0
fi

mkdir -p "$out"
cat >"$out/hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rank 0 and 1 exchange a big (rendezvous) and a small (eager) message. */
static int exchange(int rank, size_t len)
{
	char *buf = malloc(len);
	int peer = 1 - rank, bad = 0;
	if (!buf)
		return 1;
	for (int round = 0; round < 2; round++) {
		int sender = round; /* 0 sends first, then 1 */
		if (rank == sender) {
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)(i * 7 + sender);
			MPI_Send(buf, (int)len, MPI_CHAR, peer, 42, MPI_COMM_WORLD);
		} else {
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_CHAR, peer, 42, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			for (size_t i = 0; i < len; i++)
				if (buf[i] != (char)(i * 7 + sender))
					bad = 1;
		}
	}
	free(buf);
	return bad;
}

int main(int argc, char **argv)
{
	int rank, size, bad = 0, allbad = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	printf("hello from C rank %d of %d\n", rank, size);
	fflush(stdout);
	if (size >= 2 && rank < 2)
		bad = exchange(rank, 1 << 20) | exchange(rank, 100);
	MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	if (rank == 0)
		printf("exchange %s\n", allbad ? "CORRUPT" : "ok");
	MPI_Finalize();
	return allbad;
}
EOF
cat >"$out/hello.f90" <<'EOF'
program hello
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  write (*, '(a,i0,a,i0)') 'hello from Fortran rank ', rank, ' of ', nprocs
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0)') 'sum ', total
  call MPI_Finalize(ierr)
end program hello
EOF

# compile NAME LOG CMD...
compile() {
	local name=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then ok "$name"; else not_ok "$name" "$log"; fi
}
compile compile-c "$out/compile-c.log" mpicc -O2 -Wall -o "$out/hello_c" "$out/hello.c"
compile compile-fortran "$out/compile-f.log" mpif90 -O2 -o "$out/hello_f" "$out/hello.f90"

# run NAME EXE NP LANG EXTRA-CHECK [MPIRUN-ARGS...]
run() {
	local name=$1 exe=$2 np=$3 lang=$4 check=$5 log=$out/$1.log r
	shift 5
	if [ ! -x "$exe" ]; then
		not_ok "$name (not compiled)"
		return
	fi
	if ! timeout "$timeout_s" mpirun -np "$np" "$@" "$exe" >"$log" 2>&1; then
		not_ok "$name (mpirun failed or timed out after ${timeout_s} s)" "$log"
		return
	fi
	for ((r = 0; r < np; r++)); do
		if ! grep -qx "hello from $lang rank $r of $np" "$log"; then
			not_ok "$name (no line from rank $r)" "$log"
			return
		fi
	done
	if ! grep -qx "$check" "$log"; then
		not_ok "$name (no line '$check')" "$log"
		return
	fi
	ok "$name"
}
vader=(--mca btl "self,vader")
nocopy=(--mca btl "self,vader" --mca btl_vader_single_copy_mechanism none)
run c-vader "$out/hello_c" 2 C "exchange ok" "${vader[@]}"
run c-vader-nocopy "$out/hello_c" 2 C "exchange ok" "${nocopy[@]}"
run f-vader "$out/hello_f" 2 Fortran "sum 3" "${vader[@]}"
run f-vader-nocopy "$out/hello_f" 2 Fortran "sum 3" "${nocopy[@]}"
run c-oversubscribed "$out/hello_c" 3 C "exchange ok" "${vader[@]}"

[ "$failed" -eq 0 ]
