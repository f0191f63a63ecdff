# test-rank-tier runs the rank tier's protocol (mpi/tier.c, which has no MPI
# in it) on threads, so it is built with or without MPI and under the
# sanitizers too.
target_sources(test-rank-tier PRIVATE ${PROJECT_SOURCE_DIR}/mpi/tier.c)
target_include_directories(test-rank-tier PRIVATE ${PROJECT_SOURCE_DIR}/mpi)
