# teams-sim --check: small simulated runs of the steal schedule (steal.c and
# order.c themselves) on every synthetic machine, grid and schedule, checking
# invariants only (every row run exactly once, makespan >= ideal, the steals
# seen equal steal.c's count, every participant joined): the times are
# simulated, so nothing about speed is asserted.  Not in the ThreadSanitizer
# build: the simulator switches stacks with swapcontext, which TSan does not
# follow.
if(TARGET teams-sim AND NOT TT_SANITIZE STREQUAL "thread")
  add_test(NAME teams-sim-check COMMAND teams-sim --check)
  set_tests_properties(teams-sim-check PROPERTIES TIMEOUT 600
    ENVIRONMENT "${TT_TEST_ENV}")
endif()
