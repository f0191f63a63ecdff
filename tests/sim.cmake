# teams-sim --check: small simulated runs of the steal schedule (steal.c and
# order.c themselves) on every synthetic machine, grid and schedule, checking
# invariants (every row run exactly once, makespan >= ideal, the steals seen
# equal steal.c's count, every participant joined) and the placement
# policy's locality (the deal of the blocks and the victim orders): on the
# triangular grid the topology's orders run at most half of random victims'
# bytes off their node at 16 and 32 participants and a tenth at 128
# (contiguous blocks, teams-sim --check --contiguous, fail it: 0.63-0.95).  The times are
# simulated and a run is deterministic, so nothing about speed is asserted.  Not in the ThreadSanitizer
# build: the simulator switches stacks with swapcontext, which TSan does not
# follow.
if(TARGET teams-sim AND NOT TT_SANITIZE STREQUAL "thread")
  add_test(NAME teams-sim-check COMMAND teams-sim --check)
  set_tests_properties(teams-sim-check PROPERTIES TIMEOUT 600
    ENVIRONMENT "${TT_TEST_ENV}")
endif()
