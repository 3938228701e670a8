#!/usr/bin/env bash
# tests/ddt-copy/ddt-fuzz.sh [ARGS] : run the datatype fuzzer of the direct
# copy engine (a `make test` suite, TAP).  Also linked as ddt-shape.sh,
# which runs ddt_shape (the layout shape's index-list counts), and as
# ddt-long.sh (copies of long blocks): the program is the script's name
# with '_' for '-'.  Single-process MPI programs
# (singleton MPI_Init): as root, Open MPI needs the allow-run-as-root
# variables; btl self only (no peer).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PROG=$(basename "$0" .sh)
exec "$BUILD/tests/ddt-copy/${PROG//-/_}" "$@"
