# test-topology, test-steal, test-range, test-schedule, test-wrap,
# test-memory, test-tree, test-lend, test-way and test-settings call
# internal functions (topology.c, order.c, steal.c, range.c, scratch.c,
# team.c's tt__team_skip_to_wrap), which libteams.so hides: they link
# teams_whitebox (the static library and all of launcher/).  LINK_LIBRARIES
# is replaced, not appended to, so that no second copy of the runtime (the
# shared one) ends up in the same binary.
foreach(name test-topology test-steal test-range test-schedule test-wrap test-memory
             test-tree test-lend test-way test-settings)
  if(TARGET ${name})
    set_property(TARGET ${name} PROPERTY LINK_LIBRARIES teams_whitebox tt_criterion)
  endif()
endforeach()
