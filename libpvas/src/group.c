// SPDX-License-Identifier: LGPL-2.1-or-later
/* Group life cycle and backend choice. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

void pvas_group_attr_init(struct pvas_group_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->partition_size = PVAS_DEFAULT_PARTITION_SIZE;
	a->partition_count = PVAS_DEFAULT_PARTITION_COUNT;
	a->backend = PVAS_BACKEND_AUTO;
}

/* The backend to use: $PVAS_BACKEND overrides the attribute. */
static const struct pvas_backend *choose_backend(enum pvas_backend_kind kind)
{
	const char *env = getenv(PVAS_ENV_BACKEND);

	if (env && *env && strcmp(env, "auto")) {
		if (!strcmp(env, "user"))
			kind = PVAS_BACKEND_USER;
		else if (!strcmp(env, "kmod"))
			kind = PVAS_BACKEND_KMOD;
		else {
			pvas_set_errorf(EINVAL, "pvas_create: %s=%s (want user, kmod or auto)",
					PVAS_ENV_BACKEND, env);
			return NULL;
		}
	}
	switch (kind) {
	case PVAS_BACKEND_USER:
		return &pvas_backend_user;
	case PVAS_BACKEND_KMOD:
		if (!pvas_backend_kmod.available()) {
			pvas_set_errorf(ENODEV, "pvas_create: backend kmod: /dev/pvas (is pvas.ko loaded?)");
			return NULL;
		}
		return &pvas_backend_kmod;
	case PVAS_BACKEND_AUTO:
		return pvas_backend_kmod.available() ? &pvas_backend_kmod : &pvas_backend_user;
	}
	pvas_set_error("pvas_create", "backend kind", EINVAL);
	return NULL;
}

const char *pvas_backend_name(enum pvas_backend_kind kind)
{
	const struct pvas_backend *be = choose_backend(kind);

	return be ? be->name : "none";
}

static int check_attr(const struct pvas_group_attr *a)
{
	size_t sz = a->partition_size;

	if (a->flags) {
		pvas_set_error("pvas_create", "attr.flags", EINVAL);
		return -1;
	}
	if (sz < (1UL << 30) || (sz & (sz - 1)) || sz > (1UL << 40)) {
		pvas_set_errorf(EINVAL,
				"pvas_create: partition size %zu (want a power of two, 1 GiB..1 TiB)",
				sz);
		return -1;
	}
	if (a->partition_count < 1 || a->partition_count > PVAS_MAX_PARTITION_COUNT) {
		pvas_set_errorf(EINVAL, "pvas_create: partition count %u (want 1..%u)",
				a->partition_count, PVAS_MAX_PARTITION_COUNT);
		return -1;
	}
	if ((unsigned __int128)sz * a->partition_count > (64ULL << 40)) {
		pvas_set_errorf(EINVAL, "pvas_create: %u partitions of %zu bytes exceed 64 TiB",
				a->partition_count, sz);
		return -1;
	}
	return 0;
}

int pvas_create(const struct pvas_group_attr *attr, pvas_group_t **out)
{
	struct pvas_group_attr a;
	struct pvas_group *g;
	unsigned i;
	int err;

	if (!out) {
		pvas_set_error("pvas_create", "NULL group pointer", EINVAL);
		return -1;
	}
	pvas_group_attr_init(&a);
	if (attr) {
		a = *attr;
		if (!a.partition_size)
			a.partition_size = PVAS_DEFAULT_PARTITION_SIZE;
		if (!a.partition_count)
			a.partition_count = PVAS_DEFAULT_PARTITION_COUNT;
	}
	if (check_attr(&a))
		return -1;
	g = calloc(1, sizeof(*g));
	if (!g) {
		pvas_set_error("pvas_create", "group", ENOMEM);
		return -1;
	}
	g->dev_fd = -1;
	pthread_mutex_init(&g->lock, NULL);
	g->be = choose_backend(a.backend);
	if (!g->be)
		goto fail;
	g->pidfds = malloc(a.partition_count * sizeof(*g->pidfds));
	g->ctl_size = sizeof(struct pvas_ctl) + a.partition_count * sizeof(struct pvas_ctl_slot);
	g->ctl = mmap(NULL, g->ctl_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!g->pidfds || g->ctl == MAP_FAILED) {
		g->ctl = NULL;
		pvas_set_error("pvas_create", "control block", ENOMEM);
		goto fail;
	}
	for (i = 0; i < a.partition_count; i++)
		g->pidfds[i] = -1;
	g->ctl->magic = PVAS_CTL_MAGIC;
	g->ctl->version = PVAS_CTL_VERSION;
	g->ctl->root_pid = getpid();
	g->ctl->part_size = a.partition_size;
	g->ctl->part_count = a.partition_count;
	strncpy(g->ctl->backend, g->be->name, sizeof(g->ctl->backend) - 1);
	err = g->be->group_create(g);
	if (err) {
		pvas_set_errorf(-err, "pvas_create: reserve %u partitions of %zu bytes (%s backend)",
				a.partition_count, a.partition_size, g->be->name);
		goto fail;
	}
	pvas_set_root_ctl(g->ctl);
	*out = g;
	return 0;
fail:
	if (g->ctl)
		munmap(g->ctl, g->ctl_size);
	free(g->pidfds);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return -1;
}

int pvas_destroy(pvas_group_t *g, int force)
{
	if (!g) {
		pvas_set_error("pvas_destroy", "NULL group", EINVAL);
		return -1;
	}
	if (atomic_load(&g->ctl->ntasks) > 0) {
		if (!force) {
			pvas_set_errorf(EBUSY, "pvas_destroy: group %#llx has %d live task(s)",
					(unsigned long long)g->ctl->group_id,
					atomic_load(&g->ctl->ntasks));
			return -1;
		}
		pvas_kill(g, -1, SIGKILL);
		while (pvas_wait(g, -1, NULL, 0) >= 0 || errno == EINTR)
			;
	}
	g->be->group_destroy(g);
	pvas_set_root_ctl(NULL);
	munmap(g->ctl, g->ctl_size);
	free(g->pidfds);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return 0;
}

int pvas_group_ntasks(const pvas_group_t *g)
{
	return g ? atomic_load(&g->ctl->ntasks) : -1;
}

pid_t pvas_task_pid(const pvas_group_t *g, int id)
{
	if (!g || id < 0 || (unsigned)id >= g->ctl->part_count ||
	    atomic_load(&g->ctl->slot[id].state) != SLOT_LIVE)
		return -1;
	return atomic_load(&g->ctl->slot[id].pid);
}
