// Calibration against published decode speeds (configs/calibration.json): the rows, the
// emulated value of each under one shared set of calibrated hardware values, and a fit of
// those values to the rows marked for fitting.
#pragma once

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dataflow_sim/hardware_spec.h"

namespace snapstream::dataflow_sim {

// One calibrated value and the values a fit may try: `key` of every system whose device is
// `device`, or (key "acceptance") the acceptance rate of every speculative run drafted by
// `draft` that does not state its own. A device's value is read from configs/hardware; a
// draft's from `value` in the calibration file.
struct CalibratedParameter {
  std::string device;
  std::string draft;
  std::string key;
  std::vector<double> values;
  double value = 0;                  // a draft's current acceptance
  std::string label() const;         // "sn40l hbm_efficiency", "llama-3.1-8b draft acceptance"
};

struct CalibrationRowResult {
  std::string name;
  std::string source;
  bool fit = false;
  double published = 0;
  double emulated = 0;
  double error = 0;                  // (emulated - published) / published
  // The row's error when the fit leaves it out (NaN until leave_one_out() fills it): how well
  // the other rows predict it.
  double leave_one_out_error = NAN;
  std::string mechanisms;            // which mechanisms the row's runs use, and why
  std::string best_run;              // the run that gave the emulated value
  std::vector<std::string> notes;    // runs skipped, and why
};

struct FitResult {
  std::vector<double> values;        // one per parameter, in the file's order
  double worst_error = 0;            // the largest |error| over the fitted rows
};

class Calibration {
 public:
  // Reads the rows and builds every run's deployments from `configs` (models/ and hardware/).
  // Throws SpecError for a malformed file.
  Calibration(const std::filesystem::path& file, const std::filesystem::path& configs);
  ~Calibration();

  const std::vector<CalibratedParameter>& parameters() const;
  double goal() const;
  double limit() const;

  // Every row under the configs' values, or with the parameters set to `values`.
  std::vector<CalibrationRowResult> evaluate() const;
  std::vector<CalibrationRowResult> evaluate(const std::vector<double>& values) const;

  // The current values, one per parameter.
  std::vector<double> current_values() const;

  // A point of the parameters' grid with the smallest worst relative error over the fitted rows
  // (ties go to the smaller sum of squared errors), found by coordinate descent from the
  // current values and from the grid's middle. `left_out`, when set, is a row the fit ignores.
  FitResult fit(std::optional<size_t> left_out = std::nullopt) const;

  // `rows` (from evaluate) with each fitted row's error under a fit that left it out.
  void leave_one_out(std::vector<CalibrationRowResult>& rows) const;

 private:
  struct Prepared;
  std::unique_ptr<Prepared> prepared_;
};

// Sets one calibrated value on a system; false when `key` is not one the simulator reads.
bool set_calibrated_value(SystemSpec& system, const std::string& key, double value);

}  // namespace snapstream::dataflow_sim
