# test-cpuset calls cpuset.c's internal functions, which libteams.so hides:
# it links teams_whitebox (LINK_LIBRARIES replaced, as in internal.cmake, so
# no second copy of the runtime ends up in the binary).  It runs
# tests/cpuset-probe, linked to libteams.so, built twice: with the
# compiler's OpenMP (gcc: libgomp) and with clang -fopenmp=libomp.
if(NOT TARGET test-cpuset)
  return() # Criterion left out
endif()
set_property(TARGET test-cpuset PROPERTY LINK_LIBRARIES
  teams_whitebox tt_criterion m)

find_package(OpenMP REQUIRED COMPONENTS C)
add_executable(cpuset-probe-gomp ${CMAKE_CURRENT_LIST_DIR}/cpuset-probe/probe.c)
target_link_libraries(cpuset-probe-gomp PRIVATE teams OpenMP::OpenMP_C)
add_dependencies(test-cpuset cpuset-probe-gomp)
set(TT_PROBE_LIBOMP "")
# The libomp probe is built by clang outside CMake's C compiler; not in
# sanitizer builds, whose libteams needs gcc's sanitizer runtime.
find_program(TT_CLANG NAMES clang)
if(TT_CLANG AND TT_SANITIZE STREQUAL "")
  execute_process(COMMAND ${TT_CLANG} -fopenmp=libomp -x c -o /dev/null -
    INPUT_FILE ${CMAKE_CURRENT_LIST_DIR}/cpuset-probe/has-omp.c
    RESULT_VARIABLE tt_libomp_rc OUTPUT_QUIET ERROR_QUIET)
  if(tt_libomp_rc EQUAL 0)
    set(TT_PROBE_LIBOMP ${CMAKE_CURRENT_BINARY_DIR}/cpuset-probe-libomp)
    add_custom_command(OUTPUT ${TT_PROBE_LIBOMP}
      COMMAND ${TT_CLANG} -fopenmp=libomp -Wall -Werror
              -I${PROJECT_SOURCE_DIR}/include
              ${CMAKE_CURRENT_LIST_DIR}/cpuset-probe/probe.c
              -o ${TT_PROBE_LIBOMP} $<TARGET_FILE:teams>
              -Wl,-rpath,$<TARGET_FILE_DIR:teams>
      DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cpuset-probe/probe.c teams
      COMMENT "Building cpuset-probe-libomp with clang -fopenmp=libomp")
    add_custom_target(cpuset-probe-libomp DEPENDS ${TT_PROBE_LIBOMP})
    add_dependencies(test-cpuset cpuset-probe-libomp)
  else()
    message(STATUS "clang -fopenmp=libomp does not link: test-cpuset skips libomp")
  endif()
endif()
target_compile_definitions(test-cpuset PRIVATE
  TT_PROBE_GOMP="$<TARGET_FILE:cpuset-probe-gomp>"
  TT_PROBE_LIBOMP="${TT_PROBE_LIBOMP}")
