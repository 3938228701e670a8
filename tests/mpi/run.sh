#!/usr/bin/env bash
# tests/mpi/run.sh : the MPI test suite of btl/pvas (TAP).
#
# Every program of tests/mpi/src runs under `--mca btl self,pvas` and under
# `--mca btl self,vader`, on 2, 3 and 4 ranks (--oversubscribe); each run
# must pass its own checks, and the summary lines the two BTLs print must
# agree.  Plus: membership (ranks are PVAS tasks of one group under pvas,
# not under vader), the mailbox unit test, and failure handling (a rank
# that segfaults, SIGTERM to mpirun: mpirun exits within seconds and
# nothing is left running), and btl/pvas parameter variants (small limits
# and fragment lists; no put/get: p2p must match vader's result; in-place
# sends off: MPI_ERR_TRUNCATE for a too-long eager message).
#
# Binaries come from tests/mpi/build.mk ($BUILD/tests/mpi/bin, built with
# `make mpi-tests` if missing).  Logs: $BUILD/test-logs/mpi/.
#
# Environment:
#   BUILD                  build directory (default <repo>/build)
#   PVAS_TEST_FORK_AGENT   orte_fork_agent to pass to mpirun when the
#                          prefix's openmpi-mca-params.conf sets none
#                          (default: "<BUILD>/bin/pvasrun --ompi-agent" if
#                          that pvasrun knows --ompi-agent)
#   PVAS_MPI_TIMEOUT       seconds allowed per mpirun (default 120)
set -uo pipefail

# shellcheck source=tests/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PROGS=(p2p concurrency coll fortran)
NPS=(2 3 4)
BTLS=(pvas vader)

# --- set-up -----------------------------------------------------------
mpi_setup mpi-tests "${PROGS[@]}" membership crash hang queue_test fbox_test

# run_mpi LOG TOKEN NP BTL PROG [ARGS...]: mpirun under timeout; status in $?.
# TOKEN goes into the job's environment only (leftover detection).
run_mpi() {
	local log=$1 token=$2 np=$3 btl=$4
	shift 4
	PVAS_MPI_TEST_TOKEN=$token OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout -k 10 "$TMO" nice "$MPIRUN" --allow-run-as-root --oversubscribe \
		--bind-to none -np "$np" --mca btl "self,$btl" "${AGENT_ARGS[@]}" \
		--mca btl_base_warn_component_unused 0 "$@" >"$log" 2>&1
}

# Processes whose environment holds TOKEN (the job's, not ours).
leftovers() {
	local token=$1 pid
	for pid in $(ls /proc | grep -E '^[0-9]+$'); do
		[ "$pid" = $$ ] && continue
		if tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qx "PVAS_MPI_TEST_TOKEN=$token"; then
			echo "$pid $(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c1-100)"
		fi
	done
}

# Wait up to 10 s for the job's processes to disappear; print what is left.
wait_gone() {
	local token=$1 prog=$2 i left
	for i in $(seq 1 50); do
		left=$(leftovers "$token"; pgrep -af -- "$BIN/$prog" | grep -v "^$$ " || true;
			pgrep -af pvasrun | grep -F -- "$BIN/$prog" || true)
		[ -z "$left" ] && return 0
		sleep 0.2
	done
	echo "$left"
	return 1
}

token() { echo "$$-$RANDOM$RANDOM-$1"; }

echo "# prefix $PREFIX; fork agent: ${AGENT_ARGS[*]:-(from openmpi-mca-params.conf or none)}"
echo "1..53"

# --- mailbox unit test (no MPI) ---------------------------------------------
if [ -x "$BIN/queue_test" ] && out=$(timeout 60 "$BIN/queue_test" 2>&1) &&
	! grep -q '^not ok' <<<"$out" && [ "$(grep -c '^ok' <<<"$out")" = 2 ]; then
	ok "btl/pvas mailbox (MPSC queue) unit test"
	grep '^#' <<<"$out"
else
	not_ok "btl/pvas mailbox (MPSC queue) unit test"
	echo "${out:-queue_test missing}" | diag
fi

# --- fast-box unit test (no MPI) ----------------------------------------------
if [ -x "$BIN/fbox_test" ] && out=$(timeout 60 "$BIN/fbox_test" 2>&1) &&
	! grep -q '^not ok' <<<"$out" && [ "$(grep -c '^ok' <<<"$out")" = 2 ]; then
	ok "btl/pvas fast box (SPSC ring) unit test"
	grep '^ok' <<<"$out" | sed 's/^ok [0-9]* - /# /'
else
	not_ok "btl/pvas fast box (SPSC ring) unit test"
	echo "${out:-fbox_test missing}" | diag
fi

# --- data tests: both BTLs, 2-4 ranks, results agree -------------------------
for prog in "${PROGS[@]}"; do
	for np in "${NPS[@]}"; do
		declare -A summary=()
		for btl in "${BTLS[@]}"; do
			log=$LOGS/$prog-np$np-$btl.log
			start=$(date +%s%N)
			if [ ! -x "$BIN/$prog" ]; then
				not_ok "$prog np=$np btl=self,$btl (binary missing)"
				continue
			fi
			run_mpi "$log" "$(token "$prog")" "$np" "$btl" "$BIN/$prog"
			rc=$?
			ms=$((($(date +%s%N) - start) / 1000000))
			summary[$btl]=$(grep -E "^$prog np=" "$log" || true)
			if [ $rc = 0 ] && grep -q "^$prog: PASS" "$log"; then
				ok "$prog np=$np btl=self,$btl ($((ms / 1000)).$((ms % 1000 / 100)) s)"
			else
				not_ok "$prog np=$np btl=self,$btl (exit $rc, log $log)"
				tail -n 15 "$log" | diag
			fi
		done
		if [ -n "${summary[pvas]:-}" ] && [ "${summary[pvas]}" = "${summary[vader]:-}" ]; then
			ok "$prog np=$np: pvas and vader agree (${summary[pvas]})"
		else
			not_ok "$prog np=$np: pvas and vader disagree"
			printf 'pvas:  %s\nvader: %s\n' "${summary[pvas]:-}" "${summary[vader]:-}" | diag
		fi
		unset summary
	done
done

# --- btl/pvas parameter variants (p2p, 3 ranks; same result as vader) ---------
p2p_ref=$(grep -E '^p2p np=3 ' "$LOGS/p2p-np3-vader.log" 2>/dev/null || true)
variants=(
	"small limits:--mca btl_pvas_max_inline_send 64 --mca btl_pvas_inplace_min_send 1000000 --mca btl_pvas_eager_limit 4096 --mca btl_pvas_max_send_size 8192 --mca btl_pvas_free_list_max 16 --mca btl_pvas_free_list_inc 2 --mca btl_pvas_poll_limit 1"
	"no put/get (send pipeline):--mca btl_pvas_flags send,inplace,shared-addr-space"
	"btl_pvas_inplace 0 (copied eager sends):--mca btl_pvas_inplace 0"
	"no fast boxes:--mca btl_pvas_fbox_size 0"
	"tiny fast boxes (256 B rings, asked for at once, entries up to 56 B):--mca btl_pvas_fbox_size 256 --mca btl_pvas_fbox_threshold 1 --mca btl_pvas_fbox_max_send 56 --mca btl_base_verbose 20"
)
vi=0
for v in "${variants[@]}"; do
	vi=$((vi + 1))
	name=${v%%:*}
	read -r -a vargs <<<"${v#*:}"
	log=$LOGS/p2p-np3-pvas-variant$vi.log
	run_mpi "$log" "$(token p2p)" 3 pvas "${vargs[@]}" "$BIN/p2p"
	rc=$?
	got=$(grep -E '^p2p np=3 ' "$log" || true)
	fboxes=ok
	fbox_note=
	case $name in tiny*)
		# rings were made (the verbose line; 6 possible for 3 ranks, a request
		# that arrives as its receiver finalizes may go unanswered)
		[ "$(grep -c 'btl:pvas: fast box for task' "$log")" -ge 3 ] || fboxes="fewer than 3 rings made"
		# and messages went through them, every one received: the ranks'
		# "fast boxes: S messages sent, R received" lines, summed
		read -r fb_lines fb_sent fb_recv < <(awk '/btl:pvas: fast boxes: [0-9]+ messages sent/ {
			for (i = 1; i < NF; i++) { if ($i == "boxes:") s += $(i + 1); if ($(i + 1) == "received") r += $i }
			n++ } END { printf "%d %d %d\n", n, s, r }' "$log")
		if [ "$fb_lines" != 3 ] || [ "$fb_sent" -le 0 ] || [ "$fb_sent" != "$fb_recv" ]; then
			fboxes="$fb_lines count lines, $fb_sent sent, $fb_recv received"
		else
			fbox_note="$fb_sent messages through fast boxes, all received"
		fi
		;;
	esac
	if [ $rc = 0 ] && grep -q '^p2p: PASS' "$log" && [ -n "$p2p_ref" ] && [ "$got" = "$p2p_ref" ] &&
		[ "$fboxes" = ok ]; then
		ok "p2p np=3 btl=self,pvas, $name: passes, agrees with vader${fbox_note:+; $fbox_note}"
	else
		not_ok "p2p np=3 btl=self,pvas, $name (exit $rc; '$got' vs vader '$p2p_ref'; fast boxes: $fboxes)"
		tail -n 15 "$log" | diag
	fi
done

# --- membership -----------------------------------------------------------
for np in "${NPS[@]}"; do
	for btl in "${BTLS[@]}"; do
		want=none
		[ $btl = pvas ] && want=pvas
		log=$LOGS/membership-np$np-$btl.log
		run_mpi "$log" "$(token membership)" "$np" "$btl" "$BIN/membership" "$want"
		rc=$?
		if [ $rc = 0 ] && grep -q "^membership-$want: PASS" "$log"; then
			ok "membership np=$np btl=self,$btl: $([ $want = pvas ] &&
				echo 'one PVAS group, pvas_same_vm == 1 for every peer' ||
				echo 'not PVAS tasks, pvas_same_vm == 0')"
		else
			not_ok "membership np=$np btl=self,$btl (exit $rc)"
			tail -n 15 "$log" | diag
		fi
	done
done

# --- failure: a rank segfaults -------------------------------------------------
for btl in "${BTLS[@]}"; do
	log=$LOGS/crash-$btl.log
	tok=$(token crash)
	start=$(date +%s)
	run_mpi "$log" "$tok" 3 "$btl" "$BIN/crash"
	rc=$?
	secs=$(($(date +%s) - start))
	left=$(wait_gone "$tok" crash)
	gone=$?
	if [ $rc != 0 ] && [ $rc != 124 ] && [ $rc != 137 ] && [ $secs -le 30 ] && [ $gone = 0 ]; then
		ok "crash btl=self,$btl: mpirun exits $rc after ${secs} s, nothing left running"
	else
		not_ok "crash btl=self,$btl: exit $rc after ${secs} s, leftovers: ${left:-none}"
		tail -n 15 "$log" | diag
	fi
done

# --- failure: SIGTERM to mpirun ----------------------------------------------
for btl in "${BTLS[@]}"; do
	log=$LOGS/sigterm-$btl.log
	tok=$(token hang)
	PVAS_MPI_TEST_TOKEN=$tok OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		nice "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to none -np 3 \
		--mca btl "self,$btl" "${AGENT_ARGS[@]}" --mca btl_base_warn_component_unused 0 \
		"$BIN/hang" >"$log" 2>&1 &
	mpid=$!
	for i in $(seq 1 150); do
		grep -q '^ready' "$log" && break
		kill -0 $mpid 2>/dev/null || break
		sleep 0.2
	done
	ready=$(grep -c '^ready' "$log")
	start=$(date +%s)
	kill -TERM $mpid 2>/dev/null
	exited=0
	for i in $(seq 1 100); do
		if ! kill -0 $mpid 2>/dev/null; then
			exited=1
			break
		fi
		sleep 0.2
	done
	if [ $exited = 0 ]; then
		kill -KILL $mpid 2>/dev/null
	fi
	wait $mpid 2>/dev/null
	rc=$?
	secs=$(($(date +%s) - start))
	left=$(wait_gone "$tok" hang)
	gone=$?
	if [ "$ready" = 1 ] && [ $exited = 1 ] && [ $gone = 0 ]; then
		ok "SIGTERM to mpirun btl=self,$btl: exit $rc after ${secs} s, nothing left running"
	else
		not_ok "SIGTERM to mpirun btl=self,$btl: ready=$ready exited=$exited rc=$rc, leftovers: ${left:-none}"
		tail -n 15 "$log" | diag
		# clean up whatever is left
		for p in $(leftovers "$tok" | cut -d' ' -f1); do kill -KILL "$p" 2>/dev/null; done
	fi
done

echo "# $n tests, $failed failed"
[ $failed = 0 ]
