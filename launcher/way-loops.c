/* teams: the way's numbers -- a launching thread's table of loops, the
 * median of three that a loop's numbers follow, the process's constants
 * and their samples, and the looks (which of a loop's regions is timed).
 * What the rule does with them is way.c (docs/protocol.md item 44).
 *
 * Only the thread that owns a table reads or writes it: no
 * synchronization.  The constants are relaxed atomics (way.h). */
#include <string.h>

#include "atomic.h"
#include "prim.h"
#include "way.h"

tt__costs tt__the_costs;

/* ---- the constants ------------------------------------------------------------ */

/* A number that follows its samples: a lower one moves it by 1/2, a
 * higher one by 1/8 (one slow wake-up is not yet a slower machine). */
static float follow_low_step(float old, float x) {
  return old + (x - old) / (x < old ? 2 : 8);
}

/* A sample of a constant: the first sets it, the next ones follow. */
static void sample_constant(_Atomic uint32_t *c, uint64_t ns) {
  float v = ns > UINT32_MAX ? (float)UINT32_MAX : ns ? (float)ns : 1;
  uint32_t old = tt_atomic_load_relaxed(c);
  float x = old ? follow_low_step((float)old, v) : v;
  tt_atomic_store_relaxed(c, x >= (float)UINT32_MAX ? UINT32_MAX : x < 1 ? 1 : (uint32_t)(x + 0.5f));
}

void tt__costs_wake_call(uint64_t ns) { sample_constant(&tt__the_costs.wake_call, ns); }
void tt__costs_wake_lat(uint64_t ns) { sample_constant(&tt__the_costs.wake_lat, ns); }
void tt__costs_lend(bool spinning, uint64_t ns) {
  sample_constant(&tt__the_costs.lend[spinning], ns);
}

void tt__costs_set(uint32_t fork, uint32_t wake_call, uint32_t wake_lat,
                   uint32_t look) {
  if (fork)
    tt_atomic_store_relaxed(&tt__the_costs.fork, fork);
  if (wake_call)
    tt_atomic_store_relaxed(&tt__the_costs.wake_call, wake_call);
  if (wake_lat)
    tt_atomic_store_relaxed(&tt__the_costs.wake_lat, wake_lat);
  if (look)
    tt_atomic_store_relaxed(&tt__the_costs.look, look);
}

/* ---- a loop's numbers ----------------------------------------------------------- */

void tt__follow_median(float *v, float s[3], uint8_t *n, float x) {
  s[2] = s[1];
  s[1] = s[0];
  s[0] = x;
  if (*n < 3)
    (*n)++;
  if (*n == 1) {
    *v = x;
  } else if (*n == 2) {
    *v = (s[0] + s[1]) / 2;
  } else {
    *v = (float)tt__median3(s[0], s[1], s[2]);
  }
}

/* The next look at a loop whose region took ns: the looks' cost under
 * 1/TT__OVERHEAD_DIV of the regions' (serial regions: of their work). */
static void next_look(tt__loop *l, float ns) {
  float look = (float)tt_atomic_load_relaxed(&tt__the_costs.look);
  float k = look * TT__OVERHEAD_DIV / (ns > 1 ? ns : 1);
  l->untimed_left = k < 1e6f ? (uint32_t)k : 1000000u;
}

bool tt__loop_alone_timed(tt__loop *l) {
  if (l->untimed_left > 0 && l->last_ns > 0) {
    l->untimed_left--;
    return false;
  }
  return true;
}

void tt__loop_alone_record(tt__loop *l, uint64_t ns) {
  l->last_ns = (float)ns;
  next_look(l, (float)ns);
}

/* ---- the table ------------------------------------------------------------------- */

static uint8_t size_class(size_t n) {
  return n ? (uint8_t)(64 - __builtin_clzll((unsigned long long)n)) : 0;
}

/* The first record of the loop's set. */
static tt__loop *set_of(const tt__loops *t, const void *key, uint8_t c,
                        size_t p) {
  uint64_t h = ((uint64_t)(uintptr_t)key >> 4) ^
               (uint64_t)c * 0x9e3779b97f4a7c15u ^
               (uint64_t)p * 0xc2b2ae3d27d4eb4fu;
  size_t set = (size_t)((h ^ (h >> 29)) % (TT__LOOPS / TT__LOOP_WAYS));
  return (tt__loop *)&t->loop[set * TT__LOOP_WAYS];
}

static bool is_loop(const tt__loop *l, const void *key, uint8_t c, size_t p) {
  return l->key == key && l->size_class == c && l->p == p;
}

tt__loop *tt__loop_find(tt__loops *t, const void *key, size_t size, size_t p) {
  uint8_t c = size_class(size);
  tt__loop *set = set_of(t, key, c, p), *l = set;
  uint32_t now = ++t->finds;
  for (int i = 0; i < TT__LOOP_WAYS; i++) {
    if (is_loop(&set[i], key, c, p)) {
      set[i].used = now;
      return &set[i];
    }
    /* else the empty record, or the one found longest ago (the clock's
     * differences are right across its wrap) */
    if (l->key && (!set[i].key || now - set[i].used > now - l->used))
      l = &set[i];
  }
  memset(l, 0, sizeof *l);
  l->key = key;
  l->size_class = c;
  l->p = (uint32_t)p;
  l->steal = -1;
  l->used = now;
  return l;
}

const tt__loop *tt__loop_peek(const tt__loops *t, const void *key, size_t size,
                              size_t p) {
  uint8_t c = size_class(size);
  const tt__loop *set = set_of(t, key, c, p);
  for (int i = 0; i < TT__LOOP_WAYS; i++)
    if (is_loop(&set[i], key, c, p))
      return &set[i];
  return NULL;
}
