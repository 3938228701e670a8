/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * Copyright (c) 2026      PVAS.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/**
 * @file
 *
 * Direct two-layout copy: copy a message straight from the sender's
 * datatype layout into the receiver's datatype layout, without an
 * intermediate packed buffer.  For processes that share one virtual
 * address space (PVAS; the BTL flag MCA_BTL_FLAGS_SHARED_ADDR_SPACE), where
 * both user buffers are directly addressable by either side.
 *
 * Positions are offsets in the packed stream (the bytes MPI_Pack of the send
 * datatype would produce, which is the same stream MPI_Unpack of the receive
 * datatype consumes when the type signatures match).  A copy of [from, to)
 * may start and end anywhere: inside a block, inside a basic element.  So
 * the two sides of a transfer may each copy a part of the message, in
 * parallel: e.g. the sender [0, a) and the receiver [a, n).
 *
 * Datatypes of the PEER: the descriptions are only READ (flags, size, lb,
 * ub, desc / opt_desc elements); no function pointer of the datatype or of
 * a convertor is ever called and no field is written.  All working state
 * lives in the caller's memory.  Only homogeneous copies (no conversion,
 * no checksum, no CUDA buffers).
 *
 * Two ways to use it:
 *
 *  - one-shot: opal_datatype_copy_direct() / opal_convertor_copy_direct()
 *    compile both layouts (on the stack for small datatypes), copy, forget;
 *
 *  - compiled layouts: opal_datatype_direct_layout_create() once per message
 *    (e.g. per PML request, for each side), then
 *    opal_datatype_direct_layout_copy() for every fragment, then
 *    opal_datatype_direct_layout_release().  A layout is plain data (no
 *    pointers into the datatype, no function pointers) and is never written
 *    after creation: it stays valid when the datatype is freed, and another
 *    process of the same address space may use it concurrently (only its
 *    creator may release it: it was allocated from the creator's heap).
 */

#ifndef OPAL_DATATYPE_DIRECT_H_HAS_BEEN_INCLUDED
#define OPAL_DATATYPE_DIRECT_H_HAS_BEEN_INCLUDED

#include "opal_config.h"

#include <stddef.h>

#include "opal/datatype/opal_datatype.h"

BEGIN_C_DECLS

struct opal_convertor_t;

/** A datatype x count compiled to nested runs (opaque). */
typedef struct opal_datatype_direct_layout_t opal_datatype_direct_layout_t;

/**
 * Compile count elements of datatype dt (which may live in a peer's memory:
 * read only) into a layout allocated from the caller's heap.
 * @return OPAL_SUCCESS, OPAL_ERR_OUT_OF_RESOURCE, or OPAL_ERR_NOT_SUPPORTED
 *         (a description this engine does not understand: the caller falls
 *         back to pack/unpack).
 */
OPAL_DECLSPEC int opal_datatype_direct_layout_create(const opal_datatype_t *dt, size_t count,
                                                     opal_datatype_direct_layout_t **layout);

/** Free a layout (only by the process that created it). NULL is allowed. */
OPAL_DECLSPEC void opal_datatype_direct_layout_release(opal_datatype_direct_layout_t *layout);

/** Packed bytes described by a layout (datatype size x count). */
OPAL_DECLSPEC size_t opal_datatype_direct_layout_size(const opal_datatype_direct_layout_t *layout);

/** The layout's serial number: no other layout this process has created
 *  has it (with the layout's address, a key for caches of layouts that
 *  may be freed and their memory reused). */
OPAL_DECLSPEC uint64_t opal_datatype_direct_layout_serial(const opal_datatype_direct_layout_t *layout);

/** Block-size classes of a layout's shape: blocks of at most 8, 32, 128,
 *  512, 2048, 4096 bytes, and larger (glibc's memcpy changes from vector
 *  moves to `rep movsb` at 2113 bytes on CPUs with FSRM). */
#define OPAL_DATATYPE_DIRECT_CLASSES 7

/** What a copy of a layout walks, for cost models. */
typedef struct opal_datatype_direct_shape_t {
    size_t bytes;  /**< packed bytes */
    size_t blocks; /**< contiguous blocks */
    size_t runs;   /**< runs of blocks (leaf visits) the copy loops start */
    size_t sparse_lines; /**< cache lines of blocks under 64 bytes with a line or more of
                              gap to the next: one miss each, which no prefetcher
                              streams */
    size_t index_blocks; /**< blocks of index lists (no stride describes them) */
    size_t index_shared_lines; /**< cache lines of the index list where the packed stream's
                                    half falls that hold bytes of both halves (when two
                                    agents each copy a half, lines that both write) */
    size_t index_pages; /**< 4-KiB pages the index lists touch (a list over several
                             arrays far apart may count a few twice) */
    size_t sparse_pages; /**< 4-KiB pages the sparse lines lie in: an index list's
                              pages, a strided run's span in pages (at most one
                              per block); runs that share pages count them twice */
    size_t blocks_by_class[OPAL_DATATYPE_DIRECT_CLASSES];
    size_t bytes_by_class[OPAL_DATATYPE_DIRECT_CLASSES]; /**< their bytes */
} opal_datatype_direct_shape_t;

/** The shape of a layout: O(nodes), and O(blocks) of its index lists (a
 *  bitmap of at most 32 KiB over their pages or lines, freed on return). */
OPAL_DECLSPEC void opal_datatype_direct_layout_shape(const opal_datatype_direct_layout_t *layout,
                                                     opal_datatype_direct_shape_t *shape);

/**
 * Pack packed-stream bytes [from, to) of buf laid out as layout into
 * dst[0, to - from) (a gather with the engine's loops).
 * @return as opal_datatype_direct_layout_copy.
 */
OPAL_DECLSPEC int opal_datatype_direct_layout_pack(const opal_datatype_direct_layout_t *layout,
                                                   const void *buf, size_t from, size_t to,
                                                   void *dst);

/** Unpack src[0, to - from) into packed-stream bytes [from, to) of buf laid
 *  out as layout (a scatter).  @return as opal_datatype_direct_layout_copy. */
OPAL_DECLSPEC int opal_datatype_direct_layout_unpack(const opal_datatype_direct_layout_t *layout,
                                                     void *buf, size_t from, size_t to,
                                                     const void *src);

/**
 * Copy packed-stream bytes [from, to) from sbuf laid out as slayout into
 * rbuf laid out as rlayout.  Buffers are the user buffers as given to
 * MPI (NULL = MPI_BOTTOM with absolute displacements).
 * @return OPAL_SUCCESS, or OPAL_ERR_BAD_PARAM if from > to or to exceeds
 *         either layout's size.
 */
OPAL_DECLSPEC int opal_datatype_direct_layout_copy(const opal_datatype_direct_layout_t *slayout,
                                                   const void *sbuf,
                                                   const opal_datatype_direct_layout_t *rlayout,
                                                   void *rbuf, size_t from, size_t to);

/**
 * One-shot: copy packed-stream bytes [from, to) of (sbuf, scount, sdt) into
 * (rbuf, rcount, rdt).  Either datatype may be the peer's.
 * @return as opal_datatype_direct_layout_create() and _copy().
 */
OPAL_DECLSPEC int opal_datatype_copy_direct(const opal_datatype_t *sdt, size_t scount,
                                            const void *sbuf, const opal_datatype_t *rdt,
                                            size_t rcount, void *rbuf, size_t from, size_t to);

/**
 * Local copy of a whole message between two datatypes of this process (the
 * local part of a collective): copies min(send, receive) packed bytes.
 * @return OPAL_SUCCESS, or OPAL_ERR_NOT_SUPPORTED when pack/unpack is the
 *         better way (index lists of many tiny blocks) or the engine cannot
 *         take the pair: nothing was copied.
 */
OPAL_DECLSPEC int opal_datatype_copy_direct_local(const opal_datatype_t *sdt, size_t scount,
                                                  const void *sbuf, const opal_datatype_t *rdt,
                                                  size_t rcount, void *rbuf);

/**
 * One-shot on two prepared convertors (send: opal_convertor_prepare_for_send,
 * recv: opal_convertor_prepare_for_recv), either of which may be the
 * peer's.  Reads only their pDesc, count, pBaseBuf and flags; their
 * positions (bConverted, stacks) are neither used nor updated.
 * @return as opal_datatype_copy_direct(); OPAL_ERR_NOT_SUPPORTED for
 *         heterogeneous, checksum or CUDA convertors.
 */
OPAL_DECLSPEC int opal_convertor_copy_direct(const struct opal_convertor_t *send,
                                             const struct opal_convertor_t *recv, size_t from,
                                             size_t to);

/**
 * memcpy(dst, src, n) for buffers that do not overlap, except that where
 * this CPU's `rep movsb` is slow for the two addresses (the destination 1
 * to 31 bytes after the source modulo 4 KiB on AMD Zen 3, glibc BZ 30994;
 * probed once per process) a copy of more than 2 KiB goes in 2-KiB pieces.
 */
OPAL_DECLSPEC void opal_datatype_direct_memcpy(void *dst, const void *src, size_t n);

END_C_DECLS

#endif /* OPAL_DATATYPE_DIRECT_H_HAS_BEEN_INCLUDED */
