// Refuses to start on a CPU that lacks an extension this build was compiled to use (-march=native
// on another machine, or SNAPSTREAM_MARCH), with a message that says what to rebuild, instead of
// dying of an illegal instruction somewhere later. The check runs before the binary's other
// static initialisers, in a file compiled for the x86-64 baseline that calls only the C library
// and kernels/cpu/cpu_features.cpp (also baseline): the logger does not exist yet, and anything
// else might already use the extensions in question.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/cpu_target.h"

namespace snapstream::app {

int missing_cpu_features(const kernels::cpu::CpuFeatures& built, const kernels::cpu::CpuFeatures& running, char* names,
                         std::size_t capacity) {
  const struct {
    const char* name;
    bool built, running;
  } features[] = {
      {"sse4.2", built.sse4_2, running.sse4_2},       {"popcnt", built.popcnt, running.popcnt},
      {"avx", built.avx, running.avx},                {"avx2", built.avx2, running.avx2},
      {"fma", built.fma, running.fma},                {"f16c", built.f16c, running.f16c},
      {"bmi", built.bmi, running.bmi},                {"bmi2", built.bmi2, running.bmi2},
      {"movbe", built.movbe, running.movbe},          {"lzcnt", built.lzcnt, running.lzcnt},
      {"avx512f", built.avx512f, running.avx512f},    {"avx512bw", built.avx512bw, running.avx512bw},
      {"avx512cd", built.avx512cd, running.avx512cd}, {"avx512dq", built.avx512dq, running.avx512dq},
      {"avx512vl", built.avx512vl, running.avx512vl}, {"avx512vnni", built.avx512vnni, running.avx512vnni},
      {"avxvnni", built.avx_vnni, running.avx_vnni},
  };
  if (capacity > 0) names[0] = '\0';
  int missing = 0;
  for (const auto& feature : features) {
    if (!feature.built || feature.running) continue;
    const std::size_t used = capacity > 0 ? std::strlen(names) : 0;
    if (capacity > 0) std::snprintf(names + used, capacity - used, "%s%s", missing > 0 ? ", " : "", feature.name);
    ++missing;
  }
  return missing;
}

namespace {

// Priority 101, the first an application may use: before every initialiser without one.
__attribute__((constructor(101))) void refuse_a_cpu_this_build_cannot_run() {
  char names[256];
  if (missing_cpu_features(kBuildCpuFeatures, kernels::cpu::running_cpu_features(), names, sizeof names) == 0) return;
  std::fprintf(stderr,
               "snapstream: this binary was compiled for CPU extensions this machine lacks (%s). Build it on this "
               "machine (scripts/build.sh compiles for the building CPU), or configure with -DSNAPSTREAM_NATIVE=OFF "
               "and -DSNAPSTREAM_MARCH set to a target this CPU runs (x86-64-v3 for AVX2 CPUs, x86-64 for any; for "
               "the Docker image, docker build --build-arg SNAPSTREAM_MARCH=x86-64).\n",
               names);
  std::_Exit(1);
}

}  // namespace
}  // namespace snapstream::app
