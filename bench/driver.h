/* teams-bench: what the parent's parts share (teams-bench.c runs the
 * sections, conditions.c the conditions section, programs.c the programs
 * section). */
#ifndef TEAMS_BENCH_DRIVER_H
#define TEAMS_BENCH_DRIVER_H

#include <stddef.h>

/* The environment for a child: this process's, with each NAME=VALUE of set
 * (NULL entries skipped) replacing NAME; "NAME=" removes NAME.  A malloc'd
 * array of pointers into environ and set (free only the array). */
char **bench_child_env(const char *const *set, size_t nset);

/* Runs argv[0] with env, reads its sample and note lines into the rows of
 * group for round `round`, and kills it after timeout_s.  `what` names it in
 * notes.  Returns 0 when it ran to the end with status 0. */
int bench_run_program(const void *group, unsigned round, const char *what,
                      char *const argv[], char **env, int timeout_s);

/* The conditions section (conditions.c). */
typedef struct bench_conditions_opt {
  const char *dir;    /* where the children are */
  size_t cpus;        /* p */
  int quick, tsv;
  unsigned rounds;    /* --rounds, else the section's (sections.h) */
  const char *cells;  /* only cells whose name contains this, or NULL */
  const char *plot;   /* --plot FILE, or NULL */
  size_t seeds, seed; /* the programs section: --seeds (0: its default), --seed */
} bench_conditions_opt;
/* Runs and reports it; returns 0, or 1 when a plot failed. */
int bench_conditions(const bench_conditions_opt *o);

/* The programs section (programs.c), with the same options; returns 0. */
int bench_programs(const bench_conditions_opt *o);

#endif
