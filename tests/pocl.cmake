# Tests of the teams PoCL driver (included by tests/CMakeLists.txt).
#
# Every tests/test-pocl*.c binary runs twice through the ICD loader:
#   <name>          on `teams`: OCL_ICD_VENDORS = the private prefix;
#   <name>@pthread  on PoCL's `pthread`: the system ICD,
# each with its own kernel cache in the build tree, so the results of the
# driver are checked against PoCL's own threaded driver by the same code.
# Then PoCL's own test programs (Debian pocl-tests): tests/pocl-tests/.
if(NOT TT_BUILD_POCL)
  return()
endif()

find_package(OpenCL)
if(NOT OpenCL_FOUND)
  tt_left_out(TT_BUILD_TESTS "PoCL driver tests"
    "no OpenCL ICD loader to link (apt-get install ocl-icd-opencl-dev opencl-headers)")
  return()
endif()
include(${PROJECT_SOURCE_DIR}/kernels/cl/embed.cmake)

set(TT_POCL_CACHE "${PROJECT_BINARY_DIR}/pocl-cache")
set(TT_POCL_ENV_TEAMS ${TT_TEST_ENV}
  "OCL_ICD_VENDORS=${TT_POCL_VENDORS}" "POCL_DEVICES=teams"
  "POCL_CACHE_DIR=${TT_POCL_CACHE}/teams")
set(TT_POCL_ENV_PTHREAD ${TT_TEST_ENV}
  "OCL_ICD_VENDORS=${TT_POCL_SYSTEM_VENDORS}" "POCL_DEVICES=pthread"
  "POCL_CACHE_DIR=${TT_POCL_CACHE}/pthread")

# Sanitizer builds: the driver is instrumented too, so only instrumented
# programs (the test-pocl* binaries) can load it; PoCL's test programs and
# clinfo are not, and are left out.  PoCL and LLVM leak by design at exit.
if(TT_SANITIZE STREQUAL "address")
  list(FILTER TT_POCL_ENV_TEAMS EXCLUDE REGEX "^ASAN_OPTIONS=")
  list(FILTER TT_POCL_ENV_PTHREAD EXCLUDE REGEX "^ASAN_OPTIONS=")
  list(APPEND TT_POCL_ENV_TEAMS "ASAN_OPTIONS=detect_leaks=0")
  list(APPEND TT_POCL_ENV_PTHREAD "ASAN_OPTIONS=detect_leaks=0")
endif()

# The test-pocl* programs: Criterion tests (tests/CMakeLists.txt).
if(TARGET tt_criterion)
add_library(tt_clu STATIC ${CMAKE_CURRENT_LIST_DIR}/pocl-util/clu.c)
target_include_directories(tt_clu PUBLIC ${CMAKE_CURRENT_LIST_DIR}/pocl-util
  ${PROJECT_SOURCE_DIR}/backend/pocl)
target_link_libraries(tt_clu PUBLIC OpenCL::OpenCL tt_criterion)
target_compile_definitions(tt_clu PRIVATE _GNU_SOURCE)
tt_cl_embed(tt_clu)

file(GLOB TT_POCL_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test-pocl*.c)
foreach(src ${TT_POCL_TEST_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  target_link_libraries(${name} PRIVATE tt_clu)
  add_dependencies(${name} teams_pocl)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${TT_POCL_ENV_TEAMS}"
    LABELS "pocl" TIMEOUT 600)
  # Not under ThreadSanitizer: PoCL's pthread driver fails dependent events
  # inside notify, taking a queue lock under two event locks (the inversion
  # this driver avoids, queue.c), and TSan rightly reports it.
  if(NOT TT_SANITIZE STREQUAL "thread")
    add_test(NAME ${name}@pthread COMMAND ${name} --jobs 1)
    set_tests_properties(${name}@pthread PROPERTIES ENVIRONMENT "${TT_POCL_ENV_PTHREAD}"
      LABELS "pocl" TIMEOUT 600)
  endif()
endforeach()

# The allocation-failure sweep (test-pocl-alloc.c): the interposer it links,
# and a kernel cache of its own.  Sanitizer builds link none: ASan and TSan
# own malloc.
if(TARGET test-pocl-alloc)
  if(TT_SANITIZE STREQUAL "")
    add_library(tt_failmalloc SHARED ${CMAKE_CURRENT_LIST_DIR}/pocl-util/failmalloc.c)
    target_compile_definitions(tt_failmalloc PRIVATE _GNU_SOURCE)
    target_link_libraries(test-pocl-alloc PRIVATE tt_failmalloc)
  else()
    target_compile_definitions(test-pocl-alloc PRIVATE TT_NO_FAILMALLOC)
  endif()
  set(tt_env ${TT_POCL_ENV_TEAMS})
  list(FILTER tt_env EXCLUDE REGEX "^POCL_CACHE_DIR=")
  # Static: every participant runs its block, so each one's scratch grows
  # at every step (under auto, a launch memoised as long steals, and a late
  # participant may find nothing left to run: fewer allocations, at random).
  # TEAMS_RUN=team for the same reason: a launch the way's choice runs on
  # the caller alone (launcher/way.c) grows only the caller's scratch, and
  # the check after each sweep step wants chunk c on participant c.
  list(APPEND tt_env "POCL_CACHE_DIR=${TT_POCL_CACHE}/alloc"
    "POCL_TEAMS0_PARAMETERS=schedule=static" "TEAMS_RUN=team")
  set_tests_properties(test-pocl-alloc PROPERTIES ENVIRONMENT "${tt_env}")
endif()

# The kernel set under every work-group schedule of the driver (the default,
# auto, is test-pocl itself).
foreach(sched static greedy steal)
  add_test(NAME test-pocl@${sched} COMMAND test-pocl --jobs 1)
  set_tests_properties(test-pocl@${sched} PROPERTIES LABELS "pocl" TIMEOUT 600
    ENVIRONMENT "${TT_POCL_ENV_TEAMS};POCL_TEAMS0_PARAMETERS=schedule=${sched}")
endforeach()
endif()

# clinfo through the wrapper: the device is listed under its name.
find_program(TT_CLINFO clinfo)
if(NOT TT_CLINFO AND TT_SANITIZE STREQUAL "")
  tt_left_out(TT_BUILD_TESTS "pocl-clinfo test" "clinfo not found (apt-get install clinfo)")
elseif(TT_SANITIZE STREQUAL "")
  add_test(NAME pocl-clinfo COMMAND ${TT_TEAMS_RUN} ${TT_CLINFO})
  set_tests_properties(pocl-clinfo PROPERTIES LABELS "pocl" TIMEOUT 120
    ENVIRONMENT "POCL_CACHE_DIR=${TT_POCL_CACHE}/teams"
    PASS_REGULAR_EXPRESSION "Device Name[ ]+teams-.*Max compute units[ ]+[1-9]")
endif()

# A Python client: PyOpenCL (Debian python3-pyopencl, python3-numpy) on the
# teams device through the wrapper, checked against numpy.  Debian's
# interpreter first: the packages are installed for it.
find_program(TT_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT TT_PYTHON3)
  find_program(TT_PYTHON3 python3)
endif()
if(TT_PYTHON3 AND TT_SANITIZE STREQUAL "")
  execute_process(COMMAND ${TT_PYTHON3} -c "import pyopencl, numpy"
    RESULT_VARIABLE tt_pyopencl_rc OUTPUT_QUIET ERROR_QUIET)
  if(tt_pyopencl_rc EQUAL 0)
    add_test(NAME pocl-pyopencl COMMAND ${TT_TEAMS_RUN} ${TT_PYTHON3}
      ${CMAKE_CURRENT_LIST_DIR}/pocl-python/test-pyopencl.py)
    # Cold, its kernels take minutes to compile on 2 cores.
    set_tests_properties(pocl-pyopencl PROPERTIES LABELS "pocl" TIMEOUT 1200
      ENVIRONMENT "POCL_CACHE_DIR=${TT_POCL_CACHE}/teams")
  else()
    message(STATUS "pocl-pyopencl: ${TT_PYTHON3} lacks pyopencl or numpy (tools/install-deps.sh): test not registered")
  endif()
endif()

if(TT_SANITIZE STREQUAL "")
  include(${CMAKE_CURRENT_LIST_DIR}/pocl-tests/pocl-tests.cmake OPTIONAL)
endif()
