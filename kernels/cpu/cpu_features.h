// The x86 instruction-set extensions this CPU and its operating system let a program use, read
// from CPUID and XGETBV: what the run-time choice of kernel variants and the start-up check of
// a build's own target (app/cpu_check.cpp) are decided by.
#pragma once

namespace snapstream::kernels::cpu {

// A plain aggregate (value-initialise it: CpuFeatures{}), so no constructor of it is ever
// emitted by a file compiled for a wider instruction set than this one's.
struct CpuFeatures {
  bool sse4_2, popcnt, avx, avx2, fma, f16c, bmi, bmi2, movbe, lzcnt;
  bool avx512f, avx512bw, avx512cd, avx512dq, avx512vl, avx512vnni;
  bool avx_vnni;
};

// What the running CPU offers (all false off x86-64). Compiled for the baseline x86-64
// instruction set, so it may run before anything else has checked the CPU.
CpuFeatures running_cpu_features();

// Whether `features` hold x86-64-v3's whole set (AVX2, FMA, F16C, BMI, BMI2, MOVBE, LZCNT), which
// the AVX2 copies of the kernels are compiled for.
bool runs_x86_64_v3(const CpuFeatures& features);
// x86-64-v4: v3 and AVX-512 F, BW, CD, DQ and VL, which the AVX-512 copies of the float kernels
// are compiled for.
bool runs_x86_64_v4(const CpuFeatures& features);

}  // namespace snapstream::kernels::cpu
