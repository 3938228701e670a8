#!/usr/bin/env bash
# tests/mpi/progress.sh : progress tests of a large derived-datatype transfer (TAP).
#
# tests/mpi/src/progress.c on 2 ranks: the sender computes for 1 s after
# MPI_Isend (case a), the receiver computes for 1 s after MPI_Irecv (case
# b), both compute after posting (case c); a 4 MiB vector of doubles goes
# into a different, signature-equal receive type.  The transfer must
# complete, every byte of the receive buffer (payload, gaps, guards) must be
# right and the send buffer unchanged.  Runs under --mca btl self,pvas and
# self,vader; their summary (data checksum) lines must agree.
#
# When `ompi_info --param pml ob1 --level 9` lists pml_ob1_direct_enable
# (ob1's direct Rendezvous for shared-address-space BTLs), also:
#   - pvas with pml_ob1_direct_enable 0 (pack/unpack fallback) passes and
#     its statistics count no direct transfer;
#   - each case alone under pvas with pml_ob1_direct_stats 1: the transfer
#     went the direct way (rank 0 sent, rank 1 received, no fallback), each
#     payload byte was copied once (C of rank 0 + C of rank 1 == T), and in
#     case a the receiver copied all T bytes itself (the sender computes);
#   - vader with pml_ob1_direct_stats 1 counts no direct transfer.
# Without those parameters a "# note:" line says why these were not run.
# The time the side that does not compute spent waiting is printed as a
# diagnostic ("# ..." lines), never a pass/fail criterion.
#
# Environment:
#   OMPI_PREFIX            Open MPI prefix (default: scripts/build-ompi --print-prefix)
#   BUILD                  build directory (default <repo>/build); the binary is
#                          $BUILD/tests/mpi/bin/progress, built with make against
#                          OMPI_PREFIX's mpicc when missing (use a separate BUILD
#                          per prefix); logs in $BUILD/test-logs/mpi/progress-*.log
#   PVAS_TEST_FORK_AGENT   orte_fork_agent to pass to mpirun when the prefix's
#                          openmpi-mca-params.conf sets none (default:
#                          "<BUILD>/bin/pvasrun --ompi-agent" if that pvasrun
#                          knows --ompi-agent)
#   PVAS_MPI_TIMEOUT       seconds allowed per mpirun (default 120)
set -uo pipefail

# shellcheck source=tests/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PROG=$BIN/progress
PAYLOAD=$((4 << 20)) # progress.c's default --mib 4

check() { # check NAME COND-STATUS [LOG]
	if [ "$2" = 0 ]; then ok "$1"; else
		not_ok "$1"
		[ -n "${3:-}" ] && tail -n 15 "$3" | diag
	fi
}

# --- set-up -----------------------------------------------------------
mpi_setup "$PROG" progress

# run_mpi LOG BTL [MPIRUN-ARGS...] -- [PROGRAM-ARGS...]: 2 ranks, status in $?.
run_mpi() {
	local log=$1 btl=$2 margs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		margs+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	if [ ! -x "$PROG" ]; then
		echo "progress binary missing: $PROG" >"$log"
		return 127
	fi
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe \
		--bind-to none -np 2 --mca btl "self,$btl" "${AGENT_ARGS[@]}" \
		--mca btl_base_warn_component_unused 0 "${margs[@]}" "$PROG" "$@" >"$log" 2>&1
}

passed() { # passed LOG RC: the program's own verdict
	[ "$2" = 0 ] && grep -q '^progress: PASS' "$1"
}

# The timings as diagnostics.
timings() {
	grep -E '^progress case [abc] \(|^  (sender|receiver):' "$1" | diag
}

# stats LOG RANK: "S V F C T" of the rank's "[pml_ob1 direct]" line, or nothing.
stats() {
	sed -nE "s/^\[pml_ob1 direct\] rank $2: sent ([0-9]+) received ([0-9]+) fallback ([0-9]+) copied ([0-9]+) of ([0-9]+) bytes.*/\1 \2 \3 \4 \5/p" "$1" | head -n 1
}

# no_direct LOG: no rank counted a direct transfer (lines may be absent).
no_direct() {
	local r s
	for r in 0 1; do
		s=$(stats "$1" "$r")
		[ -z "$s" ] && continue
		read -r S V _ _ _ <<<"$s"
		[ "$S" = 0 ] && [ "$V" = 0 ] || return 1
	done
}

has_direct=0
why_not="ompi_info not found at $OMPI_INFO"
if [ -x "$OMPI_INFO" ]; then
	params=$("$OMPI_INFO" --param pml ob1 --level 9 --parsable 2>/dev/null)
	if have_direct; then
		has_direct=1
	else
		why_not="$OMPI_INFO --param pml ob1 --level 9 lists no pml_ob1_direct_enable (Open MPI without ob1's direct Rendezvous)"
	fi
fi
tests=3
[ $has_direct = 1 ] && tests=12

echo "# prefix $PREFIX; binary $PROG; fork agent: ${AGENT_ARGS[*]:-(from openmpi-mca-params.conf or none)}"
echo "1..$tests"

# --- data: both BTLs, results agree ----------------------------------------
declare -A summary=()
for btl in pvas vader; do
	log=$LOGS/progress-$btl.log
	start=$(date +%s%N)
	run_mpi "$log" "$btl" --
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	summary[$btl]=$(grep -E '^progress np=' "$log" || true)
	passed "$log" $rc
	check "progress cases a, b, c btl=self,$btl: transfers complete, data right ($((ms / 1000)).$((ms % 1000 / 100)) s)" $? "$log"
	timings "$log"
done
[ -n "${summary[pvas]}" ] && [ "${summary[pvas]}" = "${summary[vader]}" ]
check "pvas and vader agree (${summary[pvas]:-no summary line})" $?

if [ $has_direct = 0 ]; then
	echo "# note: direct-path checks not run: $why_not"
	echo "# $n tests, $failed failed"
	[ $failed = 0 ]
	exit
fi

# --- direct Rendezvous: statistics ---------------------------------------------
min_size=$(sed -nE 's/^mca:pml:ob1:param:pml_ob1_direct_min_size:value:([0-9]+)$/\1/p' <<<"$params")
DIRECT_ARGS=(--mca pml_ob1_direct_enable 1 --mca pml_ob1_direct_model direct --mca pml_ob1_direct_stats 1)
if [ -n "$min_size" ] && [ "$min_size" -gt $PAYLOAD ]; then
	echo "# note: default pml_ob1_direct_min_size $min_size > $PAYLOAD payload bytes: the direct runs set it to $PAYLOAD"
	DIRECT_ARGS+=(--mca pml_ob1_direct_min_size "$PAYLOAD")
fi
echo "# direct runs: ${DIRECT_ARGS[*]} (default pml_ob1_direct_min_size ${min_size:-?})"

log=$LOGS/progress-pvas-direct0.log
run_mpi "$log" pvas --mca pml_ob1_direct_enable 0 --mca pml_ob1_direct_stats 1 --
rc=$?
passed "$log" $rc && no_direct "$log"
check "btl=self,pvas, pml_ob1_direct_enable 0: data right, no direct transfer counted" $? "$log"
timings "$log"

for c in a b c; do
	log=$LOGS/progress-pvas-direct-$c.log
	run_mpi "$log" pvas "${DIRECT_ARGS[@]}" -- --case $c
	rc=$?
	s0=$(stats "$log" 0)
	s1=$(stats "$log" 1)
	read -r S0 _ F0 C0 T0 <<<"${s0:--1 -1 -1 -1 -1}"
	read -r _ V1 F1 C1 T1 <<<"${s1:--1 -1 -1 -1 -1}"
	passed "$log" $rc && [ -n "$s0" ] && [ -n "$s1" ] && [ "$S0" -ge 1 ] && [ "$V1" -ge 1 ] &&
		[ "$F0" = 0 ] && [ "$F1" = 0 ] && [ "$T0" -ge $PAYLOAD ] && [ "$T1" -ge $PAYLOAD ]
	check "case $c btl=self,pvas: data right, the transfer went the direct way (rank 0: sent ${S0} fallback ${F0}; rank 1: received ${V1} fallback ${F1})" $? "$log"
	timings "$log"
	echo "# case $c copies: rank 0 copied ${C0} of ${T0} bytes, rank 1 copied ${C1} of ${T1} bytes"
	[ -n "$s0" ] && [ -n "$s1" ] && [ "$T0" = "$T1" ] && [ $((C0 + C1)) = "$T1" ]
	check "case $c: each payload byte copied once (rank 0 ${C0} + rank 1 ${C1} == ${T1})" $?
	if [ $c = a ]; then
		wait_ms=$(sed -nE 's/^progress-time case=a .*receiver_mpi_ms=([0-9.]+) .*/\1/p' "$log")
		echo "# case a: the receiver waited ${wait_ms:-?} ms in MPI_Recv while the sender computed (diagnostic only)"
		[ -n "$s1" ] && [ "$C1" = "$T1" ] && [ "$T1" -ge $PAYLOAD ]
		check "case a: the receiver copied all bytes itself while the sender computed (copied ${C1} of ${T1})" $?
	fi
done

log=$LOGS/progress-vader-stats.log
run_mpi "$log" vader --mca pml_ob1_direct_stats 1 --
rc=$?
passed "$log" $rc && no_direct "$log"
check "btl=self,vader with pml_ob1_direct_stats 1: data right, no direct transfer counted (vader shares no address space)" $? "$log"

echo "# $n tests, $failed failed"
[ $failed = 0 ]
