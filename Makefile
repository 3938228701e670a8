# PVAS top-level build.  `make` builds every part present; `make test` runs
# every test suite; `make demo` runs the PVAS-versus-vader comparison.
#
# Each part adds its own rules in a fragment, <part>/build.mk, which may
# append to:  ALL_TARGETS (built by `make`), TEST_SUITES (commands run by
# `make test`, each printing TAP), DEMO_DEPS, BENCH_DEPS.
# Everything built goes under $(BUILD) (default: build/).

BUILD ?= build
CC ?= gcc
Q ?= @

# Userspace C: C11, warnings are errors.
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CSTD := -std=c11 -D_GNU_SOURCE
OPT ?= -O2 -g
USER_CFLAGS := $(CSTD) $(WARN) $(OPT) -Iinclude $(EXTRA_CFLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
UBSAN_FLAGS := -fsanitize=undefined -fno-sanitize-recover=all

ALL_TARGETS :=
TEST_SUITES :=
DEMO_DEPS :=
BENCH_DEPS :=

.PHONY: all test demo bench deps clean format check-format
all: deps-base

deps-base: $(BUILD)/.deps-base
$(BUILD)/.deps-base: scripts/deps
	$(Q)scripts/deps base
	$(Q)mkdir -p $(@D) && touch $@

# The kernel's kselftest harness (TAP output), shared by the C test suites.
KSELFTEST_DIR := $(BUILD)/kselftest
KSELFTEST_H := $(KSELFTEST_DIR)/kselftest_harness.h
$(KSELFTEST_H): scripts/kselftest-headers
	$(Q)scripts/kselftest-headers $(KSELFTEST_DIR)

# libpvas first: other fragments name its products in their prerequisites.
FRAGMENTS := libpvas/build.mk $(filter-out libpvas/build.mk,$(sort $(wildcard */build.mk */*/build.mk)))
include $(FRAGMENTS)

all: $(ALL_TARGETS)

test: all
	$(Q)scripts/run-tests $(TEST_SUITES)

demo: all demo-libpvas $(DEMO_DEPS)
bench: all $(BENCH_DEPS)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^kmod/')

clean:
	rm -rf $(BUILD)
