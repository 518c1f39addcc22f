// Chooses the integer dot-product variant the CPU runs, once, from its feature bits: the build
// may be portable (the Docker image), so the choice is made at run time, not by compile flags.
#include "kernels/cpu/integer_dots.h"

namespace snapstream::kernels::cpu {
namespace {

#if defined(__x86_64__)
bool runs_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("x86-64-v3");
}
bool runs_avx_vnni() { return runs_avx2() && __builtin_cpu_supports("avxvnni"); }
bool runs_avx512_vnni() {
  return runs_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vnni");
}
#endif

}  // namespace

bool has_integer_dot(DType dtype) {
  switch (dtype) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return true;
    case DType::F32:
    case DType::F16:
    case DType::BF16: return false;
  }
  return false;
}

IntegerBandDots integer_band_dots(const IntegerDotKernels& kernels, DType dtype) {
  switch (dtype) {
    case DType::Q8_0: return kernels.q8_0;
    case DType::Q4_0: return kernels.q4_0;
    case DType::Q5_0: return kernels.q5_0;
    case DType::Q4_K: return kernels.q4_k;
    case DType::Q5_K: return kernels.q5_k;
    case DType::Q6_K: return kernels.q6_k;
    case DType::F32:
    case DType::F16:
    case DType::BF16: break;
  }
  return nullptr;
}

std::vector<const IntegerDotKernels*> runnable_integer_dot_kernels() {
  std::vector<const IntegerDotKernels*> variants{&kPortableIntegerDots};
#if defined(__x86_64__)
  if (runs_avx2()) variants.push_back(&kAvx2IntegerDots);
  if (runs_avx_vnni()) variants.push_back(&kAvxVnniIntegerDots);
  if (runs_avx512_vnni()) variants.push_back(&kAvx512VnniIntegerDots);
#endif
  return variants;
}

const IntegerDotKernels& integer_dot_kernels() {
  static const IntegerDotKernels* const chosen = runnable_integer_dot_kernels().back();
  return *chosen;
}

}  // namespace snapstream::kernels::cpu
