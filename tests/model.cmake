# The model check of the team's region protocol (included by
# tests/CMakeLists.txt): tests/model-check.sh runs spin on launcher/team.pml
# in both idle modes and on its mutations.  CI installs spin (Debian package
# `spin`); a build without it cannot run the suite, so configuring fails.
# The model does not depend on how the library is compiled: the sanitizer
# builds of the suite leave it to the plain build.
if(NOT TT_SANITIZE STREQUAL "")
  return()
endif()
find_program(SPIN spin)
if(NOT SPIN)
  message(FATAL_ERROR "spin not found: the model check (tests/model-check.sh) "
    "needs it; install the Debian package `spin` or set -DSPIN=/path/to/spin")
endif()
add_test(NAME model-check
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/model-check.sh
          ${PROJECT_SOURCE_DIR}/launcher/team.pml)
set_tests_properties(model-check PROPERTIES TIMEOUT 600
  ENVIRONMENT "SPIN=${SPIN};CC=${CMAKE_C_COMPILER}")
