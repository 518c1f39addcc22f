// Chooses the f32 and f16 row-group kernels from the CPU's feature bits, once: a portable build
// (the Docker image) still regroups these weights on a CPU with AVX-512.
#include "kernels/cpu/float_group_dots.h"

#include "kernels/cpu/cpu_features.h"

namespace snapstream::kernels::cpu {
namespace {

// The kernels are built for x86-64-v4 (kernels/CMakeLists.txt).
bool runs_avx512() {
#if defined(__x86_64__)
  static const bool runs = runs_x86_64_v4(running_cpu_features());
  return runs;
#else
  return false;
#endif
}

}  // namespace

FloatGroupDots float_group_dots(DType dtype) {
  if (!runs_avx512()) return nullptr;
#if defined(__x86_64__)
  if (dtype == DType::F32) return &f32_group_dots_avx512;
  if (dtype == DType::F16) return &f16_group_dots_avx512;
#endif
  return nullptr;
}

}  // namespace snapstream::kernels::cpu
