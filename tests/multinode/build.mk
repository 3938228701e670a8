# tests/multinode: MPI jobs over several hosts made of network namespaces
# (tests/multinode/run.sh, TAP; scripts/netns-hosts, scripts/netns-rsh).
#
# Its own programs are built like tests/mpi's (same prefix, flags and
# helpers, tests/mpi/src/common.h); it also runs tests/mpi's p2p, crash and
# ddt_sendrecv_fuzz.

MN_TEST_BIN := $(BUILD)/tests/multinode/bin
MN_TESTS := $(addprefix $(MN_TEST_BIN)/,peers alltoall_vec)

ALL_TARGETS += $(MN_TESTS)
TEST_SUITES += tests/multinode/run.sh

.PHONY: multinode-tests
multinode-tests: $(MN_TESTS) mpi-tests mpi-ddt-fuzz

$(MN_TEST_BIN)/%: tests/multinode/src/%.c tests/mpi/src/common.h $(LIBPVAS_A) include/pvas.h | ompi
	@mkdir -p $(@D)
	$(MPI_TEST_PREFIX)/bin/mpicc $(MPI_TEST_CFLAGS) -Itests/mpi/src -o $@ $< $(LIBPVAS_A) -lpthread
