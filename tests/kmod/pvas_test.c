// SPDX-License-Identifier: GPL-2.0
/*
 * pvas.ko raw-ioctl tests (kselftest harness, TAP), run in the guest by
 * tests/kmod/run-guest.  Children are made with clone(CLONE_VM) exactly as
 * libpvas makes tasks, and use only raw system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uapi/pvas.h>

#include "kselftest_harness.h"

#define GIB (1UL << 30)
#define MIB (1UL << 20)
#define STACK_SIZE (256UL << 10)

static int dev_open(void)
{
	return open("/dev/pvas", O_RDWR | O_CLOEXEC);
}

static int group_create(int fd, unsigned long part_size, unsigned int count,
			struct pvas_ioc_create *c)
{
	memset(c, 0, sizeof(*c));
	c->part_size = part_size;
	c->part_count = count;
	return ioctl(fd, PVAS_IOC_CREATE, c);
}

static int slot_ioc(int fd, unsigned long cmd, unsigned int slot)
{
	struct pvas_ioc_slot s = { .slot = slot };

	return ioctl(fd, cmd, &s) ? -errno : 0;
}

static long raw_mmap(void *addr, size_t len, int prot, int flags, int fd)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, 0);

	return r == -1 ? -errno : r;
}

/* What a clone(CLONE_VM) child does, and what it found. */
struct child {
	int fd;
	unsigned int slot;
	int join_err;
	volatile int stage;	/* set by the child, read by the test */
	volatile int go;	/* set by the test: child may exit */
	int touch_mib;		/* memory to touch after the checks */
	long addr[8];		/* addresses the kernel picked for it */
	long fixed_other;	/* MAP_FIXED into another partition */
	unsigned long other;	/* an address in a neighbour's partition */
	long fixed_own;		/* MAP_FIXED_NOREPLACE into its own */
	long thread_addr;
	volatile int thread_done;
	unsigned long lo, hi;
	char *stack, *tstack;
};

static int child_thread(void *p)
{
	struct child *c = p;

	c->thread_addr = raw_mmap(NULL, 3 * MIB, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1);
	__atomic_store_n(&c->thread_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	return 0;
}

static int child_main(void *p)
{
	struct child *c = p;
	struct pvas_ioc_slot s = { .slot = c->slot };
	int filefd;
	long r;

	if (syscall(SYS_ioctl, c->fd, PVAS_IOC_JOIN, &s)) {
		c->join_err = 1;
		return 1;
	}
	c->addr[0] = raw_mmap(NULL, MIB, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1);
	c->addr[1] = raw_mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1);
	filefd = syscall(SYS_open, "/proc/self/exe", O_RDONLY);
	c->addr[2] = raw_mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, filefd);
	syscall(SYS_close, filefd);
	/* A hint outside the partition is not honoured. */
	c->addr[3] = raw_mmap((void *)0x100000000UL, MIB, PROT_READ,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1);
	/* mremap that must move. */
	r = raw_mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1);
	syscall(SYS_mmap, r + 4096, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	c->addr[4] = syscall(SYS_mremap, r, 4096, 64 * MIB, MREMAP_MAYMOVE);
	/*
	 * Never past the group's end: MAP_FIXED there is allowed and would
	 * replace whatever the root has mapped at that address.
	 */
	if (c->other)
		c->fixed_other = raw_mmap((void *)c->other, MIB, PROT_READ,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
					  -1);
	c->fixed_own = raw_mmap((void *)(c->lo + 512 * MIB), MIB, PROT_READ,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1);
	/* A thread of the task: same tgid, same partition. */
	if (c->tstack) {
		r = clone(child_thread, c->tstack + STACK_SIZE,
			  CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_FS |
			  CLONE_FILES, c);
		while (r > 0 &&
		       !__atomic_load_n(&c->thread_done, __ATOMIC_ACQUIRE))
			syscall(SYS_sched_yield);
	}
	if (c->touch_mib) {
		char *m = (char *)raw_mmap(NULL, c->touch_mib * MIB,
					   PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1);
		for (size_t i = 0; i < c->touch_mib * MIB; i += 4096)
			m[i] = 1;
		c->addr[5] = (long)m;
	}
	__atomic_store_n(&c->stage, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
	return 0;
}

static struct child *child_new(int fd, unsigned int slot,
			       const struct pvas_ioc_create *g)
{
	struct child *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->slot = slot;
	c->lo = g->base + slot * g->part_size;
	c->hi = c->lo + g->part_size;
	if (slot + 1 < g->part_count)
		c->other = c->hi + 16 * MIB;
	else if (slot > 0)
		c->other = c->lo - g->part_size + 16 * MIB;
	c->stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return c;
}

static pid_t child_start(struct child *c)
{
	return clone(child_main, c->stack + STACK_SIZE, CLONE_VM | SIGCHLD, c);
}

/* Wait until the child is ready, or dead (then join_err = 2). */
static void child_wait_stage(struct child *c, pid_t pid)
{
	siginfo_t si;

	while (!__atomic_load_n(&c->stage, __ATOMIC_ACQUIRE) && !c->join_err) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid) {
			c->join_err = 2;
			break;
		}
		usleep(1000);
	}
}

static int in_range(long a, unsigned long lo, unsigned long hi)
{
	return a > 0 && (unsigned long)a >= lo && (unsigned long)a < hi;
}

/* Lines of /proc/self/maps starting in [lo, hi). */
static int maps_in(unsigned long lo, unsigned long hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long s, e;
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
			n++;
	fclose(f);
	return n;
}

static long meminfo_kib(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atol(line + strlen(key) + 1);
	fclose(f);
	return v;
}

TEST(version)
{
	struct pvas_ioc_version v = { 0 };
	int fd = dev_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PVAS_IOC_VERSION, &v));
	EXPECT_EQ(PVAS_UAPI_VERSION, v.version);
	EXPECT_EQ(0, v.flags);
	EXPECT_EQ(-1, ioctl(fd, 0xdead, 0));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST(create_bad_arguments)
{
	struct pvas_ioc_create c;
	int fd = dev_open(), fd2;

	ASSERT_LE(0, fd);
	/* No group yet. */
	EXPECT_EQ(-ENOTTY, slot_ioc(fd, PVAS_IOC_RESERVE, 0));
	EXPECT_EQ(-1, group_create(fd, GIB + 4096, 4, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, group_create(fd, GIB / 2, 4, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, group_create(fd, GIB, 0, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, group_create(fd, GIB, PVAS_MAX_PARTS + 1, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, group_create(fd, 1UL << 42, 4096, &c));
	EXPECT_EQ(ENOMEM, errno);
	memset(&c, 0, sizeof(c));
	c.part_size = GIB;
	c.part_count = 2;
	c.flags = 1;
	EXPECT_EQ(-1, ioctl(fd, PVAS_IOC_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, PVAS_IOC_CREATE, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, group_create(fd, GIB, 4, &c));
	EXPECT_EQ(0, c.base % GIB);
	EXPECT_NE(0, c.group_id);
	/* One group per fd and per mm. */
	EXPECT_EQ(-1, group_create(fd, GIB, 4, &c));
	EXPECT_EQ(EBUSY, errno);
	fd2 = dev_open();
	EXPECT_EQ(-1, group_create(fd2, GIB, 4, &c));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-EINVAL, slot_ioc(fd, PVAS_IOC_RESERVE, 4));
	EXPECT_EQ(-EINVAL, slot_ioc(fd, PVAS_IOC_JOIN, 0));	/* root */
	close(fd);
	/* The group ended with its fd: the mm can have a new one. */
	EXPECT_EQ(0, group_create(fd2, GIB, 4, &c));
	close(fd2);
}

TEST(root_mappings_stay_out)
{
	struct pvas_ioc_create c;
	int fd = dev_open(), i;
	void *p;

	ASSERT_EQ(0, group_create(fd, GIB, 8, &c));
	for (i = 0; i < 200; i++) {
		p = mmap(NULL, (i % 7 + 1) * MIB, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_FALSE(in_range((long)p, c.base, c.base + 8 * GIB));
	}
	/* A hint inside the range is moved out. */
	p = mmap((void *)(c.base + GIB), MIB, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_FALSE(in_range((long)p, c.base, c.base + 8 * GIB));
	/* MAP_FIXED into a partition is refused to the root. */
	p = mmap((void *)(c.base + GIB), MIB, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, maps_in(c.base, c.base + 8 * GIB));
	close(fd);
}

TEST(join_and_confinement)
{
	struct pvas_ioc_create c;
	struct child *ch;
	int fd = dev_open(), status, i;
	pid_t pid;

	ASSERT_EQ(0, group_create(fd, GIB, 4, &c));
	ch = child_new(fd, 2, &c);
	ASSERT_NE(NULL, ch);
	ch->tstack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* RELEASE of a free slot is a no-op. */
	EXPECT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, 2));
	ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, 2));
	EXPECT_EQ(-EBUSY, slot_ioc(fd, PVAS_IOC_RESERVE, 2));
	pid = child_start(ch);
	ASSERT_LT(0, pid);
	child_wait_stage(ch, pid);
	ASSERT_EQ(0, ch->join_err);
	for (i = 0; i < 5; i++) {
		TH_LOG("mapping %d at %#lx", i, ch->addr[i]);
		EXPECT_TRUE(in_range(ch->addr[i], ch->lo, ch->hi));
	}
	EXPECT_TRUE(in_range(ch->thread_addr, ch->lo, ch->hi));
	EXPECT_EQ(-EPERM, ch->fixed_other);
	EXPECT_EQ((long)(ch->lo + 512 * MIB), ch->fixed_own);
	/* /proc/self/maps (the same mm) shows them in partition 2 only. */
	EXPECT_LE(6, maps_in(ch->lo, ch->hi));
	EXPECT_EQ(0, maps_in(c.base, ch->lo));
	EXPECT_EQ(0, maps_in(ch->hi, c.base + 4 * GIB));
	/* Root refused in the task's partition too. */
	EXPECT_EQ(MAP_FAILED, mmap((void *)(ch->lo + 700 * MIB), MIB, PROT_READ,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	/* The slot is busy while the task lives. */
	EXPECT_EQ(-EBUSY, slot_ioc(fd, PVAS_IOC_RELEASE, 2));
	__atomic_store_n(&ch->go, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, 2));
	EXPECT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, 2));	/* idempotent */
	EXPECT_EQ(0, maps_in(ch->lo, ch->hi));
	close(fd);
}

TEST(owner)
{
	struct pvas_ioc_create c;
	struct pvas_ioc_owner o;
	struct child *ch;
	int fd = dev_open(), status;
	pid_t pid;

	ASSERT_EQ(0, group_create(fd, 2 * GIB, 3, &c));
	ch = child_new(fd, 1, &c);
	ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, 1));
	pid = child_start(ch);
	child_wait_stage(ch, pid);
	memset(&o, 0, sizeof(o));
	o.addr = c.base + 2 * GIB + 12345;
	ASSERT_EQ(0, ioctl(fd, PVAS_IOC_OWNER, &o));
	EXPECT_EQ(1, o.slot);
	EXPECT_EQ(pid, o.pid);
	o.addr = c.base + 4 * GIB;
	ASSERT_EQ(0, ioctl(fd, PVAS_IOC_OWNER, &o));
	EXPECT_EQ(2, o.slot);
	EXPECT_EQ(0, o.pid);
	o.addr = c.base + 6 * GIB;
	ASSERT_EQ(0, ioctl(fd, PVAS_IOC_OWNER, &o));
	EXPECT_EQ(-1, o.slot);
	o.addr = c.base - 1;
	ASSERT_EQ(0, ioctl(fd, PVAS_IOC_OWNER, &o));
	EXPECT_EQ(-1, o.slot);
	__atomic_store_n(&ch->go, 1, __ATOMIC_RELEASE);
	waitpid(pid, &status, 0);
	EXPECT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, 1));
	o.addr = c.base + 2 * GIB;
	ASSERT_EQ(0, ioctl(fd, PVAS_IOC_OWNER, &o));
	EXPECT_EQ(1, o.slot);
	EXPECT_EQ(0, o.pid);
	close(fd);
}

static int tasks_query(int fd, struct pvas_task_info *t, unsigned int cap)
{
	struct pvas_ioc_tasks q = { .buf = (uintptr_t)t, .count = cap };

	if (ioctl(fd, PVAS_IOC_TASKS, &q))
		return -errno;
	return q.count;
}

TEST(reclaim_after_sigkill)
{
	struct pvas_ioc_create c;
	struct pvas_task_info t[4];
	struct child *ch;
	int fd = dev_open(), status;
	long free0, free1, free2;
	pid_t pid;

	ASSERT_EQ(0, group_create(fd, GIB, 4, &c));
	ch = child_new(fd, 3, &c);
	ch->touch_mib = 128;
	free0 = meminfo_kib("MemFree");
	ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, 3));
	ASSERT_EQ(1, tasks_query(fd, t, 4));
	EXPECT_EQ(PVAS_SLOT_RESERVED, t[0].state);
	pid = child_start(ch);
	child_wait_stage(ch, pid);
	ASSERT_EQ(0, ch->join_err);
	EXPECT_TRUE(in_range(ch->addr[5], ch->lo, ch->hi));
	ASSERT_EQ(1, tasks_query(fd, t, 4));
	EXPECT_EQ(3, t[0].slot);
	EXPECT_EQ(PVAS_SLOT_BOUND, t[0].state);
	EXPECT_EQ(pid, t[0].pid);
	EXPECT_LE(128 * MIB, t[0].rss);
	EXPECT_LE(t[0].rss, t[0].mapped);
	free1 = meminfo_kib("MemFree");
	TH_LOG("MemFree %ld -> %ld kB, task rss %llu kB", free0, free1,
	       (unsigned long long)t[0].rss >> 10);
	EXPECT_LE(100 * 1024, free0 - free1);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, 3));
	EXPECT_EQ(0, tasks_query(fd, t, 4));
	EXPECT_EQ(0, maps_in(ch->lo, ch->hi));
	free2 = meminfo_kib("MemFree");
	TH_LOG("MemFree after reclaim %ld kB", free2);
	EXPECT_LE(100 * 1024, free2 - free1);
	/* The slot is reusable. */
	EXPECT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, 3));
	EXPECT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, 3));
	close(fd);
}

TEST(reclaim_without_release)
{
	struct pvas_ioc_create c;
	struct pvas_task_info t[2];
	struct child *ch;
	int fd = dev_open(), status, i;
	pid_t pid;

	ASSERT_EQ(0, group_create(fd, GIB, 2, &c));
	ch = child_new(fd, 0, &c);
	ch->touch_mib = 8;
	ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, 0));
	pid = child_start(ch);
	child_wait_stage(ch, pid);
	__atomic_store_n(&ch->go, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* The exit tracepoint reclaims on its own (asynchronously). */
	for (i = 0; i < 2000 && tasks_query(fd, t, 2) != 0; i++)
		usleep(1000);
	EXPECT_EQ(0, tasks_query(fd, t, 2));
	EXPECT_EQ(0, maps_in(ch->lo, ch->hi));
	close(fd);
}

TEST(spawn_64_tasks)
{
	enum { N = 64 };
	struct pvas_ioc_create c;
	struct pvas_task_info t[N];
	struct child *ch[N];
	pid_t pid[N];
	int fd = dev_open(), status, i, round;

	ASSERT_EQ(0, group_create(fd, GIB, N, &c));
	for (round = 0; round < 2; round++) {
		for (i = 0; i < N; i++) {
			ch[i] = child_new(fd, i, &c);
			ASSERT_NE(NULL, ch[i]);
			ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, i));
			pid[i] = child_start(ch[i]);
			ASSERT_LT(0, pid[i]);
		}
		for (i = 0; i < N; i++) {
			child_wait_stage(ch[i], pid[i]);
			ASSERT_EQ(0, ch[i]->join_err);
			ASSERT_TRUE(in_range(ch[i]->addr[0], ch[i]->lo, ch[i]->hi));
		}
		ASSERT_EQ(N, tasks_query(fd, t, N));
		for (i = 0; i < N; i++)
			__atomic_store_n(&ch[i]->go, 1, __ATOMIC_RELEASE);
		for (i = 0; i < N; i++) {
			ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
			EXPECT_EQ(0, status);
			ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, i));
			munmap(ch[i]->stack, STACK_SIZE);
			munmap(ch[i], sizeof(*ch[i]));
		}
		EXPECT_EQ(0, tasks_query(fd, t, N));
		EXPECT_EQ(0, maps_in(c.base, c.base + N * GIB));
	}
	close(fd);
}

TEST(root_exits_first)
{
	/* The group outlives the root's fd while a task lives. */
	struct pvas_ioc_create c;
	struct child *ch;
	int fd = dev_open(), status;
	pid_t pid;

	ASSERT_EQ(0, group_create(fd, GIB, 2, &c));
	ch = child_new(fd, 1, &c);
	ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, 1));
	pid = child_start(ch);
	child_wait_stage(ch, pid);
	close(fd);	/* the child's copy stays open */
	__atomic_store_n(&ch->go, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

TEST(other_uid_refused)
{
	struct pvas_ioc_create c;
	struct pvas_ioc_owner o = { 0 };
	int fd = dev_open(), status;
	pid_t pid;

	ASSERT_EQ(0, group_create(fd, GIB, 2, &c));
	ASSERT_EQ(0, slot_ioc(fd, PVAS_IOC_RESERVE, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pvas_ioc_create c2;
		int fd2;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (slot_ioc(fd, PVAS_IOC_JOIN, 0) != -EPERM)
			_exit(11);
		if (slot_ioc(fd, PVAS_IOC_RESERVE, 1) != -EPERM)
			_exit(12);
		o.addr = c.base;
		if (ioctl(fd, PVAS_IOC_OWNER, &o) == 0 || errno != EPERM)
			_exit(13);
		/* nobody may still make a group of its own. */
		fd2 = dev_open();
		if (fd2 < 0 || group_create(fd2, GIB, 2, &c2))
			_exit(14);
		/* A fork()ed mm got the original placement back. */
		if (mmap(NULL, MIB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
		    MAP_FAILED)
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* A forked child (own mm, same uid) cannot join either. */
	pid = fork();
	if (pid == 0)
		_exit(slot_ioc(fd, PVAS_IOC_JOIN, 0) == -EINVAL ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, slot_ioc(fd, PVAS_IOC_RELEASE, 0));
	close(fd);
}

static unsigned long long rnd_state;

static unsigned long long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

TEST(random_ioctls)
{
	static const unsigned long cmds[] = {
		PVAS_IOC_VERSION, PVAS_IOC_CREATE, PVAS_IOC_RESERVE,
		PVAS_IOC_JOIN, PVAS_IOC_OWNER, PVAS_IOC_RELEASE, PVAS_IOC_TASKS,
	};
	unsigned long long seed = 0x5eed0f9a5ULL;
	struct pvas_ioc_version v;
	int fd[3], i, status;
	char *buf;
	pid_t pid;

	if (getenv("PVAS_FUZZ_SEED"))
		seed = strtoull(getenv("PVAS_FUZZ_SEED"), NULL, 0);
	TH_LOG("seed %#llx (set PVAS_FUZZ_SEED to replay)", seed);
	printf("# random_ioctls: seed %#llx\n", seed);
	rnd_state = seed;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		buf = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(buf + 2 * 4096, 4096);	/* a hole after the buffer */
		for (i = 0; i < 3; i++)
			fd[i] = dev_open();
		for (i = 0; i < 10000; i++) {
			unsigned long long r = rnd();
			unsigned long cmd, arg;
			size_t k;

			cmd = r % 8 == 7 ? (unsigned long)rnd() : cmds[r % 7];
			for (k = 0; k < 64; k++)
				buf[k] = rnd();
			if (rnd() % 2) {
				/* Plausible values: small slots, real sizes. */
				((uint64_t *)buf)[0] = rnd() % 4 ? rnd() % 8 : 1ULL << (30 + rnd() % 4);
				((uint32_t *)buf)[2] = rnd() % 5;
				((uint32_t *)buf)[3] = rnd() % 8 ? 0 : rnd();
			}
			switch (rnd() % 6) {
			case 0: arg = 0; break;
			case 1: arg = rnd(); break;
			case 2: arg = 0xffff888000000000ULL + rnd() % (1ULL << 30); break;
			case 3: arg = (unsigned long)(buf + 2 * 4096 - rnd() % 16); break;
			default: arg = (unsigned long)buf; break;
			}
			ioctl(fd[rnd() % 3], cmd, arg);
			if (rnd() % 500 == 0) {
				int j = rnd() % 3;

				close(fd[j]);
				fd[j] = dev_open();
			}
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	i = dev_open();
	ASSERT_EQ(0, ioctl(i, PVAS_IOC_VERSION, &v));
	close(i);
}

TEST_HARNESS_MAIN
