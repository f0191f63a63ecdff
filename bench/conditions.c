/* teams-bench: the "conditions" section -- the same team region under the
 * process conditions a program meets, against what a user could have picked
 * by hand for that process.
 *
 * A cell is a condition (a pattern of OpenMP and team regions, a runtime,
 * a binding, an external load, a CPU quota, a change while running) and a
 * region kind (empty chunks, or ~2 us of work each).  Each cell runs, in
 * child processes (bench/child-conditions.c) in an order rotated every
 * round, the default and the fixed alternatives:
 *   default  the runtime as it comes (TEAMS_RUN=auto, the team sized by
 *            itself);
 *   team     the team's workers for every region (TEAMS_RUN=team), and in
 *            the cells that change the CPUs while running, a fixed size
 *            too (TEAMS_NUM_THREADS=p): the team as it was before;
 *   serial   the team of one (TEAMS_NUM_THREADS=1): every region on the
 *            caller;
 *   omp-loop the region written as an OpenMP loop (`parallel for
 *            schedule(static)`) in the same process (not TEAMS_RUN=openmp,
 *            which lends the team's region to OpenMP's threads).
 * The table prints per cell the median cost of an iteration of the pattern
 * (us) for each, and the default over the best alternative: the median over
 * rounds of the ratio of the two rows' medians in the same round.  In the
 * cl cells the best is of team and serial: the OpenMP loop in place of the
 * kernel is printed, but it is no longer an OpenCL program.
 *
 * Conditions:
 *   solo              the team region alone, after one OpenMP region whose
 *                     threads then went to sleep;
 *   batch10, batch1000, batch20000
 *                     B OpenMP regions then B team regions, repeated;
 *   pairs             an OpenMP region, then a team region;
 *   with libgomp and libomp, unbound and OMP_PROC_BIND=close
 *   OMP_PLACES=threads ("-bound"), and:
 *   cl                the team region is an OpenCL kernel on the teams device
 *                     (pairs, batch1000; libgomp);
 *   load              another process spins on the last CPU (solo, pairs);
 *   quota             a cgroup CPU quota of p - 0.5 CPUs (solo, pairs);
 *   quota-change, mask-change
 *                     the quota halves, or the first thread's mask narrows
 *                     to one CPU, a third into the run, and comes back two
 *                     thirds in (solo); the default also reports how long
 *                     its team took to follow each change;
 *   once              a sample is a new loop's first 2000 regions, after
 *                     one OpenMP region whose threads then went to sleep
 *                     (libgomp, libomp);
 *   steps             the chunks' work changes every 2500 regions (libgomp);
 *   two               a second thread launches the same regions meanwhile;
 *   pinned            the first thread is pinned to one CPU before OpenMP
 *                     and the team start, which stay unpinned (solo, pairs).
 * A cell whose setup the machine refuses (no cgroup with the cpu
 * controller to make, no PoCL driver) is left out with the reason. */
#include "bench.h"
#include "driver.h"
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const alternatives[] = {"default", "team", "serial", "omp-loop"};
#define NALT 4

typedef struct cell {
  const char *pattern; /* solo, batchB, pairs */
  const char *runtime; /* libgomp, libomp */
  int bound;
  const char *setup;   /* NULL, "cl", "load", "quota", "quota-change", "mask-change",
                          "pinned" */
  const char *kind;    /* empty, work */
  char name[96];
} cell;

static cell cells[96];
static size_t ncells;

static void add(const char *setup, const char *runtime, int bound,
                const char *pattern, const char *kind) {
  cell *c = &cells[ncells++];
  c->setup = setup;
  c->runtime = runtime;
  c->bound = bound;
  c->pattern = pattern;
  c->kind = kind;
  snprintf(c->name, sizeof c->name, "%s%s%s%s %s %s", setup ? setup : "",
           setup ? " " : "", runtime, bound ? "-bound" : "", pattern, kind);
}

static void make_cells(void) {
  static const char *const patterns[] = {"solo", "batch10", "batch1000",
                                         "batch20000", "pairs"};
  static const char *const kinds[] = {"empty", "work"};
  for (int k = 0; k < 2; k++) {
    for (int rt = 0; rt < 2; rt++)
      for (int b = 0; b < 2; b++)
        for (int pt = 0; pt < 5; pt++)
          add(NULL, rt ? "libomp" : "libgomp", b, patterns[pt], kinds[k]);
    add("cl", "libgomp", 0, "pairs", kinds[k]);
    add("cl", "libgomp", 0, "batch1000", kinds[k]);
    add("load", "libgomp", 0, "solo", kinds[k]);
    add("load", "libgomp", 0, "pairs", kinds[k]);
    add("quota", "libgomp", 0, "solo", kinds[k]);
    add("quota", "libgomp", 0, "pairs", kinds[k]);
    add("quota-change", "libgomp", 0, "solo", kinds[k]);
    add("mask-change", "libgomp", 0, "solo", kinds[k]);
    add(NULL, "libgomp", 0, "once", kinds[k]);
    add(NULL, "libomp", 0, "once", kinds[k]);
    add(NULL, "libgomp", 0, "steps", kinds[k]);
    add(NULL, "libgomp", 0, "two", kinds[k]);
    add("pinned", "libgomp", 0, "solo", kinds[k]);
    add("pinned", "libgomp", 0, "pairs", kinds[k]);
  }
}

/* ---- setups ---------------------------------------------------------------------- */

/* Another process spinning on cpu until killed. */
static pid_t start_spinner(int cpu) {
  pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    for (;;)
      __asm__ volatile("" ::: "memory"); /* a loop the compiler keeps */
  }
  return pid;
}

static void stop_spinner(pid_t pid) {
  if (pid <= 0)
    return;
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, text, strlen(text));
  int err = errno;
  close(fd);
  errno = err;
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int read_text(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = 0;
  return 0;
}

/* A cgroup with the cpu controller for the children: v2 when this
 * process's cgroup enables cpu for its children, else v1's cpu hierarchy.
 * Fills dir (the new cgroup) and v1; returns 0, or -1 with why. */
static int make_cgroup(char *dir, size_t len, int *v1, char *why, size_t wlen) {
  char cg[4096], mine[2048] = "", v1mine[2048] = "";
  if (read_text("/proc/self/cgroup", cg, sizeof cg) < 0) {
    snprintf(why, wlen, "no /proc/self/cgroup");
    return -1;
  }
  for (char *l = strtok(cg, "\n"); l; l = strtok(NULL, "\n")) {
    char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
      continue;
    *c2 = 0;
    if (!strcmp(c1 + 1, ""))
      snprintf(mine, sizeof mine, "%s", c2 + 1);
    else
      for (char *t = c1 + 1; t;) {
        char *comma = strchr(t, ',');
        size_t n = comma ? (size_t)(comma - t) : strlen(t);
        if (n == 3 && !strncmp(t, "cpu", 3))
          snprintf(v1mine, sizeof v1mine, "%s", c2 + 1);
        t = comma ? comma + 1 : NULL;
      }
  }
  char path[4200], sc[256] = "";
  snprintf(path, sizeof path, "/sys/fs/cgroup%s/cgroup.subtree_control", mine);
  *v1 = 0;
  if (read_text(path, sc, sizeof sc) == 0 && strstr(sc, "cpu")) {
    snprintf(dir, len, "/sys/fs/cgroup%s/teams-bench-%d", mine, (int)getpid());
  } else if (v1mine[0]) {
    const char *mnt = access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", F_OK) == 0
                          ? "/sys/fs/cgroup/cpu"
                          : "/sys/fs/cgroup/cpu,cpuacct";
    snprintf(dir, len, "%s%s/teams-bench-%d", mnt, strcmp(v1mine, "/") ? v1mine : "",
             (int)getpid());
    *v1 = 1;
  } else {
    snprintf(why, wlen, "no cgroup hierarchy whose cpu controller this process "
                        "may use (v2 %s does not enable cpu for its children)",
             mine[0] ? mine : "/");
    return -1;
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    snprintf(why, wlen, "cannot make %.300s: %s", dir, strerror(errno));
    return -1;
  }
  return 0;
}

/* Sets the quota of dir to cpus (0: none); 0 or -1 with why. */
static int set_quota(const char *dir, int v1, double cpus, char *why, size_t wlen) {
  char path[4200], v[64];
  int rc;
  if (v1) {
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    rc = write_text(path, "100000");
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    snprintf(v, sizeof v, "%ld", cpus > 0 ? (long)(cpus * 100000) : -1L);
    rc = rc ? rc : write_text(path, v);
  } else {
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    if (cpus > 0)
      snprintf(v, sizeof v, "%ld 100000", (long)(cpus * 100000));
    else
      snprintf(v, sizeof v, "max 100000");
    rc = write_text(path, v);
  }
  if (rc)
    snprintf(why, wlen, "cannot write %.300s: %s", path, strerror(errno));
  return rc;
}

/* ---- running a cell ------------------------------------------------------------------ */

static const void *group = &cells; /* the rows of this section */
static char cg_dir[4096];
static int cg_v1, cg_ok = -1; /* -1: not tried */
static char cg_why[512];

static int run_cell(const bench_conditions_opt *o, const cell *c, const char *alt,
                    unsigned round) {
  char path[4200], team_s[16], round_s[16];
  snprintf(path, sizeof path, "%s/teams-bench-child-conditions-%s", o->dir, c->runtime);
  if (access(path, X_OK) != 0) {
    bench_note("conditions: %s was not built; the %s cells are missing", path, c->runtime);
    return -1;
  }
  snprintf(team_s, sizeof team_s, "%zu", o->cpus);
  snprintf(round_s, sizeof round_s, "%u", round);
  int change = c->setup && strstr(c->setup, "-change");
  char *argv[20];
  size_t a = 0;
  argv[a++] = path;
  argv[a++] = "--cell", argv[a++] = (char *)c->pattern;
  argv[a++] = "--kind", argv[a++] = (char *)c->kind;
  argv[a++] = "--team", argv[a++] = team_s;
  argv[a++] = "--label", argv[a++] = (char *)alt;
  argv[a++] = "--metric", argv[a++] = (char *)c->name;
  argv[a++] = "--round", argv[a++] = round_s;
  if (change)
    argv[a++] = "--change", argv[a++] = !strcmp(c->setup, "quota-change") ? "quota" : "mask";
  if (o->quick)
    argv[a++] = "--quick";
  argv[a] = NULL;

  static char omp[64], nthreads[64], quota[4400], procs[4200];
  snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%zu", o->cpus);
  const char *set[10] = {omp, "TEAMS_RUN=", "TEAMS_NUM_THREADS=", "TEAMS_BENCH_REGION=",
                         "OMP_PROC_BIND=", "OMP_PLACES=", "TEAMS_BENCH_QUOTA=",
                         "TEAMS_BENCH_CGROUP=", "TEAMS_BENCH_PIN=", NULL};
  if (c->setup && !strcmp(c->setup, "pinned"))
    set[8] = "TEAMS_BENCH_PIN=1";
  if (!strcmp(alt, "team")) {
    set[1] = "TEAMS_RUN=team";
    if (change) {
      snprintf(nthreads, sizeof nthreads, "TEAMS_NUM_THREADS=%zu", o->cpus);
      set[2] = nthreads;
    }
  } else if (!strcmp(alt, "serial")) {
    set[2] = "TEAMS_NUM_THREADS=1";
  } else if (!strcmp(alt, "omp-loop")) {
    set[3] = "TEAMS_BENCH_REGION=omp-loop";
  }
  if (c->setup && !strcmp(c->setup, "cl") && strcmp(alt, "omp-loop"))
    set[3] = "TEAMS_BENCH_REGION=cl";
  if (c->bound) {
    set[4] = "OMP_PROC_BIND=close";
    set[5] = "OMP_PLACES=threads";
  }
  int quota_cell = c->setup && !strncmp(c->setup, "quota", 5);
  if (quota_cell) {
    if (cg_ok < 0)
      cg_ok = make_cgroup(cg_dir, sizeof cg_dir, &cg_v1, cg_why, sizeof cg_why) == 0;
    double cpus = !strcmp(c->setup, "quota") ? (double)o->cpus - 0.5 : 0;
    if (!cg_ok || set_quota(cg_dir, cg_v1, cpus, cg_why, sizeof cg_why) != 0) {
      bench_note("conditions: the %s cells are left out: %s", c->setup, cg_why);
      cg_ok = 0;
      return -1;
    }
    snprintf(procs, sizeof procs, "TEAMS_BENCH_CGROUP=%s/cgroup.procs", cg_dir);
    set[7] = procs;
    if (change) {
      long half = (long)((double)o->cpus / 2 * 100000);
      if (cg_v1)
        snprintf(quota, sizeof quota, "TEAMS_BENCH_QUOTA=%s/cpu.cfs_quota_us:%ld:-1",
                 cg_dir, half);
      else
        snprintf(quota, sizeof quota, "TEAMS_BENCH_QUOTA=%s/cpu.max:%ld_100000:max_100000",
                 cg_dir, half);
      set[6] = quota;
    }
  }
  char **env = bench_child_env(set, 9);
  pid_t spinner = 0;
  if (c->setup && !strcmp(c->setup, "load")) {
    cpu_set_t mine;
    int last = 0;
    if (sched_getaffinity(0, sizeof mine, &mine) == 0)
      for (int k = 0; k < CPU_SETSIZE; k++)
        if (CPU_ISSET(k, &mine))
          last = k;
    spinner = start_spinner(last);
  }
  char what[200];
  snprintf(what, sizeof what, "conditions: %s, %s, round %u", c->name, alt, round);
  int rc = bench_run_program(group, round, what, argv, env, o->quick ? 60 : 180);
  stop_spinner(spinner);
  free(env);
  return rc;
}

/* ---- report ------------------------------------------------------------------------ */

static const bench_row *row_of(const char *metric, const char *alt) {
  size_t n;
  bench_row *rows = bench_rows(&n);
  for (size_t i = 0; i < n; i++)
    if (rows[i].group == group && !strcmp(rows[i].metric, metric) &&
        !strcmp(rows[i].system, alt))
      return &rows[i];
  return NULL;
}

static double median(const bench_row *r) {
  return r ? bench_row_quantile(r, 0, 0, 0.5) : NAN;
}

/* The default over the best alternative (lowest median): the median over
 * rounds of default_r / best_r, each the row's median in round r. */
static double ratio_to_best(const char *metric, unsigned rounds, const char **best) {
  const bench_row *d = row_of(metric, "default");
  const bench_row *b = NULL;
  /* An OpenCL program's alternatives are OpenCL's: a loop in place of the
   * kernel is another program (its row is printed, not compared). */
  int k_end = !strncmp(metric, "cl ", 3) ? NALT - 1 : NALT;
  for (int k = 1; k < k_end; k++) {
    const bench_row *r = row_of(metric, alternatives[k]);
    if (r && r->n && (!b || median(r) < median(b)))
      b = r;
  }
  *best = b ? b->system : "-";
  if (!d || !b)
    return NAN;
  double q[64];
  size_t n = 0;
  for (unsigned r = 0; r < rounds && n < 64; r++) {
    double x = bench_row_quantile(d, 1, r, 0.5), y = bench_row_quantile(b, 1, r, 0.5);
    if (!isnan(x) && !isnan(y) && y > 0)
      q[n++] = x / y;
  }
  return n ? bench_quantile(q, n, 0.5) : NAN;
}

static size_t alt_order(const void *ctx, const char *system) {
  (void)ctx;
  for (size_t k = 0; k < NALT; k++)
    if (!strcmp(system, alternatives[k]))
      return k;
  return NALT;
}

static void report(const bench_conditions_opt *o, unsigned rounds, double seconds) {
  if (!o->tsv) {
    printf("\n== conditions: the team region under each process condition "
           "(p = %zu; %u rounds in %.1f s)\n", o->cpus, rounds, seconds);
    printf("   us per iteration of the pattern, medians; default/best: the "
           "default over the best fixed alternative, paired per round\n");
    printf("%-36s %9s %9s %9s %9s %9s  %-8s %s\n", "cell", "default", "p90",
           "team", "serial", "omp-loop", "best", "default/best");
  }
  double worst = 0;
  const char *worst_cell = "-";
  for (size_t i = 0; i < ncells; i++) {
    const cell *c = &cells[i];
    if (o->cells && !strstr(c->name, o->cells))
      continue;
    const bench_row *d = row_of(c->name, "default");
    if (!d)
      continue;
    const char *best;
    double ratio = ratio_to_best(c->name, rounds, &best);
    if (!isnan(ratio) && ratio > worst)
      worst = ratio, worst_cell = c->name;
    double m[NALT];
    for (int k = 0; k < NALT; k++)
      m[k] = median(row_of(c->name, alternatives[k]));
    double p90 = bench_row_quantile(d, 0, 0, 0.9);
    if (o->tsv) {
      for (int k = 0; k < NALT; k++)
        if (!isnan(m[k]))
          printf("conditions\t%s\t%s\tus\t%.4g\t%.4g\t%s\n", alternatives[k], c->name,
                 m[k], bench_row_quantile(row_of(c->name, alternatives[k]), 0, 0, 0.9),
                 k == 0 ? "baseline" : "-");
      printf("conditions\tdefault/best\t%s\tx\t%.4g\t-\t%s\n", c->name, ratio, best);
    } else {
      char f[NALT][24], fp[24], fr[24];
      for (int k = 0; k < NALT; k++)
        bench_fmt(f[k], sizeof f[k], m[k]);
      bench_fmt(fp, sizeof fp, p90);
      bench_fmt(fr, sizeof fr, ratio);
      printf("%-36s %9s %9s %9s %9s %9s  %-8s %sx\n", c->name, f[0], fp, f[1], f[2],
             f[3], best, fr);
    }
    for (int k = 0; k < 2; k++) { /* the default's follow times */
      char metric[128];
      snprintf(metric, sizeof metric, "%s %s", c->name,
               k ? "grew back after" : "shrank after");
      const bench_row *r = row_of(metric, "default");
      if (!r)
        continue;
      if (o->tsv)
        printf("conditions\tdefault\t%s\ts\t%.4g\t%.4g\t-\n", metric, median(r),
               bench_row_quantile(r, 0, 0, 0.9));
      else
        printf("   %-33s %8.2fs (p90 %.2fs): the team's size followed the change\n",
               k ? "grew back after" : "shrank after", median(r),
               bench_row_quantile(r, 0, 0, 0.9));
    }
  }
  if (!o->tsv)
    printf("worst default/best: %.2fx (%s)\n", worst, worst_cell);
}

int bench_conditions(const bench_conditions_opt *o) {
  make_cells();
  unsigned rounds = o->rounds; /* the registry's or --rounds (sections.h) */
  int64_t t0 = bench_now_ns();
  for (unsigned r = 0; r < rounds; r++)
    for (size_t i = 0; i < ncells; i++) {
      const cell *c = &cells[i];
      if (o->cells && !strstr(c->name, o->cells))
        continue;
      if (c->setup && !strncmp(c->setup, "quota", 5) && cg_ok == 0)
        continue;
      for (int k = 0; k < NALT; k++)
        run_cell(o, c, alternatives[(k + r + i) % NALT], r);
    }
  if (cg_ok > 0)
    rmdir(cg_dir);
  report(o, rounds, (double)(bench_now_ns() - t0) / 1e9);
  int failed = 0;
  if (o->plot) {
    bench_report rep = {.section = "conditions", .group = group, .baseline = "default",
                        .system_order = alt_order, .ctx = NULL, .tsv = o->tsv};
    char title[200];
    snprintf(title, sizeof title, "conditions: us per iteration, p = %zu%s", o->cpus,
             o->quick ? ", quick" : "");
    failed = bench_plot(&rep, title, o->plot) != 0;
  }
  return failed;
}
