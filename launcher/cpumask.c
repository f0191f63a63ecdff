/* teams: CPU masks and their Linux CPU-list text (see cpumask.h). */
#include "cpumask.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teams/errors.h"

#define WORDS (sizeof(tt__cpumask) / sizeof(unsigned long))

size_t tt__mask_count(const tt__cpumask *m) {
  size_t n = 0;
  for (size_t i = 0; i < WORDS; i++)
    n += (size_t)__builtin_popcountl(m->bits[i]);
  return n;
}

bool tt__mask_equal(const tt__cpumask *a, const tt__cpumask *b) {
  return memcmp(a->bits, b->bits, sizeof a->bits) == 0;
}

void tt__mask_and(tt__cpumask *out, const tt__cpumask *a, const tt__cpumask *b) {
  for (size_t i = 0; i < WORDS; i++)
    out->bits[i] = a->bits[i] & b->bits[i];
}

bool tt__text_uint(const char **s, long *v) {
  if (!isdigit((unsigned char)**s))
    return false;
  char *end;
  errno = 0;
  long x = strtol(*s, &end, 10);
  if (errno)
    return false;
  *v = x;
  *s = end;
  return true;
}

int tt__cpulist_parse(const char *text, tt__cpumask *m) {
  tt__mask_zero(m);
  if (!text)
    return TT_EINVAL;
  const char *s = text;
  while (*s && *s != '\n') {
    long a, b;
    if (!tt__text_uint(&s, &a))
      goto bad;
    b = a;
    if (*s == '-') {
      s++;
      if (!tt__text_uint(&s, &b) || b < a)
        goto bad;
    }
    if (b >= TT__MASK_CPUS)
      goto bad;
    for (long c = a; c <= b; c++)
      tt__mask_set(m, (int)c);
    if (*s == ',')
      s++;
    else if (*s && *s != '\n')
      goto bad;
  }
  if (*s == '\n' && s[1])
    goto bad;
  return (int)tt__mask_count(m);
bad:
  tt__mask_zero(m);
  return TT_EINVAL;
}

size_t tt__cpulist_format(const tt__cpumask *m, char *buf, size_t len) {
  size_t need = 0;
  if (len)
    buf[0] = 0;
  for (int c = 0; c < TT__MASK_CPUS; c++) {
    if (!tt__mask_isset(m, c))
      continue;
    int e = c;
    while (e + 1 < TT__MASK_CPUS && tt__mask_isset(m, e + 1))
      e++;
    char part[32];
    int k = e == c ? snprintf(part, sizeof part, "%s%d", need ? "," : "", c)
                   : snprintf(part, sizeof part, "%s%d-%d", need ? "," : "", c, e);
    if (need + (size_t)k < len)
      memcpy(buf + need, part, (size_t)k + 1);
    else if (need < len)
      buf[need] = 0; /* truncated at a whole entry */
    need += (size_t)k;
    c = e;
  }
  return need;
}
