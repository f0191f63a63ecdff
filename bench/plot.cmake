# The --plot test (included by bench/CMakeLists.txt after cl.cmake, so
# teams-bench-cl exists here when it is built).  bench/plot-check.sh runs quick sections with --tsv and --plot
# into the build tree and checks each SVG against the same run's rows; it
# checks no timing.  Not in the sanitizer builds (the pictures do not depend
# on how the library is compiled), and only with gnuplot (Debian:
# gnuplot-nox, installed by tools/install-deps.sh).
if(NOT TT_BUILD_TESTS OR NOT TT_SANITIZE STREQUAL "")
  return()
endif()
find_program(TT_GNUPLOT gnuplot DOC "gnuplot, for the teams-bench --plot test")
if(NOT TT_GNUPLOT)
  message(STATUS "teams-bench: no gnuplot (Debian: gnuplot-nox); "
                 "the --plot test is skipped")
  return()
endif()
add_test(NAME bench-plot
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/plot-check.sh $<TARGET_FILE:teams-bench>
          ${CMAKE_CURRENT_BINARY_DIR}/plot-test empty)
set_tests_properties(bench-plot PROPERTIES TIMEOUT 300)
# The OpenCL sections through teams-bench, which hands --plot on:
# cl-launch, and cl-sync, a section drawn from cl-launch's samples.
if(TARGET teams-bench-cl)
  add_test(NAME bench-plot-cl
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/plot-check.sh $<TARGET_FILE:teams-bench>
            ${CMAKE_CURRENT_BINARY_DIR}/plot-test-cl cl-launch cl-sync)
  set_tests_properties(bench-plot-cl PROPERTIES LABELS "pocl" TIMEOUT 300)
  # cl-gap alone, a test of its own (its quick run is the longest, under a minute).
  add_test(NAME bench-plot-cl-gap
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/plot-check.sh $<TARGET_FILE:teams-bench>
            ${CMAKE_CURRENT_BINARY_DIR}/plot-test-cl-gap cl-gap)
  set_tests_properties(bench-plot-cl-gap PROPERTIES LABELS "pocl" TIMEOUT 300)
endif()
