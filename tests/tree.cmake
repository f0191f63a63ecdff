# The tree (launcher/team.c, "The tree") forced on: regions of 2 or more
# participants go along it, so the team tests, the stress tests and the
# generation wrap run the tree on this machine's small teams (the tests set
# TEAMS_NUM_THREADS themselves: teams of 3 to 8 on 2 cores).  Branching 2,
# and 1 (a chain: every level a leader with one member) for the wrap.
foreach(variant "test-team;2" "test-stress;2" "test-wrap;2" "test-wrap;1")
  list(GET variant 0 name)
  list(GET variant 1 k)
  if(NOT TARGET ${name})
    continue()
  endif()
  set(test ${name}-tree)
  if(k STREQUAL "1")
    set(test ${name}-chain)
  endif()
  add_test(NAME ${test} COMMAND ${name} --jobs 1)
  set_tests_properties(${test} PROPERTIES TIMEOUT 900 ENVIRONMENT
    "${TT_TEST_ENV};TEAMS_TREE_MIN=2;TEAMS_TREE_K=${k}")
endforeach()
