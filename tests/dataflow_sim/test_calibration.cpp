// The calibration table: published decode speeds against emulated ones under the one set of
// calibrated values in configs/hardware. Fails when a fitted row is off by the limit or more.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>

#include "dataflow_sim/calibration.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::dataflow_sim;

TEST_CASE("published decode speeds are matched by one shared set of calibrated values", "[dataflow_sim][calibration]") {
  const Calibration calibration(test::configs_dir() / "calibration.json", test::configs_dir());
  const auto rows = calibration.evaluate();
  std::printf("%-80s %10s %10s %8s\n", "row", "published", "emulated", "error");
  for (const auto& r : rows)
    std::printf("%-80s %10.4g %10.4g %+7.1f%%%s\n", r.name.c_str(), r.published, r.emulated, 100 * r.error,
                r.fit ? (std::abs(r.error) <= calibration.goal() ? "" : "  (beyond the goal)") : "  (reported, not fitted)");
  int fitted = 0;
  for (const auto& r : rows) {
    if (!r.fit) continue;
    ++fitted;
    INFO(r.name << ": published " << r.published << ", emulated " << r.emulated);
    CHECK(std::abs(r.error) < calibration.limit());
  }
  CHECK(fitted == 4);
}
