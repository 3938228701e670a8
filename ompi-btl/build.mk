# ompi-btl: PVAS's patched Open MPI 4.1.4 (see ompi-btl/README.md).
#
# `make ompi` builds it with scripts/build-ompi into a prefix cached outside
# the work tree (default $HOME/.cache/pvas/ompi-4.1.4-<hash>); a rerun with
# nothing changed only checks the prefix's stamp and takes a second or two.
# OMPI_PREFIX names that prefix (computed without building), for rules and
# test suites that use its bin/mpicc, bin/mpif90, bin/mpirun and headers.
# `make` builds it (through ompi-agent below); `make test` runs tests/mpi/smoke.sh.

OMPI_PREFIX := $(shell scripts/build-ompi --print-prefix)
export OMPI_PREFIX

.PHONY: ompi
ompi: $(LIBPVAS_A)
	$(Q)scripts/build-ompi

# The launcher: ORTE starts every rank through `pvasrun --ompi-agent`
# (orte_fork_agent), which runs the rank as a PVAS task when the job's btl
# list selects pvas and execs it unchanged otherwise.  pvasrun is copied
# into the prefix so that the prefix stays self-contained.
.PHONY: ompi-agent
ALL_TARGETS += ompi-agent
ompi-agent: ompi $(PVASRUN)
	$(Q)install -C -m 755 $(PVASRUN) $(OMPI_PREFIX)/bin/pvasrun
	$(Q)conf=$(OMPI_PREFIX)/etc/openmpi-mca-params.conf; \
	line="orte_fork_agent = $(OMPI_PREFIX)/bin/pvasrun --ompi-agent"; \
	grep -qxF "$$line" $$conf || { \
		sed -i '/^[[:space:]]*orte_fork_agent[[:space:]]*=/d' $$conf; \
		printf '\n# PVAS: ranks start through pvasrun (see ompi-btl/README.md)\n%s\n' "$$line" >> $$conf; }

TEST_SUITES += tests/mpi/smoke.sh

# The cost model's calibration (ompi-btl/calibrate/README.md): `make calibrate`
# measures this node and writes pml_ob1_direct_model_* into the prefix's
# etc/openmpi-mca-params.conf.
CALIBRATE_BIN := $(BUILD)/ompi-btl/pvas_calibrate
ALL_TARGETS += $(CALIBRATE_BIN)

# relinked when the prefix changes (its stamp is newer than the binary)
$(CALIBRATE_BIN): ompi-btl/calibrate/pvas_calibrate.c $(wildcard $(OMPI_PREFIX)/.pvas-build-stamp) | ompi
	@mkdir -p $(@D)
	$(OMPI_PREFIX)/bin/mpicc -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow \
		-I$(OMPI_PREFIX)/include/openmpi -o $@ $< -lopen-pal -lpthread

.PHONY: calibrate
calibrate: ompi-agent $(CALIBRATE_BIN)
	ompi-btl/calibrate/pvas-calibrate --bin $(CALIBRATE_BIN)
