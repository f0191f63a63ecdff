/* teams: victim orders for the steal schedule and the deal of a range's
 * blocks (see order.h for the rules).
 *
 * Each row is written tier by tier, without sorting: tiers 0 and 1 by walking
 * i + 1, i + 2, ... mod n (which is the rotation after i); the remote tiers
 * by walking the nodes after i's node and appending each node's participants
 * (bucketed by node once), then rotating the tier by i's rank within its
 * node.  O(n^2 + n * nnodes^2) once per team start.  Measured and rejected:
 * sorting one key per victim (qsort), over the 5 ms team-start budget at
 * n = 512 (docs/measurements.md, "Team start"). */
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
    if (d->node[i] < 0 || (size_t)d->node[i] >= d->nnodes || d->llc[i] < -1)
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

/* ---- dealing a range's blocks (tt__order_deal) -------------------------------
 *
 * Groups are (node, LLC) pairs.  The next block goes to the node j with the
 * least (2 * dealt_j + 1) / size_j (ties: the lower node id), then to the
 * group g of node j with the least (2 * dealt_g + 1) / size_g (ties: the group
 * seen first in index order), then to g's next participant by index.  The
 * rule is the Sainte-Lague apportionment run block by block.  Every prefix of
 * the range gives each node (each group of a node) its share to within one
 * block when there are at most three of them, or their sizes differ by at
 * most one (checked exhaustively up to 40 participants): every machine
 * layout in tests/test-topology.c.  Sainte-Lague does not keep quota in
 * general: four or more unequal ones can drift further (nodes of 1, 1, 1
 * and 5 participants: after 5 blocks the node of 5 has 2, its share 3.125;
 * over 200k random descriptions of up to 8 nodes, at most 1.5 blocks off
 * for a node and 2.5 for a group).  O(p * (nodes + groups per node)) with
 * small scratch arrays. */

/* The candidate with the least (2 * dealt + 1) / size among those with
 * dealt < size, or SIZE_MAX. */
static size_t least_served(const size_t *ids, size_t k, const uint32_t *size,
                           const uint32_t *dealt) {
  size_t best = SIZE_MAX;
  for (size_t a = 0; a < k; a++) {
    size_t x = ids ? ids[a] : a;
    if (dealt[x] >= size[x])
      continue;
    if (best == SIZE_MAX ||
        (2 * (uint64_t)dealt[x] + 1) * size[best] <
            (2 * (uint64_t)dealt[best] + 1) * size[x])
      best = x;
  }
  return best;
}

int tt__order_deal(const tt__topo_desc *d, size_t p, uint32_t *block,
                   uint32_t *owner) {
  if (!desc_valid(d) || p == 0 || p > d->n || !block || !owner)
    return TT_EINVAL;
  /* group of each participant: (node, llc) pairs numbered as first seen */
  int maxllc = -1;
  for (size_t c = 0; c < p; c++)
    if (d->llc[c] > maxllc)
      maxllc = d->llc[c];
  size_t width = (size_t)maxllc + 2; /* llc -1 .. maxllc */
  size_t nn = d->nnodes;
  size_t *key = malloc(nn * width * sizeof *key);
  size_t *node_groups = malloc(p * sizeof *node_groups);
  size_t *node_first = calloc(nn + 1, sizeof *node_first);
  uint32_t *gsize = calloc(p, sizeof *gsize), *gdealt = calloc(p, sizeof *gsize);
  uint32_t *nsize = calloc(nn, sizeof *nsize), *ndealt = calloc(nn, sizeof *nsize);
  size_t *gnode = malloc(p * sizeof *gnode), *cursor = malloc(p * sizeof *cursor);
  size_t *next = malloc(p * sizeof *next), *tail = malloc(p * sizeof *tail);
  int rc = TT_ENOMEM;
  if (!key || !node_groups || !node_first || !gsize || !gdealt ||
      !nsize || !ndealt || !gnode || !cursor || !next || !tail)
    goto out;
  for (size_t k = 0; k < nn * width; k++)
    key[k] = SIZE_MAX;
  size_t groups = 0;
  for (size_t c = 0; c < p; c++) {
    size_t j = (size_t)d->node[c];
    size_t *slot = &key[j * width + (size_t)(d->llc[c] + 1)];
    if (*slot == SIZE_MAX) {
      *slot = groups;
      gnode[groups] = j;
      cursor[groups] = c; /* the group's members: a list in index order */
      tail[groups] = c;
      groups++;
    } else {
      next[tail[*slot]] = c;
      tail[*slot] = c;
    }
    next[c] = SIZE_MAX;
    gsize[*slot]++;
    nsize[j]++;
  }
  /* each node's groups, contiguous in node_groups, in the order first seen */
  for (size_t g = 0; g < groups; g++)
    node_first[gnode[g] + 1]++;
  for (size_t j = 0; j < nn; j++)
    node_first[j + 1] += node_first[j];
  for (size_t g = 0; g < groups; g++) /* node_first[j] counts up to j's */
    node_groups[node_first[gnode[g]]++] = g;
  for (size_t j = nn; j > 0; j--) /* ... so shift it back by one node */
    node_first[j] = node_first[j - 1];
  node_first[0] = 0;
  for (size_t b = 0; b < p; b++) {
    size_t j = least_served(NULL, nn, nsize, ndealt);
    size_t g = least_served(node_groups + node_first[j],
                            node_first[j + 1] - node_first[j], gsize, gdealt);
    size_t c = cursor[g];
    cursor[g] = next[c];
    ndealt[j]++;
    gdealt[g]++;
    block[c] = (uint32_t)b;
    owner[b] = (uint32_t)c;
  }
  rc = 1; /* the identity? (always with one node and one LLC) */
  for (size_t c = 0; c < p && rc; c++)
    rc = block[c] == c;
out:
  free(key), free(node_groups), free(node_first), free(gsize);
  free(gdealt), free(nsize), free(ndealt), free(gnode), free(cursor);
  free(next), free(tail);
  return rc;
}
