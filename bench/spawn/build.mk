# bench/spawn: pvas_spawn vs fork+exec start-up time (libpvas issue).
# Reports go under $(BUILD)/bench/results, not into the source tree.
SPAWN_BENCH := $(BUILD)/bench/spawn-bench $(BUILD)/bench/spawn-noop
SPAWN_RESULTS := $(BUILD)/bench/results
ALL_TARGETS += $(SPAWN_BENCH)
BENCH_DEPS += bench-spawn

$(BUILD)/bench/spawn-bench: bench/spawn/spawn.c bench/common/stats.c bench/common/stats.h \
		$(LIBPVAS_A) include/pvas.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Ibench/common -o $@ $(filter %.c,$^) $(LIBPVAS_A) -lpthread

$(BUILD)/bench/spawn-noop: bench/spawn/noop.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $<

.PHONY: bench-spawn
bench-spawn: $(SPAWN_BENCH)
	@mkdir -p $(SPAWN_RESULTS)
	$(BUILD)/bench/spawn-bench --out $(SPAWN_RESULTS)/$$(date +%Y-%m-%d-%H%M)-spawn.md \
		$(abspath $(BUILD)/bench/spawn-noop)

# Both backends in one run, in the qemu guest with pvas.ko loaded.  Under
# TCG only the ratios mean anything.  The guest sees the host read-only, so
# the report is cut out of the guest's output.
.PHONY: bench-spawn-vm
bench-spawn-vm: $(SPAWN_BENCH) $(KMOD_KO)
	@mkdir -p $(SPAWN_RESULTS)
	scripts/vm --ko $(KMOD_KO) --timeout 900 -- $(BUILD)/bench/spawn-bench \
		--backends user,kmod --counts 1,16,64,256 --rounds 5 \
		$(abspath $(BUILD)/bench/spawn-noop) > $(BUILD)/bench/spawn-vm.out
	sed -n '/^# Spawn/,$$p' $(BUILD)/bench/spawn-vm.out | grep -Ev '^(PVAS-VM-EXIT|\[ *[0-9.]+\])' \
		> $(SPAWN_RESULTS)/$$(date +%Y-%m-%d)-spawn-kmod-vs-user-tcg.md
	cat $(SPAWN_RESULTS)/$$(date +%Y-%m-%d)-spawn-kmod-vs-user-tcg.md
