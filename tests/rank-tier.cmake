# test-rank-tier runs the rank tier's protocol (mpi/tier.c, which has no MPI
# in it) on threads, so it is built with or without MPI and under the
# sanitizers too.
if(NOT TARGET test-rank-tier)
  return() # Criterion left out
endif()
target_sources(test-rank-tier PRIVATE ${PROJECT_SOURCE_DIR}/mpi/tier.c)
target_include_directories(test-rank-tier PRIVATE ${PROJECT_SOURCE_DIR}/mpi)
