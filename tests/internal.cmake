# test-topology, test-steal, test-range and test-wrap call internal functions
# (topology.c, order.c, steal.c, team.c's tt__team_skip_to_wrap), which
# libteams.so hides: link them with the static library instead.
# LINK_LIBRARIES is replaced, not appended to, so that no second copy of the
# runtime (the shared one) ends up in the same binary.
foreach(name test-topology test-steal test-range test-wrap)
  if(TARGET ${name})
    set_property(TARGET ${name} PROPERTY LINK_LIBRARIES
      teams_static teams_internal tt_criterion PkgConfig::HWLOC)
  endif()
endforeach()
