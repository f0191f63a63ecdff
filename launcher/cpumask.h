/* teams: CPU masks and their Linux CPU-list text (internal).
 *
 * A mask is prim.h's tt__cpumask (1024 CPUs, glibc's cpu_set_t layout);
 * this header adds the set operations the team's sizing needs and the
 * "0-3,8,10-11" text of sysfs, cgroupfs and teams-info.  Pure functions:
 * nothing here reads the system. */
#ifndef TEAMS_CPUMASK_H
#define TEAMS_CPUMASK_H

#include <stdbool.h>
#include <stddef.h>

#include "prim.h"

#define TT__MASK_CPUS ((int)(sizeof(tt__cpumask) * 8))
#define TT__MASK_WORD_BITS (8 * (int)sizeof(unsigned long))

static inline void tt__mask_zero(tt__cpumask *m) {
  for (size_t i = 0; i < sizeof m->bits / sizeof m->bits[0]; i++)
    m->bits[i] = 0;
}
static inline void tt__mask_set(tt__cpumask *m, int cpu) {
  if (cpu >= 0 && cpu < TT__MASK_CPUS)
    m->bits[cpu / TT__MASK_WORD_BITS] |= 1ul << (cpu % TT__MASK_WORD_BITS);
}
static inline bool tt__mask_isset(const tt__cpumask *m, int cpu) {
  return cpu >= 0 && cpu < TT__MASK_CPUS &&
         (m->bits[cpu / TT__MASK_WORD_BITS] >> (cpu % TT__MASK_WORD_BITS)) & 1;
}
size_t tt__mask_count(const tt__cpumask *m);
bool tt__mask_equal(const tt__cpumask *a, const tt__cpumask *b);
/* out = a & b (out may be a or b) */
void tt__mask_and(tt__cpumask *out, const tt__cpumask *a, const tt__cpumask *b);

/* A Linux CPU list ("0-3,8,10-11", a trailing newline allowed, "" empty)
 * into m.  Returns the number of CPUs, or TT_EINVAL (then m is empty). */
int tt__cpulist_parse(const char *text, tt__cpumask *m);
/* m as a CPU list, NUL-terminated and truncated to len like snprintf;
 * returns the length it needed. */
size_t tt__cpulist_format(const tt__cpumask *m, char *buf, size_t len);

/* The unsigned decimal at *s (no sign, no blank), moving *s past it; false
 * (and *s unmoved) when there is none or it overflows a long.  The one
 * number reader of the CPU-list, cgroup and launcher-variable texts. */
bool tt__text_uint(const char **s, long *v);

#endif
