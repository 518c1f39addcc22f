// The instruction-set extensions this build was compiled to use, and the check that the running
// CPU has them (app/cpu_check.cpp runs it before anything else in the binary).
#pragma once

#include <cstddef>

#include "kernels/cpu/cpu_features.h"

namespace snapstream::app {

// What the compiler was allowed to use (-march=native, SNAPSTREAM_MARCH or its default): data
// only, fixed at compile time, so reading it runs none of that code.
extern const kernels::cpu::CpuFeatures kBuildCpuFeatures;

// The extensions `built` uses that `running` lacks, as names separated by ", " in `names`
// (capacity bytes, always terminated; a list that does not fit is cut short); returns how many.
int missing_cpu_features(const kernels::cpu::CpuFeatures& built, const kernels::cpu::CpuFeatures& running, char* names,
                         std::size_t capacity);

}  // namespace snapstream::app
