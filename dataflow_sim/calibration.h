// Calibration against published decode speeds (configs/calibration.json): the rows, the
// emulated value of each under one shared set of calibrated hardware values, and a fit of
// those values to the rows marked for fitting.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dataflow_sim/hardware_spec.h"

namespace snapstream::dataflow_sim {

// One calibrated value: `key` of every system whose device is `device`, and the values a fit
// may try.
struct CalibratedParameter {
  std::string device;
  std::string key;
  std::vector<double> values;
};

struct CalibrationRowResult {
  std::string name;
  std::string source;
  bool fit = false;
  double published = 0;
  double emulated = 0;
  double error = 0;                  // (emulated - published) / published
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

  // The point of the parameters' grid with the smallest worst relative error over the fitted
  // rows.
  FitResult fit() const;

 private:
  struct Prepared;
  std::unique_ptr<Prepared> prepared_;
};

// Sets one calibrated value on a system; false when `key` is not one the simulator reads.
bool set_calibrated_value(SystemSpec& system, const std::string& key, double value);

}  // namespace snapstream::dataflow_sim
