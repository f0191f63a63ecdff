# The model check of the team's region protocol (included by
# tests/CMakeLists.txt): tests/model-check.sh runs spin on launcher/team.pml
# in both idle modes and on its mutations.  It needs spin (Debian package
# `spin`): left out without it unless TT_MODEL_CHECK=ON (CI) asks for it.
# The model does not depend on how the library is compiled: the sanitizer
# builds of the suite leave it to the plain build.
tt_feature_mode(TT_MODEL_CHECK mode)
if(NOT TT_SANITIZE STREQUAL "" OR mode STREQUAL "OFF")
  return()
endif()
find_program(SPIN spin)
if(NOT SPIN OR NOT EXISTS "${SPIN}")
  tt_left_out(TT_MODEL_CHECK "model check"
    "spin not found (apt-get install spin, or -DSPIN=/path/to/spin)")
  return()
endif()
add_test(NAME model-check
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/model-check.sh
          ${PROJECT_SOURCE_DIR}/launcher/team.pml)
# About 330 s alone on the 2-core CI machine; tools/test-all.sh runs it
# beside the other suites, where it gets less than a core.  The tree's
# configurations added about 30% (241 -> 316 s, the two run side by side,
# one core each); MODEL_JOBS=2 runs two searches at once (163 s alone,
# the largest search, sentinel-2w-2r, takes 2.6 GB).
set_tests_properties(model-check PROPERTIES TIMEOUT 1200
  ENVIRONMENT "SPIN=${SPIN};CC=${CMAKE_C_COMPILER}")
