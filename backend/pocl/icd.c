/* teams PoCL driver: reference counts of PoCL objects that libpocl does not
 * export (it exports only the ICD entry points and a few POcl* names).
 *
 * In an ICD build every PoCL object starts with its dispatch table (the
 * BUILD_ICD layout config.h.in selects), which holds PoCL's own entry points
 * in the Khronos order.  This file sees the table through the Khronos
 * header's named fields, not through PoCL's private headers (whose
 * pocl_icd.h declares it as an untyped array): kept apart from them. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>

#include "teams-pocl-icd.h"

static const struct _cl_icd_dispatch *
dispatch_of (void *object)
{
  return *(const struct _cl_icd_dispatch *const *)object;
}

void
tp_icd_retain_kernel (void *kernel)
{
  dispatch_of (kernel)->clRetainKernel ((cl_kernel)kernel);
}

void
tp_icd_release_kernel (void *kernel)
{
  dispatch_of (kernel)->clReleaseKernel ((cl_kernel)kernel);
}

/* ---- the two entry points sub-devices need (subdev.c) ----------------------
 *
 * libpocl 3.1 partitions only equally and by counts (any other property is
 * refused in clCreateSubDevices) and answers CL_DEVICE_PARTITION_AFFINITY_
 * DOMAIN with 0 for every device.  Partitioning by affinity domain therefore
 * happens before libpocl sees the call: a teams device carries a copy of
 * libpocl's dispatch table in which clCreateSubDevices and clGetDeviceInfo
 * are subdev.c's, which call libpocl's own entries (saved here) for
 * everything they do not answer themselves.  The ICD loader calls through
 * the object's table, so programs reach them; libpocl calls its entries
 * directly, so nothing inside it changes.  The copy (and libpocl's two
 * entries) is taken once, under
 * libpocl's device-init lock (the first teams device's init); adopting an
 * object afterwards writes only that object's table pointer. */
static struct _cl_icd_dispatch teams_dispatch;
static int teams_dispatch_ready;
static cl_api_clCreateSubDevices pocl_create_sub_devices;
static cl_api_clGetDeviceInfo pocl_get_device_info;

void
tp_icd_adopt (void *object)
{
  if (!teams_dispatch_ready)
    {
      teams_dispatch = *dispatch_of (object);
      pocl_create_sub_devices = teams_dispatch.clCreateSubDevices;
      pocl_get_device_info = teams_dispatch.clGetDeviceInfo;
      teams_dispatch.clCreateSubDevices = tp_cl_create_sub_devices;
      teams_dispatch.clGetDeviceInfo = tp_cl_get_device_info;
      teams_dispatch_ready = 1;
    }
  *(const struct _cl_icd_dispatch **)object = &teams_dispatch;
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
