/* teams: every TEAMS_* setting, in one table (internal).
 *
 * Every variable a user sets to steer the runtime is read here and nowhere
 * else (mimalloc's options.c is the model): one row per variable with its
 * type, its range or its choices, its default and where the default comes
 * from.  Not settings, and read where they are used: other programs'
 * variables the runtime consults (the MPI launchers' local rank, cpuset.c;
 * OpenMP's wait policy, lend.c) and the driver's test hook of its ABI check
 * (TEAMS_POCL_ABI_SELFTEST, backend/pocl/driver.c).  The team reads
 * the table at each start (tt_team_shutdown + a new start re-reads it, which
 * the tests use), the PoCL driver through tt__setting, and TEAMS_DEBUG=1 and
 * `teams-info --settings` print it; the README's environment table is that
 * print (tests/settings-doc.sh compares them).
 *
 * Integers are parsed as integers: "2.5", "2x", "" or a value out of range
 * is refused with a message on stderr and the default is used (a wrong
 * setting never stops a program, and never silently means something
 * else). */
#ifndef TEAMS_SETTINGS_H
#define TEAMS_SETTINGS_H

#include <stdbool.h>
#include <stdio.h>

#include "teams-driver.h"

/* The defaults of TEAMS_TREE_MIN and TEAMS_TREE_K (fork.c explains the
 * choice), shared with tools/teams-sim's cost model. */
#define TT__TREE_MIN_DEFAULT 32
#define TT__TREE_K_DEFAULT 2

/* X(ID, "NAME", KIND, LO, HI, CHOICES, DEFAULT, "meaning", "default from")
 *   KIND INT:    an integer in [LO, HI]; DEFAULT is a number, or -1 when
 *                the runtime computes it (then "default from" says how);
 *   KIND CHOICE: one of CHOICES ("a|b|c"); DEFAULT is the index. */
#define TT__SETTINGS(X)                                                        \
  X(NUM_THREADS, "TEAMS_NUM_THREADS", INT, 1, 4096, NULL, -1,                  \
    "participants, workers + caller (set: no resizing)",                      \
    "the CPUs the process may use, capped by its cgroup quota (cpuset.h)")    \
  X(SPIN_US, "TEAMS_SPIN_US", INT, 0, 10000000, NULL, 100,                     \
    "idle spin before sleeping, us (unset: the way's model, way.c)",          \
    "the spin of a fixed TEAMS_RUN; unset under auto: what the spin saves")   \
  X(IDLE, "TEAMS_IDLE", CHOICE, 0, 0, "sleep|sentinel", 0,                     \
    "with sentinel one idle worker keeps spinning", "")                           \
  X(RUN, "TEAMS_RUN", CHOICE, 0, 0, "auto|team|serial|openmp", 0,              \
    "how regions run: the cheapest as measured, or fixed", "way.c")           \
  X(BUSY, "TEAMS_BUSY", CHOICE, 0, 0, "serial|wait", 0,                        \
    "a region while another thread holds the team", "")                       \
  X(PIN, "TEAMS_PIN", CHOICE, 0, 0, "none|cores|numa", 0,                      \
    "pin participants to PUs", "")                                            \
  X(TREE_MIN, "TEAMS_TREE_MIN", INT, 2, 4097, NULL, TT__TREE_MIN_DEFAULT,      \
    "regions of this many participants or more go along a tree",             \
    "teams-sim's fork/join model (fork.c)")                                    \
  X(TREE_K, "TEAMS_TREE_K", INT, 1, 64, NULL, TT__TREE_K_DEFAULT,              \
    "the tree's branching", "teams-sim's fork/join model (fork.c)")            \
  X(VICTIMS, "TEAMS_VICTIMS", CHOICE, 0, 0, "topology|cyclic", 0,              \
    "steal victims by topology, or cyclic", "")                               \
  X(BLOCKS, "TEAMS_BLOCKS", CHOICE, 0, 0, "dealt|contiguous", 0,               \
    "a range's blocks dealt over nodes and LLCs, or in order", "")            \
  X(DEBUG, "TEAMS_DEBUG", CHOICE, 0, 0, "0|1", 0,                              \
    "with 1 the team and settings at start, a report at exit", "")                \
  X(POCL_TOPOLOGY, "TEAMS_POCL_TOPOLOGY", TEXT, 0, 0, NULL, -1,                \
    "tests: the driver's sub-devices on this hwloc synthetic machine", "")    \
  X(POCL_RECORD_PARTICIPANTS, "TEAMS_POCL_RECORD_PARTICIPANTS", CHOICE, 0, 0,  \
    "0|1", 0, "tests: the driver records which participants ran", "")

typedef enum tt__setting_id {
#define TT__SETTING_ID(id, ...) TT__SET_##id,
  TT__SETTINGS(TT__SETTING_ID)
#undef TT__SETTING_ID
  TT__NSETTINGS
} tt__setting_id;

/* What a read found: per setting its value (the integer, the choice's
 * index, or -1 for a computed default or unset text), whether the
 * environment set it, and for TEXT the string (owned by the environment). */
typedef struct tt__settings {
  long value[TT__NSETTINGS];
  bool set[TT__NSETTINGS];
  const char *text[TT__NSETTINGS];
} tt__settings;

/* Reads every setting from the environment; a refused value reads as its
 * default and is reported on stderr ("teams: ignoring NAME=VALUE (expected
 * ...)") once per value: read again (each team start, teams-info), the same
 * value is not reported again, a changed one is. */
void tt__settings_read(tt__settings *out);

/* One setting, read now (for readers outside the team's start: the driver,
 * topology.c).  TEXT settings: use tt__setting_text. */
TT_INTERNAL long tt__setting(tt__setting_id id);
TT_INTERNAL const char *tt__setting_text(tt__setting_id id);

/* Prints the table: as markdown rows (| `NAME` | values: meaning | default
 * |, the README's environment table) when markdown is set, else one line
 * per setting, after prefix, with the value s holds (s may be NULL:
 * defaults) and where the default comes from. */
void tt__settings_print(FILE *out, const tt__settings *s, bool markdown,
                        const char *prefix);

/* Parses an integer setting's text: true, with *v, when text is a whole
 * decimal integer in [lo, hi] (surrounding spaces refused too). */
bool tt__settings_parse_int(const char *text, long lo, long hi, long *v);

#endif
