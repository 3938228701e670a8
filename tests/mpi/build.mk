# tests/mpi: the MPI test suite of btl/pvas (tests/mpi/run.sh, TAP).
#
# Programs in tests/mpi/src, built with the PVAS Open MPI prefix's wrappers
# into $(BUILD)/tests/mpi/bin.  They link libpvas statically (membership
# test) and must be PIE (they run as PVAS tasks): Debian's gcc default.
# The order-only `ompi` prerequisite (ompi-btl/build.mk) builds Open MPI if
# needed and (re)installs btl/pvas (ompi-btl/btl/pvas/build.sh).

MPI_TEST_PREFIX = $(OMPI_PREFIX)
MPI_TEST_BIN := $(BUILD)/tests/mpi/bin
MPI_TEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Iinclude
MPI_TEST_C := p2p concurrency coll membership crash hang progress wrapped model_follow \
	model_eager
MPI_TESTS := $(addprefix $(MPI_TEST_BIN)/,$(MPI_TEST_C) fortran queue_test fbox_test)

ALL_TARGETS += $(MPI_TESTS)
TEST_SUITES += tests/mpi/run.sh
TEST_SUITES += tests/mpi/ddt-fuzz.sh
TEST_SUITES += tests/mpi/progress.sh
TEST_SUITES += tests/mpi/model-follow.sh
TEST_SUITES += tests/mpi/model-eager.sh
TEST_SUITES += tests/mpi/wrapper.sh

.PHONY: mpi-tests
mpi-tests: $(MPI_TESTS)

# The derived-datatype send/receive fuzzer (tests/mpi/ddt-fuzz.sh): MPI API
# only, its generator is tests/ddt-copy/ddt_gen.c (shared with ddt_fuzz).
MPI_DDT_FUZZ := $(MPI_TEST_BIN)/ddt_sendrecv_fuzz
ALL_TARGETS += $(MPI_DDT_FUZZ)
.PHONY: mpi-ddt-fuzz
mpi-tests mpi-ddt-fuzz: $(MPI_DDT_FUZZ)
$(MPI_DDT_FUZZ): tests/mpi/src/ddt_sendrecv_fuzz.c tests/ddt-copy/ddt_gen.c tests/ddt-copy/ddt_gen.h | ompi
	@mkdir -p $(@D)
	$(MPI_TEST_PREFIX)/bin/mpicc $(MPI_TEST_CFLAGS) -Itests/ddt-copy -o $@ $(filter %.c,$^) -lm

$(MPI_TEST_BIN)/%: tests/mpi/src/%.c tests/mpi/src/common.h $(LIBPVAS_A) include/pvas.h | ompi
	@mkdir -p $(@D)
	$(MPI_TEST_PREFIX)/bin/mpicc $(MPI_TEST_CFLAGS) -o $@ $< $(LIBPVAS_A) -lpthread

$(MPI_TEST_BIN)/fortran: tests/mpi/src/fortran.f90 | ompi
	@mkdir -p $(@D)
	$(MPI_TEST_PREFIX)/bin/mpif90 -O2 -g -Wall -o $@ $<

# The fast-box unit test needs no MPI either.
$(MPI_TEST_BIN)/fbox_test: tests/mpi/src/fbox_test.c ompi-btl/btl/pvas/btl_pvas_fbox.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Iompi-btl/btl/pvas -pthread -o $@ $<

# The mailbox unit test needs no MPI.
$(MPI_TEST_BIN)/queue_test: tests/mpi/src/queue_test.c ompi-btl/btl/pvas/btl_pvas_queue.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Iompi-btl/btl/pvas -pthread -o $@ $<
