#!/usr/bin/env bash
# tests/bench/check.sh [--bin DIR] : TAP checks of the benchmarks' data
# verification (bench/README.md).  DIR (default build/bench) holds the
# binaries and mpi.env (which mpirun/ompi_info they were built for).
#   - bench/ddt --check-only, all 16 patterns at the smallest size, under
#     --mca btl self,vader (np 2 and np 3) and, when ompi_info lists btl
#     pvas, under self,pvas (otherwise a "# note:" says they were not run);
#   - fft2d and lu verification at a small size with 2 and 4 ranks;
#   - pingpong data check, contiguous and a vector (its gaps too);
#     frag-cross (two threads, no MPI) data check, memcpy and rep movsb;
#   - negative tests: --inject-error must make each checker fail;
#   - bench/compare --params, and bench/ddt --cvar (MPI_T) under btl pvas.
# The harness's ratio logic (bench/compare, bench/summarize-runs) is checked
# without MPI by tests/bench/ratios.py on the JSON fixtures next to it.
set -uo pipefail

bin=build/bench
while [ $# -gt 0 ]; do
	case "$1" in
	--bin) bin=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

if [ ! -r "$bin/mpi.env" ]; then
	echo "check.sh: $bin/mpi.env: not found (build first: make bench-build)" >&2
	exit 1
fi
# shellcheck disable=SC1090,SC1091
. "$bin/mpi.env"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
logs=${PVAS_TEST_LOGS:-build/test-logs}/bench
mkdir -p "$logs"

n=0 fails=0
tap() { # tap STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fails=$((fails + 1)); fi
}
mpi() { # mpi LOG NP BTL PROGRAM ARGS... : run under mpirun, output in LOG.{out,err}
	local log=$1 np=$2 btl=$3
	shift 3
	timeout 300 "$MPIRUN" --oversubscribe -np "$np" --mca btl "$btl" "$@" \
		>"$logs/$log.out" 2>"$logs/$log.err"
}
diag() { sed 's/^/# /' "$logs/$1.err" | grep -v '^# *$' | tail -n "${2:-8}"; }

patterns="WRF_y_vec WRF_y_sa WRF_x_vec WRF_x_sa MILC_su3_zd NAS_LU_x NAS_LU_y NAS_MG_x NAS_MG_y
	NAS_MG_z LAMMPS_full LAMMPS_atomic SPECFEM3D_oc SPECFEM3D_cm SPECFEM3D_mt FFT"

ddt_suite() { # ddt_suite BTLNAME BTL
	local tag=$1 btl=$2 rc
	mpi "ddt-$tag" 2 "$btl" "$bin/ddt" --check-only --sizes smallest
	rc=$?
	for p in $patterns; do
		local name=$p
		[ "$p" = FFT ] && name=FFT2
		# 4 methods, all with check "ok", and the payload-byte line "ok"
		local good
		good=$(grep -c "^$name,.*,ok$" "$logs/ddt-$tag.out")
		grep -Eq "^ddt: $name +[^ ]+ +bytes .*: ok$" "$logs/ddt-$tag.err" && [ "$good" -eq 4 ]
		tap $? "ddt --check-only $p smallest size, btl $btl (payload bytes = spec, 4 methods checked)"
	done
	[ $rc -eq 0 ] || diag "ddt-$tag"
	tap $rc "ddt --check-only all patterns exit status 0, btl $btl"
	mpi "ddt3-$tag" 3 "$btl" "$bin/ddt" --check-only --sizes smallest
	rc=$?
	[ $rc -eq 0 ] || diag "ddt3-$tag"
	tap $rc "ddt --check-only all patterns, 3 ranks (FFT3, rank 2 idle in ping-pongs), btl $btl"
}

apps_suite() { # apps_suite BTLNAME BTL
	local tag=$1 btl=$2 rc
	for np in 2 4; do
		mpi "fft2d-$tag-$np" $np "$btl" "$bin/fft2d" --size 64 --iters 3
		rc=$?
		[ $rc -eq 0 ] || diag "fft2d-$tag-$np"
		tap $rc "fft2d 64x64 on $np ranks matches the serial FFTW 2-D FFT, btl $btl"
		for face in vector hvector hindexed; do
			mpi "lu-$tag-$np-$face" $np "$btl" "$bin/lu" --nx 40 --ny 36 --iters 20 --face $face
			rc=$?
			[ $rc -eq 0 ] || diag "lu-$tag-$np-$face"
			tap $rc "lu 40x36 on $np ranks, face $face, matches the serial run, btl $btl"
		done
	done
	mpi "pingpong-$tag" 2 "$btl" "$bin/pingpong" --max 1048576 --step 4 --iters 20
	rc=$?
	[ $rc -eq 0 ] || diag "pingpong-$tag"
	tap $rc "pingpong 1 B - 1 MiB data check, btl $btl"
	mpi "pingpong-vector-$tag" 2 "$btl" "$bin/pingpong" --block 24 --stride 100 --max 1048576 \
		--step 4 --iters 20
	rc=$?
	[ $rc -eq 0 ] || diag "pingpong-vector-$tag"
	tap $rc "pingpong vector of 24-byte blocks, stride 100, up to 1 MiB: data and gaps, btl $btl"
}

ddt_suite vader self,vader
apps_suite vader self,vader

if "$OMPI_INFO" 2>/dev/null | grep -Eq 'MCA btl: pvas[ (]'; then
	ddt_suite pvas self,pvas
	apps_suite pvas self,pvas
else
	echo "# note: btl pvas not run: $OMPI_INFO lists no btl pvas"
fi

# Negative tests: each checker must be able to fail.
neg() { # neg LOG NP PROGRAM ARGS...
	local log=$1
	mpi "$@" --inject-error
	local rc=$?
	grep -q "CHECK FAILED" "$logs/$log.err" && [ $rc -ne 0 ] && [ $rc -ne 124 ]
}
neg neg-ddt 2 self,vader "$bin/ddt" --check-only --sizes smallest --patterns 'NAS_MG_x,SPECFEM3D_oc,FFT'
tap $? "ddt --inject-error (one flipped payload byte) is detected: CHECK FAILED, exit non-zero"
neg neg-fft2d 2 self,vader "$bin/fft2d" --size 64 --iters 2
tap $? "fft2d --inject-error is detected"
neg neg-lu 4 self,vader "$bin/lu" --nx 40 --ny 36 --iters 10
tap $? "lu --inject-error is detected"
neg neg-pingpong 2 self,vader "$bin/pingpong" --max 4096 --iters 5
tap $? "pingpong --inject-error is detected"
neg neg-pingpong-vector 2 self,vader "$bin/pingpong" --block 24 --stride 100 --max 4096 --iters 5
tap $? "pingpong --block --inject-error is detected"

# frag-cross: two threads pass packed blocks through a buffer (no MPI)
"$bin/frag-cross" --reps 1 --handoffs 3 >"$logs/frag-cross.out" 2>"$logs/frag-cross.err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^[0-9]*,[0-9]*,32768,' "$logs/frag-cross.out")" -eq 8 ]
rc=$?
[ $rc -eq 0 ] || diag frag-cross
tap $rc "frag-cross data check, blocks of 8 B - 4 KiB between CPUs 0 and 1 (8 rows)"
"$bin/frag-cross" --reps 1 --handoffs 3 --blocks 64 --inject-error \
	>"$logs/neg-frag-cross.out" 2>"$logs/neg-frag-cross.err"
rc=$?
grep -q "CHECK FAILED" "$logs/neg-frag-cross.err" && [ $rc -eq 1 ]
tap $? "frag-cross --inject-error is detected"
if [ "$(uname -m)" = x86_64 ]; then
	"$bin/frag-cross" --reps 1 --handoffs 3 --copy rep-movsb >"$logs/frag-cross-rep.out" \
		2>"$logs/frag-cross-rep.err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(grep -c '^[0-9]*,[0-9]*,32768,' "$logs/frag-cross-rep.out")" -eq 8 ]
	rc=$?
	[ $rc -eq 0 ] || diag frag-cross-rep
	tap $rc "frag-cross --copy rep-movsb data check (8 rows)"
else
	echo "# note: frag-cross --copy rep-movsb not run: x86-64 only"
fi

# bench/compare --params: every run reads the file first and still reads
# the prefix's own parameter file (btl pvas needs its fork agent from it)
if "$OMPI_INFO" 2>/dev/null | grep -Eq 'MCA btl: pvas[ (]'; then
	printf 'pml_ob1_direct_chunks = 4\n' >"$logs/compare-params.conf"
	rm -rf "$logs/compare-params"
	timeout 600 bench/compare --bench pingpong --quick --rounds 1 --configs pvas \
		--params "$logs/compare-params.conf" --build "$bin" --results "$logs/compare-params" \
		--name params >"$logs/compare-params.out" 2>"$logs/compare-params.err"
	rc=$?
	report=$(ls "$logs"/compare-params/*-params.md 2>/dev/null | head -n1)
	[ $rc -eq 0 ] && [ -n "$report" ] && grep -q 'parameter file .*compare-params.conf read first by every run: pml_ob1_direct_chunks = 4' "$report" &&
		! grep -q 'SKIPPED\|FAILED' "$report"
	rc=$?
	[ $rc -eq 0 ] || diag compare-params
	tap $rc "bench/compare --params: the pvas runs work and the report names the file's settings"

	# ddt --cvar: the forced path changes within one launch (MPI_T); each
	# value's run is checked, and the launch's stats count every path
	mpi cvar 2 self,pvas --mca pml_ob1_direct_stats 1 "$bin/ddt" --check-only --sizes smallest \
		--methods mpi_ddt --patterns NAS_LU_y,SPECFEM3D_oc \
		--cvar pml_ob1_direct_model=staged,direct,cico --warmup model
	rc=$?
	good=$(grep -Ec '^(NAS_LU_y|SPECFEM3D_oc),.*,mpi_ddt@(staged|direct|cico),.*,ok$' \
		"$logs/cvar.out")
	paths=$(grep -Ec 'rank 0: (direct|cico|staged) count [1-9]' "$logs/cvar.err")
	[ $rc -eq 0 ] && [ "$good" -eq 6 ] && [ "$paths" -eq 3 ]
	rc=$?
	[ $rc -eq 0 ] || diag cvar
	tap $rc "ddt --cvar pml_ob1_direct_model=staged,direct,cico --warmup model: 6 runs, 3 paths"
	mpi once 2 self,pvas --mca pml_ob1_direct_stats 1 --mca pml_ob1_direct_model direct \
		"$bin/ddt" --check-only --sizes smallest --methods mpi_ddt --patterns SPECFEM3D_oc
	rc=$?
	[ $rc -eq 0 ] && grep -q 'rank 0: direct count 4 ' "$logs/once.err"
	tap $? "ddt without --cvar runs a method once: 4 messages received at --check-only"
	mpi cvar-ro 2 self,pvas "$bin/ddt" --check-only --sizes smallest --methods mpi_ddt \
		--patterns NAS_LU_y --cvar pml_ob1_free_list_inc=64
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'cannot be set at run time' "$logs/cvar-ro.err"
	tap $? "ddt --cvar on a read-only variable fails before timing, naming the variable"
fi

echo "1..$n"
[ "$fails" -eq 0 ]
