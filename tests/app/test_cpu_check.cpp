// The start-up check of the CPU against the build: which extensions it names as missing, and
// that the machine running the tests has every one this build was compiled for.
#include <catch2/catch.hpp>
#include <string>

#include "app/cpu_target.h"

using snapstream::kernels::cpu::CpuFeatures;
using snapstream::kernels::cpu::running_cpu_features;

TEST_CASE("the CPU check names each extension the build uses and the CPU lacks", "[app]") {
  CpuFeatures built{}, running{};
  built.avx2 = built.fma = built.f16c = built.avx512f = true;
  running.avx2 = running.fma = true;
  char names[64];
  CHECK(snapstream::app::missing_cpu_features(built, running, names, sizeof names) == 2);
  CHECK(std::string(names) == "f16c, avx512f");
  running.f16c = running.avx512f = running.avx512vnni = true;
  CHECK(snapstream::app::missing_cpu_features(built, running, names, sizeof names) == 0);
  CHECK(std::string(names).empty());
}

TEST_CASE("the CPU check cuts a long list short but still counts every missing extension", "[app]") {
  CpuFeatures built{};
  built.sse4_2 = built.avx = built.avx2 = built.avx512f = built.avx512bw = built.avx512vnni = true;
  char names[12];
  CHECK(snapstream::app::missing_cpu_features(built, CpuFeatures{}, names, sizeof names) == 6);
  CHECK(std::string(names) == "sse4.2, avx");
  CHECK(snapstream::app::missing_cpu_features(built, CpuFeatures{}, nullptr, 0) == 6);
}

TEST_CASE("the machine running the tests has every extension this build was compiled for", "[app]") {
  char names[256];
  const int missing =
      snapstream::app::missing_cpu_features(snapstream::app::kBuildCpuFeatures, running_cpu_features(), names, sizeof names);
  INFO("missing: " << names);
  CHECK(missing == 0);
#if defined(__x86_64__) && defined(__AVX2__)
  const CpuFeatures running = running_cpu_features();
  CHECK(running.avx2);
  CHECK(running.avx);
#endif
}
