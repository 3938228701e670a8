#!/usr/bin/env bash
# tests/multinode/run.sh : MPI jobs over several hosts (TAP).
#
# The hosts are namespaces of this machine (scripts/netns-hosts: a network
# and a UTS namespace each, hostname <set>-hK, address 198.18.0.K on a
# bridge that exists only inside them); mpirun runs on host 1 and starts
# the orted of every other host through scripts/netns-rsh (plm_rsh_agent).
# Every job runs under --mca btl self,pvas,tcp, tcp and ORTE's out-of-band
# channel restricted to the test subnet, with pml_ob1_direct_stats 1 and
# the direct path forced (pml_ob1_direct_model direct: the suite checks
# where the direct Rendezvous may go, not the cost model's choices, which
# tests/mpi/ddt-fuzz.sh covers).
#
# For 2 hosts x 2 ranks and 3 hosts x 2 ranks:
#   - peers (tests/multinode/src/peers.c): every rank lists the peers that
#     share its address space (pvas_same_vm); they must be the ranks the
#     hostfile put on its host and no others, one PVAS group per host.
#     Then vector-typed messages between every pair: each rank's
#     "[pml_ob1 direct]" line must count exactly M x (peers on its host)
#     direct sends and receives (none to ranks on other hosts), and no
#     fallback;
#   - the point-to-point suite (tests/mpi/src/p2p.c, 0 B - 16 MiB);
#   - alltoall_vec (tests/multinode/src/alltoall_vec.c): MPI_Alltoall and
#     MPI_Ialltoall of vector types; no direct fallback;
#   - the datatype fuzzer (tests/mpi/src/ddt_sendrecv_fuzz.c) between
#     ranks 0 and 1, once on the same host (by slot: the direct Rendezvous
#     must carry messages) and once on two hosts (--map-by node: tcp, no
#     direct transfer may be counted); no fallback.
# Then a crash: the last rank, on the last host (not mpirun's), segfaults;
# mpirun must exit non-zero within 10 s, and no process or socket may be
# left in any host.  At the end the hosts are removed and nothing of them
# may remain (namespaces, UTS mounts, processes).
#
# Needs root (ip netns, setns).  Without it, or when the namespaces cannot
# be made, the suite reports one skipped test (scripts/run-tests counts it
# and fails the run unless PVAS_ALLOW_SKIP=1).
#
# Environment: as tests/mpi/run.sh (BUILD, OMPI_PREFIX, PVAS_MPI_TIMEOUT,
# PVAS_TEST_FORK_AGENT), and PVAS_DDT_FUZZ_CASES (default 200 here).
# Logs: $BUILD/test-logs/multinode/.
set -uo pipefail

# shellcheck source=tests/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../mpi/lib.sh"
MN_BIN=$BUILD/tests/multinode/bin
LOGS=$BUILD/test-logs/multinode
HOSTS=$ROOT/scripts/netns-hosts
RSH=$ROOT/scripts/netns-rsh
SET=pvasmn$$
SUBNET=198.18.0.0/24
MESSAGES=4
CASES=${PVAS_DDT_FUZZ_CASES:-200}
FUZZ_SEED=20261122
CRASH_LIMIT=10

skip_all() {
	echo "1..1"
	echo "ok 1 - multi-host suite # SKIP $*"
	exit 0
}

[ "$(id -u)" = 0 ] || skip_all "needs root to create network namespaces (ip netns add)"
"$ROOT/scripts/deps" netns >&2 || skip_all "scripts/deps netns failed: no ip/nsenter"
mkdir -p "$LOGS"
trap '"$HOSTS" down "$SET" >&2' EXIT
trap 'exit 130' INT TERM
if ! err=$("$HOSTS" up "$SET" 3 2>&1); then
	skip_all "cannot create the test hosts: $(tr '\n' ' ' <<<"$err")"
fi

mpi_setup multinode-tests p2p ddt_sendrecv_fuzz crash
for p in peers alltoall_vec; do
	[ -x "$MN_BIN/$p" ] || make -C "$ROOT" --no-print-directory "BUILD=$BUILD" multinode-tests >&2 || true
done
direct=0
have_direct && direct=1

for nh in 2 3; do
	"$HOSTS" hostfile "$SET" "$nh" 2 >"$LOGS/hostfile-$nh"
done

echo "# prefix $PREFIX; fork agent: ${AGENT_ARGS[*]:-(from openmpi-mca-params.conf)}"
echo "# hosts: $SET-h1..3 (network + UTS namespaces), subnet $SUBNET; mpirun on $SET-h1, orteds through $RSH"
[ $direct = 1 ] || echo "# ompi_info lists no pml_ob1_direct_enable: no direct-count checks"
# The programs link libpvas statically; the roots are the prefix's pvasrun:
# both must be built from the same libpvas (another checkout's `make` may
# have installed its own pvasrun into a shared prefix).
if [ -x "$BUILD/bin/pvasrun" ] && ! cmp -s "$BUILD/bin/pvasrun" "$PREFIX/bin/pvasrun"; then
	echo "# warning: $PREFIX/bin/pvasrun is not $BUILD/bin/pvasrun (make ompi-agent installs this checkout's)"
fi

# run_job LOG NHOSTS MPIRUN-ARGS... -- PROG ARGS...: mpirun on host 1 with
# the hostfile of NHOSTS hosts (2 slots each, 2 x NHOSTS ranks unless
# MPIRUN-ARGS give -np); status in $?.
run_job() {
	local log=$1 nh=$2 margs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		margs+=("$1")
		shift
	done
	shift
	PVAS_MPI_TEST_TOKEN=$TOKEN timeout -k 10 "$TMO" "$HOSTS" exec "$SET-h1" \
		nice "$MPIRUN" --allow-run-as-root --hostfile "$LOGS/hostfile-$nh" \
		--mca plm_rsh_agent "$RSH" --mca btl self,pvas,tcp \
		--mca btl_tcp_if_include "$SUBNET" --mca oob_tcp_if_include "$SUBNET" \
		--bind-to none "${AGENT_ARGS[@]}" --mca btl_base_warn_component_unused 0 \
		--mca pml_ob1_direct_stats 1 --mca pml_ob1_direct_model direct \
		-x PVAS_MPI_TEST_TOKEN "${margs[@]}" "$@" >"$log" 2>&1
}
TOKEN=$$-$RANDOM$RANDOM

# "[pml_ob1 direct] rank R: sent S received V fallback F copied C of T bytes"
# of LOG as "R S V F" lines, sorted by rank.
direct_stats() {
	awk '/^\[pml_ob1 direct\] rank [0-9]+: sent / {
		sub(":", "", $4); print $4, $6, $8, $10 }' "$1" | sort -n
}

# Sum of sent+received and of fallbacks over LOG's direct lines, and the
# number of lines: "LINES MOVED FALLBACK".
direct_sum() {
	direct_stats "$1" | awk '{ l++; m += $2 + $3; f += $4 } END { printf "%d %d %d\n", l, m, f }'
}

# Host number (1-based) of rank R when 2 ranks per host are mapped by slot.
host_of() { echo $(($1 / 2 + 1)); }

# --- peers, p2p, alltoall, fuzzer: 2 x 2 and 3 x 2 ---------------------------
for nh in 2 3; do
	np=$((2 * nh))
	what="${nh}x2"

	# peers: the per-rank peer sets against the hostfile's placement
	log=$LOGS/peers-$what.log
	run_job "$log" "$nh" -- "$MN_BIN/peers" --messages "$MESSAGES"
	rc=$?
	bad=()
	for r in $(seq 0 $((np - 1))); do
		line=$(grep -E "^peers: rank $r host " "$log")
		h=$(host_of "$r")
		want=$(for p in $(seq 0 $((np - 1))); do
			[ "$p" != "$r" ] && [ "$(host_of "$p")" = "$h" ] && echo "$p"
		done | paste -sd, -)
		[[ $line == "peers: rank $r host $SET-h$h group "*": address space {$want}; host {$want}" ]] ||
			bad+=("rank $r: want host $SET-h$h, address space {$want}; got '${line:-no line}'")
	done
	groups=$(sed -nE 's/^peers: rank [0-9]+ host (\S+) group (\S+):.*/\1 \2/p' "$log" | sort -u)
	if [ $rc = 0 ] && grep -q '^peers: PASS' "$log" && [ ${#bad[@]} = 0 ] &&
		[ "$(awk '{ print $1 }' <<<"$groups" | uniq -d)" = "" ] &&
		[ "$(awk '{ print $2 }' <<<"$groups" | sort | uniq -d)" = "" ] &&
		[ "$(grep -c . <<<"$groups")" = "$nh" ]; then
		ok "peers $what: every rank shares its address space with the ranks on its host and no others; one PVAS group per host"
		grep -E '^peers: rank ' "$log" | sed -E 's/ group [0-9a-f]+:/:/' | diag
	else
		not_ok "peers $what (exit $rc, log $log)"
		{ printf '%s\n' "${bad[@]}"; echo "groups: $groups"; tail -n 15 "$log"; } | diag
	fi

	# the direct counts of that run: M x (peers on my host) each way
	if [ $direct = 1 ]; then
		stats=$(direct_stats "$log")
		bad=()
		for r in $(seq 0 $((np - 1))); do
			want=$MESSAGES # one other rank on each host
			read -r s v f < <(awk -v r="$r" '$1 == r { print $2, $3, $4 }' <<<"$stats")
			[ "${s:-x}" = "$want" ] && [ "${v:-x}" = "$want" ] && [ "${f:-x}" = 0 ] ||
				bad+=("rank $r: sent ${s:-?} received ${v:-?} fallback ${f:-?}, want $want $want 0")
		done
		if [ $rc = 0 ] && [ ${#bad[@]} = 0 ]; then
			ok "peers $what: direct transfers only within a host: each rank sent and received $MESSAGES direct (its host peer), none over tcp, no fallback"
			awk '{ print "rank " $1 ": direct sent " $2 ", received " $3 ", fallback " $4 }' <<<"$stats" | diag
		else
			not_ok "peers $what: direct counts"
			{ printf '%s\n' "${bad[@]}"; grep '^\[pml_ob1 direct\]' "$log"; } | diag
		fi
	fi

	# the point-to-point suite and the collective
	for prog in "$BIN/p2p" "$MN_BIN/alltoall_vec"; do
		name=$(basename "$prog")
		log=$LOGS/$name-$what.log
		start=$(date +%s%N)
		run_job "$log" "$nh" -- "$prog"
		rc=$?
		ms=$((($(date +%s%N) - start) / 1000000))
		read -r lines moved fb < <(direct_sum "$log")
		if [ $rc = 0 ] && grep -q "^$name: PASS" "$log" && { [ $direct = 0 ] || [ "$fb" = 0 ]; }; then
			ok "$name $what: data correct ($(grep -E "^$name np=" "$log"))$([ $direct = 1 ] &&
				echo ", $moved direct sends+receives within hosts, no fallback") ($((ms / 1000)).$((ms % 1000 / 100)) s)"
		else
			not_ok "$name $what (exit $rc, direct lines $lines moved $moved fallback $fb, log $log)"
			tail -n 15 "$log" | diag
		fi
	done

	# the datatype fuzzer between ranks 0 and 1: same host, then two hosts
	for map in slot node; do
		log=$LOGS/ddt-fuzz-$what-$map.log
		run_job "$log" "$nh" --map-by "$map" -- "$BIN/ddt_sendrecv_fuzz" \
			--seed "$FUZZ_SEED" --cases "$CASES"
		rc=$?
		sum=$(grep -E '^ddt_sendrecv_fuzz: (PASS|FAIL) ' "$log" | tail -n 1)
		read -r lines moved fb < <(direct_sum "$log")
		where="ranks 0,1 on one host"
		[ $map = node ] && where="ranks 0,1 on two hosts"
		direct_ok=1
		if [ $direct = 1 ]; then
			if [ $map = slot ]; then [ "$moved" -gt 0 ] || direct_ok=0; else [ "$moved" = 0 ] || direct_ok=0; fi
			[ "$fb" = 0 ] || direct_ok=0
		fi
		if [ $rc = 0 ] && [[ $sum == "ddt_sendrecv_fuzz: PASS "* ]] && [ $direct_ok = 1 ]; then
			ok "ddt fuzzer $what, $where (--map-by $map): $(sed -E 's/.* ran=([0-9]+).*/\1/' <<<"$sum") cases passed; $moved direct sends+receives, no fallback"
		else
			not_ok "ddt fuzzer $what, $where (exit $rc; direct: $moved moved, $fb fallback; log $log)"
			{ echo "$sum"; tail -n 15 "$log"; } | diag
		fi
	done
done

# --- a rank crashes on a remote host -------------------------------------------
log=$LOGS/crash-3x2.log
start=$(date +%s%N)
run_job "$log" 3 -- "$BIN/crash"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
left=
for _ in $(seq 1 50); do
	left=$("$HOSTS" leftovers "$SET") && break
	sleep 0.2
done
if [ $rc != 0 ] && [ $rc != 124 ] && [ $rc != 137 ] && [ $ms -le $((CRASH_LIMIT * 1000)) ] && [ -z "$left" ]; then
	ok "crash of rank 5 on $SET-h3: mpirun exits $rc after $((ms / 1000)).$((ms % 1000 / 100)) s; no process or socket left on any host"
	grep -iE 'signal|exited' "$log" | head -n 3 | diag
else
	not_ok "crash of rank 5 on $SET-h3: exit $rc after $ms ms (limit ${CRASH_LIMIT} s); leftovers: ${left:-none}"
	tail -n 15 "$log" | diag
fi

# --- nothing of the hosts remains ----------------------------------------------
trap - EXIT
"$HOSTS" down "$SET" >&2
rest=$(
	ip netns list | grep -E "^$SET-" || true
	for f in /run/pvas-netns/"$SET"-*; do
		[ -e "$f" ] && echo "$f"
	done
	for f in /proc/[0-9]*/environ; do
		tr '\0' '\n' 2>/dev/null <"$f" | grep -qx "PVAS_MPI_TEST_TOKEN=$TOKEN" &&
			echo "${f%/environ}: $(tr '\0' ' ' <"${f%/environ}/cmdline" 2>/dev/null | cut -c1-80)"
	done
)
if [ -z "$rest" ]; then
	ok "hosts removed: no namespace, UTS mount or job process left"
else
	not_ok "hosts removed, but left: $(tr '\n' ';' <<<"$rest")"
fi

echo "1..$n"
echo "# $n tests, $failed failed"
[ $failed = 0 ]
