/* teams-bench: the team side by side with libgomp, libomp and oneTBB.
 *
 * Two OpenMP runtimes cannot live in one process, so every system is a
 * separate child program (teams-bench-teams, -gomp, -omp, -tbb, found next
 * to this one).  A child measures one round of one section and prints raw
 * samples (bench.h has the line format).  For each section this driver runs
 * round after round; in a round every system runs once, in an order rotated
 * by the round number, so systems alternate within seconds of each other and
 * each takes every position.  Samples are pooled per row (section, system,
 * metric) and reported as median and p90 (the worse tail: the low tail for
 * rows where higher is better).  The ratio column compares a row with the
 * baseline system's row of the same metric: the median over rounds of the
 * paired ratio (this row's median in round r over the baseline's median in
 * round r), so slow drifts of a shared machine cancel out.
 *
 * After its own sections it runs teams-bench-cl (the OpenCL rows, built by
 * bench/cl.cmake) from the same directory if it exists, with the same --tsv
 * and --quick flags, and its output follows. */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

/* ---- what is compared -------------------------------------------------------- */

typedef struct system_def {
  const char *name;    /* printed; children prefix it to schedule names */
  const char *program; /* next to teams-bench */
  const char *env;     /* one extra NAME=VALUE, or NULL */
} system_def;

static const system_def systems[] = {
    {"teams", "teams-bench-teams", "TEAMS_IDLE=sleep"},
    {"teams-sentinel", "teams-bench-teams", "TEAMS_IDLE=sentinel"},
    {"libgomp", "teams-bench-gomp", NULL},
    {"libomp", "teams-bench-omp", NULL},
    {"oneTBB", "teams-bench-tbb", NULL},
};
#define NSYSTEMS (sizeof systems / sizeof systems[0])

typedef struct section_def {
  const char *name, *title;
  const char *baseline; /* default --baseline */
  unsigned rounds, quick_rounds;
  int idle_team;        /* team of max(P, 3), loops of team - 1 */
  const char *systems[NSYSTEMS + 1];
} section_def;

static const section_def sections[] = {
    {"empty", "empty launch: static m == p, greedy m == 64", "libgomp", 7, 3, 0,
     {"teams", "libgomp", "libomp", "oneTBB", NULL}},
    {"axpy", "axpy on 1e7 doubles against the STREAM triad limit", "libgomp", 5, 3, 0,
     {"teams", "libgomp", "libomp", "oneTBB", NULL}},
    {"grid", "uneven grids (4096 rows) and uniform axpy by schedule", "libgomp", 5, 3, 0,
     {"teams", "libgomp", "libomp", "oneTBB", NULL}},
    {"idle", "back-to-back loops leaving one worker out", "libgomp", 5, 3, 1,
     {"teams", "teams-sentinel", "libgomp", "libomp", "oneTBB", NULL}},
    {"wake", "wake-up latency after an idle gap", "libgomp", 5, 3, 0,
     {"teams", "teams-sentinel", "libgomp", "libomp", NULL}},
};
#define NSECTIONS (sizeof sections / sizeof sections[0])

static struct {
  int tsv, quick;
  const char *only;     /* --section */
  const char *baseline; /* --baseline, NULL: the section's default */
  unsigned rounds;      /* --rounds, 0: the section's default */
  size_t cpus;          /* --threads, else the CPUs this process may use */
  char dir[4096];       /* where the children live */
} opt;

/* ---- samples, pooled per row ------------------------------------------------ */

typedef struct row {
  const section_def *section;
  char system[64], metric[64], unit[24];
  int higher, p99;
  size_t sys_order, metric_order, order;
  double *v;
  unsigned *round;
  size_t n, cap;
} row;

static row *rows;
static size_t nrows, caprows;
static char **notes;
static size_t nnotes;

static void *xrealloc(void *p, size_t size) {
  p = realloc(p, size);
  if (!p) {
    fprintf(stderr, "teams-bench: out of memory\n");
    exit(1);
  }
  return p;
}

__attribute__((format(printf, 1, 2))) static void add_note(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (size_t i = 0; i < nnotes; i++)
    if (!strcmp(notes[i], buf))
      return;
  notes = xrealloc(notes, (nnotes + 1) * sizeof *notes);
  notes[nnotes++] = strdup(buf);
}

static size_t system_order(const section_def *s, const char *system) {
  size_t len = strcspn(system, "/");
  for (size_t i = 0; s->systems[i]; i++)
    if (strlen(s->systems[i]) == len && !strncmp(s->systems[i], system, len))
      return i;
  return NSYSTEMS;
}

/* The row of (section, system, metric), created on first use.  Rows of a new
 * metric sort after the section's metrics so far; within a metric, rows sort
 * by the section's system order, then by first appearance. */
static row *row_get(const section_def *s, const char *system, const char *metric,
                    const char *unit, const char *flags) {
  size_t metric_order = 0;
  int known = 0;
  for (size_t i = 0; i < nrows; i++) {
    row *r = &rows[i];
    if (r->section != s)
      continue;
    if (!strcmp(r->metric, metric)) {
      if (!strcmp(r->system, system))
        return r;
      known = 1;
      metric_order = r->metric_order;
    } else if (!known && r->metric_order + 1 > metric_order) {
      metric_order = r->metric_order + 1;
    }
  }
  if (nrows == caprows) {
    caprows = caprows ? 2 * caprows : 64;
    rows = xrealloc(rows, caprows * sizeof *rows);
  }
  row *r = &rows[nrows];
  memset(r, 0, sizeof *r);
  r->section = s;
  snprintf(r->system, sizeof r->system, "%s", system);
  snprintf(r->metric, sizeof r->metric, "%s", metric);
  snprintf(r->unit, sizeof r->unit, "%s", unit);
  r->higher = strstr(flags, "higher") != NULL;
  r->p99 = strstr(flags, "p99") != NULL;
  r->sys_order = system_order(s, system);
  r->metric_order = metric_order;
  r->order = nrows++;
  return r;
}

static void row_add(row *r, unsigned round, double value) {
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 64;
    r->v = xrealloc(r->v, r->cap * sizeof *r->v);
    r->round = xrealloc(r->round, r->cap * sizeof *r->round);
  }
  r->v[r->n] = value;
  r->round[r->n++] = round;
}

/* ---- running a child ------------------------------------------------------- */

/* One line from a child: "sample" or "note" (bench.h). */
static void take_line(const section_def *s, unsigned round, char *line) {
  char *f[7];
  size_t n = 0;
  for (char *p = line; n < 7;) {
    f[n++] = p;
    p = strchr(p, '\t');
    if (!p)
      break;
    *p++ = 0;
  }
  if (n == 2 && !strcmp(f[0], "note"))
    add_note("%s", f[1]);
  else if (n == 6 && !strcmp(f[0], "sample"))
    row_add(row_get(s, f[1], f[2], f[3], f[4]), round, strtod(f[5], NULL));
  else if (line[0])
    add_note("unexpected line from a child: %.200s", line);
}

static char **child_env(size_t team, const char *extra) {
  static char team_teams[64], team_omp[64];
  const char *set[3] = {team_teams, team_omp, extra};
  snprintf(team_teams, sizeof team_teams, "TEAMS_NUM_THREADS=%zu", team);
  snprintf(team_omp, sizeof team_omp, "OMP_NUM_THREADS=%zu", team);
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = xrealloc(NULL, (n + 4) * sizeof *env);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int replaced = 0;
    for (size_t j = 0; j < 3; j++)
      if (set[j] && !strncmp(environ[i], set[j], strcspn(set[j], "=") + 1))
        replaced = 1;
    if (!replaced)
      env[k++] = environ[i];
  }
  for (size_t j = 0; j < 3; j++)
    if (set[j])
      env[k++] = (char *)set[j];
  env[k] = NULL;
  return env;
}

/* Runs one round of section s for system sys; returns 0 when it completed. */
static int run_child(const section_def *s, const system_def *sys, unsigned round,
                     size_t team) {
  char path[4200], round_s[16], team_s[16];
  snprintf(path, sizeof path, "%s/%s", opt.dir, sys->program);
  snprintf(round_s, sizeof round_s, "%u", round);
  snprintf(team_s, sizeof team_s, "%zu", team);
  char *argv[12];
  size_t a = 0;
  argv[a++] = path;
  argv[a++] = "--section", argv[a++] = (char *)s->name;
  argv[a++] = "--round", argv[a++] = round_s;
  argv[a++] = "--team", argv[a++] = team_s;
  argv[a++] = "--label", argv[a++] = (char *)sys->name;
  if (opt.quick)
    argv[a++] = "--quick";
  argv[a] = NULL;

  int fd[2];
  if (pipe(fd) != 0) {
    perror("teams-bench: pipe");
    exit(1);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addclose(&fa, fd[1]);
  char **env = child_env(team, sys->env);
  pid_t pid;
  int rc = posix_spawn(&pid, path, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  close(fd[1]);
  if (rc != 0) {
    close(fd[0]);
    add_note("%s: cannot run %s: %s", sys->name, path, strerror(rc));
    return -1;
  }

  /* Read lines until EOF or the deadline: a child that hangs (a lost
   * wake-up, say) is killed and reported, and the run goes on. */
  int64_t deadline = bench_now_ns() + (opt.quick ? 30 : 180) * (int64_t)1000000000;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int timed_out = 0;
  for (;;) {
    int64_t left = deadline - bench_now_ns();
    if (left <= 0) {
      timed_out = 1;
      kill(pid, SIGKILL);
      break;
    }
    struct pollfd pfd = {fd[0], POLLIN, 0};
    int ready = poll(&pfd, 1, (int)(left / 1000000) + 1);
    if (ready < 0 && errno != EINTR)
      break;
    if (ready <= 0)
      continue; /* timeout or signal: check the deadline */
    if (len + 4096 > cap)
      buf = xrealloc(buf, cap = 2 * cap + 8192);
    ssize_t got = read(fd[0], buf + len, cap - len - 1);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    len += (size_t)got;
    char *start = buf, *nl;
    buf[len] = 0;
    while ((nl = strchr(start, '\n')) != NULL) {
      *nl = 0;
      take_line(s, round, start);
      start = nl + 1;
    }
    len -= (size_t)(start - buf);
    memmove(buf, start, len);
  }
  free(buf);
  close(fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (timed_out) {
    add_note("%s: %s round %u timed out and was killed", sys->name, s->name, round);
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (WIFSIGNALED(status))
      add_note("%s: %s round %u died of signal %d", sys->name, s->name, round,
               WTERMSIG(status));
    else
      add_note("%s: %s round %u exited with status %d", sys->name, s->name,
               round, WEXITSTATUS(status));
    return -1;
  }
  return 0;
}

static const system_def *system_named(const char *name) {
  for (size_t i = 0; i < NSYSTEMS; i++)
    if (!strcmp(systems[i].name, name))
      return &systems[i];
  return NULL;
}

static size_t section_team(const section_def *s) {
  return s->idle_team && opt.cpus < 3 ? 3 : opt.cpus;
}

static void run_section(const section_def *s) {
  const system_def *run[NSYSTEMS];
  size_t n = 0;
  for (size_t i = 0; s->systems[i]; i++) {
    const system_def *sys = system_named(s->systems[i]);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", opt.dir, sys->program);
    if (access(path, X_OK) == 0)
      run[n++] = sys;
    else
      add_note("%s: %s was not built; its rows are missing", sys->name, sys->program);
  }
  unsigned rounds = opt.rounds ? opt.rounds : opt.quick ? s->quick_rounds : s->rounds;
  for (unsigned r = 0; r < rounds; r++)
    for (size_t j = 0; j < n; j++)
      run_child(s, run[(j + r) % n], r, section_team(s));
}

/* ---- statistics -------------------------------------------------------------- */

static double quantile_of(const row *r, int only_round, unsigned round, double q) {
  double *tmp = xrealloc(NULL, (r->n ? r->n : 1) * sizeof *tmp);
  size_t k = 0;
  for (size_t i = 0; i < r->n; i++)
    if (!only_round || r->round[i] == round)
      tmp[k++] = r->v[i];
  double v = k ? bench_quantile(tmp, k, q) : NAN;
  free(tmp);
  return v;
}

/* The worse tail: high for "lower is better" rows, low for the others. */
static double tail(const row *r, double q) {
  return quantile_of(r, 0, 0, r->higher ? 1 - q : q);
}

static const char *baseline_of(const section_def *s) {
  return opt.baseline ? opt.baseline : s->baseline;
}

/* The baseline's row for r's metric: the first row, in report order, of the
 * system named exactly, else of one of its schedules ("libgomp/...").  The
 * children list their preferred schedule first. */
static const row *baseline_row(const row *r, row *const *sorted, size_t n) {
  const char *b = baseline_of(r->section);
  size_t len = strlen(b);
  const row *prefix = NULL;
  for (size_t i = 0; i < n; i++) {
    const row *c = sorted[i];
    if (c->section != r->section || strcmp(c->metric, r->metric))
      continue;
    if (!strcmp(c->system, b))
      return c;
    if (!prefix && !strncmp(c->system, b, len) && c->system[len] == '/')
      prefix = c;
  }
  return prefix;
}

static double paired_ratio(const row *r, const row *base) {
  if (!base)
    return NAN;
  if (r == base)
    return 1;
  unsigned maxround = 0;
  for (size_t i = 0; i < r->n; i++)
    if (r->round[i] > maxround)
      maxround = r->round[i];
  double *ratios = xrealloc(NULL, (maxround + 1) * sizeof *ratios);
  size_t k = 0;
  for (unsigned rd = 0; rd <= maxround; rd++) {
    double a = quantile_of(r, 1, rd, 0.5), b = quantile_of(base, 1, rd, 0.5);
    if (!isnan(a) && !isnan(b) && b != 0)
      ratios[k++] = a / b;
  }
  double v = k ? bench_quantile(ratios, k, 0.5) : NAN;
  free(ratios);
  return v;
}

/* ---- derived rows -------------------------------------------------------------- */

/* The limit is the best system's median triad bandwidth; every axpy_bw sample
 * is also reported as a fraction of it. */
static void derive_axpy(const section_def *s) {
  size_t best = nrows;
  double limit = 0;
  for (size_t i = 0; i < nrows; i++)
    if (rows[i].section == s && !strcmp(rows[i].metric, "triad_bw")) {
      double m = quantile_of(&rows[i], 0, 0, 0.5);
      if (m > limit)
        limit = m, best = i;
    }
  if (best == nrows)
    return;
  /* row_get may move rows[]: take each row first, then index rows[] again */
  row *lim = row_get(s, "limit", "triad_bw", "GB/s", "higher");
  for (size_t k = 0; k < rows[best].n; k++)
    row_add(lim, rows[best].round[k], rows[best].v[k]);
  size_t n = nrows;
  for (size_t i = 0; i < n; i++)
    if (rows[i].section == s && !strcmp(rows[i].metric, "axpy_bw")) {
      char sys[64];
      snprintf(sys, sizeof sys, "%s", rows[i].system);
      row *d = row_get(s, sys, "axpy_of_limit", "x limit", "higher");
      for (size_t k = 0; k < rows[i].n; k++)
        row_add(d, rows[i].round[k], rows[i].v[k] / limit);
    }
  add_note("axpy: the limit is %s's triad, %.2f GB/s (median over rounds of "
           "its best of %d), counting 32 bytes moved per element (STREAM counts 24)",
           rows[best].system, limit, opt.quick ? 5 : 10);
}

/* ---- report -------------------------------------------------------------------- */

static int cmp_rows(const void *a, const void *b) {
  const row *x = *(row *const *)a, *y = *(row *const *)b;
  if (x->section != y->section)
    return x->section < y->section ? -1 : 1;
  if (x->metric_order != y->metric_order)
    return x->metric_order < y->metric_order ? -1 : 1;
  if (x->sys_order != y->sys_order)
    return x->sys_order < y->sys_order ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static void fmt(char *buf, size_t size, double v) {
  if (isnan(v))
    snprintf(buf, size, "-");
  else if (fabs(v) >= 1000)
    snprintf(buf, size, "%.0f", v);
  else
    snprintf(buf, size, "%.4g", v);
}

static void print_row(const char *section, const char *system, const char *metric,
                      const char *unit, double median, double p90, double ratio,
                      int first_of_metric) {
  if (opt.tsv) {
    printf("%s\t%s\t%s\t%s\t%.6g\t%.6g\t%.6g\n", section, system, metric, unit,
           median, p90, ratio);
    return;
  }
  char m[32], p[32], r[32];
  fmt(m, sizeof m, median);
  fmt(p, sizeof p, p90);
  fmt(r, sizeof r, ratio);
  printf("  %-24s %-22s %10s %10s  %-12s %7s\n", first_of_metric ? metric : "",
         system, m, p, unit, r);
}

static void report(const section_def *s, double seconds) {
  row **sorted = xrealloc(NULL, (nrows ? nrows : 1) * sizeof *sorted);
  size_t n = 0;
  for (size_t i = 0; i < nrows; i++)
    if (rows[i].section == s)
      sorted[n++] = &rows[i];
  qsort(sorted, n, sizeof *sorted, cmp_rows);
  if (!opt.tsv) {
    printf("\n== %s: %s (p = %zu%s; %u rounds in %.1f s; ratio vs %s)\n",
           s->name, s->title, section_team(s),
           s->idle_team ? ", loops use p - 1" : "",
           opt.rounds ? opt.rounds : opt.quick ? s->quick_rounds : s->rounds,
           seconds, baseline_of(s));
    printf("  %-24s %-22s %10s %10s  %-12s %7s\n", "metric", "system", "median",
           "p90", "unit", "ratio");
  }
  for (size_t i = 0; i < n; i++) {
    const row *r = sorted[i];
    const row *base = baseline_row(r, sorted, n);
    int first = i == 0 || strcmp(sorted[i - 1]->metric, r->metric);
    print_row(s->name, r->system, r->metric, r->unit, tail(r, 0.5), tail(r, 0.9),
              paired_ratio(r, base), first);
  }
  /* p99 rows: the median column holds the pooled 99th percentile, and the
   * ratio is pooled too (a round has too few samples for its own p99). */
  for (size_t i = 0; i < n; i++) {
    const row *r = sorted[i];
    if (!r->p99)
      continue;
    const row *base = baseline_row(r, sorted, n);
    char metric[80];
    snprintf(metric, sizeof metric, "%s_p99", r->metric);
    double v = tail(r, 0.99);
    int first = i == 0 || strcmp(sorted[i - 1]->metric, r->metric) || !sorted[i - 1]->p99;
    print_row(s->name, r->system, metric, r->unit, v, NAN,
              base ? v / tail(base, 0.99) : NAN, first);
  }
  free(sorted);
}

/* ---- main ----------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: teams-bench [--tsv] [--quick] [--section NAME] [--baseline SYSTEM]\n"
          "                   [--rounds N] [--threads P]\n"
          "  --tsv        print section, system, metric, unit, median, p90, ratio\n"
          "               separated by tabs, one row a line, no header\n"
          "  --quick      fewer rounds and samples: the whole run in under a minute\n"
          "  --section    run one section:");
  for (size_t i = 0; i < NSECTIONS; i++)
    fprintf(f, " %s", sections[i].name);
  fprintf(f, "\n               (other names go to teams-bench-cl)\n"
             "  --baseline   system the ratio column compares with (default: each\n"
             "               section's, libgomp); a schedule too, e.g. libgomp/guided\n"
             "  --rounds     rounds per section (default 5-7, quick 3)\n"
             "  --threads    participants per region (default: the CPUs this process\n"
             "               may run on); the idle section uses max(P, 3)\n"
             "systems:");
  for (size_t i = 0; i < NSYSTEMS; i++)
    fprintf(f, " %s", systems[i].name);
  fprintf(f, "\n");
}

static int run_cl(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/teams-bench-cl", opt.dir);
  if (access(path, X_OK) != 0)
    return -1;
  char *argv[8];
  size_t a = 0;
  argv[a++] = path;
  if (opt.tsv)
    argv[a++] = "--tsv";
  if (opt.quick)
    argv[a++] = "--quick";
  if (opt.only)
    argv[a++] = "--section", argv[a++] = (char *)opt.only;
  argv[a] = NULL;
  fflush(stdout);
  pid_t pid;
  int rc = posix_spawn(&pid, path, NULL, NULL, argv, environ), status = 0;
  if (rc != 0) {
    fprintf(stderr, "teams-bench: cannot run %s: %s\n", path, strerror(rc));
    return 1;
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--tsv"))
      opt.tsv = 1;
    else if (!strcmp(a, "--quick"))
      opt.quick = 1;
    else if (!strcmp(a, "--section") && v)
      opt.only = v, i++;
    else if (!strcmp(a, "--baseline") && v)
      opt.baseline = v, i++;
    else if (!strcmp(a, "--rounds") && v)
      opt.rounds = (unsigned)strtoul(v, NULL, 10), i++;
    else if (!strcmp(a, "--threads") && v)
      opt.cpus = (size_t)strtoul(v, NULL, 10), i++;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (opt.cpus == 0) {
    cpu_set_t set;
    opt.cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? (size_t)CPU_COUNT(&set) : 1;
  }
  if (opt.cpus < 2 || opt.cpus > BENCH_MAX_P) {
    fprintf(stderr, "teams-bench: needs 2 to %d participants (have %zu)\n",
            BENCH_MAX_P, opt.cpus);
    return 2;
  }
  ssize_t len = readlink("/proc/self/exe", opt.dir, sizeof opt.dir - 1);
  if (len <= 0) {
    perror("teams-bench: /proc/self/exe");
    return 1;
  }
  opt.dir[len] = 0;
  *strrchr(opt.dir, '/') = 0;

  const section_def *one = NULL;
  if (opt.only)
    for (size_t i = 0; i < NSECTIONS; i++)
      if (!strcmp(sections[i].name, opt.only))
        one = &sections[i];
  if (opt.only && !one) { /* not ours: perhaps an OpenCL section */
    int rc = run_cl();
    if (rc < 0) {
      fprintf(stderr, "teams-bench: no section %s\n", opt.only);
      usage(stderr);
      return 2;
    }
    return rc;
  }

  if (!opt.tsv)
    printf("teams-bench: %zu CPUs%s; median and p90 over rounds in separate "
           "processes; ratio: paired per round, against the baseline's row\n",
           opt.cpus, opt.quick ? ", quick" : "");
  for (size_t i = 0; i < NSECTIONS; i++) {
    const section_def *s = &sections[i];
    if (one && one != s)
      continue;
    int64_t t0 = bench_now_ns();
    run_section(s);
    if (!strcmp(s->name, "axpy"))
      derive_axpy(s);
    report(s, (double)(bench_now_ns() - t0) / 1e9);
    fflush(stdout);
  }
  if (nnotes) {
    FILE *f = opt.tsv ? stderr : stdout;
    fprintf(f, "\nnotes:\n");
    for (size_t i = 0; i < nnotes; i++)
      fprintf(f, "  - %s\n", notes[i]);
  }
  if (!one && run_cl() > 0)
    return 1;
  return 0;
}
