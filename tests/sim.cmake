# teams-sim --check: small simulated runs of the steal schedule (steal.c and
# order.c themselves) on every synthetic machine, grid and schedule, checking
# invariants (every row run exactly once, makespan >= ideal, the steals seen
# equal steal.c's count, every participant joined) and the victim policy's
# locality: on the triangular grid the topology's orders run fewer bytes off
# their node than random victims (at most 0.8 of them with several nodes per
# package; first-found nearest-first stealing ran 1.5-1.7x).  The times are
# simulated and a run is deterministic, so nothing about speed is asserted.  Not in the ThreadSanitizer
# build: the simulator switches stacks with swapcontext, which TSan does not
# follow.
if(TARGET teams-sim AND NOT TT_SANITIZE STREQUAL "thread")
  add_test(NAME teams-sim-check COMMAND teams-sim --check)
  set_tests_properties(teams-sim-check PROPERTIES TIMEOUT 600
    ENVIRONMENT "${TT_TEST_ENV}")
endif()
