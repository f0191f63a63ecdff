# test-team also checks the busy rule inside an OpenMP parallel region, so it
# is built with the compiler's OpenMP (libgomp).
find_package(OpenMP REQUIRED COMPONENTS C)
target_link_libraries(test-team PRIVATE OpenMP::OpenMP_C)
