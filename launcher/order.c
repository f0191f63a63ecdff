/* teams: victim orders for the steal schedule (see order.h for the rules).
 *
 * Each row is written tier by tier, without sorting: tiers 0 and 1 by walking
 * i + 1, i + 2, ... mod n (which is the rotation after i); the remote tiers
 * by walking the nodes after i's node and appending each node's participants
 * (bucketed by node once), then rotating the tier by i's rank within its
 * node.  O(n^2 + n * nnodes^2) once per team start.  A first version sorted
 * one key per victim (qsort): 1.1 ms at n = 256 and 6-13 ms at n = 512 on the
 * 2-core KVM guest we build on, over the 5 ms team-start budget. */
#include "order.h"

#include <stdlib.h>
#include <string.h>
#include "teams/errors.h"

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
  uint32_t *tmp = malloc((w ? w : 1) * sizeof *tmp);
  unsigned char *used = calloc(nn, 1);
  unsigned *tiers = malloc(nn * nn * sizeof *tiers); /* [from][to], to != from */
  size_t *rank = malloc(n * sizeof *rank), *seen = calloc(nn + 1, sizeof *seen);
  uint32_t *members = malloc(n * sizeof *members); /* by node, then index */
  size_t *first = calloc(nn + 1, sizeof *first);
  if (!tmp || !used || !tiers || !rank || !seen || !members || !first) {
    free(tmp), free(used), free(tiers), free(rank), free(seen);
    free(members), free(first);
    return TT_ENOMEM;
  }
  for (size_t j = 0; j < n; j++) {
    used[d->node[j]] = 1;
    rank[j] = seen[d->node[j]]++; /* j's rank within its node */
  }
  for (size_t a = 0; a < nn; a++) /* members[first[a] .. first[a+1]) */
    first[a + 1] = first[a] + seen[a];
  memset(seen, 0, (nn + 1) * sizeof *seen);
  for (size_t j = 0; j < n; j++)
    members[first[d->node[j]] + seen[d->node[j]]++] = (uint32_t)j;
  unsigned max_tier = 1;
  for (size_t a = 0; a < nn; a++)
    for (size_t b = 0; b < nn; b++) {
      unsigned t = (a == b || !used[a] || !used[b]) ? 1u : remote_tier(d, used, a, b);
      tiers[a * nn + b] = t;
      if (t > max_tier)
        max_tier = t;
    }

  for (size_t i = 0; i < n; i++) {
    size_t ni = (size_t)d->node[i], k = 0;
    uint32_t *row = victims + i * w;
    int li = d->llc[i];
    /* tiers 0 and 1: walk i+1, i+2, ... (the rotation after i) */
    for (int tier = 0; tier < 2; tier++) {
      for (size_t s = 1; s < n; s++) {
        size_t v = (i + s) % n;
        int mate = li >= 0 && d->llc[v] == li;
        if ((size_t)d->node[v] == ni && mate == (tier == 0))
          row[k++] = (uint32_t)v;
      }
      if (tier == 0)
        llc_end[i] = (uint32_t)k;
    }
    local_end[i] = (uint32_t)k;
    /* remote tiers, nearest first: nodes after ni (cyclically), members by
     * index, then rotated by i's rank within its node */
    for (unsigned t = 2; t <= max_tier; t++) {
      size_t start = k;
      for (size_t r = 1; r < nn; r++) {
        size_t b = (ni + r) % nn;
        if (!used[b] || tiers[ni * nn + b] != t)
          continue;
        for (size_t m = first[b]; m < first[b + 1]; m++)
          row[k++] = members[m];
      }
      if (k > start)
        rotate_left(row + start, k - start, rank[i], tmp);
    }
  }
  free(tmp), free(used), free(tiers), free(rank), free(seen);
  free(members), free(first);
  return 0;
}
