/* teams-demo: launches each C kernel through the launcher API, checks it
 * against its serial reference, and prints what ran where and how fast.
 *
 * Each row: one kernel and schedule; the NDRange; how many participants ran
 * groups and how many groups each ran (from one checked launch); the median
 * time per launch over several timed launches; a rate; the check.  Times are
 * what this machine gave this run, not a benchmark (see bench/ for that).
 * Exits 1 when a result is wrong. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu */
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"
#include "teams/kernel.h"
#include "teams/launch.h"
#include "teams/team.h"

static int reps = 7;
static size_t team;
static int failures;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (p == NULL) {
    fprintf(stderr, "teams-demo: out of memory\n");
    exit(2);
  }
  return p;
}

static const char *sched_name(tt_schedule s) {
  static const char *names[] = {"static", "greedy", "steal", "auto"};
  return (unsigned)s < 4 ? names[s] : "?";
}

/* One row of the table. */
typedef struct row {
  const char *kernel;
  tt_launch_config cfg; /* as launched (groups_run filled in) */
  size_t launches;      /* launches per run (scan: several passes) */
  double median_s;
  double rate;
  const char *unit;
  int ok;
  const char *check; /* what was compared */
} row;

static void print_header(void) {
  printf("%-10s %-6s %-16s %-12s %7s %5s  %-18s %10s %12s  %s\n", "kernel", "sched",
         "global", "local", "groups", "parts", "groups/participant", "time", "rate",
         "check");
}

static void fmt_dims(char *buf, size_t n, unsigned dims, const size_t *v) {
  if (dims == 1)
    snprintf(buf, n, "%zu", v[0]);
  else if (dims == 2)
    snprintf(buf, n, "%zux%zu", v[0], v[1]);
  else
    snprintf(buf, n, "%zux%zux%zu", v[0], v[1], v[2]);
}

static void print_row(const row *r, const size_t *runs) {
  tt_ndrange nd;
  tt_launch_resolve(&r->cfg, &nd);
  char g[32], l[32], per[64] = "", t[32], rate[32];
  fmt_dims(g, sizeof g, nd.dims, nd.global);
  fmt_dims(l, sizeof l, nd.dims, nd.local);
  size_t used = 0, pos = 0;
  for (size_t i = 0; i < team; i++) {
    if (runs[i] != 0)
      used++;
    if (i < 6 && pos < sizeof per)
      pos += (size_t)snprintf(per + pos, sizeof per - pos, "%s%zu", i ? " " : "", runs[i]);
  }
  if (team > 6 && pos < sizeof per)
    snprintf(per + pos, sizeof per - pos, " ...");
  double ms = r->median_s * 1e3;
  if (ms >= 1.0)
    snprintf(t, sizeof t, "%.2f ms", ms);
  else
    snprintf(t, sizeof t, "%.1f us", ms * 1e3);
  if (r->launches > 1) /* mark multi-pass rows */
    snprintf(t + strlen(t), sizeof t - strlen(t), "/%zu", r->launches);
  snprintf(rate, sizeof rate, "%.2f %s", r->rate, r->unit);
  printf("%-10s %-6s %-16s %-12s %7zu %5zu  %-18s %10s %12s  %s %s\n", r->kernel,
         sched_name(r->cfg.schedule), g, l, nd.ngroups, used, per, t, rate,
         r->ok ? "ok" : "FAIL", r->check);
  if (!r->ok)
    failures++;
}

/* Runs `run(ctx)` once with statistics for the check, then `reps` timed
 * times; fills r->median_s. */
typedef void (*run_fn)(void *ctx, tt_launch_config *cfg);
static void measure(row *r, run_fn run, void *ctx, size_t *runs) {
  memset(runs, 0, team * sizeof *runs);
  r->cfg.groups_run = runs;
  r->cfg.groups_run_len = team;
  run(ctx, &r->cfg);
  tt_launch_config timed = r->cfg;
  timed.groups_run = NULL;
  double *t = xmalloc((size_t)reps * sizeof *t);
  for (int i = 0; i < reps; i++) {
    double t0 = now_s();
    run(ctx, &timed);
    t[i] = now_s() - t0;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp_double);
  r->median_s = t[reps / 2];
  free(t);
}

static void must(int err, const char *what) {
  if (err != 0) {
    fprintf(stderr, "teams-demo: %s: %s\n", what, tt_strerror(err));
    exit(2);
  }
}

/* ---- axpy ------------------------------------------------------------------ */
typedef struct axpy_ctx {
  tt_axpy_args a;
} axpy_ctx;
static void run_axpy(void *ctx, tt_launch_config *cfg) {
  must(tt_k_axpy_launch(&((axpy_ctx *)ctx)->a, cfg), "axpy");
}

static void demo_axpy(size_t *runs) {
  size_t n = 10000000;
  double *x = xmalloc(n * 8), *y = xmalloc(n * 8), *ref = xmalloc(n * 8);
  static const tt_schedule s[] = {TT_SCHED_STATIC, TT_SCHED_GREEDY};
  for (size_t k = 0; k < 2; k++) {
    for (size_t i = 0; i < n; i++) {
      x[i] = 0.5 + (double)(i % 1000) * 1e-3;
      y[i] = ref[i] = 1.0 + (double)(i % 7);
    }
    axpy_ctx c = {{0.75, x, y}};
    row r = {.kernel = "axpy", .cfg = {.dims = 1, .global = {n}, .schedule = s[k]},
             .launches = 1, .unit = "GB/s", .check = "<= 1 ulp"};
    measure(&r, run_axpy, &c, runs);
    /* Every launch updated y: the reference does as many. */
    for (int i = 0; i <= reps; i++)
      tt_ref_axpy(n, 0.75, x, ref);
    r.ok = 1;
    for (size_t i = 0; i < n && r.ok; i++)
      r.ok = tt_ulp_diff_d(y[i], ref[i]) <= 1;
    r.rate = 3.0 * 8.0 * (double)n / r.median_s * 1e-9; /* read x, y; write y */
    print_row(&r, runs);
  }
  free(x);
  free(y);
  free(ref);
}

/* ---- 7-point stencil ------------------------------------------------------- */
typedef struct stencil_ctx {
  tt_stencil7_args a;
} stencil_ctx;
static void run_stencil(void *ctx, tt_launch_config *cfg) {
  must(tt_k_stencil7_launch(&((stencil_ctx *)ctx)->a, cfg), "stencil7");
}

static void demo_stencil(size_t *runs) {
  size_t nx = 160, ny = 160, nz = 160, n = nx * ny * nz;
  float *in = xmalloc(n * 4), *out = xmalloc(n * 4), *ref = xmalloc(n * 4);
  for (size_t i = 0; i < n; i++)
    in[i] = (float)((i * 7919) % 1000) * 1e-3f;
  stencil_ctx c = {{nx, ny, nz, 0.4f, 0.1f, in, out}};
  row r = {.kernel = "stencil7", .cfg = {.dims = 3, .global = {nx, ny, nz}},
           .launches = 1, .unit = "GB/s", .check = "<= 2 ulp"};
  measure(&r, run_stencil, &c, runs);
  tt_ref_stencil7(nx, ny, nz, 0.4f, 0.1f, in, ref);
  r.ok = 1;
  for (size_t i = 0; i < n && r.ok; i++)
    r.ok = tt_ulp_diff(out[i], ref[i]) <= 2;
  r.rate = 8.0 * (double)n / r.median_s * 1e-9;
  print_row(&r, runs);
  free(in);
  free(out);
  free(ref);
}

/* ---- triangular ----------------------------------------------------------- */
typedef struct tri_ctx {
  tt_tri_args a;
} tri_ctx;
static void run_tri(void *ctx, tt_launch_config *cfg) {
  must(tt_k_tri_launch(&((tri_ctx *)ctx)->a, cfg), "triangular");
}

static void demo_tri(size_t *runs) {
  size_t n = 12000;
  uint32_t *x = xmalloc(n * 4);
  uint64_t *y = xmalloc(n * 8), *ref = xmalloc(n * 8);
  for (size_t i = 0; i < n; i++)
    x[i] = (uint32_t)(i * 2654435761u);
  tt_ref_tri(n, x, ref);
  static const tt_schedule s[] = {TT_SCHED_STATIC, TT_SCHED_GREEDY, TT_SCHED_STEAL,
                                  TT_SCHED_AUTO};
  for (size_t k = 0; k < 4; k++) {
    memset(y, 0, n * 8);
    tri_ctx c = {{n, x, y}};
    /* Rows of 16: groups of very different cost, the case for balancing. */
    row r = {.kernel = "triangular", .cfg = {.dims = 1, .global = {n}, .local = {16},
                                              .schedule = s[k]},
             .launches = 1, .unit = "Gop/s", .check = "exact"};
    measure(&r, run_tri, &c, runs);
    r.ok = memcmp(y, ref, n * 8) == 0;
    r.rate = (double)n * (double)(n + 1) / 2.0 / r.median_s * 1e-9;
    print_row(&r, runs);
  }
  free(x);
  free(y);
  free(ref);
}

/* ---- reduction ------------------------------------------------------------- */
typedef struct reduce_ctx {
  tt_reduce_args a;
} reduce_ctx;
static void run_reduce(void *ctx, tt_launch_config *cfg) {
  must(tt_k_reduce_launch(&((reduce_ctx *)ctx)->a, cfg), "reduce");
}

static void demo_reduce(size_t *runs) {
  size_t n = 10000000;
  float *in = xmalloc(n * 4);
  for (size_t i = 0; i < n; i++)
    in[i] = (float)(i % 17); /* integers: the grand total is exact as well */
  row r = {.kernel = "reduce", .cfg = {.dims = 1, .global = {n},
                                       .local_mem_per_item = sizeof(float),
                                       .schedule = TT_SCHED_GREEDY},
           .launches = 1, .unit = "GB/s", .check = "exact"};
  tt_ndrange nd;
  must(tt_launch_resolve(&r.cfg, &nd), "reduce");
  float *out = xmalloc(nd.ngroups * 4), *ref = xmalloc(nd.ngroups * 4);
  reduce_ctx c = {{in, out}};
  measure(&r, run_reduce, &c, runs);
  tt_ref_reduce(n, nd.local[0], in, ref);
  double total = 0, want = 0;
  r.ok = 1;
  for (size_t g = 0; g < nd.ngroups; g++) {
    r.ok &= tt_ulp_diff(out[g], ref[g]) == 0;
    total += out[g];
  }
  for (size_t i = 0; i < n; i++)
    want += in[i];
  r.ok &= total == want;
  r.rate = 4.0 * (double)n / r.median_s * 1e-9;
  print_row(&r, runs);
  free(in);
  free(out);
  free(ref);
}

/* ---- matmul ----------------------------------------------------------------- */
typedef struct matmul_ctx {
  tt_matmul_args a;
} matmul_ctx;
static void run_matmul(void *ctx, tt_launch_config *cfg) {
  must(tt_matmul(&((matmul_ctx *)ctx)->a, cfg), "matmul");
}

static void demo_matmul(size_t *runs) {
  size_t m = 256, n = 256, k = 256;
  float *a = xmalloc(m * k * 4), *b = xmalloc(k * n * 4), *c = xmalloc(m * n * 4),
        *ref = xmalloc(m * n * 4);
  for (size_t i = 0; i < m * k; i++)
    a[i] = (float)((i * 31) % 97) / 97.0f;
  for (size_t i = 0; i < k * n; i++)
    b[i] = (float)((i * 17) % 89) / 89.0f;
  matmul_ctx ctx = {{m, n, k, a, b, c}};
  /* dims and global come from tt_matmul; here only what it leaves to us. */
  row r = {.kernel = "matmul", .cfg = {.dims = 2, .global = {n, m}, .local = {16, 16}},
           .launches = 1, .unit = "GFLOP/s", .check = "<= k ulp"};
  measure(&r, run_matmul, &ctx, runs);
  tt_ref_matmul(m, n, k, a, b, ref);
  r.ok = 1;
  for (size_t i = 0; i < m * n && r.ok; i++)
    r.ok = tt_ulp_diff(c[i], ref[i]) <= k;
  r.rate = 2.0 * (double)m * (double)n * (double)k / r.median_s * 1e-9;
  print_row(&r, runs);
  free(a);
  free(b);
  free(c);
  free(ref);
}

/* ---- histogram ---------------------------------------------------------------- */
typedef struct hist_ctx {
  tt_hist_args a;
} hist_ctx;
static void run_hist(void *ctx, tt_launch_config *cfg) {
  hist_ctx *h = ctx;
  for (uint32_t b = 0; b < h->a.nbins; b++)
    atomic_store_explicit(&h->a.bins[b], 0, memory_order_relaxed);
  must(tt_k_hist_launch(&h->a, cfg), "histogram");
}

static void demo_hist(size_t *runs) {
  size_t n = 10000000;
  uint32_t nbins = 256, ref[256] = {0};
  _Atomic uint32_t bins[256];
  uint32_t *in = xmalloc(n * 4);
  uint64_t s = 88172645463325252u;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    in[i] = (uint32_t)(s >> 32);
  }
  hist_ctx c = {{in, nbins, bins}};
  /* Large groups: each group's merge is nbins atomic adds on lines every
   * participant writes, which at 1024 items per group cost more than the
   * counting (measured here: 60 ms against 7 ms of counting). */
  row r = {.kernel = "histogram", .cfg = {.dims = 1, .global = {n}, .local = {1 << 16},
                                          .local_mem = 256 * sizeof(uint32_t)},
           .launches = 1, .unit = "GB/s", .check = "exact"};
  measure(&r, run_hist, &c, runs);
  tt_ref_hist(n, in, nbins, ref);
  r.ok = 1;
  for (uint32_t b = 0; b < nbins; b++)
    r.ok &= atomic_load(&bins[b]) == ref[b];
  r.rate = 4.0 * (double)n / r.median_s * 1e-9;
  print_row(&r, runs);
  free(in);
}

/* ---- scan -------------------------------------------------------------------------- */
typedef struct scan_ctx {
  size_t n;
  const uint32_t *in;
  uint32_t *out;
} scan_ctx;
static void run_scan(void *ctx, tt_launch_config *cfg) {
  scan_ctx *s = ctx;
  must(tt_scan_u32(s->n, s->in, s->out, cfg), "scan");
}

static void demo_scan(size_t *runs) {
  size_t n = 10000000;
  uint32_t *in = xmalloc(n * 4), *out = xmalloc(n * 4), *ref = xmalloc(n * 4);
  for (size_t i = 0; i < n; i++)
    in[i] = (uint32_t)(i * 2246822519u);
  scan_ctx c = {n, in, out};
  row r = {.kernel = "scan", .cfg = {.dims = 1, .global = {n}, .local = {1024}},
           .launches = 3, .unit = "Gelem/s", .check = "exact"};
  measure(&r, run_scan, &c, runs);
  tt_ref_scan_u32(n, in, ref);
  r.ok = memcmp(out, ref, n * 4) == 0;
  r.rate = (double)n / r.median_s * 1e-9;
  print_row(&r, runs);
  free(in);
  free(out);
  free(ref);
}

/* ---- probe --------------------------------------------------------------------------- */
typedef struct probe_ctx {
  tt_probe_args a;
  size_t n;
} probe_ctx;
static void run_probe(void *ctx, tt_launch_config *cfg) {
  probe_ctx *p = ctx;
  memset(p->a.rec, 0, p->n * sizeof *p->a.rec);
  must(tt_k_probe_launch(&p->a, cfg), "probe");
}

static void demo_probe(size_t *runs) {
  tt_launch_config cfg = {.dims = 3, .global = {33, 17, 9}, .local = {8, 4, 2},
                          .offset = {100, 200, 300}, .schedule = TT_SCHED_STEAL};
  size_t n = 33 * 17 * 9;
  tt_probe_rec *got = xmalloc(n * sizeof *got), *want = xmalloc(n * sizeof *want);
  probe_ctx c = {{got}, n};
  row r = {.kernel = "probe", .cfg = cfg, .launches = 1, .unit = "Mitem/s",
           .check = "every id"};
  measure(&r, run_probe, &c, runs);
  tt_ref_probe(3, cfg.global, cfg.local, cfg.offset, want);
  r.ok = memcmp(got, want, n * sizeof *got) == 0;
  r.rate = (double)n / r.median_s * 1e-6;
  print_row(&r, runs);
  free(got);
  free(want);
}

/* ---- where the participants run ------------------------------------------------------ */
typedef struct where_args {
  int *cpu; /* per participant: the CPU it last ran a group on */
} where_args;
TT_KERNEL_GROUP(demo_where, where_args, p) {
  int self = tt_participant();
  if (self >= 0)
    p->cpu[self] = sched_getcpu();
}

static void print_where(int pinned) {
  int *cpu = xmalloc(team * sizeof *cpu);
  size_t *runs = calloc(team, sizeof *runs);
  for (size_t i = 0; i < team; i++)
    cpu[i] = -1;
  where_args a = {cpu};
  tt_launch_config cfg = {.dims = 1, .global = {team}, .local = {1},
                          .groups_run = runs, .groups_run_len = team};
  must(tt_launch(&demo_where, &a, &cfg), "where");
  printf("participants on CPUs:");
  for (size_t i = 0; i < team; i++)
    printf(" %zu->%d", i, cpu[i]);
  /* Unpinned, this is where each ran its group of one launch: the kernel
   * may have had two of them on one CPU at that moment. */
  printf("%s\n", pinned ? "" : " (unpinned: where each was during one launch)");
  free(cpu);
  free(runs);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
      reps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--reps N]  (timed launches per row, default 7)\n",
              argv[0]);
      return 2;
    }
  }
  double t0 = now_s();
  must(tt_team_start(), "team start");
  tt_team_info info;
  must(tt_team_get_info(&info), "team info");
  team = info.size;
  static const char *pins[] = {"none", "cores", "numa"};
  printf("teams demo: %zu participants (%zu requested), spin %.0f us, pinning %s, "
         "busy %s, idle %s, team start %.2f ms\n",
         info.size, info.requested, info.spin_us,
         (unsigned)info.pinned < 3 ? pins[info.pinned] : "?",
         info.busy_wait ? "wait" : "serial",
         info.sentinel ? "sentinel" : "sleep", info.start_ms);
  if (info.degraded)
    printf("degraded: %s\n", info.degraded);
  print_where(info.pinned != TT_PIN_NONE);
  printf("time: median of %d launches; groups/participant: one checked launch"
         " (scan: its 3 passes)\n\n",
         reps);

  size_t *runs = xmalloc(team * sizeof *runs);
  print_header();
  demo_axpy(runs);
  demo_stencil(runs);
  demo_tri(runs);
  demo_reduce(runs);
  demo_matmul(runs);
  demo_hist(runs);
  demo_scan(runs);
  demo_probe(runs);
  free(runs);
  printf("\n%s in %.1f s\n", failures ? "FAILED" : "all results match their references",
         now_s() - t0);
  return failures ? 1 : 0;
}
