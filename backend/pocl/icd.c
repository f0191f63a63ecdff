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
