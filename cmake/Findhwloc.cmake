# Findhwloc: the imported target hwloc::hwloc.
#
# From pkg-config when it is installed, otherwise by header and library name
# (Debian's libhwloc-dev does not depend on pkg-config).  Installed with the
# CMake package, whose configuration file finds hwloc for static consumers.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_HWLOC QUIET hwloc)
endif()
find_path(HWLOC_INCLUDE_DIR hwloc.h HINTS ${PC_HWLOC_INCLUDE_DIRS})
find_library(HWLOC_LIBRARY NAMES hwloc HINTS ${PC_HWLOC_LIBRARY_DIRS})
set(hwloc_VERSION "${PC_HWLOC_VERSION}")   # empty without pkg-config
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(hwloc
  REQUIRED_VARS HWLOC_LIBRARY HWLOC_INCLUDE_DIR VERSION_VAR hwloc_VERSION)
mark_as_advanced(HWLOC_INCLUDE_DIR HWLOC_LIBRARY)
if(hwloc_FOUND AND NOT TARGET hwloc::hwloc)
  add_library(hwloc::hwloc UNKNOWN IMPORTED)
  set_target_properties(hwloc::hwloc PROPERTIES
    IMPORTED_LOCATION "${HWLOC_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${HWLOC_INCLUDE_DIR}")
endif()
