#!/usr/bin/env bash
# tests/mpi/model-follow.sh : the lower-named process of a pair chooses the
# path of both ways (pml_ob1_direct_model_follow, docs/cost-model.md), TAP.
#
# tests/mpi/src/model_follow.c on 2 ranks over btl pvas: a ping-pong of one
# vector type, each rank receiving into the buffer it sends from, rank 0's
# model told that only the direct path is cheap, rank 1's that the direct
# path costs a second; learning off (pml_ob1_direct_model_learn 0), so
# each model's own choice is fixed.  From the pml_ob1_direct_stats lines:
#   - follow 1 (the default): rank 1 takes rank 0's direct path for every
#     message but the first (which comes before rank 0 has received any);
#   - follow 0: rank 1 never takes the direct path (so the first case
#     measures the hint, not the model);
#   - rank 0 takes the direct path for every message in both runs;
# and every message's data is right (the program checks them).  A third run
# with learning on: rank 0, the leader, times its own sends (its choice
# counts what a path costs them), rank 1 times none.  The stats count a
# message as chosen by the model when the model or the leader's hint
# chose its path (every message of the first run), not when
# pml_ob1_direct_model forced it (a fourth run, forced direct: none).
# A fifth run, learning on with a 4-KiB vector that fits btl/pvas's eager
# fragment: each rank's sender corrects its choice, and while rank 0 tries
# its receive paths (pml_ob1_direct_model_explore 0), a send cycle in which
# a rank received on a path tried (rank 0's own trials, or the path rank 0
# names to rank 1) is not kept as the sender's sample: both ranks report
# some "not kept".
#
# Environment: OMPI_PREFIX, BUILD, PVAS_TEST_FORK_AGENT, PVAS_MPI_TIMEOUT
# as for tests/mpi/progress.sh; logs in $BUILD/test-logs/mpi/model-follow-*.log.
set -uo pipefail

# shellcheck source=tests/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PROG=$BIN/model_follow
ITERS=40

mpi_setup "$PROG" model_follow

# count LOG RANK PATH: that rank's message count on PATH (empty: no line)
count() {
	sed -nE "s/^\[pml_ob1 direct model\] rank $2: $3 count ([0-9]+) .*/\1/p" "$1" | head -n 1
}

# chosen LOG RANK PATH: of those, the messages whose path the model chose
chosen() {
	sed -nE "s/^\[pml_ob1 direct model\] rank $2: $3 count .*; ([0-9]+) chosen by the model\).*/\1/p" \
		"$1" | head -n 1
}

echo "# prefix $PREFIX; binary $PROG; fork agent: ${AGENT_ARGS[*]:-(from openmpi-mca-params.conf or none)}"
echo "1..8"
if ! have_direct; then
	not_ok "$OMPI_INFO lists no pml_ob1_direct_enable: an Open MPI without ob1's direct Rendezvous"
	exit 1
fi
for follow in 1 0; do
	log=$LOGS/model-follow-$follow.log
	timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
		-np 2 --mca btl self,pvas "${AGENT_ARGS[@]}" --mca btl_base_warn_component_unused 0 \
		--mca pml_ob1_direct_stats 1 --mca pml_ob1_direct_model_learn 0 \
		--mca pml_ob1_direct_model_follow "$follow" "$PROG" --iters "$ITERS" >"$log" 2>&1
	rc=$?
	d0=$(count "$log" 0 direct)
	d1=$(count "$log" 1 direct)
	what="follow $follow: rank 0 direct ${d0:-none} of $ITERS, rank 1 direct ${d1:-none} (exit $rc)"
	if [ "$rc" != 0 ] || [ "${d0:-}" != "$ITERS" ]; then
		not_ok "$what: the run failed, or rank 0 did not take its own direct path"
		tail -n 15 "$log" | diag
	else
		ok "$what: the run passed its data checks; rank 0 took the direct path"
	fi
	if [ "$follow" = 1 ]; then
		c0=$(chosen "$log" 0 direct)
		c1=$(chosen "$log" 1 direct)
		if [ -n "${c0:-}" ] && [ "$c0" = "${d0:-}" ] && [ "${c1:-}" = "${d1:-}" ]; then
			ok "follow 1: every message counted as chosen by the model ($c0 and $c1)"
		else
			not_ok "follow 1: chosen by the model ${c0:-none}/${c1:-none} of ${d0:-none}/${d1:-none}"
			grep -F '[pml_ob1 direct' "$log" | diag
		fi
	fi
	if [ "$follow" = 1 ] && [ "${d1:-0}" -ge $((ITERS - 1)) ]; then
		ok "follow 1: rank 1 took rank 0's path for all but at most the first message"
	elif [ "$follow" = 0 ] && [ -n "${d1:-}" ] && [ "$d1" = 0 ]; then
		ok "follow 0: rank 1 kept its own model's path"
	else
		not_ok "follow $follow: rank 1 direct ${d1:-none} of $ITERS messages"
		grep -F '[pml_ob1 direct' "$log" | diag
	fi
done

# sends LOG RANK: that rank's timed leader's sends over all paths (empty: no line)
sends() {
	sed -nE "s/^\[pml_ob1 direct model\] rank $2: leader's sends on [a-z]+: ([0-9]+) timed.*/\1/p" \
		"$1" | awk '{ n += $1; seen = 1 } END { if (seen) print n }'
}
log=$LOGS/model-follow-learn.log
timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
	-np 2 --mca btl self,pvas "${AGENT_ARGS[@]}" --mca btl_base_warn_component_unused 0 \
	--mca pml_ob1_direct_stats 1 --mca pml_ob1_direct_model_explore 0 "$PROG" --iters "$ITERS" \
	>"$log" 2>&1
rc=$?
s0=$(sends "$log" 0)
s1=$(sends "$log" 1)
what="learning on: rank 0 timed ${s0:-no} sends, rank 1 ${s1:-no} (exit $rc)"
if [ "$rc" = 0 ] && [ "${s0:-0}" -gt 0 ] && [ "${s1:-}" = 0 ]; then
	ok "$what: only the leader times its sends"
else
	not_ok "$what: expected the leader alone to time its sends"
	grep -F '[pml_ob1 direct' "$log" | diag
fi

log=$LOGS/model-follow-forced.log
timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
	-np 2 --mca btl self,pvas "${AGENT_ARGS[@]}" --mca btl_base_warn_component_unused 0 \
	--mca pml_ob1_direct_stats 1 --mca pml_ob1_direct_model direct "$PROG" --iters "$ITERS" \
	>"$log" 2>&1
rc=$?
d0=$(count "$log" 0 direct)
c0=$(chosen "$log" 0 direct)
what="forced direct: rank 0 direct ${d0:-none} of $ITERS, ${c0:-none} chosen by the model (exit $rc)"
if [ "$rc" = 0 ] && [ "${d0:-}" = "$ITERS" ] && [ "${c0:-}" = 0 ]; then
	ok "$what"
else
	not_ok "$what: expected every message direct and none chosen by the model"
	grep -F '[pml_ob1 direct' "$log" | diag
fi

# kept LOG RANK: that rank's rendezvous sends not kept (empty: no line)
kept() {
	sed -nE "s/^\[pml_ob1 direct model\] rank $2: send rndv count .*; ([0-9]+) not kept: .*/\1/p" \
		"$1" | head -n 1
}
log=$LOGS/model-follow-trial.log
timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none \
	-np 2 --mca btl self,pvas "${AGENT_ARGS[@]}" --mca btl_base_warn_component_unused 0 \
	--mca pml_ob1_direct_stats 1 --mca pml_ob1_direct_model_explore 0 "$PROG" \
	--iters 200 --blocks 512 >"$log" 2>&1
rc=$?
k0=$(kept "$log" 0)
k1=$(kept "$log" 1)
what="4 KiB, learning on: rendezvous not kept ${k0:-none} (rank 0), ${k1:-none} (rank 1) (exit $rc)"
if [ "$rc" = 0 ] && [ "${k0:-0}" -gt 0 ] && [ "${k1:-0}" -gt 0 ]; then
	ok "$what: no sender sample from a cycle with a path tried"
else
	not_ok "$what: expected both senders to keep no sample of some cycles with a path tried"
	grep -F '[pml_ob1 direct' "$log" | diag
fi
[ "$failed" = 0 ]
