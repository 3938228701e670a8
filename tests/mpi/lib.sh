# shellcheck shell=bash disable=SC2034  # variables for the sourcing script
# tests/mpi/lib.sh : shared by the MPI suites (run.sh, ddt-fuzz.sh,
# progress.sh); sourced, not run.  Sets ROOT, BUILD, BIN, LOGS, TMO,
# DEFAULT_PREFIX, PREFIX, MPIRUN, OMPI_INFO; TAP helpers ok/not_ok/diag
# (counters n, failed); mpi_setup TARGET PROG... (builds Open MPI and the
# programs if missing, makes sure btl/pvas is installed, sets AGENT_ARGS).
#
# Environment: BUILD (default <repo>/build), OMPI_PREFIX (default
# scripts/build-ompi --print-prefix), PVAS_MPI_TIMEOUT (seconds per
# mpirun, default 120), PVAS_TEST_FORK_AGENT (orte_fork_agent to pass when
# the prefix's openmpi-mca-params.conf sets none; default "<BUILD>/bin/pvasrun
# --ompi-agent" if that pvasrun knows --ompi-agent).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/tests/mpi/bin
LOGS=$BUILD/test-logs/mpi
TMO=${PVAS_MPI_TIMEOUT:-120}
DEFAULT_PREFIX=$("$ROOT/scripts/build-ompi" --print-prefix)
PREFIX=${OMPI_PREFIX:-$DEFAULT_PREFIX}
MPIRUN=$PREFIX/bin/mpirun
OMPI_INFO=$PREFIX/bin/ompi_info
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}
diag() { sed 's/^/# /'; }

# mpi_setup MAKE-TARGET PROG...: build Open MPI (the project's prefix only)
# and, when one of the PROGs is missing from $BIN, MAKE-TARGET; (re)install
# btl/pvas into the project's prefix (another checkout's build-ompi may have
# removed it; incremental, quick when up to date); set AGENT_ARGS.
mpi_setup() {
	local target=$1 p need=0 skip_ompi=() agent
	shift
	mkdir -p "$LOGS"
	if [ ! -x "$MPIRUN" ] && [ "$PREFIX" = "$DEFAULT_PREFIX" ]; then
		make -C "$ROOT" --no-print-directory ompi >&2 || true
	fi
	for p in "$@"; do
		[ -x "$BIN/$p" ] || need=1
	done
	if [ $need = 1 ]; then
		# against another prefix: do not build the project's Open MPI
		[ "$PREFIX" != "$DEFAULT_PREFIX" ] && skip_ompi=(-o ompi)
		make -C "$ROOT" --no-print-directory "${skip_ompi[@]}" "BUILD=$BUILD" \
			"OMPI_PREFIX=$PREFIX" "$target" >&2 || true
	fi
	if [ "$PREFIX" = "$DEFAULT_PREFIX" ] && [ -x "$OMPI_INFO" ]; then
		"$ROOT/ompi-btl/btl/pvas/build.sh" "$PREFIX" >&2 || true
	fi
	AGENT_ARGS=()
	if ! grep -Eqs '^[[:space:]]*orte_fork_agent[[:space:]]*=' "$PREFIX/etc/openmpi-mca-params.conf"; then
		agent=${PVAS_TEST_FORK_AGENT:-}
		if [ -z "$agent" ] && "$BUILD/bin/pvasrun" --help 2>/dev/null | grep -q -- --ompi-agent; then
			agent="$BUILD/bin/pvasrun --ompi-agent"
		fi
		[ -n "$agent" ] && AGENT_ARGS=(--mca orte_fork_agent "$agent")
	fi
	return 0
}

# Does this Open MPI have the direct Rendezvous (ompi-btl/ompi/mca/pml/ob1)?
have_direct() {
	"$OMPI_INFO" --param pml ob1 --level 9 2>/dev/null | grep -q pml_ob1_direct_enable
}
