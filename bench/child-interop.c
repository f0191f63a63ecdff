/* teams-bench-child-interop-libgomp and -libomp: the "interop" section, a
 * child of teams-bench.  One process holds an OpenMP runtime and the team,
 * as a program that mixes them does, and alternates their regions: each
 * region is p chunks of the same few microseconds of work, an OpenMP
 * `parallel for schedule(static)` or tt_foreach_chunk(f, ctx, p, p).  A round
 * measures, in batches that alternate, each runtime alone and the pair, and
 * prints per batch
 *   omp_alone, team_alone   us per region, the runtime's regions back to back
 *   pair                    us per OpenMP region + team region
 *   pair_vs_sum             pair over (omp_alone + team_alone) of the same
 *                           repetition: what the hand-over between the two
 *                           runtimes' threads costs (1.0 is free)
 * Both runtimes keep their defaults (OMP_WAIT_POLICY, GOMP_SPINCOUNT,
 * KMP_BLOCKTIME, TEAMS_SPIN_US unset) unless the system's environment sets
 * them (the -bound systems set OMP_PROC_BIND=close).  Built by gcc -fopenmp
 * and by clang -fopenmp=libomp, like child-omp.c; BENCH_OMP_SYSTEM names
 * which.
 *
 * With TEAMS_BENCH_INTEROP=cl (the +cl systems; built with BENCH_WITH_CL)
 * the team region is an OpenCL kernel on the teams device instead: p
 * work-groups of one work-item doing the same work, enqueue + clFinish.
 * team_alone is then that kernel alone in the OpenMP process. */
#include "mix.h"
#include "args.h"

#include <stdio.h>
#include <string.h>

static int use_cl;

static void team_region(size_t p) {
#ifdef BENCH_WITH_CL
  if (use_cl) {
    mix_cl_region(p);
    return;
  }
#endif
  mix_team_region(p);
}

static double batch_us(int which, size_t p, unsigned reps) {
  int64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < reps; i++) {
    if (which != 1)
      mix_omp_region(p);
    if (which != 0)
      team_region(p);
  }
  return (double)(bench_now_ns() - t0) / 1e3 / reps;
}

static void sample(const char *label, const char *metric, const char *unit,
                   double v) {
  printf("sample\t%s\t%s\t%s\t-\t%.6g\n", label, metric, unit, v);
}

int main(int argc, char **argv) {
  const char *label = "interop", *section = NULL;
  size_t p = 0;
  unsigned round = 0; /* the driver passes it to every child; the batches
                         alternate the same way in every round */
  int quick = 0;
  const bench_arg args[] = {
      {"--section", BENCH_ARG_TEXT, &section, "interop", "the section (its only one)"},
      {"--team", BENCH_ARG_SIZE, &p, "T", "participants per region"},
      {"--round", BENCH_ARG_UINT, &round, "R", "the round"},
      {"--quick", BENCH_ARG_FLAG, &quick, NULL, "fewer samples"},
      {"--label", BENCH_ARG_TEXT, &label, "SYSTEM", "the system's name in the rows"},
  };
  int rc = BENCH_ARGS(argc, argv, args, NULL);
  if (rc >= 0)
    return rc;
  /* the one section of this program (sections.h: interop, CHILD) */
  if (!section || strcmp(section, "interop") != 0 || p == 0 || p > BENCH_MAX_P) {
    fprintf(stderr, "%s: want --section interop and --team 1..%d\n", argv[0],
            BENCH_MAX_P);
    return 2;
  }
  unsigned reps = quick ? 200 : 500, samples = quick ? 5 : 11;
  const char *mode = getenv("TEAMS_BENCH_INTEROP");
  if (mode && !strcmp(mode, "cl")) {
#ifdef BENCH_WITH_CL
    const char *why = mix_cl_open(p);
    if (why) {
      printf("note\t%s: left out: %s\n", label, why);
      return 0;
    }
    use_cl = 1;
#else
    printf("note\t%s: left out: built without OpenCL\n", label);
    return 0;
#endif
  }
  /* Warm both: threads created, pages touched, the team started. */
  batch_us(2, p, 50);
  tt_team_info info;
  if (tt_team_get_info(&info) == 0 && info.size < p)
    printf("note\t%s: the team has %zu participants, asked %zu (OpenMP "
           "binding?)\n", label, info.size, p);
  for (unsigned s = 0; s < samples; s++) {
    double omp = batch_us(0, p, reps);
    double team = batch_us(1, p, reps);
    double pair = batch_us(2, p, reps);
    sample(label, "omp_alone", "us", omp);
    sample(label, "team_alone", "us", team);
    sample(label, "pair", "us", pair);
    sample(label, "pair_vs_sum", "x", pair / (omp + team));
  }
  return 0;
}
