# tests/ddt-copy: the direct two-layout datatype copy engine of
# ompi-btl/opal/datatype/opal_datatype_direct.c (docs/ddt-direct-copy.md).
#
#   $(BUILD)/tests/ddt-copy/ddt_fuzz        datatype fuzzer, TAP; the test suite
#                                           is tests/ddt-copy/ddt-fuzz.sh
#   $(BUILD)/tests/ddt-copy/ddt_shape       the layout shape's index-list counts,
#                                           TAP; suite tests/ddt-copy/ddt-shape.sh
#   $(BUILD)/tests/ddt-copy/ddt_long        copies of long blocks at every offset
#                                           of the slow `rep movsb` window, TAP;
#                                           suite tests/ddt-copy/ddt-long.sh
#   tests/ddt-copy/ddt_gen.{c,h}            its random datatype-pair generator
#                                           (MPI API only), shared with
#                                           tests/mpi/src/ddt_sendrecv_fuzz.c
# (The engine's benchmark is bench/ddt-copy.)
# Built with the PVAS Open MPI prefix's mpicc (OMPI_PREFIX, ompi-btl/build.mk);
# they call libopen-pal directly (opal/datatype/opal_datatype_direct.h is a
# devel header of the prefix).  Single-process MPI programs (singleton
# MPI_Init, no mpirun).

DDTC_BIN := $(BUILD)/tests/ddt-copy
DDTC_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow
DDTC_INC = -I$(OMPI_PREFIX)/include/openmpi
DDTC_PROGS := $(DDTC_BIN)/ddt_fuzz $(DDTC_BIN)/ddt_shape $(DDTC_BIN)/ddt_long

ALL_TARGETS += $(DDTC_PROGS)
TEST_SUITES += tests/ddt-copy/ddt-fuzz.sh tests/ddt-copy/ddt-shape.sh tests/ddt-copy/ddt-long.sh

$(DDTC_BIN)/%: tests/ddt-copy/%.c | ompi
	@mkdir -p $(@D)
	$(OMPI_PREFIX)/bin/mpicc $(DDTC_CFLAGS) $(DDTC_INC) -o $@ $< -lopen-pal

$(DDTC_BIN)/ddt_fuzz: tests/ddt-copy/ddt_fuzz.c tests/ddt-copy/ddt_gen.c tests/ddt-copy/ddt_gen.h | ompi
	@mkdir -p $(@D)
	$(OMPI_PREFIX)/bin/mpicc $(DDTC_CFLAGS) $(DDTC_INC) -o $@ $(filter %.c,$^) -lopen-pal
