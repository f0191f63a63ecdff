# test-team also checks the busy rule inside an OpenMP parallel region, so it
# is built with the compiler's OpenMP (libgomp).
if(NOT TARGET test-team)
  return()
endif()
find_package(OpenMP COMPONENTS C)
if(OpenMP_C_FOUND)
  target_link_libraries(test-team PRIVATE OpenMP::OpenMP_C)
else()
  tt_left_out(TT_BUILD_TESTS "test-team" "the C compiler has no OpenMP (gcc: libgomp)")
  set_target_properties(test-team PROPERTIES EXCLUDE_FROM_ALL ON)
  set_tests_properties(test-team PROPERTIES DISABLED ON)
endif()
