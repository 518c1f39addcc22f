// Calibration rows are prepared once (graphs built, memory planned) and re-priced for every
// candidate set of values, so a fit costs only pricing.
#include "dataflow_sim/calibration.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/simulation.h"
#include "graph/model_config_file.h"

namespace snapstream::dataflow_sim {
namespace {

using nlohmann::json;

enum class Metric { PerUser, Aggregate, LoopingSpeedup, SpeedupOverBaseline };

Metric parse_metric(const std::string& name) {
  if (name == "tokens_per_s_per_user") return Metric::PerUser;
  if (name == "tokens_per_s_aggregate") return Metric::Aggregate;
  if (name == "kernel_looping_speedup") return Metric::LoopingSpeedup;
  if (name == "speedup_over_baseline") return Metric::SpeedupOverBaseline;
  throw SpecError("unknown calibration metric '" + name + "'");
}

// A deployment and the system it is priced on (a copy whose calibrated values change).
struct Leg {
  std::shared_ptr<Deployment> deployment;
  SystemSpec system;
};

struct Run {
  std::vector<Leg> legs;  // PerUser/Aggregate: one; the speedups: the measured one, then its reference
};

struct Row {
  CalibrationRowResult header;
  Metric metric = Metric::PerUser;
  std::vector<Run> runs;
};

}  // namespace

bool set_calibrated_value(SystemSpec& s, const std::string& key, double value) {
  DeviceSpec& d = s.device;
  if (key == "hbm_efficiency") d.hbm_efficiency = value;
  else if (key == "ddr_efficiency") d.ddr_efficiency = value;
  else if (key == "compute_efficiency") d.compute_efficiency = value;
  else if (key == "kernel_call_seconds") d.kernel_call_seconds = value;
  else if (key == "stage_fill_seconds") d.stage_fill_seconds = value;
  else if (key == "link_latency_s") s.link_latency_s = value;
  else if (key == "link_bytes_per_s") s.link_bytes_per_s = value;
  else return false;
  return true;
}

struct Calibration::Prepared {
  std::vector<Row> rows;
  std::vector<CalibratedParameter> parameters;
  double goal = 0.15, limit = 0.30;
};

Calibration::~Calibration() = default;

Calibration::Calibration(const std::filesystem::path& file, const std::filesystem::path& configs)
    : prepared_(std::make_unique<Prepared>()) {
  std::ifstream in(file);
  if (!in) throw SpecError("cannot open calibration file " + file.string());
  json c;
  try {
    c = json::parse(in);
  } catch (const json::exception& e) {
    throw SpecError(file.string() + ": " + e.what());
  }
  try {
    prepared_->goal = c.at("tolerance").at("goal").get<double>();
    prepared_->limit = c.at("tolerance").at("limit").get<double>();
    for (const json& p : c.at("parameters")) {
      CalibratedParameter parameter{p.at("device").get<std::string>(), p.at("key").get<std::string>(),
                                    p.at("values").get<std::vector<double>>()};
      SystemSpec probe;
      if (!set_calibrated_value(probe, parameter.key, 0) || parameter.values.empty())
        throw SpecError("parameter '" + parameter.key + "' is not a calibrated value, or has no values to try");
      prepared_->parameters.push_back(std::move(parameter));
    }
    auto model = [&](const std::string& name) { return graph::read_model_config(configs / "models" / (name + ".json")); };
    auto system = [&](const std::string& name) { return load_system(configs / "hardware" / (name + ".json")); };
    for (const json& r : c.at("rows")) {
      Row row;
      row.header.name = r.at("name").get<std::string>();
      row.header.source = r.value("source", "");
      row.header.fit = r.value("fit", false);
      row.header.published = r.at("published").get<double>();
      row.metric = parse_metric(r.at("metric").get<std::string>());
      for (const json& spec : r.at("runs")) {
        SimulationOptions o;
        o.context = spec.at("context").get<int64_t>();
        const std::string batch = spec.value("batch", "1");
        o.max_batch = batch == "max";
        o.batch = o.max_batch ? 1 : std::stoll(batch);
        o.kv_capacity = spec.value("full_cache", false) ? 0 : spec.value("kv_capacity", int64_t{0});
        const graph::ModelShape m = model(spec.at("model").get<std::string>());
        const SystemSpec s = system(spec.at("system").get<std::string>());
        const std::string label = m.name + " on " + s.name + (spec.contains("baseline") ? " against " + spec["baseline"].get<std::string>() : "");
        try {
          Run run;
          run.legs.push_back({std::make_shared<Deployment>(m, s, o), s});
          if (row.metric == Metric::LoopingSpeedup) {
            SimulationOptions unlooped = o;
            unlooped.kernel_looping = false;
            run.legs.push_back({std::make_shared<Deployment>(m, s, unlooped), s});
          } else if (row.metric == Metric::SpeedupOverBaseline) {
            const SystemSpec baseline = system(spec.at("baseline").get<std::string>());
            run.legs.push_back({std::make_shared<Deployment>(m, baseline, o), baseline});
          }
          row.runs.push_back(std::move(run));
        } catch (const CapacityError& e) {
          row.header.notes.push_back(label + " skipped: " + e.what());
        }
      }
      if (row.runs.empty()) throw SpecError("calibration row '" + row.header.name + "' has no run that fits");
      prepared_->rows.push_back(std::move(row));
    }
  } catch (const json::exception& e) {
    throw SpecError(file.string() + ": " + e.what());
  } catch (const std::invalid_argument&) {
    throw SpecError(file.string() + ": a run's batch must be a number or \"max\"");
  }
}

const std::vector<CalibratedParameter>& Calibration::parameters() const { return prepared_->parameters; }
double Calibration::goal() const { return prepared_->goal; }
double Calibration::limit() const { return prepared_->limit; }

std::vector<CalibrationRowResult> Calibration::evaluate() const { return evaluate({}); }

std::vector<CalibrationRowResult> Calibration::evaluate(const std::vector<double>& values) const {
  const auto& parameters = prepared_->parameters;
  auto priced = [&](const Leg& leg) {
    SystemSpec system = leg.system;
    for (size_t i = 0; i < values.size() && i < parameters.size(); ++i)
      if (system.device.name == parameters[i].device) set_calibrated_value(system, parameters[i].key, values[i]);
    return leg.deployment->price(system);
  };
  std::vector<CalibrationRowResult> results;
  for (const Row& row : prepared_->rows) {
    CalibrationRowResult result = row.header;
    double best = 0;
    for (const Run& run : row.runs) {
      const SimulationResult measured = priced(run.legs.front());
      double value = 0;
      switch (row.metric) {
        case Metric::PerUser: value = measured.tokens_per_s_per_user; break;
        case Metric::Aggregate: value = measured.tokens_per_s_aggregate; break;
        case Metric::LoopingSpeedup:
        case Metric::SpeedupOverBaseline: value = priced(run.legs.back()).step_seconds / measured.step_seconds; break;
      }
      best = std::max(best, value);
    }
    result.emulated = best;
    result.error = (best - result.published) / result.published;
    results.push_back(std::move(result));
  }
  return results;
}

FitResult Calibration::fit() const {
  const auto& parameters = prepared_->parameters;
  FitResult best;
  best.worst_error = INFINITY;
  // Every point of the grid, counted like an odometer.
  std::vector<size_t> index(parameters.size(), 0);
  std::vector<double> trial(parameters.size());
  for (bool done = parameters.empty(); !done;) {
    for (size_t i = 0; i < parameters.size(); ++i) trial[i] = parameters[i].values[index[i]];
    double worst = 0;
    for (const auto& r : evaluate(trial))
      if (r.fit) worst = std::max(worst, std::abs(r.error));
    if (worst < best.worst_error) best = {trial, worst};
    done = true;
    for (size_t i = 0; i < index.size() && done; ++i) {
      if (++index[i] < parameters[i].values.size()) done = false;
      else index[i] = 0;
    }
  }
  return best;
}

}  // namespace snapstream::dataflow_sim
