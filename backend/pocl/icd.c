/* teams PoCL driver: a teams device's own ICD dispatch table.
 *
 * In an ICD build every PoCL object starts with its dispatch table (the
 * BUILD_ICD layout config.h.in selects), which holds PoCL's own entry points
 * in the Khronos order.  This file sees the table through the Khronos
 * header's named fields, not through PoCL's private headers (whose
 * pocl_icd.h declares it as an untyped array): kept apart from them. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>

#define TEAMS_POCL_COMPAT_ICD_ONLY
#include "pocl-compat.h"
#include "teams-pocl-icd.h"

#include <stdint.h>

/* The head of every PoCL object: its dispatch table, and from PoCL 7.1 the
 * ICD loader's dispatch data (cl_khr_icd 2.0.0). */
typedef struct object_head {
  const struct _cl_icd_dispatch *dispatch;
#if TP_POCL_ICD2
  void *disp_data;
#endif
} object_head;

/* ---- the two entry points sub-devices need (subdev.c) ----------------------
 *
 * libpocl partitions only equally and by counts (any other property is
 * refused in clCreateSubDevices) and answers CL_DEVICE_PARTITION_AFFINITY_
 * DOMAIN with 0 for every device (3.1 to 7.1).  Partitioning by affinity
 * domain therefore happens before libpocl sees the call: a teams device
 * carries a copy of libpocl's dispatch table in which clCreateSubDevices
 * and clGetDeviceInfo are subdev.c's, which call libpocl's own entries
 * (saved here) for everything they do not answer themselves.  The ICD
 * loader calls through the object's table, so programs reach them; libpocl
 * calls its entries directly, so nothing inside it changes.
 *
 * ICD 2 (PoCL 7.1 with ocl-icd >= 2.3.3): PoCL's table then holds
 * CL_ICD2_TAG_KHR in its clGetPlatformIDs slot, and the loader calls
 * instead through a table of its own that the object's disp_data points at
 * (struct { struct _cl_icd_dispatch dispatch; ... } in ocl-icd and in the
 * Khronos loader alike).  A teams device then also carries a copy of that
 * table, with the same two entries replaced.  libpocl gives every object
 * made from a device (a sub-device, a context) the device's dispatch and
 * disp_data, so they dispatch alike.
 *
 * The copies (and libpocl's two entries) are taken once, under libpocl's
 * device-init lock (the first teams device's init); adopting an object
 * afterwards writes only that object's pointers. */
typedef cl_int (CL_API_CALL *create_sub_devices_fn) (
    cl_device_id, const cl_device_partition_property *, cl_uint,
    cl_device_id *, cl_uint *);
typedef cl_int (CL_API_CALL *get_device_info_fn) (cl_device_id,
                                                   cl_device_info, size_t,
                                                   void *, size_t *);

static struct _cl_icd_dispatch teams_dispatch;
static int teams_dispatch_ready;
static create_sub_devices_fn pocl_create_sub_devices;
static get_device_info_fn pocl_get_device_info;

static void
replace_entries (struct _cl_icd_dispatch *t)
{
  t->clCreateSubDevices = tp_cl_create_sub_devices;
  t->clGetDeviceInfo = tp_cl_get_device_info;
}

#if TP_POCL_ICD2
#ifndef CL_ICD2_TAG_KHR
#define CL_ICD2_TAG_KHR ((intptr_t)0x4F50454E434C3331)
#endif
/* The loader's dispatch data as both loaders lay it out: a table first. */
static struct {
  struct _cl_icd_dispatch dispatch;
} teams_disp_data;
static void *loader_disp_data; /* the one copied */

static void
adopt_disp_data (object_head *o)
{
  if ((intptr_t)o->dispatch->clGetPlatformIDs != CL_ICD2_TAG_KHR
      || o->disp_data == NULL)
    return; /* an ICD 1 loader: the table serves */
  if (loader_disp_data == NULL)
    {
      loader_disp_data = o->disp_data;
      teams_disp_data.dispatch = *(struct _cl_icd_dispatch *)o->disp_data;
      replace_entries (&teams_disp_data.dispatch);
    }
  /* an object made from a teams device already has the copy */
  if (o->disp_data == loader_disp_data)
    o->disp_data = &teams_disp_data;
}
#endif

void
tp_icd_adopt (void *object)
{
  object_head *o = object;
  if (!teams_dispatch_ready)
    {
      teams_dispatch = *o->dispatch;
      pocl_create_sub_devices = teams_dispatch.clCreateSubDevices;
      pocl_get_device_info = teams_dispatch.clGetDeviceInfo;
      replace_entries (&teams_dispatch);
      teams_dispatch_ready = 1;
    }
#if TP_POCL_ICD2
  adopt_disp_data (o);
#endif
  o->dispatch = &teams_dispatch;
}

cl_int
tp_icd_pocl_create_sub_devices (cl_device_id in_device,
                                const cl_device_partition_property *props,
                                cl_uint num_devices, cl_device_id *out,
                                cl_uint *num_ret)
{
  return pocl_create_sub_devices (in_device, props, num_devices, out,
                                  num_ret);
}

cl_int
tp_icd_pocl_get_device_info (cl_device_id device, cl_device_info name,
                             size_t size, void *value, size_t *size_ret)
{
  return pocl_get_device_info (device, name, size, value, size_ret);
}
