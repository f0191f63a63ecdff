/* teams PoCL driver: registration, device init, parameters (the ABI
 * self-check at init is abi.c's).
 *
 * libpocl dlopens <libdir>/pocl/libpocl-devices-pthread.so and calls
 * pocl_pthread_init_device_ops; the private prefix (backend/pocl/
 * CMakeLists.txt) puts this driver in that slot.  We start from PoCL's basic
 * driver (the synchronous CPU driver: memory commands, builds, images) and
 * replace (pocl_pthread_init_device_ops, at the end):
 *   probe, init, uninit, reinit, build_hash, get_device_info_ext  here;
 *   submit  submit.c, which decides whether a command runs now, is
 *     listed, or waits for its dependencies;
 *   notify, flush, join, wait_event, notify_event_finished, broadcast
 *     (PoCL's pocl_broadcast)  queue.c, which decides which thread runs a
 *     listed command, and when, and runs ND-ranges through run.c;
 *   run  NULL: no ND-range reaches pocl_exec_command (queue.c, run_node);
 *   alloc_mem_obj, free  memory.c's placement around basic's;
 *   create_kernel, free_kernel  wgfunc.c's, but for PoCL's built-in kernels.
 * ops->device_name = "teams" makes POCL_DEVICES=teams and
 * POCL_TEAMS<n>_PARAMETERS work. */
#include "teams-pocl.h"

#include "teams-pocl-info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From libpocl-devices-basic.so (its only export). */
void pocl_basic_init_device_ops (struct pocl_device_ops *ops);

/* basic's ops, copied once; we call its probe-independent pieces (init,
 * uninit, reinit, build_hash) and keep the memory and build ops as they are. */
static struct pocl_device_ops basic_ops;

static cl_int teams_init (unsigned j, cl_device_id device, const char *params);

/* Settings by device index, as init resolved them (the team's size, the
 * placement), for reinit. */
#define TP_MAX_DEVICES 64
static tp_settings saved_settings[TP_MAX_DEVICES];

/* ---- settings ---------------------------------------------------------------------- */

static int
parse_size (const char *v, size_t *out)
{
  char *end = NULL;
  unsigned long long x = strtoull (v, &end, 10);
  if (end == v || *end != '\0' || v[0] == '-')
    return -1;
  *out = (size_t)x;
  return 0;
}

int
tp_settings_parse (tp_settings *s, const char *params, char *err,
                   size_t errlen)
{
  if (params == NULL)
    return 0;
  char *copy = strdup (params);
  if (copy == NULL)
    {
      snprintf (err, errlen, "out of memory");
      return -1;
    }
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r (copy, ", ", &save); tok != NULL;
       tok = strtok_r (NULL, ", ", &save))
    {
      char *eq = strchr (tok, '=');
      if (eq == NULL)
        {
          snprintf (err, errlen, "'%s' is not key=value", tok);
          rc = -1;
          break;
        }
      *eq = '\0';
      const char *k = tok, *v = eq + 1;
      if (strcmp (k, "cu") == 0)
        {
          if (parse_size (v, &s->participants) != 0 || s->participants == 0)
            {
              snprintf (err, errlen, "cu=%s: want a positive integer", v);
              rc = -1;
              break;
            }
        }
      else if (strcmp (k, "grain") == 0)
        {
          /* Bounded so that groups + grain cannot overflow in
           * tt_foreach_range (run.c relies on it). */
          if (parse_size (v, &s->grain) != 0 || s->grain > TP_MAX_GRAIN)
            {
              snprintf (err, errlen,
                        "grain=%s: want an integer in [0, %llu]", v,
                        (unsigned long long)TP_MAX_GRAIN);
              rc = -1;
              break;
            }
        }
      else if (strcmp (k, "submit") == 0)
        {
          if (strcmp (v, "eager") == 0)
            s->submit = TP_SUBMIT_EAGER;
          else if (strcmp (v, "lazy") == 0)
            s->submit = TP_SUBMIT_LAZY;
          else if (strcmp (v, "auto") == 0)
            s->submit = TP_SUBMIT_AUTO;
          else
            {
              snprintf (err, errlen, "submit=%s: want auto, lazy or eager",
                        v);
              rc = -1;
              break;
            }
        }
      else if (strcmp (k, "grace_us") == 0)
        {
          size_t us;
          if (parse_size (v, &us) != 0 || us > 10000000)
            {
              snprintf (err, errlen, "grace_us=%s: want 0 to 10000000", v);
              rc = -1;
              break;
            }
          s->grace_ns = (uint64_t)us * 1000;
        }
      else if (strcmp (k, "schedule") == 0)
        {
          if (strcmp (v, "greedy") == 0)
            s->schedule = TT_SCHED_GREEDY;
          else if (strcmp (v, "static") == 0)
            s->schedule = TT_SCHED_STATIC;
          else if (strcmp (v, "steal") == 0)
            s->schedule = TT_SCHED_STEAL;
          else if (strcmp (v, "auto") == 0)
            s->schedule = TT_SCHED_AUTO;
          else
            {
              snprintf (err, errlen,
                        "schedule=%s: want greedy, static, steal or auto", v);
              rc = -1;
              break;
            }
        }
      else if (strcmp (k, "placement") == 0)
        {
          if (tp_placement_parse (v, &s->placement) != 0)
            {
              snprintf (err, errlen,
                        "placement=%s: want firsttouch, interleave or host",
                        v);
              rc = -1;
              break;
            }
        }
      else
        {
          snprintf (err, errlen,
                    "unknown parameter '%s' (known: cu, submit, grace_us, "
                    "schedule, grain, placement)",
                    k);
          rc = -1;
          break;
        }
    }
  free (copy);
  return rc;
}

/* Buffers: basic's memory ops, placing new buffers (memory.c). */
static cl_int
teams_alloc_mem_obj (cl_device_id device, cl_mem mem, void *host_ptr)
{
  return tp_alloc_mem_obj (device, mem, host_ptr, basic_ops.alloc_mem_obj);
}

static void
teams_free (cl_device_id device, cl_mem mem)
{
  tp_free_mem_obj (device, mem, basic_ops.free);
}

/* ---- ops ---------------------------------------------------------------------------------- */

static unsigned int
teams_probe (struct pocl_device_ops *ops)
{
  int n = pocl_device_get_env_count (ops->device_name);
  /* POCL_DEVICES unset: we are the one device (basic probes 0 then). */
  return n < 0 ? 1 : (unsigned)n;
}

static char *
teams_build_hash (cl_device_id device)
{
  /* Same compiler and kernel library as basic: reuse its hash, prefixed, so
   * the kernel cache keeps teams binaries apart. */
  char *b = basic_ops.build_hash (device);
  size_t n = strlen (b) + 8;
  char *r = malloc (n);
  if (r != NULL)
    snprintf (r, n, "teams-%s", b);
  free (b);
  return r;
}

static cl_int
teams_init (unsigned j, cl_device_id device, const char *params)
{
  tp_settings set = { 0 };
  set.participants = 0; /* filled below from the team */
  set.submit = TP_SUBMIT_AUTO;
  /* The team runtime's auto policy: greedy for short launches, stealing for
   * long or unknown ones (launcher/range.c).  The others stay selectable. */
  set.schedule = TT_SCHED_AUTO;
  set.grain = 0;
  set.grace_ns = TP_DEFAULT_GRACE_NS;
  set.placement = TP_PLACE_AUTO;
  char err[256];
  int bad_params = tp_settings_parse (&set, params, err, sizeof err) != 0;

  /* A device refused below is disabled, not failed, where that is safe:
   * from PoCL 5.0 a device whose init fails fails the platform's init, and
   * with it the process's other devices.  basic's init runs first, so that
   * the device is whole (its `available` flag, among others). */
  cl_int rc = basic_ops.init (j, device, params);
  /* The ABI self-check (abi.c). */
  const char *bad = tp_abi_check_device (device, teams_init);
  if (bad != NULL)
    {
      char what[96];
      snprintf (what, sizeof what, "at field '%s'", bad);
      /* With `ops` wrong nothing may be read or written through device. */
      int ops = strcmp (bad, "ops") == 0;
      tp_abi_refuse (what, ops ? NULL : device->driver_version,
                     "The device is disabled");
      if (ops)
        return CL_DEVICE_NOT_AVAILABLE;
      TP_DEVICE_DISABLE (device);
      return CL_SUCCESS;
    }
  if (rc != CL_SUCCESS)
    return rc;
  if (bad_params)
    {
      fprintf (stderr,
               "teams: POCL_TEAMS%u_PARAMETERS=\"%s\": %s; device disabled\n",
               j, params, err);
      TP_DEVICE_DISABLE (device);
      return CL_SUCCESS;
    }

  tp_device *d = calloc (1, sizeof *d);
  if (d == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  d->dev = device;
  d->basic_data = device->data;
  /* Compute units = participants a region gets: the team's size, or fewer
   * with cu=N (more cannot run at once, so they are not reported). */
  size_t team = tt_team_size ();
  if (set.participants == 0 || set.participants > team)
    set.participants = team;
  if (set.placement == TP_PLACE_AUTO)
    set.placement
        = tt__team_nodes () > 1 ? TP_PLACE_FIRSTTOUCH : TP_PLACE_HOST;
  d->set = set;
  if (j < TP_MAX_DEVICES)
    saved_settings[j] = set;
  if (tp_sched_attach (d) != 0)
    {
      free (d);
      return CL_OUT_OF_HOST_MEMORY;
    }
  device->data = d;

  /* Honest values: a work-group runs on one participant, participants are
   * the team's threads. */
  device->max_compute_units = (cl_uint)set.participants;

  /* Sub-devices: spans of participants, by count or by affinity domain
   * (subdev.c); their ND-ranges run on their participants only (run.c). */
  tp_subdev_init (d);
  return CL_SUCCESS;
}

static cl_int
teams_uninit (unsigned j, cl_device_id device)
{
  tp_device *d = device->data;
  tp_sched_detach ();
  tp_subdev_fini (d);
  device->data = d->basic_data;
  free (d);
  return basic_ops.uninit (j, device);
}

static cl_int
teams_reinit (TP_REINIT_PARAMS)
{
  cl_int rc = basic_ops.reinit (TP_REINIT_ARGS);
  if (rc != CL_SUCCESS)
    return rc;
  tp_device *d = calloc (1, sizeof *d);
  if (d == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  d->dev = device;
  d->basic_data = device->data;
  d->set = saved_settings[j < TP_MAX_DEVICES ? j : 0];
  if (tp_sched_attach (d) != 0)
    {
      free (d);
      return CL_OUT_OF_HOST_MEMORY;
    }
  device->data = d;
  tp_subdev_init (d);
  return CL_SUCCESS;
}

/* Vendor-private queries (teams-pocl-info.h); anything else is unknown. */
static cl_int
teams_get_device_info_ext (cl_device_id device, cl_device_info name,
                           size_t size, void *value, size_t *size_ret)
{
  tp_device *d = device->data;
  if (d == NULL)
    return CL_INVALID_VALUE;
  if (name == TT_CL_DEVICE_STATS)
    {
      tt_cl_stats s;
      tp_device_stats (d, &s);
      if (size_ret)
        *size_ret = sizeof s;
      if (value != NULL)
        {
          if (size < sizeof s)
            return CL_INVALID_VALUE;
          memcpy (value, &s, sizeof s);
        }
      return CL_SUCCESS;
    }
  if (name == TT_CL_DEVICE_PARTICIPANTS_RAN)
    {
      uint64_t ran[TP_RAN_WORDS];
      if (size_ret)
        *size_ret = sizeof ran;
      if (value != NULL)
        {
          if (size < sizeof ran)
            return CL_INVALID_VALUE;
          tp_record_take (device, ran);
          memcpy (value, ran, sizeof ran);
        }
      return CL_SUCCESS;
    }
  if (name == TT_CL_DEVICE_SETTINGS)
    {
      static const char *sched[] = { "static", "greedy", "steal", "auto" };
      char buf[128];
      int len = snprintf (
          buf, sizeof buf,
          "cu=%zu submit=%s grace_us=%llu schedule=%s grain=%zu "
          "placement=%s",
          d->set.participants,
          d->set.submit == TP_SUBMIT_EAGER  ? "eager"
          : d->set.submit == TP_SUBMIT_LAZY ? "lazy"
                                            : "auto",
          (unsigned long long)(d->set.grace_ns / 1000),
          (unsigned)d->set.schedule < 4 ? sched[d->set.schedule] : "?",
          d->set.grain, tp_placement_name (d->set.placement));
      size_t need = (size_t)len + 1;
      if (size_ret)
        *size_ret = need;
      if (value != NULL)
        {
          if (size < need)
            return CL_INVALID_VALUE;
          memcpy (value, buf, need);
        }
      return CL_SUCCESS;
    }
  /* basic's own queries (from PoCL 6.0), else unknown */
  if (basic_ops.get_device_info_ext != NULL)
    return basic_ops.get_device_info_ext (device, name, size, value,
                                          size_ret);
  return CL_INVALID_VALUE;
}

/* Kernels: PoCL's built-in kernels keep basic's path (from PoCL 7.0 its
 * create_kernel sets up the defined ones, whose data it owns); the others
 * get their work-group functions here (wgfunc.c, resolve.c). */
static int
teams_create_kernel (cl_device_id device, cl_program program,
                     cl_kernel kernel, unsigned program_device_i)
{
  if (program->num_builtin_kernels > 0)
    return basic_ops.create_kernel != NULL
               ? basic_ops.create_kernel (device, program, kernel,
                                          program_device_i)
               : CL_SUCCESS;
  return tp_create_kernel (device, program, kernel, program_device_i);
}

static int
teams_free_kernel (cl_device_id device, cl_program program, cl_kernel kernel,
                   unsigned program_device_i)
{
  if (program->num_builtin_kernels > 0)
    return basic_ops.free_kernel != NULL
               ? basic_ops.free_kernel (device, program, kernel,
                                        program_device_i)
               : CL_SUCCESS;
  return tp_free_kernel (device, program, kernel, program_device_i);
}

TP_EXPORT void
pocl_pthread_init_device_ops (struct pocl_device_ops *ops)
{
  pocl_basic_init_device_ops (&basic_ops);
  *ops = basic_ops;
  ops->device_name = "teams";
  ops->probe = teams_probe;
  ops->init = teams_init;
  ops->uninit = teams_uninit;
  ops->reinit = teams_reinit;
  ops->build_hash = teams_build_hash;

  ops->submit = tp_submit;
  ops->notify = tp_notify;
  ops->flush = tp_flush;
  ops->join = tp_join;
  ops->wait_event = tp_wait_event;
  ops->notify_event_finished = tp_notify_event_finished;
  ops->broadcast = pocl_broadcast;
  /* queue.c runs every ND-range itself (run_node, tp_run_ndrange), so that
   * a launch short of memory can fail its event; pocl_exec_command, which
   * calls ops->run, gets only the other commands (PoCL's cuda and hsa
   * drivers leave run NULL too). */
  ops->run = NULL;
  ops->alloc_mem_obj = teams_alloc_mem_obj;
  ops->free = teams_free;
  ops->get_device_info_ext = teams_get_device_info_ext;
  ops->create_kernel = teams_create_kernel;
  ops->free_kernel = teams_free_kernel;
}
