# PoCL's own test programs (Debian pocl-tests) on the teams driver, compared
# with PoCL's pthread driver: every program that passes on pthread must pass
# on teams.  Included by tests/CMakeLists.txt, which registers the tests
# `pocl-tests` (the representative subset, CI) and `pocl-tests-two-devices`
# when this sets TT_POCL_TESTS_RUN:
#
#   <build>/pocl-tests/run [--full|--subset|-R regex] [-j N]
# builds the programs (first use), runs them on pthread and on teams (each
# with its own kernel cache), and prints both counts and any program that
# passes on pthread but not on teams (exit status 1 then); --full runs all.
set(TT_POCL_TESTS_DIR "/usr/share/pocl-tests" CACHE PATH "Debian pocl-tests package root")
if(NOT EXISTS "${TT_POCL_TESTS_DIR}/tests/CMakeLists.txt")
  tt_left_out(TT_BUILD_TESTS "PoCL's test programs (pocl-tests)"
    "${TT_POCL_TESTS_DIR} missing (apt-get install pocl-tests)")
  return()
endif()

# The platform version string the tests check against (test_version).
file(STRINGS "${TT_LIBPOCL}" tt_ver REGEX "^OpenCL [0-9.]+ PoCL [^ ]+" LIMIT_COUNT 1)
string(REGEX REPLACE "^OpenCL [0-9.]+ PoCL ([^ ]+).*" "\\1" TT_POCL_VERSION_FULL "${tt_ver}")

set(root "${PROJECT_BINARY_DIR}/pocl-tests")
set(src "${root}/src")
file(MAKE_DIRECTORY "${src}/lib")
file(CREATE_LINK "${CMAKE_CURRENT_LIST_DIR}/CMakeLists.txt" "${src}/CMakeLists.txt" SYMBOLIC)
file(CREATE_LINK "${CMAKE_CURRENT_LIST_DIR}/config.h.in" "${src}/config.h.in" SYMBOLIC)
file(CREATE_LINK "${CMAKE_CURRENT_LIST_DIR}/pocl_opencl.h.in" "${src}/pocl_opencl.h.in" SYMBOLIC)
file(CREATE_LINK "${CMAKE_CURRENT_LIST_DIR}/pocl_version.h.in" "${src}/pocl_version.h.in" SYMBOLIC)
# A copy, not a link: from 6.0 some programs include ../../include/CL/...,
# which must find the tarball's include/ beside tests/ (7 MB).
if(IS_SYMLINK "${src}/tests")
  file(REMOVE "${src}/tests")
endif()
file(COPY "${TT_POCL_TESTS_DIR}/tests" DESTINATION "${src}")
file(CREATE_LINK "${TT_POCL_SRC}/include" "${src}/include" SYMBOLIC)
file(CREATE_LINK "${TT_POCL_SRC}/poclu" "${src}/poclu" SYMBOLIC)
file(CREATE_LINK "${TT_POCL_SRC}/lib/CL" "${src}/lib/CL" SYMBOLIC)

set(TT_PT_ROOT "${root}")
set(TT_PT_SRC "${src}")
set(TT_PT_BUILD "${root}/build")
set(TT_PT_RUN_ONE "${CMAKE_CURRENT_LIST_DIR}/run-one.cmake")
set(TT_PT_VERSION "${TT_POCL_VERSION_FULL}")
set(TT_PT_SUBSET "${CMAKE_CURRENT_LIST_DIR}/subset.txt")
set(TT_PT_CMAKE "${CMAKE_COMMAND}")
set(TT_PT_CTEST "${CMAKE_CTEST_COMMAND}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/run.in" "${root}/run" @ONLY
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
  WORLD_READ WORLD_EXECUTE)

set(TT_POCL_TESTS_RUN "${root}/run")
