# ompi-btl: PVAS's patched Open MPI 4.1.4 (see ompi-btl/README.md).
#
# `make ompi` builds it with scripts/build-ompi into a prefix cached outside
# the work tree (default $HOME/.cache/pvas/ompi-4.1.4-<hash>); a rerun with
# nothing changed only checks the prefix's stamp and takes a second or two.
# OMPI_PREFIX names that prefix (computed without building), for rules and
# test suites that use its bin/mpicc, bin/mpif90, bin/mpirun and headers.
# `make` builds it (ALL_TARGETS); `make test` runs tests/mpi/smoke.sh.

OMPI_PREFIX := $(shell scripts/build-ompi --print-prefix)
export OMPI_PREFIX

.PHONY: ompi
ompi:
	$(Q)scripts/build-ompi
