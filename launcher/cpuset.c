/* teams: which CPUs the team uses, and how many participants (see cpuset.h
 * for the rule).
 *
 * The cgroup quota caps the size as Go 1.25's default GOMAXPROCS does
 * (runtime/cgroup_linux.go: min(CPUs, max(2, ceil(quota / period)))), with
 * the floor at 1 instead of 2.  Go keeps 2 for the runtime's own background
 * work (the garbage collector); a team has none, and its regions wait for
 * their slowest participant, so a participant more than the quota pays for
 * only gets throttled in the middle of a region.  The quota itself is the
 * tightest of the cgroup and its ancestors (cgroup.c).
 *
 * Measured and rejected: reading the mask the process started with.  libgomp
 * binds the initial thread while it loads, before main(), and every place
 * that shows a mask (sched_getaffinity, /proc/self/status,
 * /proc/self/task/<pid>/status) then shows the bound one. */
#include "cpuset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "team-internal.h"

/* ---- MPI launchers -------------------------------------------------------------- */

static bool env_int(const char *s, int *v) {
  if (!s)
    return false;
  long x;
  if (!tt__text_uint(&s, &x) || x > 1 << 20)
    return false;
  *v = (int)x;
  return true;
}

int tt__mpi_local(const char *(*get)(const char *name, void *ctx), void *ctx,
                  int *rank, int *size, const char **from) {
  static const char *const pairs[][2] = {
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
  };
  *rank = 0;
  *size = 0;
  *from = NULL;
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    int r, k;
    if (!env_int(get(pairs[i][0], ctx), &r))
      continue;
    const char *ks = get(pairs[i][1], ctx);
    if (!env_int(ks, &k) && i == 2) {
      /* "4(x2),3": 4 tasks on each of the first two nodes, 3 on the next */
      ks = get("SLURM_TASKS_PER_NODE", ctx);
      long x;
      if (ks && tt__text_uint(&ks, &x) && (!*ks || *ks == '(' || *ks == ',') &&
          x <= 1 << 20)
        k = (int)x;
      else
        continue;
    } else if (!ks || !env_int(ks, &k)) {
      continue;
    }
    if (k < 1 || r >= k)
      continue;
    *rank = r;
    *size = k;
    *from = pairs[i][0];
    return 1;
  }
  return 0;
}

void tt__cpuset_share(const tt__cpumask *in, int r, int k, tt__cpumask *out) {
  tt__cpumask m = *in; /* in and out may be the same */
  tt__mask_zero(out);
  size_t n = tt__mask_count(&m);
  if (n == 0 || k < 1 || r < 0 || r >= k)
    return;
  size_t ur = (size_t)r, first, end;
  tt__block(n, (size_t)k, ur, &first, &end);
  size_t count = end - first;
  if (count == 0) { /* more ranks than CPUs */
    first = ur % n;
    count = 1;
  }
  size_t i = 0;
  for (int c = 0; c < TT__MASK_CPUS && i < first + count; c++)
    if (tt__mask_isset(&m, c)) {
      if (i >= first)
        tt__mask_set(out, c);
      i++;
    }
}

/* ---- the rules ------------------------------------------------------------------ */

void tt__cpuset_decide(const tt__cpuset_in *in, tt__cpuset *out) {
  tt__cpumask set = in->caller;
  const char *from = "affinity mask";
  if (in->omp_bound) {
    tt__cpumask o = in->omp;
    if (in->allowed_known)
      tt__mask_and(&o, &o, &in->allowed);
    if (tt__mask_count(&o)) {
      set = o;
      from = "openmp places";
    }
  }
  snprintf(out->cpus_from, sizeof out->cpus_from, "%s", from);
  /* a launcher that bound the rank narrowed its mask: keep it */
  if (in->mpi_size > 1 && in->allowed_known &&
      tt__mask_equal(&set, &in->allowed)) {
    tt__cpuset_share(&set, in->mpi_rank, in->mpi_size, &set);
    snprintf(out->cpus_from, sizeof out->cpus_from,
             "mpi local rank %d of %d, %s", in->mpi_rank, in->mpi_size,
             in->mpi_from ? in->mpi_from : "?");
  }
  if (tt__mask_count(&set) == 0) { /* nothing readable: the CPU we are on */
    int c = tt__cpu_now();
    tt__mask_set(&set, c >= 0 ? c : 0);
    snprintf(out->cpus_from, sizeof out->cpus_from, "current cpu");
  }
  out->cpus = set;
  out->ncpus = tt__mask_count(&set);
  out->size = out->ncpus;
  snprintf(out->size_from, sizeof out->size_from, "cpus");
  if (in->quota > 0) {
    double q = ceil(in->quota - 1e-9);
    size_t cap = q < 1 ? 1 : (size_t)q;
    if (cap < out->size) {
      out->size = cap;
      snprintf(out->size_from, sizeof out->size_from, "cgroup quota %.4g cpus",
               in->quota);
    }
  }
}

/* ---- reading the system ------------------------------------------------------------ */

/* OpenMP's place list, if the program links an OpenMP runtime (libgomp,
 * libomp); omp_proc_bind_t is an int-sized enum, omp_proc_bind_false 0. */
extern int omp_get_proc_bind(void) __attribute__((weak));
extern int omp_get_num_places(void) __attribute__((weak));
extern int omp_get_place_num_procs(int place) __attribute__((weak));
extern void omp_get_place_proc_ids(int place, int *ids) __attribute__((weak));

static bool omp_places(tt__cpumask *m) {
  tt__mask_zero(m);
  if (!omp_get_proc_bind || !omp_get_num_places || !omp_get_place_num_procs ||
      !omp_get_place_proc_ids || omp_get_proc_bind() == 0)
    return false;
  int places = omp_get_num_places();
  for (int p = 0; p < places; p++) {
    int k = omp_get_place_num_procs(p);
    if (k <= 0)
      continue;
    int *ids = malloc((size_t)k * sizeof *ids);
    if (!ids)
      return false;
    omp_get_place_proc_ids(p, ids);
    for (int i = 0; i < k; i++)
      tt__mask_set(m, ids[i]);
    free(ids);
  }
  return tt__mask_count(m) > 0;
}

/* The MPI launchers' variables are theirs, not TEAMS_* settings: read here,
 * where they are used (settings.h). */
static const char *real_getenv(const char *name, void *ctx) {
  (void)ctx;
  return getenv(name);
}

void tt__cpuset_look(const tt__cgroup_src *src, int tid, tt__cpuset_in *in) {
  if (tid >= 0 && tt__affinity_of(tid, &in->caller) < 0)
    tt__mask_zero(&in->caller);
  char buf[4096];
  in->allowed_known = tt__read_small("/sys/devices/system/cpu/online", buf, sizeof buf) &&
                      tt__cpulist_parse(buf, &in->allowed) > 0;
  tt__cpumask cg;
  if (tt__cgroup_cpuset(src, &cg) && in->allowed_known)
    tt__mask_and(&in->allowed, &in->allowed, &cg);
  if (in->allowed_known && tt__mask_count(&in->allowed) == 0)
    in->allowed_known = false;
  in->quota = tt__cgroup_quota(src);
}

void tt__cpuset_read(tt__cpuset_in *in, tt__cgroup_src *src) {
  memset(in, 0, sizeof *in);
  tt__cgroup_sources(src);
  tt__cpuset_look(src, 0, in);
  in->omp_bound = omp_places(&in->omp);
  tt__mpi_local(real_getenv, NULL, &in->mpi_rank, &in->mpi_size, &in->mpi_from);
}

static tt__cpuset last;
static bool have_last;

void tt__cpuset_publish(const tt__cpuset *cs) {
  last = *cs;
  have_last = true;
}

bool tt__cpuset_last(tt__cpuset *out) {
  if (have_last)
    *out = last;
  return have_last;
}
