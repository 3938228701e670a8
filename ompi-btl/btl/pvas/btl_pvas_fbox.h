/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas: fast boxes, one single-producer single-consumer ring of small
 * messages per (sender, receiver) pair.
 *
 * The ring lives in the RECEIVER's memory (allocated when a sender asks for
 * it; a sender that dies leaves no dangling ring to poll).  The sender
 * writes an entry (an 8-byte header word, then the data, 8-byte aligned)
 * with plain stores and publishes it by storing the header word last, with
 * release semantics.  The receiver polls the header word at its read
 * position in its own memory; after running the callback on the data in
 * place it advances its read position and publishes it (release) in the
 * ring's `read` word, which the sender reads only when it runs out of
 * space.  No atomic read-modify-write on either side, one cache line
 * transfer per small message: the mailbox (btl_pvas_queue.h) needs an
 * exchange and a compare-exchange on a shared tail per message, and a
 * fragment return.
 *
 * Header word: bits 0-31 data bytes, 32-39 tag, 40-47 flags, 48-63 lap
 * marker: 1 + (lap mod 65535), lap = write position / ring size.  An entry
 * never wraps: when it does not fit before the end of the ring, the sender
 * writes a SKIP header there and starts at 0.  What the receiver finds at
 * its read position is therefore always a header word, never old data:
 *   - at offset 0 of a lap, the header of the previous lap's first entry
 *     (another marker);
 *   - anywhere else, the word after the entry it consumed last, which the
 *     sender zeroed before publishing that entry (so a reservation keeps 8
 *     bytes beyond the entry free), or a newer header.
 *
 * Depends on C11 <stdatomic.h> and <string.h> only, so it is unit-tested
 * stand-alone (tests/mpi/src/fbox_test.c).
 */
#ifndef MCA_BTL_PVAS_FBOX_H
#define MCA_BTL_PVAS_FBOX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PVAS_FBOX_LINE      64
#define PVAS_FBOX_FLAG_SKIP 0x1u

typedef struct pvas_fbox {
    /* ring bytes: a power of two, >= 64; read-only after init, so on its
     * own line (both sides read it at every message) */
    _Alignas(PVAS_FBOX_LINE) uint64_t size;
    /* receiver -> sender: bytes consumed (total, not mod size); the sender
     * reads it only when the ring looks full */
    _Alignas(PVAS_FBOX_LINE) _Atomic uint64_t read;
    _Alignas(PVAS_FBOX_LINE) unsigned char ring[];
} pvas_fbox_t;

/* The sender's private state of one ring. */
typedef struct pvas_fbox_writer {
    pvas_fbox_t *box;
    uint64_t write;      /* bytes written (total) */
    uint64_t read_cache; /* box->read as last seen */
} pvas_fbox_writer_t;

/* The receiver's private state of one ring. */
typedef struct pvas_fbox_reader {
    pvas_fbox_t *box;
    uint64_t read; /* bytes consumed (total) */
} pvas_fbox_reader_t;

static inline size_t pvas_fbox_bytes(uint64_t size)
{
    return sizeof(pvas_fbox_t) + (size_t) size;
}

/* box: pvas_fbox_bytes(size) bytes, aligned to PVAS_FBOX_LINE. */
static inline void pvas_fbox_init(pvas_fbox_t *box, uint64_t size)
{
    memset(box->ring, 0, (size_t) size);
    box->size = size;
    atomic_init(&box->read, 0);
}

static inline uint64_t pvas_fbox_align(uint64_t n)
{
    return (n + 7) & ~(uint64_t) 7;
}

static inline uint64_t pvas_fbox_marker(uint64_t pos, uint64_t size)
{
    return 1 + (pos / size) % 65535;
}

static inline _Atomic uint64_t *pvas_fbox_word(pvas_fbox_t *box, uint64_t pos)
{
    return (_Atomic uint64_t *) (void *) &box->ring[pos & (box->size - 1)];
}

/* The header word of an entry at write position pos. */
static inline uint64_t pvas_fbox_header(uint64_t pos, uint64_t size, unsigned int flags,
                                        uint8_t tag, uint64_t len)
{
    return pvas_fbox_marker(pos, size) << 48 | (uint64_t) flags << 40 | (uint64_t) tag << 32 | len;
}

/* Largest data length one entry can hold in a ring of `size` bytes. */
static inline uint64_t pvas_fbox_max_data(uint64_t size)
{
    return size / 4 - 8;
}

/* Sender: room for len data bytes?  Returns where to write them (len
 * bytes, 8-byte aligned), or NULL when the ring is full (or len too
 * large); pvas_fbox_commit publishes the entry. */
static inline unsigned char *pvas_fbox_reserve(pvas_fbox_writer_t *w, uint64_t len)
{
    pvas_fbox_t *box = w->box;
    uint64_t size = box->size, need = 8 + pvas_fbox_align(len);
    uint64_t pos = w->write & (size - 1), skip = size - pos < need ? size - pos : 0;

    if (len > pvas_fbox_max_data(size)) {
        return NULL;
    }
    /* + 8: the next header word, zeroed by the commit */
    if (w->write + skip + need + 8 - w->read_cache > size) {
        w->read_cache = atomic_load_explicit(&box->read, memory_order_acquire);
        if (w->write + skip + need + 8 - w->read_cache > size) {
            return NULL;
        }
    }
    if (skip) {
        atomic_store_explicit(pvas_fbox_word(box, w->write),
                              pvas_fbox_header(w->write, size, PVAS_FBOX_FLAG_SKIP, 0, 0),
                              memory_order_release);
        w->write += skip;
    }
    return &box->ring[(w->write & (size - 1)) + 8];
}

/* Sender: publish the entry reserved last (len as reserved). */
static inline void pvas_fbox_commit(pvas_fbox_writer_t *w, uint64_t len, uint8_t tag)
{
    uint64_t size = w->box->size, next = w->write + 8 + pvas_fbox_align(len);

    if (next & (size - 1)) {
        /* the next entry's header word: old data there must not look valid */
        atomic_store_explicit(pvas_fbox_word(w->box, next), 0, memory_order_relaxed);
    }
    atomic_store_explicit(pvas_fbox_word(w->box, w->write),
                          pvas_fbox_header(w->write, size, 0, tag, len), memory_order_release);
    w->write = next;
}

/* Receiver: the next entry, or NULL.  *len and *tag describe it; the data
 * stays valid until pvas_fbox_consume. */
static inline unsigned char *pvas_fbox_peek(pvas_fbox_reader_t *r, uint64_t *len, uint8_t *tag)
{
    pvas_fbox_t *box = r->box;
    uint64_t size = box->size;

    for (;;) {
        uint64_t word = atomic_load_explicit(pvas_fbox_word(box, r->read), memory_order_acquire);
        if (word >> 48 != pvas_fbox_marker(r->read, size)) {
            return NULL;
        }
        if ((word >> 40) & PVAS_FBOX_FLAG_SKIP) {
            r->read += size - (r->read & (size - 1));
            continue;
        }
        *len = word & 0xffffffffu;
        *tag = (uint8_t) (word >> 32);
        return &box->ring[(r->read & (size - 1)) + 8];
    }
}

/* Receiver: done with the entry peek returned (len as returned). */
static inline void pvas_fbox_consume(pvas_fbox_reader_t *r, uint64_t len)
{
    r->read += 8 + pvas_fbox_align(len);
    atomic_store_explicit(&r->box->read, r->read, memory_order_release);
}

#endif /* MCA_BTL_PVAS_FBOX_H */
