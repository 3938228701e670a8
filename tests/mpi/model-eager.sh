#!/usr/bin/env bash
# tests/mpi/model-eager.sh : the online correction of a sender's choice
# between ob1's own eager send, the engine's eager send and the direct
# rendezvous (docs/cost-model.md), TAP.
#
# tests/mpi/src/model_eager on 2 ranks over btl pvas: a ping-pong of 4000
# single bytes (one eager fragment).  Both models are told that ob1's own
# eager send costs nothing to pack (pml_ob1_direct_model_o_own 1,
# block_pack and index_pack 0) and that a rendezvous costs 100 us, so the
# model alone sends everything by ob1's own eager send, whose convertor
# packs single bytes several times slower than the engine does.  From the
# pml_ob1_direct_stats lines:
#   - learning off: every send of both ranks goes by ob1's own eager send;
#   - learning on, every choice explored (pml_ob1_direct_model_explore 0:
#     how far the model's prediction for the engine's eager send is off
#     depends on the CPU): eager sends (own and engine) are timed over
#     their cycles, and each rank leaves ob1's own eager send for the
#     engine's: at most a quarter of its sends go by ob1's own;
# and every message's data is right (the program checks them).
#
# Environment: OMPI_PREFIX, BUILD, PVAS_TEST_FORK_AGENT, PVAS_MPI_TIMEOUT
# as for tests/mpi/progress.sh; logs in $BUILD/test-logs/mpi/model-eager-*.log.
set -uo pipefail

# shellcheck source=tests/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PROG=$BIN/model_eager
ITERS=200
WRONG=(--mca pml_ob1_direct_model_o_own 1 --mca pml_ob1_direct_model_block_pack "0,0,0,0,0,0,0"
	--mca pml_ob1_direct_model_index_pack 0 --mca pml_ob1_direct_model_o_direct 1e5
	--mca pml_ob1_direct_model_o_staged 1e5)

mpi_setup "$PROG" model_eager

# field LOG RANK HOW N: the Nth number of that rank's "send HOW" line
# (1 count, 2 timed, 3 lost, 4 chosen; empty: no line)
field() {
	sed -nE "s/^\[pml_ob1 direct model\] rank $2: send $3 count ([0-9]+) predicted [0-9.]+ us measured [0-9.]+ us \(means; ([0-9]+) timed, ([0-9]+) lost; ([0-9]+) chosen.*/\\$(($4))/p" \
		"$1" | head -n 1
}

# run LOG LEARN: one launch
run() {
	timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
		-np 2 --mca btl self,pvas "${AGENT_ARGS[@]}" --mca btl_base_warn_component_unused 0 \
		--mca pml_ob1_direct_stats 1 --mca pml_ob1_direct_model model \
		--mca pml_ob1_direct_model_learn "$2" --mca pml_ob1_direct_model_explore 0 \
		"${WRONG[@]}" "$PROG" --iters "$ITERS" \
		>"$1" 2>&1
}

echo "# prefix $PREFIX; binary $PROG; fork agent: ${AGENT_ARGS[*]:-(from openmpi-mca-params.conf or none)}"
echo "1..4"
if ! have_direct; then
	not_ok "$OMPI_INFO lists no pml_ob1_direct_enable: an Open MPI without ob1's direct Rendezvous"
	exit 1
fi

log=$LOGS/model-eager-fixed.log
run "$log" 0
rc=$?
o0=$(field "$log" 0 own 1)
o1=$(field "$log" 1 own 1)
what="learning off: own eager sends ${o0:-none} and ${o1:-none} of $ITERS (exit $rc)"
if [ "$rc" = 0 ] && [ "${o0:-}" = "$ITERS" ] && [ "${o1:-}" = "$ITERS" ]; then
	ok "$what: the model alone keeps its choice"
else
	not_ok "$what: expected every send by ob1's own eager send"
	tail -n 15 "$log" | diag
fi

log=$LOGS/model-eager-learn.log
run "$log" 1
rc=$?
if [ "$rc" = 0 ]; then
	ok "learning on: the run passed its data checks"
else
	not_ok "learning on: exit $rc"
	tail -n 15 "$log" | diag
fi
timed=0
for r in 0 1; do
	for how in own eager; do
		timed=$((timed + $(field "$log" $r $how 2 | grep . || echo 0)))
	done
done
if [ "$timed" -gt 0 ]; then
	ok "learning on: $timed eager sends timed over their cycles"
else
	not_ok "learning on: no eager send was timed (no cycle closed)"
	grep -F '[pml_ob1 direct' "$log" | diag
fi
o0=$(field "$log" 0 own 1)
o1=$(field "$log" 1 own 1)
e0=$(field "$log" 0 eager 1)
e1=$(field "$log" 1 eager 1)
what="learning on: own ${o0:-none} and ${o1:-none}, engine eager ${e0:-none} and ${e1:-none} of $ITERS sends"
if [ -n "${o0:-}" ] && [ -n "${o1:-}" ] && [ "$((4 * o0))" -le "$ITERS" ] &&
	[ "$((4 * o1))" -le "$ITERS" ]; then
	ok "$what: both ranks left ob1's own eager send"
else
	not_ok "$what: expected at most $((ITERS / 4)) by ob1's own"
	grep -F '[pml_ob1 direct' "$log" | diag
fi
[ "$failed" = 0 ]
