#!/usr/bin/env bash
# tests/mpi/wrapper.sh : ranks started through wrapper scripts (TAP).
#
# `mpirun --mca btl self,pvas ./script`, where the script exports a
# variable and runs the MPI program: the program is the rank and a PVAS
# task of the job's group, the shells before it are not (pvasrun
# --ompi-agent hands the rank over through rank-handoff.so; see
# docs/ompi-launch.md).  Cases: sh that execs the program (2 and 3 ranks),
# bash that runs it without exec and exits with its status, a script that
# execs that script, the same script under self,vader (unchanged: no
# task), and programs that cannot be tasks (not PIE, AddressSanitizer):
# mpirun fails and the message names the reason and the fix.
#
# Runs wherever tests/mpi/run.sh does, the qemu guest with pvas.ko loaded
# included: the ranks must be on the kmod backend when /dev/pvas exists,
# else on the user one (PVAS_EXPECT_BACKEND=user|kmod overrides); on kmod
# each rank's fresh 64 MiB malloc must lie in its own partition too.
# Environment otherwise as for tests/mpi/lib.sh (BUILD, OMPI_PREFIX,
# PVAS_MPI_TIMEOUT, PVAS_TEST_FORK_AGENT).  Logs: $BUILD/test-logs/mpi/.
set -uo pipefail

# shellcheck source=tests/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mpi_setup mpi-tests wrapped
if [ "$PREFIX" = "$DEFAULT_PREFIX" ] && [ -x "$MPIRUN" ]; then
	# the hand-off library next to the prefix's agent (Open MPI is built)
	make -C "$ROOT" --no-print-directory -o ompi "BUILD=$BUILD" ompi-agent-handoff >&2 || true
fi

BACKEND=${PVAS_EXPECT_BACKEND:-$([ -e /dev/pvas ] && echo kmod || echo user)}
VAL=exported-by-wrapper-$$
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pvas-wrapper.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# script NAME INTERPRETER LINE...: an executable script in $WORK.
script() {
	local f=$WORK/$1
	{
		echo "#!$2"
		shift 2
		printf '%s\n' "$@"
	} >"$f"
	chmod +x "$f"
}
# Each script passes its first argument (the mode) on to the program.
script exec.sh /bin/sh "export PVAS_WRAPPER_VAR=$VAL PVAS_WRAPPER_SHELL=\$\$" \
	"exec '$BIN/wrapped' '$VAL' \"\$1\""
# shellcheck disable=SC2016 # $status expands in the script, not here
script noexec.sh /bin/bash "export PVAS_WRAPPER_VAR=$VAL PVAS_WRAPPER_SHELL=\$\$" \
	"'$BIN/wrapped' '$VAL' \"\$1\"" 'status=$?' 'echo "noexec.sh: program exited $status"' \
	'exit $status'
script nested.sh /bin/sh "exec '$WORK/exec.sh' \"\$@\""

# mpi LOG NP BTL PROG [ARGS...]: mpirun under timeout; its status in $?.
mpi() {
	local log=$1 np=$2 btl=$3
	shift 3
	timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
		-np "$np" --mca btl "self,$btl" "${AGENT_ARGS[@]}" \
		--mca btl_base_warn_component_unused 0 "$@" >"$log" 2>&1
}

# ranks NAME NP BTL MODE SCRIPT: the job passes, NP ranks report MODE.
ranks() {
	local name=$1 np=$2 btl=$3 mode=$4 prog=$5 log=$LOGS/wrapper-$1.log rc got
	mpi "$log" "$np" "$btl" "$WORK/$prog" "$mode"
	rc=$?
	got=$(grep -Ec "^wrapped rank [0-9]+ task [0-9-]+ backend $mode\$" "$log")
	if [ $rc = 0 ] && grep -q '^wrapped: PASS' "$log" && [ "$got" = "$np" ]; then
		ok "$name: np=$np btl=self,$btl: $np ranks report backend $mode"
		grep '^wrapped rank' "$log" | sort | diag
	else
		not_ok "$name: np=$np btl=self,$btl (exit $rc, $got of $np ranks on $mode)"
		tail -n 15 "$log" | diag
	fi
}

# refused NAME PROG TEXT: mpirun fails and says TEXT.
refused() {
	local name=$1 prog=$2 text=$3 log=$LOGS/wrapper-$1.log rc
	if [ ! -x "$prog" ]; then
		not_ok "$name: $prog missing (make $prog)"
		return
	fi
	mpi "$log" 1 pvas "$prog"
	rc=$?
	if [ $rc != 0 ] && grep -qF -- "$text" "$log"; then
		ok "$name: mpirun exits $rc and says \"$text\""
	else
		not_ok "$name: exit $rc, no \"$text\" in $log"
		tail -n 15 "$log" | diag
	fi
}

echo "# prefix $PREFIX; fork agent: ${AGENT_ARGS[*]:-(from openmpi-mca-params.conf)}; backend $BACKEND"
echo "1..7"
ranks "sh script that execs the program" 2 pvas "$BACKEND" exec.sh
ranks "sh script that execs the program" 3 pvas "$BACKEND" exec.sh
ranks "bash script that runs the program without exec" 2 pvas "$BACKEND" noexec.sh
ranks "script that execs a script" 2 pvas "$BACKEND" nested.sh
ranks "sh script, btl without pvas" 2 vader none exec.sh
refused "program not PIE" "$BUILD/tests/libpvas/t_nopie" "rebuild with -fPIE -pie, or -static-pie"
refused "program built with AddressSanitizer" "$BUILD/tests/libpvas/t_asan" \
	"rebuild without -fsanitize=address"

echo "# $n tests, $failed failed"
[ "$failed" = 0 ]
