#!/usr/bin/env bash
# tests/calibrate/check.sh : TAP checks of the cost model's calibration
# (ompi-btl/calibrate): pvas-calibrate measures this node and writes every
# pml_ob1_direct_model_* parameter, pml_ob1_direct_chunks and
# the fast-box cut-offs btl_pvas_fbox_max_send and _inplace into an MCA
# parameter file, Open MPI
# reads that file (ompi_info shows each value with the file as its source),
# and a rerun replaces the calibration instead of adding a second one.
# Writes only into a scratch file, never into the prefix.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PREFIX=${OMPI_PREFIX:-$("$ROOT/scripts/build-ompi" --print-prefix)}
BIN=$BUILD/ompi-btl/pvas_calibrate
PARAMS="o_direct o_cico o_staged o_eager o_own eager_byte g1 g2 cross frag stage chunk line index_direct far walk index_pack run_direct tlb block_direct block_pack cross_class"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "1..7"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
conf=$scratch/model.conf
echo "# an unrelated line that must survive" >"$conf"

start=$SECONDS
if "$ROOT/ompi-btl/calibrate/pvas-calibrate" --prefix "$PREFIX" --bin "$BIN" --reps 11 --rounds 5 \
	--output "$conf" --save "$scratch/raw.json" >"$scratch/out" 2>&1; then
	echo "ok 1 - pvas-calibrate ran ($((SECONDS - start)) s)"
else
	sed 's/^/# /' "$scratch/out"
	echo "not ok 1 - pvas-calibrate failed"
fi
sed 's/^/# /' "$conf"
cp "$conf" "$scratch/model.first"

missing=
for p in $PARAMS; do
	grep -Eq "^pml_ob1_direct_model_$p = [0-9.e+-]+(,[0-9.e+-]+){0,6}$" "$conf" || missing="$missing $p"
done
grep -Eq "^pml_ob1_direct_chunks = [1-9][0-9]*$" "$conf" || missing="$missing chunks"
if [ -z "$missing" ]; then
	echo "ok 2 - the file sets all ${PARAMS// /, } and pml_ob1_direct_chunks to numbers"
else
	echo "not ok 2 - the file lacks or garbles:$missing"
fi

# Open MPI reads the file: each value in force, with the file as its source.
OMPI_MCA_mca_base_param_files="$conf" "$PREFIX/bin/ompi_info" --param pml ob1 --level 9 \
	--parsable >"$scratch/info" 2>&1
bad=
for p in $PARAMS; do
	want=$(sed -n "s/^pml_ob1_direct_model_$p = //p" "$conf")
	got=$(sed -n "s/^mca:pml:ob1:param:pml_ob1_direct_model_$p:value://p" "$scratch/info")
	src=$(sed -n "s/^mca:pml:ob1:param:pml_ob1_direct_model_$p:source://p" "$scratch/info")
	# ompi_info prints doubles in its own format: compare numerically
	if ! python3 -c "import sys; w=[float(x) for x in sys.argv[1].split(',')]; g=[float(x) for x in sys.argv[2].split(',')]; sys.exit(0 if len(w)==len(g) and all(abs(a-b)<=1e-6*max(1,abs(a)) for a,b in zip(w,g)) else 1)" "$want" "$got" 2>/dev/null ||
		[[ $src != file* ]]; then
		bad="$bad $p(file '$want', ompi_info '$got' from '$src')"
	fi
done
want=$(sed -n "s/^pml_ob1_direct_chunks = //p" "$conf")
got=$(sed -n "s/^mca:pml:ob1:param:pml_ob1_direct_chunks:value://p" "$scratch/info")
src=$(sed -n "s/^mca:pml:ob1:param:pml_ob1_direct_chunks:source://p" "$scratch/info")
[ "$want" = "$got" ] && [[ $src == file* ]] || bad="$bad chunks(file '$want', ompi_info '$got' from '$src')"
if [ -z "$bad" ]; then
	echo "ok 3 - ompi_info shows every calibrated value, from the file"
else
	echo "not ok 3 - ompi_info disagrees:$bad"
fi

"$ROOT/ompi-btl/calibrate/pvas-calibrate" --prefix "$PREFIX" --bin "$BIN" --reps 5 --rounds 5 \
	--output "$conf" >/dev/null 2>&1
blocks=$(grep -c '^# >>> pvas-calibrate' "$conf")
if [ "$blocks" = 1 ] && grep -q '^# an unrelated line that must survive$' "$conf"; then
	echo "ok 4 - a rerun replaces the calibration and keeps the file's other lines"
else
	echo "not ok 4 - after a rerun: $blocks calibration blocks, other lines $(grep -c unrelated "$conf")"
fi

# The fast-box cut-offs (packed, contiguous): values pvas-calibrate
# timed, in force in btl/pvas with the file as their source.
OMPI_MCA_mca_base_param_files="$conf" "$PREFIX/bin/ompi_info" --param btl pvas --level 9 \
	--parsable >"$scratch/btl" 2>&1
bad= said=
for name in fbox_max_send fbox_max_inplace; do
	want=$(sed -n "s/^btl_pvas_$name = //p" "$conf")
	got=$(sed -n "s/^mca:btl:pvas:param:btl_pvas_$name:value://p" "$scratch/btl")
	src=$(sed -n "s/^mca:btl:pvas:param:btl_pvas_$name:source://p" "$scratch/btl")
	said="$said $name=$want"
	[[ $want =~ ^(256|512|1024|2048)$ ]] && [ "$want" = "$got" ] && [[ $src == file* ]] ||
		bad="$bad $name(file '$want', ompi_info '$got' from '$src')"
done
if [ -z "$bad" ]; then
	echo "ok 5 - the fast-box cut-offs from the file are in force:$said"
else
	echo "not ok 5 - fast-box cut-offs:$bad"
fi

# The file says how well the fitted model matches the times it was fitted to.
fitline=$(grep "^# fit to this node's ping-pongs" "$conf")
if [[ $fitline =~ direct\ [0-9]+%\ \([0-9]+%\),\ cico\ [0-9]+%\ \([0-9]+%\),\ staged\ [0-9]+%\ \([0-9]+%\),\ eager\ [0-9]+%\ \([0-9]+%\),\ own\ [0-9]+%\ \([0-9]+%\)$ ]]; then
	echo "ok 6 - the file gives the fit's median and largest error per path and eager send"
else
	echo "not ok 6 - no fit line with five paths' errors: '$fitline'"
fi

# --refit fits the measurements --save kept, measuring nothing: the same
# parameters as the run that measured them.
if "$ROOT/ompi-btl/calibrate/pvas-calibrate" --prefix "$PREFIX" --refit "$scratch/raw.json" \
	--dry-run >"$scratch/refit" 2>"$scratch/refit.err" &&
	diff <(grep -v '^#' "$scratch/refit") \
		<(sed -n '/^# >>> pvas-calibrate/,/^# <<< pvas-calibrate/p' "$scratch/model.first" |
			grep -v '^#') >"$scratch/diff"; then
	echo "ok 7 - --refit of the saved measurements gives the same parameters"
else
	sed 's/^/# /' "$scratch/refit" "$scratch/refit.err" "$scratch/diff"
	echo "not ok 7 - --refit of the saved measurements differs"
fi
