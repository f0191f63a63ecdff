/* teams-bench: the team side by side with libgomp, libomp and oneTBB.
 *
 * Two OpenMP runtimes cannot live in one process, so every system is a
 * separate child program (teams-bench-child-teams, -libgomp, -libomp,
 * -onetbb, found next to this one).  A child measures one round of one
 * section and prints raw samples (bench.h has the line format).  The
 * sections, their systems and rounds are the registry's (sections.h).  For
 * each section this driver runs
 * round after round; in a round every system runs once, in an order rotated
 * by the round number, so systems alternate within seconds of each other and
 * each takes every position.  Samples are pooled per row (section, system,
 * metric) and reported as median and p90 (the worse tail: the low tail for
 * rows where higher is better).  The ratio column compares a row with the
 * baseline system's row of the same metric: the median over rounds of the
 * paired ratio (this row's median in round r over the baseline's median in
 * round r), so slow drifts of a shared machine cancel out.
 *
 * Two sections run their own children (PARENT rows): conditions
 * (conditions.c) and programs (programs.c: programs generated from seeds,
 * --seeds N --seed S, each under the default and every fixed TEAMS_RUN).
 *
 * After its own sections it runs teams-bench-cl (the OpenCL rows, built by
 * bench/cl.cmake) from the same directory if it exists, with the same --tsv,
 * --quick and --plot flags, and its output follows.  --plot FILE draws each
 * section into FILE-SECTION.svg with gnuplot (plot.c). */
#include "args.h"
#include "bench.h"
#include "driver.h"
#include "sections.h"
#include "table.h"

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
  const char *env, *env2; /* extra NAME=VALUE settings, or NULL */
} system_def;

static const system_def systems[] = {
    {"teams", "teams-bench-child-teams", "TEAMS_IDLE=sleep", NULL},
    /* every region on the team's workers (TEAMS_RUN=team): what the fork and
     * join, the idle rule and the wake-up cost, where the default would run
     * a cheap region on the caller alone (launcher/way.c) */
    {"teams-team", "teams-bench-child-teams", "TEAMS_IDLE=sleep", "TEAMS_RUN=team"},
    {"teams-sentinel", "teams-bench-child-teams", "TEAMS_IDLE=sentinel", "TEAMS_RUN=team"},
    /* the tree forced on (TEAMS_TREE_MIN=2): for information where the team
     * is below the default threshold, as on any machine of fewer than 32 */
    {"teams-tree", "teams-bench-child-teams", "TEAMS_TREE_MIN=2", "TEAMS_RUN=team"},
    {"libgomp", "teams-bench-child-libgomp", NULL, NULL},
    {"libomp", "teams-bench-child-libomp", NULL, NULL},
    {"oneTBB", "teams-bench-child-onetbb", NULL, NULL},
    {"libgomp+teams", "teams-bench-child-interop-libgomp", NULL, NULL},
    {"libgomp+teams-bound", "teams-bench-child-interop-libgomp", "OMP_PROC_BIND=close", NULL},
    {"libomp+teams", "teams-bench-child-interop-libomp", NULL, NULL},
    {"libomp+teams-bound", "teams-bench-child-interop-libomp", "OMP_PROC_BIND=close", NULL},
    {"libgomp+cl", "teams-bench-child-interop-libgomp", "TEAMS_BENCH_INTEROP=cl", NULL},
    {"libomp+cl", "teams-bench-child-interop-libomp", "TEAMS_BENCH_INTEROP=cl", NULL},
};
#define NSYSTEMS (sizeof systems / sizeof systems[0])

/* A section (sections.h, the registry), as the driver runs it. */
typedef struct section_def {
  const char *name, *title;
  const char *baseline; /* default --baseline */
  unsigned rounds, quick_rounds;
  int flags;            /* BENCH_IDLE_TEAM, BENCH_NOT_QUICK */
  int in_parent;        /* run by this process (PARENT), not by children */
  int (*run)(const bench_conditions_opt *o); /* PARENT's function */
  void (*derive)(const struct section_def *s); /* rows derived before the report */
  const char *systems;  /* blank-separated, in report order */
} section_def;

static void derive_axpy(const section_def *s);

#define DRIVER_ROW(name, title, baseline, rounds, quick_rounds, flags, budget,    \
                   quick_budget, how, fn, derive, systems)                       \
  {#name, title, baseline, rounds, quick_rounds, flags, BENCH_HOW_##how(fn),     \
   derive, systems},
static const section_def sections[] = {BENCH_SECTIONS(DRIVER_ROW)};
#define NSECTIONS (sizeof sections / sizeof sections[0])

static struct {
  int tsv, quick;
  const char *only;     /* --section */
  const char *cells;    /* --cells: the conditions cells to run */
  size_t seeds, seed;   /* --seeds, --seed: the programs section's */
  const char *plot;     /* --plot FILE, or NULL */
  int plot_failed;
  const char *baseline; /* --baseline, NULL: the section's default */
  unsigned rounds;      /* --rounds, 0: the section's default */
  size_t cpus;          /* --threads, else the CPUs this process may use */
  char dir[4096];       /* where the children live */
} opt;

/* ---- report order ------------------------------------------------------------- */

/* The k-th name of s's systems into buf; false past the last. */
static int section_system(const section_def *s, size_t k, char *buf, size_t len) {
  const char *w = s->systems;
  for (;;) {
    w += strspn(w, " ");
    size_t n = strcspn(w, " ");
    if (!n)
      return 0;
    if (k-- == 0) {
      snprintf(buf, len, "%.*s", (int)n, w);
      return 1;
    }
    w += n;
  }
}

/* A system's place in its section's list (its name before any '/'). */
static size_t system_order(const void *ctx, const char *system) {
  const section_def *s = ctx;
  size_t len = strcspn(system, "/");
  char name[64];
  for (size_t i = 0; section_system(s, i, name, sizeof name); i++)
    if (strlen(name) == len && !strncmp(name, system, len))
      return i;
  return NSYSTEMS;
}

/* ---- running a child ------------------------------------------------------- */

/* One line from a child: "sample" or "note" (bench.h). */
static void take_line(const void *s, unsigned round, char *line) {
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
    bench_note("%s", f[1]);
  else if (n == 6 && !strcmp(f[0], "sample"))
    bench_row_add(bench_row_get(s, f[1], f[2], f[3], f[4]), round,
                  strtod(f[5], NULL));
  else if (line[0])
    bench_note("unexpected line from a child: %.200s", line);
}

char **bench_child_env(const char *const *set, size_t nset) {
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = bench_xrealloc(NULL, (n + nset + 1) * sizeof *env);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int replaced = 0;
    for (size_t j = 0; j < nset; j++)
      if (set[j] && !strncmp(environ[i], set[j], strcspn(set[j], "=") + 1))
        replaced = 1;
    if (!replaced)
      env[k++] = environ[i];
  }
  for (size_t j = 0; j < nset; j++)
    if (set[j] && strchr(set[j], '=')[1]) /* "NAME=" only unsets */
      env[k++] = (char *)set[j];
  env[k] = NULL;
  return env;
}

static char **child_env(size_t team, const system_def *sys) {
  static char team_teams[64], team_omp[64];
  const char *set[4] = {team_teams, team_omp, sys->env, sys->env2};
  snprintf(team_teams, sizeof team_teams, "TEAMS_NUM_THREADS=%zu", team);
  snprintf(team_omp, sizeof team_omp, "OMP_NUM_THREADS=%zu", team);
  return bench_child_env(set, 4);
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
  char **env = child_env(team, sys);
  char what[200];
  snprintf(what, sizeof what, "%s: %s round %u", sys->name, s->name, round);
  int rc = bench_run_program(s, round, what, argv, env, opt.quick ? 30 : 180);
  free(env);
  return rc;
}

int bench_run_program(const void *group, unsigned round, const char *what,
                      char *const argv[], char **env, int timeout_s) {
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
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (rc != 0) {
    close(fd[0]);
    bench_note("%s: cannot run %s: %s", what, argv[0], strerror(rc));
    return -1;
  }

  /* Read lines until EOF or the deadline: a child that hangs (a lost
   * wake-up, say) is killed and reported, and the run goes on. */
  int64_t deadline = bench_now_ns() + timeout_s * (int64_t)1000000000;
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
      buf = bench_xrealloc(buf, cap = 2 * cap + 8192);
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
      take_line(group, round, start);
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
    bench_note("%s timed out and was killed", what);
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (WIFSIGNALED(status))
      bench_note("%s died of signal %d", what, WTERMSIG(status));
    else
      bench_note("%s exited with status %d", what, WEXITSTATUS(status));
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
  return (s->flags & BENCH_IDLE_TEAM) && opt.cpus < 3 ? 3 : opt.cpus;
}

static unsigned section_rounds(const section_def *s) {
  return opt.rounds ? opt.rounds : opt.quick ? s->quick_rounds : s->rounds;
}

static void run_section(const section_def *s) {
  const system_def *run[NSYSTEMS];
  size_t n = 0;
  char name[64];
  for (size_t i = 0; n < NSYSTEMS && section_system(s, i, name, sizeof name); i++) {
    const system_def *sys = system_named(name);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", opt.dir, sys->program);
    if (access(path, X_OK) == 0)
      run[n++] = sys;
    else
      bench_note("%s: %s was not built; its rows are missing", sys->name, sys->program);
  }
  unsigned rounds = section_rounds(s);
  for (unsigned r = 0; r < rounds; r++)
    for (size_t j = 0; j < n; j++)
      run_child(s, run[(j + r) % n], r, section_team(s));
}

static const char *baseline_of(const section_def *s) {
  return opt.baseline ? opt.baseline : s->baseline;
}

/* ---- derived rows -------------------------------------------------------------- */

/* The limit is the best system's median triad bandwidth; every axpy_bw sample
 * is also reported as a fraction of it. */
static void derive_axpy(const section_def *s) {
  size_t nrows, best = SIZE_MAX;
  bench_row *rows = bench_rows(&nrows);
  double limit = 0;
  for (size_t i = 0; i < nrows; i++)
    if (rows[i].group == s && !strcmp(rows[i].metric, "triad_bw")) {
      double m = bench_row_quantile(&rows[i], 0, 0, 0.5);
      if (m > limit)
        limit = m, best = i;
    }
  if (best == SIZE_MAX)
    return;
  /* bench_row_get may move the rows: take each new row first, then look the
   * source up again */
  char best_system[64];
  bench_row *lim = bench_row_get(s, "limit", "triad_bw", "GB/s", "higher");
  rows = bench_rows(&nrows);
  snprintf(best_system, sizeof best_system, "%s", rows[best].system);
  for (size_t k = 0; k < rows[best].n; k++)
    bench_row_add(lim, rows[best].round[k], rows[best].v[k]);
  size_t n = nrows; /* the rows made below are not sources */
  for (size_t i = 0; i < n; i++) {
    if (rows[i].group != s || strcmp(rows[i].metric, "axpy_bw"))
      continue;
    char sys[64];
    snprintf(sys, sizeof sys, "%s", rows[i].system);
    bench_row *d = bench_row_get(s, sys, "axpy_of_limit", "x limit", "higher");
    rows = bench_rows(&nrows);
    for (size_t k = 0; k < rows[i].n; k++)
      bench_row_add(d, rows[i].round[k], rows[i].v[k] / limit);
  }
  bench_note("axpy: the limit is %s's triad, %.2f GB/s (median over rounds of "
             "its best of %d), counting 32 bytes moved per element (STREAM "
             "counts 24)",
             best_system, limit, opt.quick ? 5 : 10);
}

/* ---- report -------------------------------------------------------------------- */

static void report(const section_def *s, double seconds) {
  char run[160], title[400];
  snprintf(run, sizeof run, "p = %zu%s; %u rounds in %.1f s", section_team(s),
           (s->flags & BENCH_IDLE_TEAM) ? ", loops use p - 1" : "",
           section_rounds(s), seconds);
  if (!opt.tsv) {
    printf("\n== %s: %s (%s; ratio vs %s)\n", s->name, s->title, run,
           baseline_of(s));
    bench_print_header();
  }
  bench_report rep = {.section = s->name, .group = s, .baseline = baseline_of(s),
                      .system_order = system_order, .ctx = s, .tsv = opt.tsv};
  bench_print_rows(&rep);
  snprintf(title, sizeof title, "%s: %s (%s%s)", s->name, s->title, run,
           opt.quick ? ", quick" : "");
  if (opt.plot && bench_plot(&rep, title, opt.plot) != 0)
    opt.plot_failed = 1;
}

/* ---- main ----------------------------------------------------------------------- */

static const bench_arg args[] = {
    {"--tsv", BENCH_ARG_FLAG, &opt.tsv, NULL,
     "print section, system, metric, unit, median, p90, ratio\n"
     "separated by tabs, one row a line, no header"},
    {"--quick", BENCH_ARG_FLAG, &opt.quick, NULL,
     "fewer rounds and samples: the whole run in under a minute"},
    {"--section", BENCH_ARG_TEXT, &opt.only, "NAME",
     "run one section (below; other names go to teams-bench-cl)"},
    {"--baseline", BENCH_ARG_TEXT, &opt.baseline, "SYSTEM",
     "system the ratio column compares with (default: each\n"
     "section's); a schedule too, e.g. libgomp/guided"},
    {"--rounds", BENCH_ARG_UINT, &opt.rounds, "N", "rounds per section (default: each section's, below)"},
    {"--cells", BENCH_ARG_TEXT, &opt.cells, "TEXT",
     "the conditions section's cells whose name has TEXT\n"
     "(e.g. \"libomp batch\", \"quota\"; default: all)"},
    {"--seeds", BENCH_ARG_SIZE, &opt.seeds, "N",
     "the programs section's programs: N seeds (default 200,\n"
     "--quick 20); with N = 1 the program is printed in full"},
    {"--seed", BENCH_ARG_SIZE, &opt.seed, "S",
     "the programs section's first seed (default 1): replay\n"
     "one with --section programs --seeds 1 --seed S"},
    {"--threads", BENCH_ARG_SIZE, &opt.cpus, "P",
     "participants per region (default: the CPUs this process\n"
     "may run on); the idle section uses max(P, 3)"},
    {"--plot", BENCH_ARG_TEXT, &opt.plot, "FILE.svg",
     "also draw each section with gnuplot into\n"
     "FILE-SECTION.svg (FILE without its .svg)"},
};

/* What the usage text adds to the options': the registry's sections, and the
 * systems. */
static void usage_more(FILE *f) {
  fprintf(f, "sections (rounds, --quick rounds; baseline):\n");
  for (size_t i = 0; i < NSECTIONS; i++)
    fprintf(f, "  %-12s %s (%u, %u; %s)%s\n", sections[i].name, sections[i].title,
            sections[i].rounds, sections[i].quick_rounds, sections[i].baseline,
            sections[i].flags & BENCH_NOT_QUICK ? ", not in a whole --quick run" : "");
  fprintf(f, "systems:");
  for (size_t i = 0; i < NSYSTEMS; i++)
    fprintf(f, " %s", systems[i].name);
  fprintf(f, "\n");
}

/* Every system the registry names is one of ours. */
static int registry_ok(void) {
  char name[64];
  for (size_t i = 0; i < NSECTIONS; i++)
    for (size_t k = 0; section_system(&sections[i], k, name, sizeof name); k++)
      if (!system_named(name)) {
        fprintf(stderr, "teams-bench: section %s names an unknown system %s "
                        "(bench/sections.h)\n", sections[i].name, name);
        return 0;
      }
  return 1;
}

static int run_cl(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/teams-bench-cl", opt.dir);
  if (access(path, X_OK) != 0)
    return -1;
  char *argv[10];
  size_t a = 0;
  argv[a++] = path;
  if (opt.tsv)
    argv[a++] = "--tsv";
  if (opt.quick)
    argv[a++] = "--quick";
  if (opt.only)
    argv[a++] = "--section", argv[a++] = (char *)opt.only;
  if (opt.plot)
    argv[a++] = "--plot", argv[a++] = (char *)opt.plot;
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
  opt.seed = 1;
  int rc = BENCH_ARGS(argc, argv, args, usage_more);
  if (rc >= 0)
    return rc;
  if (!registry_ok())
    return 2;
  if (opt.cpus == 0) {
    cpu_set_t set;
    opt.cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? (size_t)CPU_COUNT(&set) : 1;
  }
  if (opt.cpus < 2 || opt.cpus > BENCH_MAX_P) {
    fprintf(stderr, "teams-bench: needs 2 to %d participants (have %zu)\n",
            BENCH_MAX_P, opt.cpus);
    return 2;
  }
  if (opt.plot && bench_plot_check(opt.plot) != 0)
    return 1;
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
    rc = run_cl();
    if (rc < 0) {
      fprintf(stderr, "teams-bench: no section %s\n", opt.only);
      usage_more(stderr);
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
    if ((one && one != s) || (!one && opt.quick && (s->flags & BENCH_NOT_QUICK)))
      continue;
    if (s->in_parent) {
      bench_conditions_opt co = {opt.dir, opt.cpus, opt.quick, opt.tsv,
                                 section_rounds(s), opt.cells, opt.plot,
                                 opt.seeds, opt.seed};
      if (s->run(&co) != 0)
        opt.plot_failed = 1;
      fflush(stdout);
      continue;
    }
    int64_t t0 = bench_now_ns();
    run_section(s);
    if (s->derive)
      s->derive(s);
    report(s, (double)(bench_now_ns() - t0) / 1e9);
    fflush(stdout);
  }
  bench_print_notes(opt.tsv);
  if (!one && run_cl() > 0)
    return 1;
  return opt.plot_failed;
}
