// Chooses the integer dot-product variant the CPU runs, once, from its feature bits: the build
// may be portable (the Docker image), so the choice is made at run time, not by compile flags.
#include "kernels/cpu/integer_dots.h"

#if defined(__x86_64__) && defined(__clang__)
#include <cpuid.h>
#endif

namespace snapstream::kernels::cpu {
namespace {

#if defined(__x86_64__) && defined(__clang__)
// clang's __builtin_cpu_supports knows neither "x86-64-v3" nor "avxvnni": those bits come from
// CPUID itself (the AVX2 check below already covers the operating system's support for AVX).
bool cpuid_bit(unsigned leaf, unsigned subleaf, int reg, unsigned bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (__get_cpuid_count(leaf, subleaf, &r[0], &r[1], &r[2], &r[3]) == 0) return false;
  return ((r[reg] >> bit) & 1u) != 0;
}
enum { kEax = 0, kEcx = 2 };
bool runs_x86_64_v3_rest() {
  return __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && cpuid_bit(1, 0, kEcx, 29) /* f16c */ &&
         cpuid_bit(1, 0, kEcx, 22) /* movbe */ && cpuid_bit(0x80000001u, 0, kEcx, 5) /* lzcnt */;
}
bool has_avx_vnni() { return cpuid_bit(7, 1, kEax, 4); }
#elif defined(__x86_64__)
bool runs_x86_64_v3_rest() { return __builtin_cpu_supports("x86-64-v3"); }
bool has_avx_vnni() { return __builtin_cpu_supports("avxvnni"); }
#endif

#if defined(__x86_64__)
bool runs_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && runs_x86_64_v3_rest();
}
bool runs_avx_vnni() { return runs_avx2() && has_avx_vnni(); }
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

IntegerGroupDots integer_group_dots(const IntegerDotKernels& kernels, DType dtype) {
  if (dtype == DType::Q4_K) return kernels.q4_k_groups;
  if (dtype == DType::Q8_0) return kernels.q8_0_groups;
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
