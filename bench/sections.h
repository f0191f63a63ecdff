/* teams-bench: the registry of its sections, in report order.
 *
 * The one list that the driver (teams-bench.c: which systems run, how many
 * rounds, the titles, the order of the report), the children (child-
 * harness.c: which function measures a section, its time budget) and every
 * usage text read.  A new section is one row here and its function; its
 * metrics are documented in bench/README.md.
 *
 *   X(NAME, "title", "baseline", ROUNDS, QUICK_ROUNDS, FLAGS,
 *     BUDGET_S, QUICK_BUDGET_S, HOW, FN, DERIVE, "systems")
 *
 * NAME      the section's name (--section NAME), an identifier;
 * title     the report's heading;
 * baseline  the system the ratio column compares with (--baseline);
 * ROUNDS    rounds of a run, QUICK_ROUNDS of a --quick one;
 * FLAGS     0, or BENCH_IDLE_TEAM (a team of max(p, 3) whose loops use
 *           p - 1) | BENCH_NOT_QUICK (left out of a whole --quick run);
 * BUDGET_S  the time budget of a child's round, in seconds (0: the section
 *           bounds itself), QUICK_BUDGET_S with --quick;
 * HOW, FN   who measures it:
 *             HARNESS, f  each system's child, through child-harness.c's
 *                         static void f(void), over the system's bench_ops;
 *             CHILD, -    child programs of its own (the systems' programs,
 *                         which take --section NAME);
 *             PARENT, f   teams-bench itself: int f(const
 *                         bench_conditions_opt *) (driver.h), which runs
 *                         and reports it;
 * DERIVE    NULL, or the driver's void f(const section_def *) that adds
 *           rows derived from the samples before the report;
 * systems   the systems that take part, by name (teams-bench.c's systems
 *           table), in report order, separated by blanks.
 *
 * Each reader defines what it keeps of a row; BENCH_HOW_<HOW> below helps
 * it turn HOW and FN into what it needs. */
#ifndef TEAMS_BENCH_SECTIONS_H
#define TEAMS_BENCH_SECTIONS_H

#define BENCH_IDLE_TEAM 1
#define BENCH_NOT_QUICK 2

#define BENCH_SECTIONS(X)                                                      \
  X(empty, "empty launch: static m == p, greedy m == 64", "libgomp", 7, 3, 0,  \
    4, 0.4, HARNESS, section_empty, NULL,                                      \
    "teams teams-team teams-tree libgomp libomp oneTBB")                       \
  X(axpy, "axpy on 1e7 doubles against the STREAM triad limit", "libgomp", 5,  \
    3, 0, 12, 1.0, HARNESS, section_axpy, derive_axpy,                         \
    "teams libgomp libomp oneTBB")                                             \
  X(grid, "uneven grids (4096 rows) and uniform axpy by schedule", "libgomp",  \
    5, 3, 0, 15, 1.0, HARNESS, section_grid, NULL,                             \
    "teams libgomp libomp oneTBB")                                             \
  X(idle, "back-to-back loops leaving one worker out", "libgomp", 5, 3,        \
    BENCH_IDLE_TEAM, 0, 0, HARNESS, section_idle, NULL,                        \
    "teams-team teams-sentinel libgomp libomp oneTBB")                         \
  X(wake, "wake-up latency after an idle gap", "libgomp", 5, 3, 0, 20, 0.6,    \
    HARNESS, section_wake, NULL, "teams-team teams-sentinel libgomp libomp")   \
  X(interop, "OpenMP and team regions alternating in one process",             \
    "libgomp+teams", 5, 3, 0, 0, 0, CHILD, -, NULL,                            \
    "libgomp+teams libgomp+teams-bound libomp+teams libomp+teams-bound "       \
    "libgomp+cl libomp+cl")                                                    \
  X(conditions, "the team region under each process condition", "default", 3, \
    2, BENCH_NOT_QUICK, 0, 0, PARENT, bench_conditions, NULL, "")              \
  X(programs, "programs generated from seeds: the default against the best "  \
    "fixed TEAMS_RUN", "default", 3, 3, BENCH_NOT_QUICK, 0, 0, PARENT,         \
    bench_programs, NULL, "")

/* HOW and FN as one initializer pair {runs in the parent, function}:
 * BENCH_HOW_##HOW(FN) for the driver (FN a parent's function or NULL), and
 * BENCH_HARNESS_##HOW(FN) for the child harness (its function or NULL). */
#define BENCH_HOW_HARNESS(fn) 0, NULL
#define BENCH_HOW_CHILD(fn) 0, NULL
#define BENCH_HOW_PARENT(fn) 1, fn
#define BENCH_HARNESS_HARNESS(fn) fn
#define BENCH_HARNESS_CHILD(fn) NULL
#define BENCH_HARNESS_PARENT(fn) NULL

#endif
