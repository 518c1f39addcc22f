// Chooses the integer dot-product variant the CPU runs, once, from its feature bits: the build
// may be portable (the Docker image), so the choice is made at run time, not by compile flags.
#include "kernels/cpu/integer_dots.h"

#include "kernels/cpu/cpu_features.h"

namespace snapstream::kernels::cpu {
namespace {

#if defined(__x86_64__)
bool runs_avx_vnni(const CpuFeatures& f) { return runs_x86_64_v3(f) && f.avx_vnni; }
bool runs_avx512_vnni(const CpuFeatures& f) {
  return runs_x86_64_v4(f) && f.avx512vnni;
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
  const CpuFeatures features = running_cpu_features();
  if (runs_x86_64_v3(features)) variants.push_back(&kAvx2IntegerDots);
  if (runs_avx_vnni(features)) variants.push_back(&kAvxVnniIntegerDots);
  if (runs_avx512_vnni(features)) variants.push_back(&kAvx512VnniIntegerDots);
#endif
  return variants;
}

const IntegerDotKernels& integer_dot_kernels() {
  static const IntegerDotKernels* const chosen = runnable_integer_dot_kernels().back();
  return *chosen;
}

}  // namespace snapstream::kernels::cpu
