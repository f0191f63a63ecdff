/* teams PoCL driver: sub-devices (clCreateSubDevices).
 *
 * A teams device is the team's participants [0, cu) (cu= in its parameters,
 * the team's size by default).  A sub-device is a contiguous span of them,
 * [core_start, core_start + core_count) in libpocl's fields, which libpocl
 * fills for partitions equally and by counts (each sub-device starting
 * where the previous one ended, nested ones inside their parent's span); its
 * ND-ranges run on those participants only (run.c, tt__foreach_range_on).
 * Participants are numbered in topology order when the team is pinned
 * (TEAMS_PIN=numa: a node's participants in a span, cores in order inside
 * it; TEAMS_PIN=cores: cores in order), so a span of neighbouring
 * participants is as close together as the machine allows.
 *
 * By affinity domain.  libpocl 3.1 refuses CL_DEVICE_PARTITION_BY_AFFINITY_
 * DOMAIN and reports no domains, so the driver answers clCreateSubDevices
 * and clGetDeviceInfo first (icd.c): a partition by domain becomes libpocl's
 * partition by counts, one count per domain in participant order, and the
 * sub-devices then report the partition they were asked for
 * (CL_DEVICE_PARTITION_TYPE: BY_AFFINITY_DOMAIN and the domain used, also
 * for NEXT_PARTITIONABLE, as OpenCL asks).  A domain kind is offered for a
 * device when every participant of its span has a domain of that kind
 * (launcher/domains.c: a pinned team only), each domain's participants form
 * one span, and there are at least two of them; NEXT_PARTITIONABLE takes the
 * first such kind in the order NUMA, L4, L3, L2, L1.  TEAMS_POCL_TOPOLOGY=
 * <hwloc synthetic description> (tests) takes the domains from that machine
 * as TEAMS_PIN=numa would pin the team on it, instead of the running
 * team's pinning.
 *
 * Participants that ran (tests): with TEAMS_POCL_RECORD_PARTICIPANTS=1 each
 * participant that runs work-groups of an ND-range marks itself in the
 * launch (run.c), and the launch's marks are added to its device's (or
 * sub-device's) entry here; TT_CL_DEVICE_PARTICIPANTS_RAN reads and clears
 * them. */
#include "teams-pocl.h"

#include "teams-pocl-icd.h"
#include "teams-pocl-info.h"
#include "settings.h"

#include <stdlib.h>
#include <string.h>

/* CL_DEVICE_AFFINITY_DOMAIN_* bit of each tt__domain kind. */
static const cl_device_affinity_domain domain_bit[TT__DOMAINS] = {
  [TT__DOMAIN_NUMA] = CL_DEVICE_AFFINITY_DOMAIN_NUMA,
  [TT__DOMAIN_L4] = CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
  [TT__DOMAIN_L3] = CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE,
  [TT__DOMAIN_L2] = CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
  [TT__DOMAIN_L1] = CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
};

static cl_device_partition_property props_plain[2]
    = { CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS };
static cl_device_partition_property props_domain[3]
    = { CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS,
        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN };

void
tp_device_range (cl_device_id dev, size_t *first, size_t *count)
{
  const tp_device *d = dev->data;
  if (dev->parent_device == NULL)
    {
      *first = 0;
      *count = d->set.participants;
    }
  else
    {
      *first = dev->core_start;
      *count = dev->core_count;
    }
}

/* The spans of kind k's domains over participants [first, first + count)
 * into sizes[] (when not NULL): how many, or 0 when kind k cannot partition
 * them (a participant without such a domain, a domain in two spans). */
static size_t
domain_spans (const tp_device *d, int k, size_t first, size_t count,
             cl_uint *sizes)
{
  size_t n = d->set.participants;
  if (d->dom == NULL || count == 0 || first + count > n)
    return 0;
  const int *id = d->dom + (size_t)k * n;
  size_t spans = 0, len = 0;
  for (size_t i = first; i < first + count; ++i)
    {
      if (id[i] < 0)
        return 0;
      if (i > first && id[i] == id[i - 1])
        {
          ++len;
          continue;
        }
      for (size_t j = first; j < i; ++j)
        if (id[j] == id[i])
          return 0; /* the domain came back: not one span */
      if (sizes != NULL && spans > 0)
        sizes[spans - 1] = (cl_uint)len;
      ++spans;
      len = 1;
    }
  if (sizes != NULL)
    sizes[spans - 1] = (cl_uint)len;
  return spans;
}

/* The CL_DEVICE_AFFINITY_DOMAIN_* bits that partition dev, with
 * NEXT_PARTITIONABLE when any does. */
static cl_device_affinity_domain
domains_of (cl_device_id dev)
{
  const tp_device *d = dev->data;
  size_t first, count;
  tp_device_range (dev, &first, &count);
  cl_device_affinity_domain bits = 0;
  for (int k = 0; k < TT__DOMAINS; ++k)
    if (domain_spans (d, k, first, count, NULL) >= 2)
      bits |= domain_bit[k];
  if (bits)
    bits |= CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;
  return bits;
}

void
tp_subdev_init (tp_device *d)
{
  cl_device_id dev = d->dev;
  size_t n = d->set.participants;
  free (d->dom);
  d->dom = NULL;
  const char *synthetic = tt__setting_text (TT__SET_POCL_TOPOLOGY);
  int *ids = malloc (TT__DOMAINS * n * sizeof *ids);
  if (ids != NULL && tt__team_domains (n, synthetic, ids) == 0)
    d->dom = ids;
  else
    free (ids);
  d->record = tt__setting (TT__SET_POCL_RECORD_PARTICIPANTS) == 1;

  dev->max_sub_devices = dev->max_compute_units;
  if (domains_of (dev) != 0)
    {
      dev->num_partition_properties = 3;
      dev->partition_properties = props_domain;
    }
  else
    {
      dev->num_partition_properties = 2;
      dev->partition_properties = props_plain;
    }
  dev->num_partition_types = 0;
  dev->partition_type = NULL;
  tp_icd_adopt (dev);
}

void
tp_subdev_fini (tp_device *d)
{
  free (d->dom);
  d->dom = NULL;
}

/* ---- the ICD entries (icd.c) ------------------------------------------------- */

cl_int CL_API_CALL
tp_cl_get_device_info (cl_device_id device, cl_device_info name, size_t size,
                       void *value, size_t *size_ret)
{
  if (name != CL_DEVICE_PARTITION_AFFINITY_DOMAIN || device == NULL
      || device->data == NULL)
    return tp_icd_pocl_get_device_info (device, name, size, value, size_ret);
  cl_device_affinity_domain bits = domains_of (device);
  if (value != NULL)
    {
      if (size < sizeof bits)
        return CL_INVALID_VALUE;
      memcpy (value, &bits, sizeof bits);
    }
  if (size_ret != NULL)
    *size_ret = sizeof bits;
  return CL_SUCCESS;
}

cl_int CL_API_CALL
tp_cl_create_sub_devices (cl_device_id in_device,
                          const cl_device_partition_property *props,
                          cl_uint num_devices, cl_device_id *out,
                          cl_uint *num_ret)
{
  int by_domain = 0;
  if (in_device != NULL && in_device->data != NULL && props != NULL
      && props[0] == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)
    for (size_t i = 0; i < in_device->num_partition_properties; ++i)
      if (in_device->partition_properties[i]
          == CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)
        by_domain = 1;
  /* everything else, and a device that offers no domains (libpocl refuses
   * the property then, as unsupported) */
  if (!by_domain)
    {
      cl_uint made = 0;
      cl_int rc = tp_icd_pocl_create_sub_devices (in_device, props,
                                                  num_devices, out, &made);
      /* libpocl made each one a fresh object with its own table pointer */
      if (rc == CL_SUCCESS && out != NULL)
        for (cl_uint i = 0; i < made; ++i)
          tp_icd_adopt (out[i]);
      if (rc == CL_SUCCESS && num_ret != NULL)
        *num_ret = made;
      return rc;
    }
  if ((num_devices != 0) != (out != NULL))
    return CL_INVALID_VALUE;
  if (props[1] == 0 || props[2] != 0)
    return CL_INVALID_VALUE;
  cl_device_affinity_domain want = (cl_device_affinity_domain)props[1];
  cl_device_affinity_domain have = domains_of (in_device);
  int kind = -1;
  if (want == CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE)
    {
      for (int k = 0; k < TT__DOMAINS && kind < 0; ++k)
        if (have & domain_bit[k])
          kind = k;
      if (kind < 0)
        return CL_DEVICE_PARTITION_FAILED;
    }
  else
    {
      for (int k = 0; k < TT__DOMAINS; ++k)
        if (want == domain_bit[k])
          kind = k;
      if (kind < 0)
        return CL_INVALID_VALUE; /* not one CL_DEVICE_AFFINITY_DOMAIN_* */
      if (!(have & domain_bit[kind]))
        return CL_DEVICE_PARTITION_FAILED;
    }
  const tp_device *d = in_device->data;
  size_t first, count;
  tp_device_range (in_device, &first, &count);
  size_t spans = domain_spans (d, kind, first, count, NULL);
  if (out == NULL)
    {
      if (num_ret != NULL)
        *num_ret = (cl_uint)spans;
      return CL_SUCCESS;
    }
  if (num_devices < spans)
    return CL_INVALID_VALUE;
  /* BY_COUNTS, one count per span, then the terminating 0 */
  cl_device_partition_property *counts
      = calloc (spans + 2, sizeof *counts);
  cl_uint *sizes = calloc (spans, sizeof *sizes);
  if (counts == NULL || sizes == NULL)
    {
      free (counts);
      free (sizes);
      return CL_OUT_OF_HOST_MEMORY;
    }
  domain_spans (d, kind, first, count, sizes);
  counts[0] = CL_DEVICE_PARTITION_BY_COUNTS;
  for (size_t i = 0; i < spans; ++i)
    counts[i + 1] = sizes[i];
  free (sizes);
  cl_uint made = 0;
  cl_int rc = tp_icd_pocl_create_sub_devices (in_device, counts, num_devices,
                                              out, &made);
  free (counts);
  if (rc != CL_SUCCESS)
    return rc;
  for (cl_uint i = 0; i < made; ++i)
    {
      /* libpocl allocated spans + 2 >= 4 entries: room for the three */
      cl_device_id s = out[i];
      s->partition_type[0] = CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN;
      s->partition_type[1] = (cl_device_partition_property)domain_bit[kind];
      s->partition_type[2] = 0;
      s->num_partition_types = 3;
      tp_icd_adopt (s);
    }
  if (num_ret != NULL)
    *num_ret = made;
  return CL_SUCCESS;
}

/* ---- participants that ran (TEAMS_POCL_RECORD_PARTICIPANTS) -------------------- */

#define TP_RECORDS 64
static struct
{
  cl_device_id dev;
  uint64_t ran[TP_RAN_WORDS];
} records[TP_RECORDS];
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;

void
tp_record_ran (cl_device_id dev, const uint64_t *ran)
{
  pthread_mutex_lock (&records_lock);
  size_t i = 0;
  while (i < TP_RECORDS && records[i].dev != NULL && records[i].dev != dev)
    ++i;
  if (i < TP_RECORDS)
    {
      records[i].dev = dev;
      for (size_t w = 0; w < TP_RAN_WORDS; ++w)
        records[i].ran[w] |= ran[w];
    }
  pthread_mutex_unlock (&records_lock);
}

void
tp_record_take (cl_device_id dev, uint64_t *ran)
{
  memset (ran, 0, TP_RAN_WORDS * sizeof *ran);
  pthread_mutex_lock (&records_lock);
  for (size_t i = 0; i < TP_RECORDS && records[i].dev != NULL; ++i)
    if (records[i].dev == dev)
      {
        memcpy (ran, records[i].ran, sizeof records[i].ran);
        memset (records[i].ran, 0, sizeof records[i].ran);
      }
  pthread_mutex_unlock (&records_lock);
}
