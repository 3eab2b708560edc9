// Thread count of the CPU backend: OpenMP for our loops, and Eigen's GEMM (which uses OpenMP too;
// linear() hands it num_threads()).
#include <cstdlib>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "abl/backend/cpu/ops.h"

namespace abl::cpu {

void set_num_threads(int n) {
#ifdef _OPENMP
  // 0: what the environment asks for (OMP_NUM_THREADS, e.g. set by a Slurm script from
  // SLURM_CPUS_PER_TASK), else every core.
  if (n <= 0) {
    const char* env = std::getenv("OMP_NUM_THREADS");
    n = env && std::atoi(env) > 0 ? std::atoi(env) : omp_get_num_procs();
  }
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

int num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace abl::cpu
