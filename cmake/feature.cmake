# Optional parts of the build (the driver, the tests, the benchmarks, the
# model check).  Each is a cache entry AUTO, ON or OFF:
#   AUTO  built when its dependencies are found, otherwise left out with one
#         status line saying what and why (the default: a plain configure
#         succeeds wherever the library itself builds);
#   ON    asked for: a missing dependency is a configure error;
#   OFF   left out.
# Once decided, the top-level CMakeLists.txt sets a normal variable of the
# same name, ON or OFF, which hides the cache entry from there down, so
# `if(TT_BUILD_POCL)` reads as a plain option; the cache keeps what was asked
# for, which tt_feature_mode and tt_left_out read.

function(tt_feature name default help)
  set(${name} "${default}" CACHE STRING "${help} (AUTO: when its dependencies are found; ON; OFF)")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# out = AUTO, ON or OFF: what the cache entry asks for.
function(tt_feature_mode name out)
  string(TOUPPER "$CACHE{${name}}" v)
  if(v STREQUAL "AUTO")
    set(${out} AUTO PARENT_SCOPE)
  elseif(v)
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

# A part governed by `name` cannot be built: an error when `name` was set ON,
# otherwise one status line.  The caller then leaves the part out.
function(tt_left_out name what why)
  tt_feature_mode(${name} mode)
  if(mode STREQUAL "ON")
    message(FATAL_ERROR "teams: ${what} cannot be built: ${why}; "
      "configure with -D${name}=AUTO to leave it out instead")
  endif()
  message(STATUS "teams: ${what} left out: ${why}")
endfunction()
