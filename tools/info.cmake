# teams-info prints the topology snapshot and victim orders, internal to the
# library (libteams.so hides them): link it with the static library instead.
# LINK_LIBRARIES is replaced, not appended to, so that no second copy of the
# runtime (the shared one) ends up in the same program.
if(TARGET teams-info)
  set_property(TARGET teams-info PROPERTY LINK_LIBRARIES
    teams_static teams_internal PkgConfig::HWLOC)
endif()
