/* teams: running a region on OpenMP's threads (internal; lend.c). */
#ifndef TEAMS_LEND_H
#define TEAMS_LEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "team-internal.h"

/* Whether a region of p participants could be lent now: an OpenMP runtime
 * in the process, the calling thread the process's first, the team
 * unpinned, the region below the tree's threshold, not a ThreadSanitizer
 * build.  Precondition: the team runs. */
typedef struct tt__thread tt__thread;
bool tt__lend_possible(tt__thread *me, size_t p);

/* Runs the region on OpenMP's threads (GOMP_parallel) and returns how many
 * it ran on, or 0 when OpenMP would use a single thread (then nothing ran).
 * longest_ns, unless NULL, receives the longest of the threads' parts (each
 * timed from its start to its end): the region less that is what lending
 * it cost beyond its critical path.
 * Precondition: the caller holds the team; tt__lend_possible(p). */
size_t tt__lend(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                tt__mode mode, uint64_t *longest_ns);

/* What a region lent on p participants now leaves behind, in ns of the
 * team's time: OpenMP's threads spin after it (their spin, measured once),
 * taking their share of the team's CPUs meanwhile; spinning (they spin
 * now), only what it adds to the spin of the last lent region; 0 when
 * there is no OpenMP runtime, or it never sleeps, or never spins (lend.c).
 * The process's first thread only. */
float tt__lend_tail_ns(size_t p, bool spinning);
/* How long lending must pause for a look to see OpenMP's threads asleep
 * where their spin is the lent regions' own: their spin S, then two looks;
 * 0 where they never sleep or never spin (lend.c). */
float tt__lend_pause_ns(void);

/* Whether OpenMP's threads spin now, as the process's CPU time says, and
 * team.others_busy (lend.c); held: the caller holds the team.
 * Precondition: tt__lend_possible for the calling thread. */
bool tt__lend_spinning(bool held);

#endif
