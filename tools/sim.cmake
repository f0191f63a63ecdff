# teams-sim runs steal.c's participants and order.c's victim orders on
# synthetic machines: internal functions, so it links teams_whitebox (the
# static library and all of launcher/), like teams-info.
if(TARGET teams-sim)
  set_property(TARGET teams-sim PROPERTY LINK_LIBRARIES teams_whitebox m)
endif()
