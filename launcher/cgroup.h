/* teams: the cgroup's CPU limits -- its cpuset and its CPU quota, v1 and v2
 * (internal).
 *
 * Where the files are is resolved once (from /proc/self/cgroup and
 * /proc/self/mountinfo, tt__cgroup_sources); what they say is read again by
 * every look of the team's monitor (lifecycle.c), as Go's runtime keeps its
 * cgroup limit files (runtime/cgroup.go).  The parsers are pure functions of
 * the files' text, so tests feed them synthetic hierarchies.  What the
 * limits mean for the team's size is cpuset.h's rule. */
#ifndef TEAMS_CGROUP_H
#define TEAMS_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

#include "cpumask.h"

/* cgroup v2 cpu.max ("max 100000", "150000 100000") into *cpus: the quota
 * in CPUs, 0 for no limit.  Returns 0 or TT_EINVAL. */
int tt__cgroup_max_parse(const char *text, double *cpus);
/* cgroup v1 cpu.cfs_quota_us ("-1": no limit) and cpu.cfs_period_us. */
int tt__cgroup_cfs_parse(const char *quota, const char *period, double *cpus);
/* The cgroup path in /proc/self/cgroup text: of the v1 hierarchy whose
 * controllers include `controller`, or the v2 one ("0::") when controller is
 * NULL.  Returns 0, or TT_EINVAL when there is no such line. */
int tt__cgroup_path_parse(const char *text, const char *controller, char *out,
                          size_t len);
/* The mount point and root of that hierarchy in /proc/self/mountinfo text
 * (fstype cgroup with the controller among its options, or cgroup2). */
int tt__mountinfo_cgroup(const char *text, const char *controller, char *mnt,
                         size_t mnt_len, char *root, size_t root_len);
/* The tightest CPU quota (in CPUs, 0: none) of the cgroup at mnt + rel and
 * of its ancestors up to mnt, whose files are cpu.max (v2) or
 * cpu.cfs_quota_us and cpu.cfs_period_us (v1).  Files missing or unreadable
 * set no limit.  Returns 0 or TT_EINVAL. */
int tt__cgroup_quota_at(const char *mnt, const char *rel, bool v1, double *cpus);

/* Where this process's cgroup keeps its CPU set and quota. */
typedef struct tt__cgroup_src {
  char cpuset[4096];    /* the effective cpuset list file, "" none */
  char quota_mnt[1024]; /* the hierarchy with the quota files, "" none */
  char quota_rel[2048];
  bool quota_v1;
} tt__cgroup_src;
/* Resolves src (reads /proc/self/cgroup and /proc/self/mountinfo; allocates). */
void tt__cgroup_sources(tt__cgroup_src *src);
/* The cgroup's effective CPU set into m; false when there is none or it
 * cannot be read.  A few small reads, no allocation. */
bool tt__cgroup_cpuset(const tt__cgroup_src *src, tt__cpumask *m);
/* The cgroup's CPU quota in CPUs (tt__cgroup_quota_at), 0: none.  A few
 * small reads, no allocation. */
double tt__cgroup_quota(const tt__cgroup_src *src);

#endif
