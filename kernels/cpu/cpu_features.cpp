// CPUID and XGETBV, read once per call; a register state the operating system does not save
// (XCR0) counts as missing, as the hardware would fault on it.
#include "kernels/cpu/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>

#include <cstdint>
#endif

namespace snapstream::kernels::cpu {

#if defined(__x86_64__)
namespace {

struct CpuidRegisters {
  unsigned eax, ebx, ecx, edx;
};

CpuidRegisters cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegisters r{};
  if (__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx) == 0) return {};
  return r;
}

bool bit(unsigned reg, unsigned position) { return ((reg >> position) & 1u) != 0; }

// XCR0 by its opcode, so this file needs no -mxsave.
uint64_t saved_register_state() {
  unsigned low = 0, high = 0;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(low), "=d"(high) : "c"(0));
  return (static_cast<uint64_t>(high) << 32) | low;
}

}  // namespace

CpuFeatures running_cpu_features() {
  CpuFeatures f{};
  const CpuidRegisters basic = cpuid(1, 0), extended = cpuid(7, 0), extended1 = cpuid(7, 1);
  const CpuidRegisters amd = cpuid(0x80000001u, 0);
  const uint64_t state = bit(basic.ecx, 27) ? saved_register_state() : 0;  // OSXSAVE
  const bool ymm_saved = (state & 0x6) == 0x6, zmm_saved = ymm_saved && (state & 0xE0) == 0xE0;
  f.sse4_2 = bit(basic.ecx, 20);
  f.popcnt = bit(basic.ecx, 23);
  f.movbe = bit(basic.ecx, 22);
  f.lzcnt = bit(amd.ecx, 5);
  f.bmi = bit(extended.ebx, 3);
  f.bmi2 = bit(extended.ebx, 8);
  f.avx = ymm_saved && bit(basic.ecx, 28);
  f.fma = f.avx && bit(basic.ecx, 12);
  f.f16c = f.avx && bit(basic.ecx, 29);
  f.avx2 = f.avx && bit(extended.ebx, 5);
  f.avx_vnni = f.avx2 && bit(extended1.eax, 4);
  f.avx512f = zmm_saved && bit(extended.ebx, 16);
  f.avx512dq = f.avx512f && bit(extended.ebx, 17);
  f.avx512cd = f.avx512f && bit(extended.ebx, 28);
  f.avx512bw = f.avx512f && bit(extended.ebx, 30);
  f.avx512vl = f.avx512f && bit(extended.ebx, 31);
  f.avx512vnni = f.avx512f && bit(extended.ecx, 11);
  return f;
}
#else
CpuFeatures running_cpu_features() { return {}; }
#endif

bool runs_x86_64_v3(const CpuFeatures& f) {
  return f.avx2 && f.fma && f.f16c && f.bmi && f.bmi2 && f.movbe && f.lzcnt;
}

bool runs_x86_64_v4(const CpuFeatures& f) {
  return runs_x86_64_v3(f) && f.avx512f && f.avx512bw && f.avx512cd && f.avx512dq && f.avx512vl;
}

}  // namespace snapstream::kernels::cpu
