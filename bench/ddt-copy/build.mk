# bench/ddt-copy: the direct two-layout datatype copy engine
# (ompi-btl/opal/datatype/opal_datatype_direct.c) against MPI_Pack +
# MPI_Unpack on the DDTBench patterns' datatypes, one process (singleton
# MPI_Init, no mpirun).  `make ddt-copy-bench` builds and runs it.
# Built with the PVAS Open MPI prefix's mpicc (OMPI_PREFIX, ompi-btl/build.mk);
# it calls libopen-pal directly (opal/datatype/opal_datatype_direct.h is a
# devel header of the prefix).

DDT_COPY_BENCH := $(BUILD)/bench/ddt-copy-bench
ALL_TARGETS += $(DDT_COPY_BENCH)

$(DDT_COPY_BENCH): bench/ddt-copy/ddt_copy_bench.c bench/common/stats.c bench/common/stats.h | ompi
	@mkdir -p $(@D)
	$(OMPI_PREFIX)/bin/mpicc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Ibench/common \
		-I$(OMPI_PREFIX)/include/openmpi -o $@ $(filter %.c,$^) -lopen-pal

.PHONY: ddt-copy-bench
ddt-copy-bench: $(DDT_COPY_BENCH)
	env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self $<
