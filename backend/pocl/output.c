/* teams PoCL driver: a launch's printf output, in work-group order.
 *
 * A launch's output comes out in work-group order, as on PoCL's basic
 * driver, whichever participants ran the groups and in whatever order
 * they finished.  A participant formats into its own buffer; at the end of
 * a chunk that printed, it reserves room in the launch's output (struct
 * tp_out: one fetch_add on `used`) and copies the chunk's bytes there
 * behind a header naming the chunk's first group.  The arena is allocated
 * by the first chunk that prints (published with a release CAS; a loser
 * frees its own), so a launch that prints nothing costs nothing; its room
 * is the device's printf buffer size, a command's on PoCL's own drivers,
 * and output beyond it is dropped as there.  After the region (its end
 * orders every participant's copy before the caller's reads) the thread
 * that runs the command writes the records sorted by group.  Where PoCL's
 * kernel library prints at each printf itself (Debian's PoCL 6.0 and 7.1),
 * the output is PoCL's and the buffer at most reset (pocl-compat.h,
 * tp_printf_flush); a kernel whose object calls what prints it (wgfunc.c,
 * object_calls) then runs its groups in order on one participant.
 * Without memory for the arena a chunk writes its own output at once. */
#include "teams-pocl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A record in the arena: the chunk's first group, its length, its bytes
 * (8-aligned). */
struct tp_out_rec {
  size_t group;
  size_t len;
};

static size_t
rec_size (size_t len)
{
  return (sizeof (struct tp_out_rec) + len + 7) & ~(size_t)7;
}

/* A chunk that began at group `group` printed n bytes at buf: into the
 * launch's output, or at once where there is no room for it. */
void
tp_out_chunk (struct tp_out *o, size_t group, const char *buf, uint32_t n)
{
  char *text = tt_atomic_load_acquire (&o->text);
  if (text == NULL)
    {
      char *mine = malloc (o->cap);
      char *none = NULL;
      if (mine != NULL && tt_atomic_cas_acq_rel (&o->text, &none, mine))
        text = mine;
      else
        {
          free (mine);
          text = none; /* the winner's, or NULL without memory */
        }
    }
  size_t need = rec_size (n);
  size_t at = text != NULL ? tt_atomic_fetch_add_relaxed (&o->used, need)
                           : SIZE_MAX;
  if (at == SIZE_MAX || at > o->cap || o->cap - at < need)
    {
      if (text == NULL)
        tp_printf_flush ((char *)buf, n); /* no arena: unordered, whole */
      return; /* past the launch's room: dropped, as on PoCL's drivers */
    }
  struct tp_out_rec r = { group, n };
  memcpy (text + at, &r, sizeof r);
  memcpy (text + at + sizeof r, buf, n);
}

static int
by_group (const void *a, const void *b)
{
  size_t x = (*(const struct tp_out_rec *const *)a)->group;
  size_t y = (*(const struct tp_out_rec *const *)b)->group;
  return x < y ? -1 : x > y;
}

/* After the region: the launch's output in group order, then the arena
 * freed.  Called by the thread that ran the command. */
void
tp_out_write (struct tp_out *o)
{
  char *text = tt_atomic_load_acquire (&o->text);
  if (text == NULL)
    return;
  size_t used = tt_atomic_load_relaxed (&o->used);
  if (used > o->cap)
    used = o->cap;
  size_t n = 0;
  for (size_t at = 0; at + sizeof (struct tp_out_rec) <= used;)
    {
      const struct tp_out_rec *r = (const void *)(text + at);
      if (at + rec_size (r->len) > used)
        break;
      at += rec_size (r->len);
      n++;
    }
  const struct tp_out_rec **v = malloc (n * sizeof *v + 1);
  size_t k = 0;
  for (size_t at = 0; k < n; ++k)
    {
      const struct tp_out_rec *r = (const void *)(text + at);
      if (v == NULL) /* without memory: in the order they came */
        tp_printf_flush ((char *)(r + 1), (uint32_t)r->len);
      else
        v[k] = r;
      at += rec_size (r->len);
    }
  if (v != NULL)
    {
      qsort (v, n, sizeof *v, by_group);
      for (k = 0; k < n; ++k)
        tp_printf_flush ((char *)(v[k] + 1), (uint32_t)v[k]->len);
      free (v);
    }
  free (text);
}

/* pocl-compat.h: a participant's printf output as text (PoCL 3.1, 6.0). */
void
tp_write_text (const char *b, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (STDOUT_FILENO, b, n);
      if (w <= 0)
        break;
      b += w;
      n -= (size_t)w;
    }
}

