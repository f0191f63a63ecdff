/* teams: named atomic operations (internal; the PoCL driver's too, through
 * teams-internal.h).
 *
 * Every atomic operation in launcher/ and backend/ goes through one of
 * these (no atomic_* call appears outside this file), so each memory order
 * is written in the name and can be found with grep and reviewed.  Thin macros over C11 <stdatomic.h>. */
#ifndef TEAMS_ATOMIC_H
#define TEAMS_ATOMIC_H

#include <stdatomic.h>

/* Hot words shared between threads are padded to this (two 64-byte lines:
 * x86's adjacent-line prefetcher pairs lines, so 128 avoids false sharing). */
#define TT_CACHE_PAD 128

#define tt_atomic_load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define tt_atomic_load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define tt_atomic_load_seq_cst(p) atomic_load_explicit((p), memory_order_seq_cst)
#define tt_atomic_store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define tt_atomic_store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define tt_atomic_store_seq_cst(p, v) atomic_store_explicit((p), (v), memory_order_seq_cst)
#define tt_atomic_exchange_seq_cst(p, v) atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define tt_atomic_exchange_relaxed(p, v) atomic_exchange_explicit((p), (v), memory_order_relaxed)
#define tt_atomic_fetch_add_seq_cst(p, v) atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define tt_atomic_cas_seq_cst(p, expected, desired)                            \
  atomic_compare_exchange_strong_explicit((p), (expected), (desired),          \
                                          memory_order_seq_cst,                \
                                          memory_order_seq_cst)
#define tt_atomic_exchange_acq_rel(p, v) atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define tt_atomic_fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define tt_atomic_fetch_add_acq_rel(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define tt_atomic_fetch_add_release(p, v) atomic_fetch_add_explicit((p), (v), memory_order_release)
#define tt_atomic_fetch_sub_seq_cst(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)
#define tt_atomic_fetch_sub_relaxed(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define tt_atomic_fetch_sub_release(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_release)
#define tt_atomic_fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define tt_atomic_fetch_or_acq_rel(p, v) atomic_fetch_or_explicit((p), (v), memory_order_acq_rel)
/* Compare-and-swap: on failure *expected receives the current value. */
#define tt_atomic_cas_acq_rel(p, expected, desired)                            \
  atomic_compare_exchange_strong_explicit((p), (expected), (desired),          \
                                          memory_order_acq_rel,                \
                                          memory_order_acquire)
#define tt_atomic_cas_weak_acq_rel(p, expected, desired)                       \
  atomic_compare_exchange_weak_explicit((p), (expected), (desired),            \
                                        memory_order_acq_rel,                  \
                                        memory_order_acquire)
#define tt_atomic_fence_seq_cst() atomic_thread_fence(memory_order_seq_cst)

#endif
