# The MPI layer's tests run under mpiexec with 2 and 3 ranks (3 is more ranks
# than this 2-core machine has cores).  The environment makes Open MPI 4.1
# run as root (CI containers) and oversubscribe without a hostfile; other MPI
# implementations ignore these variables.  Each rank's team has one thread,
# so 3 ranks on 2 cores do not each start a team of 2.  OMPI_MCA_osc=sm,pt2pt
# keeps Open MPI 4.1's osc/rdma away from MPI_Win_allocate windows: over the
# vader transport its 64-bit MPI_Compare_and_swap segfaults (open-mpi/ompi
# issues 7967 and 11349; seen here with Debian's 4.1.4), and test-mpi-steal
# uses such a window in every other launch.  Not in the sanitizer
# builds: Open MPI itself is not instrumented (TSan reports its shared-memory
# transport, LeakSanitizer its start-up allocations).
if(TT_HAVE_MPI AND TT_SANITIZE STREQUAL "")
  foreach(t test-mpi test-mpi-steal)
    add_executable(${t} mpi/${t}.c)
    target_link_libraries(${t} PRIVATE teams::mpi teams_kernels)
    target_compile_definitions(${t} PRIVATE _GNU_SOURCE)
  endforeach()
  set(TT_MPI_TEST_ENV ${TT_TEST_ENV} TEAMS_NUM_THREADS=1
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_osc=sm,pt2pt)
  foreach(np 2 3)
    add_test(NAME test-mpi-np${np} COMMAND ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:test-mpi>)
    add_test(NAME test-mpi-stencil-np${np} COMMAND ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
      $<TARGET_FILE:teams-mpi-stencil> 33 17 29 9)
    add_test(NAME test-mpi-steal-np${np} COMMAND ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:test-mpi-steal>)
    add_test(NAME test-mpi-tri-np${np} COMMAND ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
      $<TARGET_FILE:teams-mpi-tri> 3001 1)
    set_tests_properties(test-mpi-np${np} test-mpi-stencil-np${np}
      test-mpi-steal-np${np} test-mpi-tri-np${np} PROPERTIES
      TIMEOUT 300 ENVIRONMENT "${TT_MPI_TEST_ENV}")
  endforeach()
  # teams-info under mpiexec: each of 3 unbound ranks names itself and gets
  # its share of the node's CPUs (one CPU each here).
  if(TARGET teams-info)
    add_test(NAME test-mpi-info-np3 COMMAND sh -c
      "out=$(\"$0\" -np 3 --bind-to none \"$1\") || exit 1; echo \"$out\"; \
       for r in 0 1 2; do echo \"$out\" | grep -q \"^rank: $r of 3, local $r of 3\" || exit 1; done; \
       [ $(echo \"$out\" | grep -c '^cpus: .*(mpi local rank .*, 1 CPUs') = 3 ]"
      ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:teams-info>)
    set_tests_properties(test-mpi-info-np3 PROPERTIES TIMEOUT 120
      ENVIRONMENT "${TT_MPI_TEST_ENV}")
  endif()
  # An OpenCL program under mpiexec, each rank on the teams device through
  # teams-run (PoCL's kernel cache in the build tree, as for the other
  # OpenCL tests).
  if(TARGET teams-mpi-cl AND TT_TEAMS_RUN)
    add_test(NAME test-mpi-cl-np2 COMMAND ${MPIEXEC_EXECUTABLE}
      ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} ${TT_TEAMS_RUN}
      $<TARGET_FILE:teams-mpi-cl> 3000)
    set_tests_properties(test-mpi-cl-np2 PROPERTIES TIMEOUT 300 ENVIRONMENT
      "${TT_MPI_TEST_ENV};POCL_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/mpi-cl-cache")
  endif()
endif()
