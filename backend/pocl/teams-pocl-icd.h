/* teams PoCL driver: clRetainKernel / clReleaseKernel on a PoCL kernel,
 * through its ICD dispatch table (icd.c). */
#ifndef TEAMS_POCL_ICD_H
#define TEAMS_POCL_ICD_H

void tp_icd_retain_kernel (void *kernel);
void tp_icd_release_kernel (void *kernel);

#endif
