# teams-info prints the topology snapshot and victim orders, internal to the
# library (libteams.so hides them): it links teams_whitebox (the static
# library and all of launcher/).  LINK_LIBRARIES is replaced, not appended
# to, so that no second copy of the runtime (the shared one) ends up in the
# same program.
if(TARGET teams-info)
  set_property(TARGET teams-info PROPERTY LINK_LIBRARIES
    teams_whitebox)
endif()
