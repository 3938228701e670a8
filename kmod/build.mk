# pvas.ko (out of tree, against Debian's 6.1 headers), its checkpatch run,
# the kselftest suite tests/kmod and its run in a qemu guest (scripts/vm).
#
#   make kmod            build $(BUILD)/kmod/pvas.ko
#   make kmod-checkpatch checkpatch.pl --strict on the module and the UAPI
#   make kselftest-kmod  build the guest test binaries
#   make test-kmod       run tests/kmod/run-guest in the guest
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

$(KMOD_KO): $(KMOD_SRCS) | $(BUILD)/.deps-kmod
	$(Q)test -n "$(KMOD_KVER)" || { echo "kmod: no 6.1 headers (scripts/deps kmod)" >&2; exit 1; }
	$(Q)mkdir -p $(KMOD_DIR)/kmod $(KMOD_DIR)/include/uapi
	$(Q)cp Kbuild $(KMOD_DIR)/ && cp kmod/*.c kmod/*.h $(KMOD_DIR)/kmod/ && \
		cp include/uapi/pvas.h $(KMOD_DIR)/include/uapi/
	$(Q)nice $(MAKE) -s -C $(KMOD_KDIR) M=$(abspath $(KMOD_DIR)) W=1 modules 2>&1 | \
		grep -v 'Skipping BTF generation' | tee $(KMOD_DIR)/build.log; \
		test -f $@ && ! grep -q 'warning:' $(KMOD_DIR)/build.log

$(CHECKPATCH_DIR)/checkpatch.pl: | $(BUILD)/.deps-kmod
	$(Q)mkdir -p $(@D)
	$(Q)tar -xJf /usr/src/linux-source-6.1.tar.xz -C $(@D) --strip-components=2 \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'

kmod-checkpatch: $(CHECKPATCH_DIR)/checkpatch.pl
	$(Q)perl $< --no-tree --strict --color=never --quiet -f $(KMOD_SRCS) && \
		echo "kmod-checkpatch: clean"

ALL_TARGETS += $(KMOD_KO)

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

# The guest suite, for `make test` (TAP; ~3 min under TCG).
TEST_SUITES += tests/kmod/kmod-suite
