# teams-bench-cl: the OpenCL rows (the teams PoCL driver against PoCL's
# cpu and cpu-minimal drivers).  bench/teams-bench runs it after its own
# sections, from this directory, with the same --tsv / --quick flags.
if(NOT TT_BUILD_POCL OR NOT TARGET teams_pocl)
  message(STATUS "teams: OpenCL benchmark (teams-bench-cl) left out: no PoCL driver built")
  return()
endif()
find_package(OpenCL)
if(NOT OpenCL_FOUND)
  message(STATUS "teams: OpenCL benchmark (teams-bench-cl) left out: no OpenCL ICD loader "
                 "to link (apt-get install ocl-icd-opencl-dev opencl-headers)")
  return()
endif()
include(${PROJECT_SOURCE_DIR}/kernels/cl/embed.cmake)
add_executable(teams-bench-cl teams-bench-cl.c table.c plot.c)
tt_bench_program(teams-bench-cl)
tt_cl_embed(teams-bench-cl)
target_compile_definitions(teams-bench-cl PRIVATE
  TT_POCL_VENDORS="${TT_POCL_VENDORS}"
  TT_POCL_SYSTEM_VENDORS="${TT_POCL_SYSTEM_VENDORS}"
  TT_BENCH_CACHE="${CMAKE_CURRENT_BINARY_DIR}/cl-cache")
target_link_libraries(teams-bench-cl PRIVATE OpenCL::OpenCL m)
# teams-pocl-info.h: the driver's counters (cl-first waits for the swap).
target_include_directories(teams-bench-cl PRIVATE ${PROJECT_SOURCE_DIR}/backend/pocl)
# The driver must exist before the benchmark can run it.
add_dependencies(teams-bench-cl teams_pocl)
# cl-blas, cl-blas-run: CLBlast's routines (Debian libclblast-dev, which
# installs a CMake package), when found; otherwise the sections say so.
find_package(CLBlast CONFIG QUIET)
if(TARGET clblast)
  target_sources(teams-bench-cl PRIVATE cl-blas.c)
  target_compile_definitions(teams-bench-cl PRIVATE TT_BENCH_CLBLAST=1)
  target_link_libraries(teams-bench-cl PRIVATE clblast)
else()
  message(STATUS "teams: OpenCL benchmark sections cl-blas, cl-blas-run left out: "
                 "no CLBlast (apt-get install libclblast-dev)")
endif()
