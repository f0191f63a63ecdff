# Debian packages (CPack, DEB generator), one per install component:
#   libteams0.1  lib    libteams.so.0.1 (named for the soname, TT_SOVERSION)
#   libteams-dev dev    headers (but mpi.h), libteams.so, libteams.a, the
#                       CMake package, teams.pc
#   teams-pocl   pocl   the driver in its private PoCL prefix, teams-run
#   teams-tools  tools  teams-info, teams-demo, teams-sim
#   libteams-mpi mpi    libteams-mpi.so.0.1, teams/mpi.h and its CMake targets
#                       (teams::mpi), when MPI was found
# `cpack` in the build tree writes them (docs/packaging.md).  The
# driver shares PoCL's private struct layouts, so teams-pocl depends on the
# exact libpocl it was built against (libpocl2 on Debian 12, libpocl2t64
# from Debian 13).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME teams)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "GPU-style kernels on CPU cores: a process-wide thread team")
# Staged with DESTDIR and CMAKE_INSTALL_PREFIX=/usr (CPACK_INSTALL_PREFIX):
# the driver's install step writes the ICD file's absolute path from
# CMAKE_INSTALL_PREFIX, which must be the package's /usr, not the staging
# directory (what CPack passes without DESTDIR staging).
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(TT_DEB_MAINTAINER "teams maintainers <teams@localhost>" CACHE STRING
  "Maintainer field of the Debian packages")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${TT_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)   # "libteams0.1 (= 0.1.0-1)"

set(CPACK_COMPONENTS_ALL lib dev tools)
if(TARGET teams_pocl)
  list(APPEND CPACK_COMPONENTS_ALL pocl)
endif()
if(TARGET teams_mpi)
  list(APPEND CPACK_COMPONENTS_ALL mpi)
endif()

# libteams<soversion>: its Depends from dpkg-shlibdeps (libc6, libhwloc15).
set(CPACK_DEBIAN_LIB_PACKAGE_NAME libteams${TT_SOVERSION})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_SHLIBDEPS ON)
string(CONCAT CPACK_COMPONENT_LIB_DESCRIPTION
  "teams runtime library\n"
  "One process-wide thread team with range schedules (static, greedy, work\n"
  "stealing) and an NDRange launcher that runs GPU-style kernels on CPU cores.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libteams-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS lib)
# The static library and the CMake package need hwloc's development files.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libhwloc-dev")
string(CONCAT CPACK_COMPONENT_DEV_DESCRIPTION
  "teams runtime library: development files\n"
  "Headers, the static library, the CMake package (find_package(teams)) and\n"
  "teams.pc for pkg-config.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME teams-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_TOOLS_DEPENDS lib)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libhwloc15")   # teams-info links libteams.a
string(CONCAT CPACK_COMPONENT_TOOLS_DESCRIPTION
  "teams runtime library: tools\n"
  "teams-info prints the topology and the victim orders of the work-stealing\n"
  "schedule; teams-demo runs the kernel set through the launcher; teams-sim\n"
  "runs the work-stealing schedule on simulated many-core machines.")

if(TARGET teams_pocl)
  set(CPACK_DEBIAN_POCL_PACKAGE_NAME teams-pocl)
  set(CPACK_DEBIAN_POCL_PACKAGE_SECTION libs)
  set(CPACK_COMPONENT_POCL_DEPENDS lib)
  set(CPACK_DEBIAN_POCL_PACKAGE_DEPENDS
    "${TT_POCL_PACKAGE} (= ${TT_POCL_BUILT_AGAINST}), ocl-icd-libopencl1")
  string(CONCAT CPACK_COMPONENT_POCL_DESCRIPTION
  "teams device driver for PoCL\n"
  "Runs unmodified OpenCL programs on the teams thread team: a PoCL CPU\n"
  "driver in a private PoCL prefix, and teams-run, which runs a program on it.")
endif()

if(TARGET teams_mpi)
  # The MPI layer, its header and its CMake targets (teams::mpi); Depends on
  # the MPI library's package.
  set(CPACK_DEBIAN_MPI_PACKAGE_NAME libteams-mpi)
  set(CPACK_DEBIAN_MPI_PACKAGE_SECTION libs)
  set(CPACK_COMPONENT_MPI_DEPENDS lib)
  # dpkg-shlibdeps cannot resolve libteams.so (ours, not installed), so
  # the MPI library's package is named from the library CMake found.
  set(tt_mpi_pkg "")
  foreach(lib ${MPI_C_LIBRARIES})
    get_filename_component(real "${lib}" REALPATH)
    execute_process(COMMAND dpkg-query -S "${real}" OUTPUT_VARIABLE owner
      RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND owner MATCHES "^([^:]+)")
      set(tt_mpi_pkg "${CMAKE_MATCH_1}")
      break()
    endif()
  endforeach()
  if(tt_mpi_pkg)
    set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "${tt_mpi_pkg}")
  endif()
  string(CONCAT CPACK_COMPONENT_MPI_DESCRIPTION
  "teams runtime library: the MPI layer\n"
  "A rank's part of a global NDRange, the collective launch check and ranks\n"
  "as the outermost tier of the work-stealing schedule (teams::mpi).")
endif()

include(CPack)
