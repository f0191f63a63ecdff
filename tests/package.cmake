# The Debian packages (cmake/package.cmake), checked by
# tests/package/check.sh: cpack, their Depends, unpacked into a scratch root
# where the consumer is built and teams-run runs clinfo.  Included by
# tests/CMakeLists.txt; the plain build only, like the install check
# (tests/install.cmake, which sets TT_CONSUMER_CHECK).
if(NOT TT_SANITIZE STREQUAL "" OR NOT TT_CONSUMER_CHECK)
  return()
endif()
find_program(TT_DPKG_DEB dpkg-deb)
if(NOT TT_DPKG_DEB)
  tt_left_out(TT_BUILD_TESTS "package test" "dpkg-deb not found (Debian's dpkg)")
  return()
endif()
find_program(TT_CLINFO clinfo)
set(pocl_version "")
if(TT_BUILD_POCL)
  set(pocl_version "${TT_POCL_BUILT_AGAINST}")
endif()
add_test(NAME package-debs
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/package/check.sh ${PROJECT_BINARY_DIR}
          ${PROJECT_BINARY_DIR}/package-check ${CMAKE_COMMAND} ${CMAKE_CPACK_COMMAND}
          ${CMAKE_C_COMPILER} "${pocl_version}" "${TT_CLINFO}")
set_tests_properties(package-debs PROPERTIES TIMEOUT 600
  ENVIRONMENT "${TT_TEST_ENV};POCL_CACHE_DIR=${PROJECT_BINARY_DIR}/pocl-cache/package")
