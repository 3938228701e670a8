/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas's locks: Open MPI's opal_atomic_lock_t, taken only when Open MPI
 * runs with threads (opal_using_threads()); without threads every lock is
 * free and these calls cost one branch.
 */
#ifndef MCA_BTL_PVAS_LOCK_H
#define MCA_BTL_PVAS_LOCK_H

#include "opal_config.h"

#include <stdbool.h>

#include "opal/sys/atomic.h"
#include "opal/threads/mutex.h"

static inline void pvas_lock_init(opal_atomic_lock_t *lock)
{
    opal_atomic_lock_init(lock, OPAL_ATOMIC_LOCK_UNLOCKED);
}

/* true: the lock is ours */
static inline bool pvas_lock_try(opal_atomic_lock_t *lock)
{
    return !opal_using_threads() || 0 == opal_atomic_trylock(lock);
}

static inline void pvas_lock(opal_atomic_lock_t *lock)
{
    if (opal_using_threads()) {
        opal_atomic_lock(lock);
    }
}

static inline void pvas_unlock(opal_atomic_lock_t *lock)
{
    if (opal_using_threads()) {
        opal_atomic_unlock(lock);
    }
}

#endif /* MCA_BTL_PVAS_LOCK_H */
