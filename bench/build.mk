# bench/: the benchmark suite (issue #6).  See bench/README.md.
#
# MPI programs are built with $(MPICC): the project's Open MPI 4.1.4
# (scripts/build-ompi --print-prefix) when scripts/build-ompi exists, else
# mpicc from PATH (Debian's openmpi-bin).  Override: make MPICC=... MPIRUN=...
# $(BUILD)/bench/mpi.env records which MPI the binaries were built with (it
# changes only when MPICC/MPIRUN change, and then the binaries are rebuilt);
# bench/compare, bench/tune-direct and tests/bench/check.sh read it.

# MPICC/MPIRUN given on the command line or in the environment: used as is,
# without the ompi dependency.
BENCH_OMPI_PREFIX := $(if $(wildcard scripts/build-ompi),$(shell scripts/build-ompi --print-prefix 2>/dev/null))
BENCH_OMPI_DEP :=
ifeq ($(origin MPICC),undefined)
ifneq ($(BENCH_OMPI_PREFIX),)
MPICC := $(BENCH_OMPI_PREFIX)/bin/mpicc
MPIRUN ?= $(BENCH_OMPI_PREFIX)/bin/mpirun
# order-only dependency on the ompi target (ompi-btl/build.mk) when it exists
BENCH_OMPI_DEP := $(if $(wildcard ompi-btl/build.mk),ompi)
else
MPICC := mpicc
endif
endif
MPIRUN ?= $(if $(findstring /,$(MPICC)),$(dir $(MPICC))mpirun,mpirun)

BENCH_OUT := $(BUILD)/bench
BENCH_CFLAGS := $(USER_CFLAGS) -Ibench/common
BENCH_COMMON := $(wildcard bench/common/*.c)
BENCH_HDRS := $(wildcard bench/common/*.h bench/ddt/*.h)
BENCH_BINS := $(BENCH_OUT)/ddt $(BENCH_OUT)/fft2d $(BENCH_OUT)/lu $(BENCH_OUT)/pingpong \
	$(BENCH_OUT)/memcpy-bw $(BENCH_OUT)/frag-cross
BENCH_DEPS_STAMP := $(BUILD)/.deps-bench

ALL_TARGETS += $(BENCH_BINS) $(BENCH_OUT)/mpi.env
TEST_SUITES += "tests/bench/check.sh --bin $(BENCH_OUT)"
TEST_SUITES += tests/bench/ratios.py
TEST_SUITES += tests/bench/model_stats.py
DEMO_DEPS += bench-demo
BENCH_DEPS += bench-full

.PHONY: bench-build bench-demo bench-full
bench-build: $(BENCH_BINS) $(BENCH_OUT)/mpi.env

$(BENCH_DEPS_STAMP): scripts/deps
	$(Q)scripts/deps bench
	$(Q)mkdir -p $(@D) && touch $@

$(BENCH_OUT)/ddt: $(wildcard bench/ddt/*.c) $(BENCH_COMMON) $(BENCH_HDRS) $(BENCH_OUT)/mpi.env | $(BENCH_DEPS_STAMP) $(BENCH_OMPI_DEP)
	$(Q)mkdir -p $(@D)
	$(Q)$(MPICC) $(BENCH_CFLAGS) -o $@ $(filter %.c,$^)

$(BENCH_OUT)/fft2d: bench/fft2d/fft2d.c $(BENCH_COMMON) $(BENCH_HDRS) $(BENCH_OUT)/mpi.env | $(BENCH_DEPS_STAMP) $(BENCH_OMPI_DEP)
	$(Q)mkdir -p $(@D)
	$(Q)$(MPICC) $(BENCH_CFLAGS) -o $@ $(filter %.c,$^) -lfftw3 -lm

$(BENCH_OUT)/lu: bench/lu/lu.c $(BENCH_COMMON) $(BENCH_HDRS) $(BENCH_OUT)/mpi.env | $(BENCH_DEPS_STAMP) $(BENCH_OMPI_DEP)
	$(Q)mkdir -p $(@D)
	$(Q)$(MPICC) $(BENCH_CFLAGS) -o $@ $(filter %.c,$^) -lm

$(BENCH_OUT)/pingpong: bench/pingpong/pingpong.c $(BENCH_COMMON) $(BENCH_HDRS) $(BENCH_OUT)/mpi.env | $(BENCH_DEPS_STAMP) $(BENCH_OMPI_DEP)
	$(Q)mkdir -p $(@D)
	$(Q)$(MPICC) $(BENCH_CFLAGS) -o $@ $(filter %.c,$^)

$(BENCH_OUT)/memcpy-bw: bench/memcpy-bw/memcpy-bw.c bench/common/stats.c bench/common/stats.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Ibench/common -pthread -o $@ $(filter %.c,$^)

$(BENCH_OUT)/frag-cross: bench/frag-cross/frag-cross.c bench/common/stats.c bench/common/stats.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Ibench/common -pthread -o $@ $(filter %.c,$^)

# Which MPI the binaries use (rewritten when MPICC changes).
$(BENCH_OUT)/mpi.env: FORCE_BENCH_ENV | $(BENCH_OMPI_DEP)
	$(Q)mkdir -p $(@D)
	$(Q)mpicc_path=$$(command -v $(MPICC) || echo $(MPICC)); \
	bindir=$$(dirname $$mpicc_path); \
	mpirun_path=$$(command -v $(MPIRUN) || echo $(MPIRUN)); \
	printf 'MPICC=%s\nMPIRUN=%s\nOMPI_INFO=%s\n' "$$mpicc_path" "$$mpirun_path" \
		"$$bindir/ompi_info" >$@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE_BENCH_ENV

# make demo and make bench write their reports under $(BENCH_OUT)/results
# (bench/compare's default: <--build>/results), never into the source tree.
# make demo: quick subset of bench/ddt, pvas vs vader (<= 3 minutes)
bench-demo: bench-build
	$(Q)nice bench/compare --quick --name demo --build $(BENCH_OUT)

# make bench: the full suite with report and plots
bench-full: bench-build
	$(Q)nice bench/compare --bench all --name full --build $(BENCH_OUT)

# make bench-tune: re-derive ob1's direct Rendezvous defaults on this machine
# (bench/tune-direct: report in $(BENCH_OUT)/results/, MCA parameter file
# $(BUILD)/pvas-direct-tuned.conf); TUNE_ARGS=--quick for a 1-5 minute run.
# The prefix must have pml_ob1_direct_* (another one: MPICC=... MPIRUN=...).
TUNE_ARGS ?=
.PHONY: bench-tune
bench-tune: bench-build
	$(Q)nice bench/tune-direct --build $(BENCH_OUT) --out $(BUILD)/pvas-direct-tuned.conf $(TUNE_ARGS)
