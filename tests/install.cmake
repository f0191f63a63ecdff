# The installed tree as a program outside the project uses it (included by
# tests/CMakeLists.txt): `cmake --install` into the build tree, then
# tests/consumer/check.sh builds a small consumer against it with
# find_package(teams) and with pkg-config --static, and runs both.
# The plain build only: the consumer is not built with the sanitizers.
if(NOT TT_SANITIZE STREQUAL "")
  return()
endif()
find_program(TT_PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT TT_PKG_CONFIG)
  tt_left_out(TT_BUILD_TESTS "install-consumer test" "pkg-config not found (apt-get install pkg-config)")
  return()
endif()
set(TT_CONSUMER_CHECK ${CMAKE_CURRENT_LIST_DIR}/consumer/check.sh)
add_test(NAME install-consumer
  COMMAND sh ${TT_CONSUMER_CHECK} --install ${PROJECT_BINARY_DIR}
          ${PROJECT_BINARY_DIR}/install-check/prefix ${PROJECT_BINARY_DIR}/install-check/work
          ${CMAKE_COMMAND} ${CMAKE_C_COMPILER})
set_tests_properties(install-consumer PROPERTIES TIMEOUT 300
  ENVIRONMENT "${TT_TEST_ENV}")
