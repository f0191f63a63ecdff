/* teams: the TEAMS_* settings table (settings.h). */
#include "settings.h"

#include "atomic.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef enum kind { KIND_INT, KIND_CHOICE, KIND_TEXT } kind;

typedef struct def {
  const char *name;
  kind kind;
  long lo, hi;
  const char *choices; /* "a|b|c" */
  long dflt;
  const char *what, *from;
} def;

static const def defs[TT__NSETTINGS] = {
#define TT__SETTING_DEF(id, name, k, lo, hi, choices, dflt, what, from)        \
  {name, KIND_##k, lo, hi, choices, dflt, what, from},
    TT__SETTINGS(TT__SETTING_DEF)
#undef TT__SETTING_DEF
};

bool tt__settings_parse_int(const char *text, long lo, long hi, long *v) {
  if (!text || !isdigit((unsigned char)text[text[0] == '-' || text[0] == '+']))
    return false;
  errno = 0;
  char *end;
  long x = strtol(text, &end, 10);
  if (errno || *end || x < lo || x > hi)
    return false;
  *v = x;
  return true;
}

/* The index of text among choices ("a|b|c"), or -1. */
static long choice_index(const char *choices, const char *text) {
  size_t len = strlen(text);
  long i = 0;
  for (const char *c = choices; *c; i++) {
    size_t n = strcspn(c, "|");
    if (n == len && !strncmp(c, text, n))
      return i;
    c += n + (c[n] == '|');
  }
  return -1;
}

/* The refused value each setting was last reported for (a hash of its
 * text, 0: none): a value is read at every start of the team and by
 * teams-info, and says it is refused once, and again only when it changes. */
static _Atomic unsigned long refused[TT__NSETTINGS];

static unsigned long text_hash(const char *s) {
  unsigned long h = 14695981039346656037ul; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ul;
  return h ? h : 1;
}

/* Reads one setting; false (and the default) when the value is refused. */
static bool read_one(int i, long *value, bool *set, const char **text) {
  const def *d = &defs[i];
  const char *s = getenv(d->name);
  *value = d->dflt;
  *set = false;
  *text = NULL;
  if (!s || !*s)
    return true;
  long v = -1;
  bool ok = true;
  switch (d->kind) {
  case KIND_INT:
    ok = tt__settings_parse_int(s, d->lo, d->hi, &v);
    break;
  case KIND_CHOICE:
    ok = (v = choice_index(d->choices, s)) >= 0;
    break;
  case KIND_TEXT:
    *text = s;
    break;
  }
  if (!ok) {
    unsigned long h = text_hash(s);
    if (tt_atomic_exchange_relaxed(&refused[i], h) == h)
      return false;
    if (d->kind == KIND_INT)
      fprintf(stderr, "teams: ignoring %s=%s (expected an integer %ld..%ld)\n",
              d->name, s, d->lo, d->hi);
    else
      fprintf(stderr, "teams: ignoring %s=%s (expected one of %s)\n", d->name,
              s, d->choices);
    return false;
  }
  *value = v;
  *set = true;
  return true;
}

void tt__settings_read(tt__settings *out) {
  for (int i = 0; i < TT__NSETTINGS; i++)
    read_one(i, &out->value[i], &out->set[i], &out->text[i]);
}

long tt__setting(tt__setting_id id) {
  long v;
  bool set;
  const char *text;
  if ((unsigned)id >= TT__NSETTINGS)
    return -1;
  read_one((int)id, &v, &set, &text);
  return v;
}

const char *tt__setting_text(tt__setting_id id) {
  long v;
  bool set;
  const char *text = NULL;
  if ((unsigned)id < TT__NSETTINGS)
    read_one((int)id, &v, &set, &text);
  return text;
}

/* The n-th choice of choices into buf. */
static const char *choice_name(const char *choices, long n, char *buf,
                               size_t cap) {
  const char *c = choices;
  for (long i = 0; i < n && *c; i++)
    c += strcspn(c, "|") + (c[strcspn(c, "|")] == '|');
  size_t len = strcspn(c, "|");
  if (len >= cap)
    len = cap - 1;
  memcpy(buf, c, len);
  buf[len] = 0;
  return buf;
}

/* choices ("a|b") as "`a`, `b`" into buf. */
static void format_choices(const char *choices, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (const char *c = choices; *c && len < cap;) {
    int n = (int)strcspn(c, "|");
    len += (size_t)snprintf(buf + len, cap - len, "%s`%.*s`", c == choices ? "" : ", ", n, c);
    c += n + (c[n] == '|');
  }
}

/* The default as text: a number, a choice, or "computed" (from says how). */
static const char *default_text(const def *d, char *buf, size_t cap) {
  if (d->kind == KIND_CHOICE)
    return choice_name(d->choices, d->dflt, buf, cap);
  if (d->dflt < 0)
    return "";
  snprintf(buf, cap, "%ld", d->dflt);
  return buf;
}

void tt__settings_print(FILE *out, const tt__settings *s, bool markdown,
                        const char *prefix) {
  char dbuf[64], vbuf[64], range[96];
  if (markdown)
    fprintf(out, "| variable | values | default |\n| --- | --- | --- |\n");
  for (int i = 0; i < TT__NSETTINGS; i++) {
    const def *d = &defs[i];
    if (d->kind == KIND_INT)
      snprintf(range, sizeof range, "%ld..%ld", d->lo, d->hi);
    else if (d->kind == KIND_CHOICE)
      format_choices(d->choices, range, sizeof range);
    else
      snprintf(range, sizeof range, "text");
    const char *dflt = default_text(d, dbuf, sizeof dbuf);
    if (markdown) {
      fprintf(out, "| `%s` | %s: %s | %s |\n", d->name, range, d->what,
              *dflt ? dflt : d->kind == KIND_INT ? d->from : "");
      continue;
    }
    const char *val = dflt;
    if (s && s->set[i]) {
      if (d->kind == KIND_TEXT)
        val = s->text[i];
      else if (d->kind == KIND_CHOICE)
        val = choice_name(d->choices, s->value[i], vbuf, sizeof vbuf);
      else
        snprintf(vbuf, sizeof vbuf, "%ld", s->value[i]), val = vbuf;
    }
    char src[160];
    if (s && s->set[i])
      snprintf(src, sizeof src, "(set)");
    else if (*d->from)
      snprintf(src, sizeof src, "(default: %s)", d->from);
    else
      snprintf(src, sizeof src, "(default)");
    fprintf(out, "%s%-32s %-12s %s\n", prefix, d->name, *val ? val : "-", src);
  }
}
