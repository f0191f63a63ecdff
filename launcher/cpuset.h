/* teams: which CPUs the team uses, and how many participants (internal).
 *
 * Read once at team start, from the process rather than from the calling
 * thread's momentary mask.  The sources, in the order they apply:
 *
 *   1. the calling thread's affinity mask ("affinity mask"), unless
 *   2. an OpenMP runtime binds threads (omp_get_proc_bind() != false): then
 *      the union of the CPUs of its place list ("openmp places"), within the
 *      CPUs the process may use.  libgomp pins the initial thread to its
 *      first place when it loads (OMP_PROC_BIND=close OMP_PLACES=threads: the
 *      main thread's mask is one CPU before main() runs, and so is
 *      /proc/self/task/<pid>/status's Cpus_allowed_list: the mask the
 *      process started with cannot be read back), libomp at its first
 *      parallel region or its first place query;
 *   3. several MPI ranks on the node, not bound by their launcher (the set
 *      so far is every CPU the process may use): the rank's contiguous
 *      share of it ("mpi local rank r of k, VARIABLE");
 *   4. the size is the number of CPUs in the set ("cpus"), or less: the
 *      cgroup CPU quota rounded up, at least 1 ("cgroup quota 1.5 cpus");
 *   5. TEAMS_NUM_THREADS, when set, is the size (lifecycle.c).
 *
 * The team looks again every half second while it runs (lifecycle.c,
 * "Sizing"): a changed mask, cpuset or quota restarts it with the new
 * set.
 *
 * "The CPUs the process may use" are the online CPUs within the cgroup's
 * cpuset.  The set is also the candidate set for pinning (TEAMS_PIN), and
 * unpinned workers get it as their mask.
 *
 * The masks and their text are cpumask.h's, the cgroup's files cgroup.h's;
 * this header is the rule and its inputs.  Everything that reads the system
 * goes through tt__cpuset_read and tt__cpuset_look; the rule is a pure
 * function of what they read (tt__cpuset_decide, with tt__mpi_local and
 * tt__cpuset_share), so tests feed it synthetic inputs. */
#ifndef TEAMS_CPUSET_H
#define TEAMS_CPUSET_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroup.h"
#include "cpumask.h"

/* The node-local MPI rank and rank count a launcher put into the
 * environment (get is getenv, or a test's table): Open MPI's
 * OMPI_COMM_WORLD_LOCAL_RANK/_SIZE, MPICH's MPI_LOCALRANKID/MPI_LOCALNRANKS,
 * Slurm's SLURM_LOCALID with SLURM_NTASKS_PER_NODE or the first entry of
 * SLURM_TASKS_PER_NODE ("4(x2),3": 4).  *from names the rank's variable.
 * Returns 1 when found (0 <= rank < size), 0 when not. */
int tt__mpi_local(const char *(*get)(const char *name, void *ctx), void *ctx,
                  int *rank, int *size, const char **from);
/* Rank r of k's contiguous share of in's CPUs (in ascending order): q = n/k,
 * rem = n%k, rank r gets the CPUs at [r*q + min(r, rem), ... + q + (r < rem))
 * ; with more ranks than CPUs, the one CPU r mod n. */
void tt__cpuset_share(const tt__cpumask *in, int r, int k, tt__cpumask *out);

/* What tt__cpuset_read found. */
typedef struct tt__cpuset_in {
  tt__cpumask caller;  /* the calling thread's mask */
  tt__cpumask allowed; /* online CPUs within the cgroup's cpuset */
  bool allowed_known;  /* false: allowed could not be read */
  bool omp_bound;      /* an OpenMP runtime binds threads ... */
  tt__cpumask omp;     /* ... to places whose CPUs are these */
  int mpi_rank, mpi_size; /* size 0: no MPI launcher variables */
  const char *mpi_from;
  double quota; /* cgroup CPU quota in CPUs, 0: none */
} tt__cpuset_in;

/* What the team uses. */
typedef struct tt__cpuset {
  tt__cpumask cpus; /* the team's CPUs: candidates for pinning, the mask of
                       unpinned workers */
  size_t ncpus;     /* CPUs in it, at least 1 */
  size_t size;      /* default team size */
  char cpus_from[96];
  char size_from[64];
} tt__cpuset;

/* The rules above, applied to in. */
void tt__cpuset_decide(const tt__cpuset_in *in, tt__cpuset *out);

/* The part of tt__cpuset_in that can change while the process runs: thread
 * tid's affinity mask (0: the calling thread's; < 0: in->caller is kept),
 * the online CPUs within the cgroup's cpuset, the quota, read where src
 * says.  A few small reads, no allocation (the monitor's look,
 * lifecycle.c). */
void tt__cpuset_look(const tt__cgroup_src *src, int tid, tt__cpuset_in *in);
/* Reads the system (affinity, online CPUs, cgroup, OpenMP, MPI variables),
 * resolving src first.  With libomp, the place query binds the calling
 * thread as libomp's first parallel region would. */
void tt__cpuset_read(tt__cpuset_in *in, tt__cgroup_src *src);

/* What a team start decided, kept for tt__cpuset_last (teams-info). */
void tt__cpuset_publish(const tt__cpuset *cs);
/* What the last team start chose (for teams-info), false before the first.
 * Not synchronized with a concurrent team start. */
bool tt__cpuset_last(tt__cpuset *out);

#endif
