# tests/mpi: the MPI test suite of btl/pvas (tests/mpi/run.sh, TAP).
#
# Programs in tests/mpi/src, built with the PVAS Open MPI prefix's wrappers
# into $(BUILD)/tests/mpi/bin.  They link libpvas statically (membership
# test) and must be PIE (they run as PVAS tasks): Debian's gcc default.
# The order-only `ompi` prerequisite (ompi-btl/build.mk) builds Open MPI if
# needed and (re)installs btl/pvas (ompi-btl/btl/pvas/build.sh).

MPI_TEST_PREFIX = $(shell scripts/build-ompi --print-prefix)
MPI_TEST_BIN := $(BUILD)/tests/mpi/bin
MPI_TEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Iinclude
MPI_TEST_C := p2p concurrency coll membership crash hang
MPI_TESTS := $(addprefix $(MPI_TEST_BIN)/,$(MPI_TEST_C) fortran queue_test)

ALL_TARGETS += $(MPI_TESTS)
TEST_SUITES += tests/mpi/run.sh

.PHONY: mpi-tests
mpi-tests: $(MPI_TESTS)

$(MPI_TEST_BIN)/%: tests/mpi/src/%.c tests/mpi/src/common.h $(LIBPVAS_A) include/pvas.h | ompi
	@mkdir -p $(@D)
	$(MPI_TEST_PREFIX)/bin/mpicc $(MPI_TEST_CFLAGS) -o $@ $< $(LIBPVAS_A) -lpthread

$(MPI_TEST_BIN)/fortran: tests/mpi/src/fortran.f90 | ompi
	@mkdir -p $(@D)
	$(MPI_TEST_PREFIX)/bin/mpif90 -O2 -g -Wall -o $@ $<

# The mailbox unit test needs no MPI.
$(MPI_TEST_BIN)/queue_test: tests/mpi/src/queue_test.c ompi-btl/btl/pvas/btl_pvas_queue.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Iompi-btl/btl/pvas -pthread -o $@ $<
