#!/usr/bin/env bash
# tests/ddt-copy/ddt-shape.sh : check the index-list counts of the direct
# engine's layout shape (a `make test` suite, TAP).  A single-process MPI
# program (singleton MPI_Init), btl self only.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
exec "$BUILD/tests/ddt-copy/ddt_shape" "$@"
