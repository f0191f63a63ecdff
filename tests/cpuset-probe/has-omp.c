/* Configure check: does clang -fopenmp=libomp build and link a program? */
#include <omp.h>
int main(void) { return omp_get_num_places() < 0; }
