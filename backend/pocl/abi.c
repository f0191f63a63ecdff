/* teams PoCL driver: the ABI self-check -- our compiled view of libpocl's
 * structs (pocl-source's headers, extracted at configure time) read back
 * against what the running libpocl wrote: the device struct at init
 * (driver.c), the command, event and queue structs at the first command
 * (submit.c).  A layout that differs from the running libpocl (another
 * pocl-source version, other config.h choices) shows up as garbage, and
 * the driver refuses it instead of corrupting memory.  One message for
 * both (tp_abi_refuse): what failed, and what to rebuild against. */
#include "teams-pocl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
tp_abi_refuse (const char *what, const char *running, const char *then)
{
  fprintf (stderr,
           "teams: PoCL ABI self-check failed %s: this driver was built "
           "against pocl-source %s, which does not match the running "
           "libpocl (driver version '%s'). %s; rebuild the teams driver "
           "(backend/pocl) against the pocl-source package of the "
           "installed %s version.\n",
           what, TEAMS_POCL_PACKAGE_VERSION, running ? running : "?", then,
           TEAMS_POCL_PACKAGE);
}

/* After basic's init.  `ops` lies near the end of the struct and is checked
 * first: until it matches, nothing is read or written through device but
 * ops.  TEAMS_POCL_ABI_SELFTEST=1 makes the check expect a value no libpocl
 * writes, so the refusal path can be tested. */
const char *
tp_abi_check_device (cl_device_id device,
                     cl_int (*init) (unsigned, cl_device_id, const char *))
{
  if (device->ops == NULL || device->ops->init != init
      || device->ops->device_name == NULL
      || strcmp (device->ops->device_name, "teams") != 0)
    return "ops";
  if (device->short_name == NULL || strcmp (device->short_name, "teams") != 0)
    return "short_name";
  if (device->driver_version == NULL
      || strncmp (device->driver_version, TEAMS_POCL_VERSION_BASE,
                  strlen (TEAMS_POCL_VERSION_BASE))
             != 0)
    return "driver_version";
  const char *selftest = getenv ("TEAMS_POCL_ABI_SELFTEST");
  cl_uint want_dims = (selftest && selftest[0] == '1') ? 4 : 3;
  if (device->max_work_item_dimensions != want_dims)
    return "max_work_item_dimensions";
  if (device->address_bits != 64)
    return "address_bits";
  if (device->type != CL_DEVICE_TYPE_CPU)
    return "type";
  if (device->global_mem_id != 0)
    return "global_mem_id";
  if (device->max_work_group_size == 0
      || device->max_work_item_sizes[0] != device->max_work_group_size)
    return "max_work_group_size";
  if (device->printf_buffer_size == 0 || device->local_mem_size == 0)
    return "printf_buffer_size/local_mem_size";
  if (TP_DEVICE_AVAILABLE (device) != CL_TRUE
      || device->compiler_available != CL_TRUE)
    return "available";
  if (device->data == NULL)
    return "data";
  return NULL;
}

/* The first command: fields libpocl wrote must point at each other.  A
 * mismatch here means a layout we do not share, and nothing we could do
 * next would be safe.  Later commands skip the check (checked: a flag that
 * only saves repeating an idempotent check, relaxed). */
static _Atomic int commands_checked;

void
tp_abi_check_command (_cl_command_node *node, cl_command_queue cq)
{
  if (tt_atomic_load_relaxed (&commands_checked))
    return;
  cl_event ev = node->sync.event.event;
  if (ev == NULL || ev->command != node || ev->queue != cq
      || cq->device == NULL || cq->device->ops != node->device->ops
      || ev->status != CL_QUEUED)
    {
      tp_abi_refuse ("on the first command (command/event/queue layout)",
                     cq->device != NULL ? cq->device->driver_version : NULL,
                     "The process ends");
      abort ();
    }
  tt_atomic_store_relaxed (&commands_checked, 1);
}
