/* teams: the cgroup's CPU limits -- its cpuset and its CPU quota, v1 and v2
 * (see cgroup.h).
 *
 * The quota is the tightest of the process's cgroup and its ancestors up to
 * the hierarchy's mount point: a child cannot use more than its parent
 * grants.  Go's runtime (runtime/cgroup_linux.go) reads only the leaf and
 * says that a parent's tighter limit is missed.  Both cgroup versions are
 * read: v1 still runs on hybrid hosts, which may keep the cpu controller in
 * v1 while the other controllers are in v2; the quota is then v1's. */
#include "cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teams/errors.h"

/* ---- the files' text ---------------------------------------------------------- */

int tt__cgroup_max_parse(const char *text, double *cpus) {
  *cpus = 0;
  if (!text)
    return TT_EINVAL;
  const char *s = text;
  long quota = -1, period;
  if (!strncmp(s, "max", 3))
    s += 3;
  else if (!tt__text_uint(&s, &quota))
    return TT_EINVAL;
  if (*s != ' ')
    return TT_EINVAL;
  s++;
  if (!tt__text_uint(&s, &period) || period <= 0 || (*s && strcmp(s, "\n")))
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
  if (!tt__text_uint(&p, &per) || per <= 0 || (*p && strcmp(p, "\n")))
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

/* ---- the quota walk ------------------------------------------------------------- */

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

/* ---- this process's cgroup ------------------------------------------------------ */

/* The directory of this process's cgroup in the hierarchy of controller (v1)
 * or in v2 (controller NULL), with its mount point; false when there is none. */
static bool cgroup_dir(const char *controller, char *mnt, size_t mnt_len,
                       char *rel, size_t rel_len) {
  char cg[4096], path[4096], root[4096];
  if (!tt__read_small("/proc/self/cgroup", cg, sizeof cg) ||
      tt__cgroup_path_parse(cg, controller, path, sizeof path) < 0)
    return false;
  char *mountinfo = tt__read_all("/proc/self/mountinfo");
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

void tt__cgroup_sources(tt__cgroup_src *src) {
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

bool tt__cgroup_cpuset(const tt__cgroup_src *src, tt__cpumask *m) {
  char buf[4096];
  return src->cpuset[0] && tt__read_small(src->cpuset, buf, sizeof buf) &&
         tt__cpulist_parse(buf, m) > 0;
}

double tt__cgroup_quota(const tt__cgroup_src *src) {
  double q = 0;
  if (src->quota_mnt[0])
    tt__cgroup_quota_at(src->quota_mnt, src->quota_rel, src->quota_v1, &q);
  return q;
}
