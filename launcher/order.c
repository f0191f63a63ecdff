/* teams: victim orders for the steal schedule (see order.h for the rules).
 *
 * Each row is built by sorting one 64-bit key per victim:
 *   tier << 48 | low, with
 *   low = (v - i) mod n                 in tiers 0 and 1 (rotation after i),
 *   low = rotnode << 32 | v             in remote tiers, rotnode being v's node
 *                                       counted cyclically after i's node;
 * then each remote tier is rotated left by i's rank within its node.  Cost
 * O(n^2 log n) once per team start, a few hundred microseconds at n = 256. */
#include "order.h"

#include <stdlib.h>
#include <string.h>
#include "teams/errors.h"

#define TIER_SHIFT 48

static int key_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static unsigned distance(const tt__topo_desc *d, size_t from, size_t to) {
  return d->dist ? d->dist[from * d->nnodes + to] : 1u;
}

static int desc_valid(const tt__topo_desc *d) {
  if (!d || d->n == 0 || d->n > UINT32_MAX || d->nnodes == 0 ||
      d->nnodes >= (1u << 16) || !d->llc || !d->node)
    return 0;
  for (size_t i = 0; i < d->n; i++)
    if (d->node[i] < 0 || (size_t)d->node[i] >= d->nnodes)
      return 0;
  return 1;
}

/* Remote tier (2 + k) of node `to` seen from node `from`: k counts the
 * distinct distances, below dist(from, to), from `from` to the other nodes
 * that hold participants.  used[] marks those nodes. */
static unsigned remote_tier(const tt__topo_desc *d, const unsigned char *used,
                            size_t from, size_t to) {
  unsigned mine = distance(d, from, to), k = 0;
  for (size_t a = 0; a < d->nnodes; a++) {
    if (a == from || !used[a])
      continue;
    unsigned da = distance(d, from, a);
    if (da >= mine)
      continue;
    /* count da once: only at its first node in index order */
    int first = 1;
    for (size_t b = 0; b < a && first; b++)
      if (b != from && used[b] && distance(d, from, b) == da)
        first = 0;
    k += (unsigned)first;
  }
  return 2 + k;
}

unsigned tt__order_tier(const tt__topo_desc *d, size_t i, size_t v) {
  size_t ni = (size_t)d->node[i], nv = (size_t)d->node[v];
  if (ni == nv)
    return (d->llc[i] >= 0 && d->llc[i] == d->llc[v]) ? 0u : 1u;
  unsigned char used_small[64];
  unsigned char *used = d->nnodes <= sizeof used_small ? used_small
                                                      : calloc(d->nnodes, 1);
  if (!used)
    return 2;
  memset(used, 0, d->nnodes);
  for (size_t j = 0; j < d->n; j++)
    used[d->node[j]] = 1;
  unsigned t = remote_tier(d, used, ni, nv);
  if (used != used_small)
    free(used);
  return t;
}

static void rotate_left(uint32_t *a, size_t len, size_t by, uint32_t *tmp) {
  by %= len;
  if (by == 0)
    return;
  memcpy(tmp, a, by * sizeof *a);
  memmove(a, a + by, (len - by) * sizeof *a);
  memcpy(a + len - by, tmp, by * sizeof *a);
}

int tt__order_build(const tt__topo_desc *d, uint32_t *victims,
                    uint32_t *llc_end, uint32_t *local_end) {
  if (!desc_valid(d) || !victims || !llc_end || !local_end)
    return TT_EINVAL;
  size_t n = d->n, nn = d->nnodes, w = n - 1;
  uint64_t *keys = malloc((w ? w : 1) * sizeof *keys);
  uint32_t *tmp = malloc((w ? w : 1) * sizeof *tmp);
  unsigned char *used = calloc(nn, 1);
  unsigned *tiers = malloc(nn * nn * sizeof *tiers); /* [from][to], to != from */
  size_t *rank = malloc(n * sizeof *rank), *seen = calloc(nn, sizeof *seen);
  if (!keys || !tmp || !used || !tiers || !rank || !seen) {
    free(keys), free(tmp), free(used), free(tiers), free(rank), free(seen);
    return TT_ENOMEM;
  }
  for (size_t j = 0; j < n; j++) {
    used[d->node[j]] = 1;
    rank[j] = seen[d->node[j]]++; /* i's rank within its node */
  }
  for (size_t a = 0; a < nn; a++)
    for (size_t b = 0; b < nn; b++)
      tiers[a * nn + b] =
          (a == b || !used[a] || !used[b]) ? 1u : remote_tier(d, used, a, b);

  for (size_t i = 0; i < n; i++) {
    size_t ni = (size_t)d->node[i], k = 0;
    uint32_t nllc = 0, nlocal = 0;
    for (size_t v = 0; v < n; v++) {
      if (v == i)
        continue;
      size_t nv = (size_t)d->node[v];
      uint64_t tier, low;
      if (nv == ni) {
        tier = (d->llc[i] >= 0 && d->llc[i] == d->llc[v]) ? 0 : 1;
        low = (uint64_t)((v + n - i) % n);
        nllc += tier == 0;
        nlocal++;
      } else {
        tier = tiers[ni * nn + nv];
        low = (uint64_t)((nv + nn - ni) % nn) << 32 | (uint64_t)v;
      }
      keys[k++] = tier << TIER_SHIFT | low;
    }
    qsort(keys, w, sizeof *keys, key_cmp);
    uint32_t *row = victims + i * w;
    for (k = 0; k < w; k++) {
      uint64_t tier = keys[k] >> TIER_SHIFT, low = keys[k] & ((1ull << 32) - 1);
      row[k] = tier < 2 ? (uint32_t)((low + i) % n) : (uint32_t)low;
    }
    /* rotate each remote tier by i's rank within its node */
    for (k = nlocal; k < w;) {
      size_t end = k + 1;
      while (end < w && (keys[end] >> TIER_SHIFT) == (keys[k] >> TIER_SHIFT))
        end++;
      rotate_left(row + k, end - k, rank[i], tmp);
      k = end;
    }
    llc_end[i] = nllc;
    local_end[i] = nlocal;
  }
  free(keys), free(tmp), free(used), free(tiers), free(rank), free(seen);
  return 0;
}
