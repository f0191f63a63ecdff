/* The OpenCL C kernel set (the .cl files of kernels/cl), embedded in the programs that
 * use it (tests, bench) by kernels/cl/embed.cmake. */
#ifndef TEAMS_CL_SOURCES_H
#define TEAMS_CL_SOURCES_H

#include <stddef.h>

/* The source of kernels/cl/NAME.cl (NAME without .cl), NUL-terminated, or
 * NULL when there is no such file. */
const char *tt_cl_source(const char *name);

#endif
