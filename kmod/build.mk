# pvas.ko (out of tree, against Debian's 6.1 headers), its checkpatch run,
# the kselftest suite tests/kmod and its run in a qemu guest (scripts/vm).
#
#   make kmod            build $(BUILD)/kmod/pvas.ko
#   make kmod-checkpatch checkpatch.pl --strict on the module and the UAPI
#   make kselftest-kmod  build the guest test binaries
#   make test-kmod       run tests/kmod/run-guest in the guest
#   make install         (with libpvas's files) pvas.ko into
#                        $(DESTDIR)/lib/modules/$(KVER)/extra, depmod, and
#                        the udev rule kmod/60-pvas.rules
#   make dkms            register the source with DKMS: add, build, install
#                        for $(KVER); make dkms-remove undoes it
# KVER: the running kernel if its headers are installed, else the 6.1
# kernel of `make kmod`.
# The module is built in a copy of the sources under $(BUILD)/kmod so that
# kbuild's objects stay out of the tree.

KMOD_KVER ?= $(shell ls /lib/modules 2>/dev/null | grep -E '^6\.1\.[0-9]+-[0-9]+-amd64$$' | sort -V | tail -n1)
KMOD_KDIR ?= /lib/modules/$(KMOD_KVER)/build
KMOD_DIR := $(BUILD)/kmod
KMOD_KO := $(KMOD_DIR)/pvas.ko
KMOD_SRCS := Kbuild $(wildcard kmod/*.c kmod/*.h) include/uapi/pvas.h
CHECKPATCH_DIR := $(BUILD)/checkpatch

.PHONY: kmod kmod-checkpatch kselftest-kmod test-kmod
kmod: $(KMOD_KO)

$(BUILD)/.deps-kmod: scripts/deps
	$(Q)scripts/deps kmod
	$(Q)mkdir -p $(@D) && touch $@

# kmod_stage DIR: the module's source tree (Kbuild and what it builds) in DIR
define kmod_stage
	$(Q)mkdir -p $(1)/kmod $(1)/include/uapi
	$(Q)cp Kbuild $(1)/ && cp kmod/*.c kmod/*.h $(1)/kmod/ && \
		cp include/uapi/pvas.h $(1)/include/uapi/
endef

# kmod_build DIR KDIR: stage and build DIR/pvas.ko against KDIR (W=1, no warnings)
define kmod_build
	$(call kmod_stage,$(1))
	+$(Q)nice $(MAKE) -s -C $(2) M=$(abspath $(1)) W=1 modules 2>&1 | \
		grep -v 'Skipping BTF generation' | tee $(1)/build.log; \
		test -f $(1)/pvas.ko && ! grep -q 'warning:' $(1)/build.log
endef

$(KMOD_KO): $(KMOD_SRCS) | $(BUILD)/.deps-kmod
	$(Q)test -n "$(KMOD_KVER)" || { echo "kmod: no 6.1 headers (scripts/deps kmod)" >&2; exit 1; }
	$(call kmod_build,$(KMOD_DIR),$(KMOD_KDIR))

$(CHECKPATCH_DIR)/checkpatch.pl: | $(BUILD)/.deps-kmod
	$(Q)mkdir -p $(@D)
	$(Q)tar -xJf /usr/src/linux-source-6.1.tar.xz -C $(@D) --strip-components=2 \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'

kmod-checkpatch: $(CHECKPATCH_DIR)/checkpatch.pl
	$(Q)perl $< --no-tree --strict --color=never --quiet -f $(KMOD_SRCS) && \
		echo "kmod-checkpatch: clean"

ALL_TARGETS += $(KMOD_KO)

# Install for KVER (the usual way: kbuild's modules_install into extra/,
# then depmod; depmod -b with DESTDIR).  kbuild's own signing and depmod
# are off: Debian ships neither the kernel's signing key nor System.map in
# its headers (see docs/kmod.md for signing under Secure Boot).
KVER ?= $(or $(if $(wildcard /lib/modules/$(shell uname -r)/build),$(shell uname -r)),$(KMOD_KVER),$(shell uname -r))
KMOD_INSTALL_DIR := $(if $(filter $(KMOD_KVER),$(KVER)),$(KMOD_DIR),$(BUILD)/kmod-$(KVER))
UDEV_RULES_DIR ?= /lib/udev/rules.d
PVAS_GROUP ?=
kmod_comma := ,
KMOD_UDEV_SED := $(if $(PVAS_GROUP),s/MODE="0666"/GROUP="$(PVAS_GROUP)"$(kmod_comma) MODE="0660"/)
KMOD_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)

.PHONY: install-kmod dkms dkms-remove
install: install-kmod
install-kmod: $(KMOD_INSTALL_DIR)/pvas.ko
	$(Q)$(MAKE) -s -C /lib/modules/$(KVER)/build M=$(abspath $(KMOD_INSTALL_DIR)) \
		INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=extra CONFIG_MODULE_SIG_ALL= \
		modules_install >$(KMOD_INSTALL_DIR)/install.log 2>&1 || \
		{ cat $(KMOD_INSTALL_DIR)/install.log >&2; exit 1; }
	$(Q)grep -v 'Skipping depmod' $(KMOD_INSTALL_DIR)/install.log || true
	$(Q)depmod $(if $(DESTDIR),-b $(DESTDIR)) -a $(KVER)
	$(Q)install -d $(DESTDIR)$(UDEV_RULES_DIR)
	$(Q)sed -e '$(KMOD_UDEV_SED)' kmod/60-pvas.rules >$(DESTDIR)$(UDEV_RULES_DIR)/60-pvas.rules
	$(Q)echo "installed $(DESTDIR)/lib/modules/$(KVER)/extra/pvas.ko and" \
		"$(DESTDIR)$(UDEV_RULES_DIR)/60-pvas.rules"

# pvas.ko for a kernel other than the 6.1 one of `make kmod`
$(BUILD)/kmod-%/pvas.ko: $(KMOD_SRCS)
	$(Q)test -d /lib/modules/$*/build || \
		{ echo "kmod: no headers for $* (apt-get install linux-headers-$*)" >&2; exit 1; }
	$(call kmod_build,$(BUILD)/kmod-$*,/lib/modules/$*/build)

# DKMS: stage the source tree with dkms.conf, then dkms add, build, install
# for KVER (an older registration of this version is removed first).
# DKMS_FLAGS may point DKMS at other trees (tests/kmod/kmod-suite does).
DKMS_STAGE := $(BUILD)/dkms/pvas-$(KMOD_VERSION)
DKMS_FLAGS ?=
DKMS = dkms $(DKMS_FLAGS)
dkms: $(KMOD_SRCS) dkms.conf | $(BUILD)/.deps-kmod
	$(Q)scripts/deps dkms
	$(Q)grep -q '^#define PVAS_MODULE_VERSION "$(KMOD_VERSION)"$$' kmod/pvas.h || \
		{ echo "dkms: dkms.conf's PACKAGE_VERSION $(KMOD_VERSION) is not kmod/pvas.h's PVAS_MODULE_VERSION" >&2; exit 1; }
	$(Q)rm -rf $(DKMS_STAGE)
	$(call kmod_stage,$(DKMS_STAGE))
	$(Q)cp dkms.conf $(DKMS_STAGE)/
	$(Q)! $(DKMS) status pvas/$(KMOD_VERSION) | grep -q . || \
		$(DKMS) remove pvas/$(KMOD_VERSION) --all >/dev/null
	$(Q)$(DKMS) add $(abspath $(DKMS_STAGE))
	$(Q)nice $(DKMS) build pvas/$(KMOD_VERSION) -k $(KVER)
	$(Q)$(DKMS) install pvas/$(KMOD_VERSION) -k $(KVER)
	$(Q)$(DKMS) status pvas/$(KMOD_VERSION)

dkms-remove:
	$(Q)$(DKMS) remove pvas/$(KMOD_VERSION) --all

# The guest suite: kselftest binaries + tests/kmod/run-guest under scripts/vm.
KT_DIR := $(BUILD)/tests/kmod
KT_BINS := $(KT_DIR)/pvas_test $(KT_DIR)/confine_e2e $(KT_DIR)/t_confine $(KT_DIR)/t_sleep
KT_CFLAGS = $(USER_CFLAGS) -I$(KSELFTEST_DIR) -Wno-missing-prototypes -Wno-unused-parameter -Wno-sign-compare
KMOD_VM_TIMEOUT ?= 900

kselftest-kmod: $(KT_BINS)
$(KT_DIR)/pvas_test: tests/kmod/pvas_test.c include/uapi/pvas.h $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(KT_CFLAGS) -o $@ $<
$(KT_DIR)/confine_e2e: tests/kmod/confine_e2e.c include/pvas.h $(LIBPVAS_A) $(KSELFTEST_H)
	@mkdir -p $(@D)
	$(CC) $(KT_CFLAGS) -o $@ $< $(LIBPVAS_A) -lpthread
# Tasks: PIE programs (the default of Debian's gcc), linked with libpvas.
$(KT_DIR)/t_%: tests/kmod/t_%.c include/pvas.h $(LIBPVAS_A)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIE -pie -o $@ $< $(LIBPVAS_A) -lpthread -ldl

test-kmod: $(KMOD_KO) $(KT_BINS)
	$(Q)KMOD_VM_TIMEOUT=$(KMOD_VM_TIMEOUT) tests/kmod/kmod-suite $(BUILD)

ALL_TARGETS += $(KT_BINS)

# The guest suite, for `make test` (TAP; 10-12 min here under TCG with
# other jobs beside it, the DKMS build and the libpvas suite included).
TEST_SUITES += tests/kmod/kmod-suite

# MPI jobs on the kernel backend in the guest (tests/kmod/mpi-suite): the
# test programs of tests/mpi and mpi_kplaced, which proves that the ranks
# are placed by pvas.ko.  Built with the PVAS Open MPI prefix's mpicc and
# tests/mpi's flags.  TAP; 2 min 21 s here under TCG on a quiet machine,
# 3 min 18 s with other jobs beside it (Open MPI already built).
KT_MPI_KPLACED := $(KT_DIR)/mpi_kplaced
.PHONY: kmod-mpi-tests
kmod-mpi-tests: $(KT_MPI_KPLACED)
$(KT_MPI_KPLACED): tests/kmod/mpi_kplaced.c include/pvas.h $(LIBPVAS_A) | ompi
	@mkdir -p $(@D)
	$(OMPI_PREFIX)/bin/mpicc $(MPI_TEST_CFLAGS) -o $@ $< $(LIBPVAS_A) -lpthread
ALL_TARGETS += $(KT_MPI_KPLACED)
TEST_SUITES += tests/kmod/mpi-suite
