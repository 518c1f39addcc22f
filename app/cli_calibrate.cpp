// `snapstream calibrate`: the published decode speeds of configs/calibration.json against the
// emulated ones, and (--fit) the shared calibrated values that fit them best.
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "app/commands.h"
#include "app/config_files.h"
#include "dataflow_sim/calibration.h"

namespace snapstream::app {
namespace {

// The table, a row per published figure; below each, the run that gave its emulated value,
// the mechanisms it uses and why, and any run skipped.
void print_rows(const dataflow_sim::Calibration& calibration, const std::vector<dataflow_sim::CalibrationRowResult>& rows) {
  std::cout << fmt::format("{:<78} {:>10} {:>10} {:>8} {:>14}  {}\n", "row", "published", "emulated", "error", "left out", "verdict");
  for (const auto& r : rows) {
    const double off = std::abs(r.error);
    const std::string verdict = !r.fit ? "reported" : off <= calibration.goal() ? "within goal" : off < calibration.limit() ? "within limit" : "FAIL";
    const std::string left_out = std::isnan(r.leave_one_out_error) ? "-" : fmt::format("{:+.1f}%", 100 * r.leave_one_out_error);
    std::cout << fmt::format("{:<78} {:>10.4g} {:>10.4g} {:>+7.1f}% {:>14}  {}\n", r.name, r.published, r.emulated, 100 * r.error, left_out, verdict);
    std::cout << "    run: " << r.best_run << "\n";
    if (!r.mechanisms.empty()) std::cout << "    mechanisms: " << r.mechanisms << "\n";
    for (const auto& note : r.notes) std::cout << "    " << note << "\n";
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto fit = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("calibrate", "Compare emulated decode speeds with published ones (and fit the calibrated values)");
  cmd->add_option("--file", *file, "calibration rows (default: configs/calibration.json)");
  cmd->add_flag("--fit", *fit,
                "search the parameters' grids for the values that fit the rows best, and refit without each row in turn (the 'left out' column)");
  cmd->callback([file, fit] {
    const auto path = file->empty() ? config_root() / "calibration.json" : std::filesystem::path(*file);
    const dataflow_sim::Calibration calibration(path, config_root());
    std::cout << "with the calibrated values of configs/hardware:\n";
    print_rows(calibration, calibration.evaluate());
    if (!*fit) return;
    const auto best = calibration.fit();
    std::cout << fmt::format("\nbest fit (worst error over the fitted rows {:.1f}%):\n", 100 * best.worst_error);
    for (size_t i = 0; i < best.values.size(); ++i) std::cout << fmt::format("  {} = {:g}\n", calibration.parameters()[i].label(), best.values[i]);
    std::cout << "\n";
    auto rows = calibration.evaluate(best.values);
    calibration.leave_one_out(rows);
    print_rows(calibration, rows);
  });
}

}  // namespace snapstream::app
