/* teams PoCL driver: a teams device's own ICD dispatch table (icd.c), for
 * sub-devices: the two entry points that subdev.c answers. */
#ifndef TEAMS_POCL_ICD_H
#define TEAMS_POCL_ICD_H

#include <CL/cl.h>

/* Gives a teams device (or sub-device) the driver's dispatch table, whose
 * clCreateSubDevices and clGetDeviceInfo are the two below.  The first call
 * copies libpocl's table: made from teams_init, under libpocl's init lock. */
void tp_icd_adopt (void *device);

/* subdev.c: the entries in the driver's table. */
cl_int CL_API_CALL tp_cl_create_sub_devices (
    cl_device_id in_device, const cl_device_partition_property *props,
    cl_uint num_devices, cl_device_id *out, cl_uint *num_ret);
cl_int CL_API_CALL tp_cl_get_device_info (cl_device_id device,
                                          cl_device_info name, size_t size,
                                          void *value, size_t *size_ret);

/* libpocl's own two entries. */
cl_int tp_icd_pocl_create_sub_devices (
    cl_device_id in_device, const cl_device_partition_property *props,
    cl_uint num_devices, cl_device_id *out, cl_uint *num_ret);
cl_int tp_icd_pocl_get_device_info (cl_device_id device, cl_device_info name,
                                    size_t size, void *value,
                                    size_t *size_ret);

#endif
