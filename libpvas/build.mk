# libpvas: shared and static library, pkg-config file, pvasrun.
# Variants: the normal build in $(BUILD)/, and an ASan+UBSan static
# library in $(BUILD)/asan/ for the sanitizer test drivers.

LIBPVAS_SRCS := $(sort $(wildcard libpvas/src/*.c))
LIBPVAS_HDRS := $(wildcard libpvas/src/*.h) include/pvas.h include/uapi/pvas.h
LIBPVAS_CFLAGS = $(USER_CFLAGS) -fPIC -fvisibility=hidden -Ilibpvas/src
LIBPVAS_OBJS := $(LIBPVAS_SRCS:libpvas/src/%.c=$(BUILD)/obj/libpvas/%.o)
LIBPVAS_ASAN_OBJS := $(LIBPVAS_SRCS:libpvas/src/%.c=$(BUILD)/asan/obj/libpvas/%.o)
LIBPVAS_A := $(BUILD)/lib/libpvas.a
LIBPVAS_SO := $(BUILD)/lib/libpvas.so.0.1
LIBPVAS_ASAN_A := $(BUILD)/asan/lib/libpvas.a
PVASRUN := $(BUILD)/bin/pvasrun
HWLOC_LIBS = $(shell pkg-config --libs hwloc)
PREFIX ?= /usr/local

PVASRUN_ASAN := $(BUILD)/asan/bin/pvasrun

ALL_TARGETS += $(LIBPVAS_A) $(LIBPVAS_SO) $(LIBPVAS_ASAN_A) $(PVASRUN) $(PVASRUN_ASAN) \
	$(BUILD)/lib/pkgconfig/pvas.pc

$(BUILD)/obj/libpvas/%.o: libpvas/src/%.c $(LIBPVAS_HDRS) | deps-base
	@mkdir -p $(@D)
	$(CC) $(LIBPVAS_CFLAGS) -c -o $@ $<

$(BUILD)/asan/obj/libpvas/%.o: libpvas/src/%.c $(LIBPVAS_HDRS) | deps-base
	@mkdir -p $(@D)
	$(CC) $(LIBPVAS_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(LIBPVAS_A): $(LIBPVAS_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBPVAS_ASAN_A): $(LIBPVAS_ASAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBPVAS_SO): $(LIBPVAS_OBJS) libpvas/libpvas.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libpvas.so.0 -Wl,--version-script=libpvas/libpvas.map \
		-Wl,-z,defs -o $@ $(LIBPVAS_OBJS) -lpthread
	ln -sf libpvas.so.0.1 $(BUILD)/lib/libpvas.so.0
	ln -sf libpvas.so.0.1 $(BUILD)/lib/libpvas.so

$(BUILD)/lib/pkgconfig/pvas.pc: libpvas/pvas.pc.in
	@mkdir -p $(@D)
	sed 's|@PREFIX@|$(abspath $(BUILD))|; s|^includedir=.*|includedir=$(abspath include)|' $< > $@

# The wrapper-script hand-off (docs/ompi-launch.md): preloaded into a
# script's programs, found by pvasrun at <its prefix>/lib/pvas/.
PVAS_RANK_HANDOFF_REL := lib/pvas/rank-handoff.so
PVAS_RANK_HANDOFF := $(BUILD)/$(PVAS_RANK_HANDOFF_REL)
ALL_TARGETS += $(PVAS_RANK_HANDOFF)
$(PVAS_RANK_HANDOFF): libpvas/tools/rank_handoff.c libpvas/tools/agent_proto.h | deps-base
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fPIC -shared -Wl,-z,defs -o $@ $<

# pvasrun's hand-off library goes next to the prefix's fork agent
# (ompi-btl/build.mk's ompi-agent target installs bin/pvasrun there).
.PHONY: ompi-agent-handoff
ALL_TARGETS += ompi-agent-handoff
ompi-agent-handoff: ompi $(PVAS_RANK_HANDOFF)
	$(Q)install -C -D -m 644 $(PVAS_RANK_HANDOFF) $(OMPI_PREFIX)/$(PVAS_RANK_HANDOFF_REL)

PVASRUN_SRCS := libpvas/tools/pvasrun.c libpvas/tools/ompi_agent.c libpvas/tools/node_root.c
$(PVASRUN): $(PVASRUN_SRCS) libpvas/tools/agent_proto.h $(LIBPVAS_A) include/pvas.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $(PVASRUN_SRCS) $(LIBPVAS_A) $(HWLOC_LIBS) -lpthread

# The same under ASan+UBSan, for the sanitizer test suite.
$(PVASRUN_ASAN): $(PVASRUN_SRCS) libpvas/tools/agent_proto.h $(LIBPVAS_ASAN_A) include/pvas.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -o $@ $(PVASRUN_SRCS) $(LIBPVAS_ASAN_A) $(HWLOC_LIBS) -lpthread

.PHONY: install
install: $(LIBPVAS_A) $(LIBPVAS_SO) $(PVASRUN) $(PVAS_RANK_HANDOFF)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/pvas.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIBPVAS_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBPVAS_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libpvas.so.0.1 $(DESTDIR)$(PREFIX)/lib/libpvas.so.0
	ln -sf libpvas.so.0.1 $(DESTDIR)$(PREFIX)/lib/libpvas.so
	sed 's|@PREFIX@|$(PREFIX)|' libpvas/pvas.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/pvas.pc
	install -m 755 $(PVASRUN) $(DESTDIR)$(PREFIX)/bin/
	install -D -m 644 $(PVAS_RANK_HANDOFF) $(DESTDIR)$(PREFIX)/$(PVAS_RANK_HANDOFF_REL)

# `make demo`, first part: 8 tasks in one address space, then a quick spawn
# benchmark (the DDT comparison follows, from bench/build.mk).
.PHONY: demo-libpvas
demo-libpvas: $(PVASRUN) $(BUILD)/tests/libpvas/t_identity $(BUILD)/bench/spawn-bench $(BUILD)/bench/spawn-noop
	@echo "== pvasrun -n 8: 8 processes, one address space (libpvas, $$($(PVASRUN) --info | sed -n 's/^backend: *//p'))"
	$(Q)$(PVASRUN) -n 8 $(BUILD)/tests/libpvas/t_identity | sort -n -k2
	@echo "== spawn and reap N tasks: pvas_spawn vs fork+exec"
	$(Q)$(BUILD)/bench/spawn-bench --counts 1,16,64 --rounds 3 $(abspath $(BUILD)/bench/spawn-noop) 2>/dev/null
