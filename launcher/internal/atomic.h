/* teams: named atomic operations (internal; the PoCL driver's too, through
 * teams-driver.h).
 *
 * Atomic loads, stores and read-modify-writes in launcher/ and backend/ go
 * through these macros, so each memory order is written in the name and
 * can be found with grep and reviewed (mimalloc's atomic.h): thin macros
 * over C11 <stdatomic.h> for _Atomic objects, and, for the few words that
 * cannot be declared _Atomic (a byte of the caller's memory, a field of
 * PoCL's structs), the *_plain_* ones over the compiler's __atomic
 * builtins, which C11 offers nothing for.  tt_atomic_init initialises an
 * _Atomic object no other thread can see yet (C11's atomic_init: no
 * atomic operation, so it has no order). */
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
#define tt_atomic_init(p, v) atomic_init((p), (v))

/* On plain (not _Atomic) objects; the compiler's builtins. */
#define tt_atomic_plain_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define tt_atomic_plain_store_relaxed(p, v)                                    \
  __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define tt_atomic_plain_fetch_add_relaxed(p, v)                                \
  __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
/* Compare-and-swap, strong: on failure *expected receives the value. */
#define tt_atomic_plain_cas_relaxed(p, expected, desired)                      \
  __atomic_compare_exchange_n((p), (expected), (desired), 0,                   \
                              __ATOMIC_RELAXED, __ATOMIC_RELAXED)

#endif
