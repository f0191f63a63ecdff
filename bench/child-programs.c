/* teams-bench-child-programs: one run of one generated program (the
 * "programs" section), a child of teams-bench.
 *
 * The program (programs.h) is generated from --seed; its work is sized in
 * units of bench_row_body, --unit-ns nanoseconds each (the parent measures
 * it once with --calibrate, so that every child of a run does the same
 * work).  The process first starts the team and OpenMP's threads (what a
 * program's start-up costs is no way's choice), and, when a phase wants
 * one, forks the spinner (stopped until its phase); then runs the phases
 * and prints the wall time of each and of the whole program, in ms:
 *
 *   sample <TAB> LABEL <TAB> seed S phase K <TAB> ms <TAB> - <TAB> time
 *   sample <TAB> LABEL <TAB> seed S <TAB> ms <TAB> - <TAB> time
 *
 * TEAMS_RUN, set or not by the parent, is the way under test.
 *
 *   child --seed S [--unit-ns X] [--label SYS] [--round R]
 *   child --calibrate     prints the ns per unit of this machine
 *   child --seed S --describe   prints the program in full, runs nothing */
#include "args.h"
#include "bench.h"
#include "programs.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "teams/kernel.h"
#include "teams/team.h"

static double unit_ns;

/* A loop as it runs: its chunks' units (base and changed), its own sink
 * (chunk c writes sink[8 c], one line per chunk). */
typedef struct loop_run {
  const prog_loop *l;
  uint32_t units[2][PROG_MAX_M];
  const uint32_t *cur;
  unsigned done; /* regions run */
  double sink[PROG_MAX_M * 8];
} loop_run;

static uint32_t units_of(double us) {
  double u = us * 1000 / unit_ns;
  return u < 0.5 ? 0 : u > 4e9 ? 4000000000u : (uint32_t)(u + 0.5);
}

static void loop_init(loop_run *r, const prog_loop *l) {
  double w[PROG_MAX_M], sum = 0;
  uint64_t s = l->weights_seed;
  for (unsigned c = 0; c < l->m; c++) {
    double u = prog_uniform(&s);
    w[c] = l->shape == PROG_EVEN ? 1 : l->shape == PROG_TRI ? c + 1 : 1 + 20 * u * u * u;
    sum += w[c];
  }
  for (unsigned c = 0; c < l->m; c++) {
    r->units[0][c] = units_of(l->us * w[c] / sum);
    r->units[1][c] = units_of(l->us * l->change_factor * w[c] / sum);
  }
  r->l = l;
  r->cur = r->units[0];
  r->done = 0;
}

/* The functions, PROG_FNS of each API; k in the body keeps the compiler
 * from folding them into one. */
#define WORK(r, c, k) ((r)->sink[(c) * 8] += bench_row_body((r)->cur[c], (double)((c) + 1000 * (k))))

#define CHUNK_FN(k)                                                            \
  static void chunk_fn_##k(void *ctx, size_t c) { WORK((loop_run *)ctx, c, k); }
#define RANGE_FN(k)                                                            \
  static void range_fn_##k(void *ctx, size_t b, size_t e) {                    \
    for (size_t c = b; c < e; c++)                                             \
      WORK((loop_run *)ctx, c, 10 + k);                                        \
  }
typedef struct kernel_args {
  loop_run *r;
} kernel_args;
#define KERNEL(k)                                                              \
  TT_KERNEL(kernel_##k, kernel_args, a) {                                      \
    size_t c = tt_get_global_id(0);                                            \
    WORK(a->r, c, 20 + k);                                                     \
  }

CHUNK_FN(0) CHUNK_FN(1) CHUNK_FN(2) CHUNK_FN(3)
RANGE_FN(0) RANGE_FN(1) RANGE_FN(2) RANGE_FN(3)
KERNEL(0) KERNEL(1) KERNEL(2) KERNEL(3)
_Static_assert(PROG_FNS == 4, "one function of each API per PROG_FNS");

static void (*const chunk_fns[PROG_FNS])(void *, size_t) = {chunk_fn_0, chunk_fn_1,
                                                            chunk_fn_2, chunk_fn_3};
static void (*const range_fns[PROG_FNS])(void *, size_t, size_t) = {range_fn_0, range_fn_1,
                                                                    range_fn_2, range_fn_3};
static const tt_kernel *const kernels[PROG_FNS] = {&kernel_0, &kernel_1, &kernel_2,
                                                   &kernel_3};

static void fail(const char *what, int rc) {
  fprintf(stderr, "teams-bench-child-programs: %s: %s\n", what, tt_strerror(rc));
  exit(1);
}

static void run_region(loop_run *r, size_t p) {
  const prog_loop *l = r->l;
  if (l->change_every)
    r->cur = r->units[(r->done / l->change_every) & 1];
  r->done++;
  int rc = 0;
  switch (l->api) {
  case PROG_CHUNK:
    rc = tt_foreach_chunk(chunk_fns[l->fn], r, l->m, p);
    break;
  case PROG_RANGE:
    rc = tt_foreach_range(range_fns[l->fn], r, l->m, 0, p, (tt_schedule)l->sched);
    break;
  default: {
    kernel_args a = {r};
    tt_launch_config cfg = {.dims = 1, .global = {l->m}, .local = {1},
                            .schedule = (tt_schedule)l->sched};
    rc = tt_launch(kernels[l->fn], &a, &cfg);
  }
  }
  if (rc)
    fail(prog_api_name[l->api], rc);
}

/* The host's own work on the calling thread. */
static void host_work(double us, volatile double *sink) {
  *sink += bench_row_body(units_of(us), us);
}

static double omp_sink[PROG_MAX_M * 8];

static void omp_loop(unsigned m, uint32_t units) {
  const long n = (long)m;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++)
    omp_sink[(i % PROG_MAX_M) * 8] += bench_row_body(units, (double)i);
}

/* ---- the second launching thread ------------------------------------------- */

typedef struct second_run {
  loop_run *r;
  const prog_phase *ph;
  size_t p;
  volatile double sink;
} second_run;

static void *second_main(void *arg) {
  second_run *s = arg;
  for (unsigned i = 0; i < s->ph->second_regions; i++) {
    if (s->ph->second_gap_us > 0)
      host_work(s->ph->second_gap_us, &s->sink);
    run_region(s->r, s->p);
  }
  return NULL;
}

/* ---- the spinner ------------------------------------------------------------ */

/* Another process busy on the index-th CPU (modulo) of this process's mask,
 * stopped until a phase continues it.  Forked before any thread exists; it
 * dies with this process. */
static pid_t spinner_start(unsigned index) {
  cpu_set_t mine, one;
  CPU_ZERO(&one);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0)
    return -1;
  unsigned k = index % (unsigned)CPU_COUNT(&mine);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &mine) && k-- == 0) {
      CPU_SET(c, &one);
      break;
    }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
      _exit(0);
    sched_setaffinity(0, sizeof one, &one);
    raise(SIGSTOP);
    for (;;)
      __asm__ volatile("" ::: "memory"); /* a loop the compiler keeps */
  }
  int status;
  if (pid > 0)
    waitpid(pid, &status, WUNTRACED); /* until it stopped */
  return pid;
}

/* ---- main -------------------------------------------------------------------- */

static double calibrate(void) {
  double best = 1e9, sink = 0;
  for (int i = 0; i < 40; i++) {
    int64_t t0 = bench_now_ns();
    sink += bench_row_body(100000, (double)i);
    __asm__ __volatile__("" : : "x"(sink)); /* the result is used */
    double ns = (double)(bench_now_ns() - t0) / 100000;
    best = ns < best ? ns : best;
  }
  return best;
}

static program pg;
static loop_run runs[PROG_MAX_PHASES][PROG_MAX_LOOPS + 1];

int main(int argc, char **argv) {
  size_t seed = 0;
  const char *label = "programs", *unit = NULL;
  unsigned round = 0; /* the parent passes it; a program does not depend on it */
  int calib = 0, describe = 0, have_seed = 0;
  const bench_arg args[] = {
      {"--seed", BENCH_ARG_SIZE, &seed, "S", "the program's seed"},
      {"--unit-ns", BENCH_ARG_TEXT, &unit, "X", "ns per unit of work (default: measured now)"},
      {"--label", BENCH_ARG_TEXT, &label, "SYS", "the system's name in the rows"},
      {"--round", BENCH_ARG_UINT, &round, "R", "the round"},
      {"--calibrate", BENCH_ARG_FLAG, &calib, NULL, "print the ns per unit of work, run nothing"},
      {"--describe", BENCH_ARG_FLAG, &describe, NULL, "print the program in full, run nothing"},
  };
  for (int i = 1; i < argc; i++)
    have_seed |= !strcmp(argv[i], "--seed");
  int rc = BENCH_ARGS(argc, argv, args, NULL);
  if (rc >= 0)
    return rc;
  if (calib) {
    printf("sample\tcalibration\tunit\tns\t-\t%.6g\n", calibrate());
    return 0;
  }
  if (!have_seed) {
    fprintf(stderr, "%s: want --seed S (or --calibrate)\n", argv[0]);
    return 2;
  }
  prog_generate(&pg, (uint64_t)seed);
  if (describe) {
    prog_print_full(stdout, "", &pg);
    return 0;
  }
  unit_ns = unit ? strtod(unit, NULL) : 0;
  if (!(unit_ns > 0))
    unit_ns = calibrate();

  int spin = 0;
  for (unsigned k = 0; k < pg.nphases; k++) {
    const prog_phase *ph = &pg.phase[k];
    for (unsigned i = 0; i < ph->nloops; i++)
      loop_init(&runs[k][i], &ph->loop[i]);
    if (ph->second)
      loop_init(&runs[k][PROG_MAX_LOOPS], &ph->second_loop);
    spin |= ph->spinner;
  }
  pid_t spinner = spin ? spinner_start(pg.spin_cpu) : -1;
  if (spin && spinner <= 0)
    printf("note\t%s: seed %zu: no spinner (fork failed)\n", label, seed);

  /* Both runtimes started before the clock. */
  rc = tt_team_start();
  if (rc)
    fail("tt_team_start", rc);
  size_t p = tt_team_size();
  omp_loop(2, 0);

  volatile double host_sink = 0;
  int64_t t0 = bench_now_ns();
  for (unsigned k = 0; k < pg.nphases; k++) {
    const prog_phase *ph = &pg.phase[k];
    uint64_t rs = pg.seed * 0x9e3779b97f4a7c15u + k; /* order and jitter */
    uint32_t omp_units = units_of(ph->omp_us / (ph->omp_m ? ph->omp_m : 1));
    int64_t t1 = bench_now_ns();
    if (ph->spinner && spinner > 0)
      kill(spinner, SIGCONT);
    second_run second = {&runs[k][PROG_MAX_LOOPS], ph, p, 0};
    pthread_t thread;
    int two = ph->second && pthread_create(&thread, NULL, second_main, &second) == 0;
    for (unsigned i = 0; i < ph->regions; i++) {
      if (ph->gap_us > 0)
        host_work(ph->gap_jitter ? ph->gap_us * (0.5 + prog_uniform(&rs)) : ph->gap_us,
                  &host_sink);
      if (ph->omp_every && i % ph->omp_every == 0)
        omp_loop(ph->omp_m, omp_units);
      unsigned l = ph->order_random ? (unsigned)(prog_next(&rs) % ph->nloops) : i % ph->nloops;
      run_region(&runs[k][l], p);
    }
    if (two)
      pthread_join(thread, NULL);
    if (ph->spinner && spinner > 0)
      kill(spinner, SIGSTOP);
    printf("sample\t%s\tseed %zu phase %u\tms\t-\t%.6g\n", label, seed, k + 1,
           (double)(bench_now_ns() - t1) / 1e6);
  }
  printf("sample\t%s\tseed %zu\tms\t-\t%.6g\n", label, seed,
         (double)(bench_now_ns() - t0) / 1e6);
  if (spinner > 0) {
    kill(spinner, SIGKILL);
    waitpid(spinner, NULL, 0);
  }
  return fflush(stdout) == 0 ? 0 : 1;
}
