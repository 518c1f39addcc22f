// kBuildCpuFeatures from the compiler's own macros for the target it was given.
#include "app/cpu_target.h"

namespace snapstream::app {
namespace {

constexpr kernels::cpu::CpuFeatures compiled_for() {
  kernels::cpu::CpuFeatures f{};
#ifdef __SSE4_2__
  f.sse4_2 = true;
#endif
#ifdef __POPCNT__
  f.popcnt = true;
#endif
#ifdef __AVX__
  f.avx = true;
#endif
#ifdef __AVX2__
  f.avx2 = true;
#endif
#ifdef __FMA__
  f.fma = true;
#endif
#ifdef __F16C__
  f.f16c = true;
#endif
#ifdef __BMI__
  f.bmi = true;
#endif
#ifdef __BMI2__
  f.bmi2 = true;
#endif
#ifdef __MOVBE__
  f.movbe = true;
#endif
#ifdef __LZCNT__
  f.lzcnt = true;
#endif
#ifdef __AVX512F__
  f.avx512f = true;
#endif
#ifdef __AVX512BW__
  f.avx512bw = true;
#endif
#ifdef __AVX512CD__
  f.avx512cd = true;
#endif
#ifdef __AVX512DQ__
  f.avx512dq = true;
#endif
#ifdef __AVX512VL__
  f.avx512vl = true;
#endif
#ifdef __AVX512VNNI__
  f.avx512vnni = true;
#endif
#ifdef __AVXVNNI__
  f.avx_vnni = true;
#endif
  return f;
}

}  // namespace

constinit const kernels::cpu::CpuFeatures kBuildCpuFeatures = compiled_for();

}  // namespace snapstream::app
