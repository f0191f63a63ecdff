# test-team also checks the busy rule inside an OpenMP parallel region, so it
# is built with the compiler's OpenMP (libgomp).
if(NOT TARGET test-team)
  return()
endif()
find_package(OpenMP COMPONENTS C)
# test-lend checks that regions are lent to the OpenMP runtime
# (launcher/lend.c): libgomp too.
foreach(name test-team test-lend)
  if(NOT TARGET ${name})
    continue()
  endif()
  if(OpenMP_C_FOUND)
    target_link_libraries(${name} PRIVATE OpenMP::OpenMP_C)
  else()
    tt_left_out(TT_BUILD_TESTS "${name}" "the C compiler has no OpenMP (gcc: libgomp)")
    set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL ON)
    set_tests_properties(${name} PROPERTIES DISABLED ON)
  endif()
endforeach()
