// The calibration table: published decode speeds against emulated ones under the one set of
// calibrated values in configs/hardware (fails when a fitted row is beyond the goal), and the fit
// that finds those values.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

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
    CHECK(std::abs(r.error) <= calibration.goal());
    CHECK_FALSE(r.best_run.empty());
    CHECK_FALSE(r.mechanisms.empty());
  }
  CHECK(fitted == 11);
}

namespace {

// A calibration file of the Llama 3.1 70B speculative row alone, published at `published`, with
// the draft's acceptance and the HBM efficiency to fit.
std::filesystem::path one_row_file(double published) {
  const auto path = std::filesystem::temp_directory_path() / ("snapstream-calibration-" + std::to_string(::getpid()) + ".json");
  std::ofstream out(path);
  out.precision(17);
  out << R"({"tolerance": {"goal": 0.15, "limit": 0.3},
    "rows": [{"name": "70B", "published": )" << published << R"(, "fit": true, "metric": "tokens_per_s_per_user",
      "mechanisms": "speculative decoding",
      "runs": [{"model": "llama-3.1-70b", "system": "sn40l-16", "context": 4096, "batch": "1", "full_cache": true,
                "speculative": {"draft": "llama-3.1-8b", "draft_tokens": 6}}]}],
    "parameters": [{"device": "sn40l", "key": "hbm_efficiency", "values": [0.7, 0.8, 0.9]},
                   {"draft": "llama-3.1-8b", "key": "acceptance", "value": 0.5, "values": [0.5, 0.7, 0.9]}]})";
  return path;
}

}  // namespace

TEST_CASE("the fit finds the grid point a row was made from, and more accepted draft tokens are faster", "[dataflow_sim][calibration]") {
  const auto probe_file = one_row_file(100);
  const Calibration probe(probe_file, test::configs_dir());
  const double slow = probe.evaluate({0.8, 0.5}).at(0).emulated;
  const double fast = probe.evaluate({0.8, 0.9}).at(0).emulated;
  CHECK(fast > slow);
  // The row published at exactly what (0.8, 0.7) emulates: the fit must land there.
  const double target = probe.evaluate({0.8, 0.7}).at(0).emulated;
  std::filesystem::remove(probe_file);
  const auto file = one_row_file(target);
  const Calibration calibration(file, test::configs_dir());
  std::filesystem::remove(file);
  const FitResult best = calibration.fit();
  INFO("fit " << best.values.at(0) << ", " << best.values.at(1) << ", worst error " << best.worst_error);
  CHECK(best.values == std::vector<double>{0.8, 0.7});
  CHECK(best.worst_error < 1e-6);
  auto rows = calibration.evaluate(best.values);
  CHECK(std::isnan(rows.at(0).leave_one_out_error));
  calibration.leave_one_out(rows);
  // With its only row left out nothing constrains the fit: the error is whatever the start gives,
  // but it is measured.
  CHECK_FALSE(std::isnan(rows.at(0).leave_one_out_error));
}

TEST_CASE("a calibration file with a malformed parameter is refused with its reason", "[dataflow_sim][calibration]") {
  const auto path = std::filesystem::temp_directory_path() / ("snapstream-calibration-bad-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << R"({"tolerance": {"goal": 0.15, "limit": 0.3}, "rows": [],
      "parameters": [{"device": "sn40l", "draft": "llama-3.1-8b", "key": "acceptance", "value": 0.5, "values": [0.5]}]})";
  }
  CHECK_THROWS_WITH(Calibration(path, test::configs_dir()), Catch::Contains("neither or both"));
  std::filesystem::remove(path);
}
