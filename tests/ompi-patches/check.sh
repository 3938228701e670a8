#!/usr/bin/env bash
# tests/ompi-patches/check.sh : TAP checks of ompi-btl/patches, the hook
# series for Open MPI 4.1.4: it regenerates byte for byte with
# ompi-btl/make-patches, applies to the pristine tarball with no fuzz, and
# holds only edits to upstream files (PVAS's whole files are sources under
# ompi-btl/, copied in by scripts/build-ompi).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PATCHES=("$ROOT"/ompi-btl/patches/*.patch)

echo "1..4"
out=$("$ROOT/ompi-btl/make-patches" --check 2>&1)
echo "$out" | sed 's/^/# /'
n=1
for what in "regenerates byte for byte" "applies to the pristine tarball with no fuzz"; do
	if echo "$out" | grep -q "make-patches: the series ${what/the pristine tarball/.*}"; then
		echo "ok $n - the series $what"
	else
		echo "not ok $n - the series $what"
	fi
	n=$((n + 1))
done

new=$(grep -l -e '^new file mode' -e '^--- /dev/null' "${PATCHES[@]}")
if [ -z "$new" ]; then
	echo "ok 3 - no patch creates a file (${#PATCHES[@]} patches)"
else
	echo "not ok 3 - patches that create files: $(basename -a $new | tr '\n' ' ')"
fi

# Hooks stay thin: the diff lines of the whole series (headers excluded).
lines=$(awk 'FNR == 1 { d = 0 } /^diff --git/ { d = 1 } d' "${PATCHES[@]}" | wc -l)
if [ "$lines" -le 420 ]; then
	echo "ok 4 - the series' diffs hold $lines lines (at most 420)"
else
	echo "not ok 4 - the series' diffs hold $lines lines (more than 420)"
fi
