/* teams: the team's CPUs and size (see cpuset.h for the rules).
 *
 * The cgroup quota is used as Go 1.25's default GOMAXPROCS uses it (runtime
 * /cgroup_linux.go: min(CPUs, max(2, ceil(quota / period)))), with two
 * differences.  Go reads only the leaf cgroup and says a parent's tighter
 * limit is missed; here the walk goes up to the hierarchy's mount point and
 * the tightest limit wins (a child cannot use more than its parent grants).
 * Go raises the limit to at least 2 for the runtime's own background work
 * (the garbage collector); a team has none, and its regions wait for their
 * slowest participant, so a participant more than the quota pays for only
 * gets throttled in the middle of a region: at least 1 here.  Both cgroup
 * versions are read: v1 still runs on hybrid hosts (the 2-core machine this
 * was written on has the cpu controller only in v1).
 *
 * Measured and rejected: reading the mask the process started with.  libgomp
 * binds the initial thread while it loads, before main(), and every place
 * that shows a mask (sched_getaffinity, /proc/self/status,
 * /proc/self/task/<pid>/status) then shows the bound one. */
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prim.h"
#include "team-internal.h"
#include "teams/errors.h"

/* ---- masks ------------------------------------------------------------------ */

#define WORDS (sizeof(tt__cpumask) / sizeof(unsigned long))

size_t tt__mask_count(const tt__cpumask *m) {
  size_t n = 0;
  for (size_t i = 0; i < WORDS; i++)
    n += (size_t)__builtin_popcountl(m->bits[i]);
  return n;
}

bool tt__mask_equal(const tt__cpumask *a, const tt__cpumask *b) {
  return memcmp(a->bits, b->bits, sizeof a->bits) == 0;
}

void tt__mask_and(tt__cpumask *out, const tt__cpumask *a, const tt__cpumask *b) {
  for (size_t i = 0; i < WORDS; i++)
    out->bits[i] = a->bits[i] & b->bits[i];
}

/* ---- CPU lists ---------------------------------------------------------------- */

static bool parse_uint(const char **s, long *v) {
  if (!isdigit((unsigned char)**s))
    return false;
  char *end;
  errno = 0;
  *v = strtol(*s, &end, 10);
  if (errno)
    return false;
  *s = end;
  return true;
}

int tt__cpulist_parse(const char *text, tt__cpumask *m) {
  tt__mask_zero(m);
  if (!text)
    return TT_EINVAL;
  const char *s = text;
  while (*s && *s != '\n') {
    long a, b;
    if (!parse_uint(&s, &a))
      goto bad;
    b = a;
    if (*s == '-') {
      s++;
      if (!parse_uint(&s, &b) || b < a)
        goto bad;
    }
    if (b >= TT__MASK_CPUS)
      goto bad;
    for (long c = a; c <= b; c++)
      tt__mask_set(m, (int)c);
    if (*s == ',')
      s++;
    else if (*s && *s != '\n')
      goto bad;
  }
  if (*s == '\n' && s[1])
    goto bad;
  return (int)tt__mask_count(m);
bad:
  tt__mask_zero(m);
  return TT_EINVAL;
}

size_t tt__cpulist_format(const tt__cpumask *m, char *buf, size_t len) {
  size_t need = 0;
  if (len)
    buf[0] = 0;
  for (int c = 0; c < TT__MASK_CPUS; c++) {
    if (!tt__mask_isset(m, c))
      continue;
    int e = c;
    while (e + 1 < TT__MASK_CPUS && tt__mask_isset(m, e + 1))
      e++;
    char part[32];
    int k = e == c ? snprintf(part, sizeof part, "%s%d", need ? "," : "", c)
                   : snprintf(part, sizeof part, "%s%d-%d", need ? "," : "", c, e);
    if (need + (size_t)k < len)
      memcpy(buf + need, part, (size_t)k + 1);
    else if (need < len)
      buf[need] = 0; /* truncated at a whole entry */
    need += (size_t)k;
    c = e;
  }
  return need;
}

/* ---- cgroup files ------------------------------------------------------------ */

int tt__cgroup_max_parse(const char *text, double *cpus) {
  *cpus = 0;
  if (!text)
    return TT_EINVAL;
  const char *s = text;
  long quota = -1, period;
  if (!strncmp(s, "max", 3))
    s += 3;
  else if (!parse_uint(&s, &quota))
    return TT_EINVAL;
  if (*s != ' ')
    return TT_EINVAL;
  s++;
  if (!parse_uint(&s, &period) || period <= 0 || (*s && strcmp(s, "\n")))
    return TT_EINVAL;
  if (quota >= 0)
    *cpus = (double)quota / (double)period;
  return 0;
}

int tt__cgroup_cfs_parse(const char *quota, const char *period, double *cpus) {
  *cpus = 0;
  if (!quota || !period)
    return TT_EINVAL;
  char *end;
  errno = 0;
  long q = strtol(quota, &end, 10);
  if (end == quota || errno || (*end && strcmp(end, "\n")))
    return TT_EINVAL;
  const char *p = period;
  long per;
  if (!parse_uint(&p, &per) || per <= 0 || (*p && strcmp(p, "\n")))
    return TT_EINVAL;
  if (q > 0)
    *cpus = (double)q / (double)per;
  else if (q != -1)
    return TT_EINVAL;
  return 0;
}

static size_t copy_str(char *out, size_t len, const char *s, size_t n) {
  if (!len)
    return n;
  size_t k = n < len - 1 ? n : len - 1;
  memcpy(out, s, k);
  out[k] = 0;
  return n;
}

/* true when the comma-separated list [s, s+n) holds word */
static bool in_list(const char *s, size_t n, const char *word) {
  size_t w = strlen(word);
  const char *end = s + n;
  while (s < end) {
    const char *c = memchr(s, ',', (size_t)(end - s));
    size_t k = (size_t)((c ? c : end) - s);
    if (k == w && !memcmp(s, word, w))
      return true;
    s = c ? c + 1 : end;
  }
  return false;
}

int tt__cgroup_path_parse(const char *text, const char *controller, char *out,
                          size_t len) {
  if (!text || !out || !len)
    return TT_EINVAL;
  for (const char *l = text; *l;) {
    const char *nl = strchr(l, '\n');
    const char *e = nl ? nl : l + strlen(l);
    /* hierarchy-ID:controllers:path */
    const char *c1 = memchr(l, ':', (size_t)(e - l));
    const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(e - c1 - 1)) : NULL;
    if (c2) {
      bool v2 = c1 - l == 1 && l[0] == '0' && c2 == c1 + 1;
      if (controller ? in_list(c1 + 1, (size_t)(c2 - c1 - 1), controller) : v2) {
        copy_str(out, len, c2 + 1, (size_t)(e - c2 - 1));
        return 0;
      }
    }
    l = nl ? nl + 1 : e;
  }
  return TT_EINVAL;
}

/* mountinfo escapes blanks in paths as \ooo */
static void unescape(char *s) {
  char *o = s;
  for (char *i = s; *i;) {
    if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' && i[2] >= '0' &&
        i[2] <= '7' && i[3] >= '0' && i[3] <= '7') {
      *o++ = (char)((i[1] - '0') * 64 + (i[2] - '0') * 8 + (i[3] - '0'));
      i += 4;
    } else {
      *o++ = *i++;
    }
  }
  *o = 0;
}

int tt__mountinfo_cgroup(const char *text, const char *controller, char *mnt,
                         size_t mnt_len, char *root, size_t root_len) {
  if (!text || !mnt || !root || !mnt_len || !root_len)
    return TT_EINVAL;
  for (const char *l = text; *l;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    char line[1024];
    copy_str(line, sizeof line, l, n);
    l = nl ? nl + 1 : l + n;
    /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
    char *f[6], *save = NULL, *tok = strtok_r(line, " ", &save);
    int k = 0;
    while (tok && k < 6) {
      f[k++] = tok;
      tok = strtok_r(NULL, " ", &save);
    }
    if (k < 6)
      continue;
    while (tok && strcmp(tok, "-"))
      tok = strtok_r(NULL, " ", &save);
    char *fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
    char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
    char *super = source ? strtok_r(NULL, " ", &save) : NULL;
    if (!super)
      continue;
    bool hit = controller ? !strcmp(fstype, "cgroup") &&
                                in_list(super, strlen(super), controller)
                          : !strcmp(fstype, "cgroup2");
    if (!hit)
      continue;
    unescape(f[3]);
    unescape(f[4]);
    copy_str(root, root_len, f[3], strlen(f[3]));
    copy_str(mnt, mnt_len, f[4], strlen(f[4]));
    return 0;
  }
  return TT_EINVAL;
}

/* A whole file (procfs files have no size to ask for), malloc'd, or NULL. */
static char *read_all(const char *path) {
  FILE *f = fopen(path, "re");
  if (!f)
    return NULL;
  size_t cap = 16384, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - 1 - n, f);
    if (ferror(f) || feof(f))
      break;
    if (n == cap - 1) {
      char *more = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
      if (!more) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = more;
      cap *= 2;
    }
  }
  bool bad = buf && ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  if (buf)
    buf[n] = 0;
  return buf;
}

/* The quota of the one cgroup at dir, 0 when none or unreadable. */
static double quota_of(const char *dir, bool v1) {
  char path[4096 + 32], a[64], b[64];
  double cpus = 0;
  if (v1) {
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if (!tt__read_small(path, a, sizeof a))
      return 0;
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if (!tt__read_small(path, b, sizeof b) || tt__cgroup_cfs_parse(a, b, &cpus) < 0)
      return 0;
  } else {
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    if (!tt__read_small(path, a, sizeof a) || tt__cgroup_max_parse(a, &cpus) < 0)
      return 0;
  }
  return cpus;
}

int tt__cgroup_quota_at(const char *mnt, const char *rel, bool v1, double *cpus) {
  *cpus = 0;
  if (!mnt || !rel)
    return TT_EINVAL;
  char dir[4096];
  size_t base = strlen(mnt);
  if ((size_t)snprintf(dir, sizeof dir, "%s/%s", mnt, rel) >= sizeof dir)
    return TT_EINVAL;
  /* strip trailing slashes (and the one between mnt and an empty rel) */
  size_t n = strlen(dir);
  while (n > base && dir[n - 1] == '/')
    dir[--n] = 0;
  for (;;) {
    double q = quota_of(dir, v1);
    if (q > 0 && (*cpus == 0 || q < *cpus))
      *cpus = q;
    if (n <= base)
      return 0;
    /* up one level, not above the mount point */
    while (n > base && dir[n - 1] != '/')
      n--;
    while (n > base && dir[n - 1] == '/')
      n--;
    dir[n] = 0;
  }
}

/* ---- MPI launchers -------------------------------------------------------------- */

static bool env_int(const char *s, int *v) {
  if (!s)
    return false;
  long x;
  if (!parse_uint(&s, &x) || x > 1 << 20)
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
      if (ks && parse_uint(&ks, &x) && (!*ks || *ks == '(' || *ks == ',') &&
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
    int c = sched_getcpu();
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

static const char *real_getenv(const char *name, void *ctx) {
  (void)ctx;
  return getenv(name);
}

/* The directory of this process's cgroup in the hierarchy of controller (v1)
 * or in v2 (controller NULL), with its mount point; false when there is none. */
static bool cgroup_dir(const char *controller, char *mnt, size_t mnt_len,
                       char *rel, size_t rel_len) {
  char cg[4096], path[4096], root[4096];
  if (!tt__read_small("/proc/self/cgroup", cg, sizeof cg) ||
      tt__cgroup_path_parse(cg, controller, path, sizeof path) < 0)
    return false;
  char *mountinfo = read_all("/proc/self/mountinfo");
  bool found = mountinfo && tt__mountinfo_cgroup(mountinfo, controller, mnt,
                                                 mnt_len, root, sizeof root) == 0;
  free(mountinfo);
  if (!found)
    return false;
  /* the mount shows the hierarchy from root down (a container's view) */
  size_t rl = strlen(root);
  const char *r = path;
  if (strcmp(root, "/") && !strncmp(path, root, rl) &&
      (path[rl] == '/' || !path[rl]))
    r = path + rl;
  copy_str(rel, rel_len, r, strlen(r));
  return true;
}

void tt__cpuset_sources(tt__cpuset_src *src) {
  memset(src, 0, sizeof *src);
  char mnt[1024], rel[2048];
  /* the cgroup's cpuset: v2's effective list, else v1's */
  if (cgroup_dir(NULL, mnt, sizeof mnt, rel, sizeof rel))
    snprintf(src->cpuset, sizeof src->cpuset, "%s%s/cpuset.cpus.effective",
             mnt, rel);
  char buf[64];
  if ((!src->cpuset[0] || !tt__read_small(src->cpuset, buf, sizeof buf)) &&
      cgroup_dir("cpuset", mnt, sizeof mnt, rel, sizeof rel))
    snprintf(src->cpuset, sizeof src->cpuset, "%s%s/cpuset.effective_cpus",
             mnt, rel);
  /* the quota: v1's cpu controller when the process has one (hybrid hosts
   * keep v2 for other controllers), else v2 */
  if (cgroup_dir("cpu", mnt, sizeof mnt, rel, sizeof rel))
    src->quota_v1 = true;
  else if (!cgroup_dir(NULL, mnt, sizeof mnt, rel, sizeof rel))
    return;
  snprintf(src->quota_mnt, sizeof src->quota_mnt, "%s", mnt);
  snprintf(src->quota_rel, sizeof src->quota_rel, "%s", rel);
}

void tt__cpuset_look(const tt__cpuset_src *src, int tid, tt__cpuset_in *in) {
  if (tid >= 0 && tt__affinity_of(tid, &in->caller) < 0)
    tt__mask_zero(&in->caller);
  char buf[4096];
  in->allowed_known = tt__read_small("/sys/devices/system/cpu/online", buf, sizeof buf) &&
                      tt__cpulist_parse(buf, &in->allowed) > 0;
  tt__cpumask cg;
  if (src->cpuset[0] && tt__read_small(src->cpuset, buf, sizeof buf) &&
      tt__cpulist_parse(buf, &cg) > 0 && in->allowed_known)
    tt__mask_and(&in->allowed, &in->allowed, &cg);
  if (in->allowed_known && tt__mask_count(&in->allowed) == 0)
    in->allowed_known = false;
  double q = 0;
  if (src->quota_mnt[0])
    tt__cgroup_quota_at(src->quota_mnt, src->quota_rel, src->quota_v1, &q);
  in->quota = q;
}

void tt__cpuset_read(tt__cpuset_in *in, tt__cpuset_src *src) {
  memset(in, 0, sizeof *in);
  tt__cpuset_sources(src);
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
