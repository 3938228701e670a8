# bench/spawn: pvas_spawn vs fork+exec start-up time (libpvas issue).
SPAWN_BENCH := $(BUILD)/bench/spawn-bench $(BUILD)/bench/spawn-noop
ALL_TARGETS += $(SPAWN_BENCH)
BENCH_DEPS += bench-spawn

$(BUILD)/bench/spawn-bench: bench/spawn/spawn.c $(LIBPVAS_A) include/pvas.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIBPVAS_A) -lpthread

$(BUILD)/bench/spawn-noop: bench/spawn/noop.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $<

.PHONY: bench-spawn
bench-spawn: $(SPAWN_BENCH)
	@mkdir -p bench/results
	$(BUILD)/bench/spawn-bench --out bench/results/$$(date +%Y-%m-%d)-spawn.md \
		$(abspath $(BUILD)/bench/spawn-noop)
