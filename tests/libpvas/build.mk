# tests/libpvas: the libpvas suite, built twice.
#   $(BUILD)/tests/libpvas/      plain driver, plain tasks
#   $(BUILD)/tests/libpvas-san/  driver (= root side, libpvas) under ASan+UBSan,
#                                tasks under UBSan (ASan cannot run in a task:
#                                its shadow is one per address space)
TL_DIR := $(BUILD)/tests/libpvas
TS_DIR := $(BUILD)/tests/libpvas-san
TL_TASKS := t_identity t_export t_threads t_malloc t_forkexec t_segv t_stdio t_signal t_import
TL_TASK_HDR := tests/libpvas/tasks/task_util.h include/pvas.h
TL_ERR_PROGS := t_nopie t_badinterp t_asan
TL_BINS := $(TL_DIR)/test_libpvas $(TL_TASKS:%=$(TL_DIR)/%) $(TL_ERR_PROGS:%=$(TL_DIR)/%)
TS_BINS := $(TS_DIR)/test_libpvas $(TS_TASKS:%=$(TS_DIR)/%) $(TL_TASKS:%=$(TS_DIR)/%) \
	$(TL_ERR_PROGS:%=$(TS_DIR)/%)

ALL_TARGETS += $(TL_BINS) $(TS_BINS)
TEST_SUITES += $(TL_DIR)/test_libpvas $(TS_DIR)/test_libpvas

$(TL_DIR)/t_%: tests/libpvas/tasks/t_%.c $(TL_TASK_HDR) $(LIBPVAS_A)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -o $@ $< $(LIBPVAS_A) -lpthread

$(TS_DIR)/t_%: tests/libpvas/tasks/t_%.c $(TL_TASK_HDR) $(LIBPVAS_A)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(UBSAN_FLAGS) -o $@ $< $(LIBPVAS_A) -lpthread

# Error-case programs: a position-dependent one, one with a missing ld.so,
# one built with AddressSanitizer.
$(TL_DIR)/t_nopie $(TS_DIR)/t_nopie: tests/libpvas/tasks/t_stdio.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fno-pie -no-pie -o $@ $<
$(TL_DIR)/t_badinterp $(TS_DIR)/t_badinterp: tests/libpvas/tasks/t_stdio.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -Wl,--dynamic-linker=/nonexistent/ld-linux-x86-64.so.2 -o $@ $<
$(TL_DIR)/t_asan $(TS_DIR)/t_asan: tests/libpvas/tasks/t_stdio.c
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -fsanitize=address -o $@ $<

$(TL_DIR)/test_libpvas: tests/libpvas/test_libpvas.c $(LIBPVAS_A) $(KSELFTEST_H) include/pvas.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -isystem $(KSELFTEST_DIR) -Wno-missing-prototypes -o $@ $< $(LIBPVAS_A) -lpthread

$(TS_DIR)/test_libpvas: tests/libpvas/test_libpvas.c $(LIBPVAS_ASAN_A) $(KSELFTEST_H) include/pvas.h \
		$(PVASRUN_ASAN)
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -isystem $(KSELFTEST_DIR) -Wno-missing-prototypes \
		-DPVASRUN_REL='"../../asan/bin/pvasrun"' -o $@ $< $(LIBPVAS_ASAN_A) -lpthread
