// Calibration rows are prepared once (graphs built, memory planned) and re-priced for every
// candidate set of values, so a fit costs only pricing.
#include "dataflow_sim/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/simulation.h"
#include "graph/model_config_file.h"

namespace snapstream::dataflow_sim {
namespace {

using nlohmann::json;

enum class Metric { PerUser, Aggregate, HbmBandwidthUtilisation, LoopingSpeedup, SpeedupOverBaseline };

Metric parse_metric(const std::string& name) {
  if (name == "tokens_per_s_per_user") return Metric::PerUser;
  if (name == "tokens_per_s_aggregate") return Metric::Aggregate;
  if (name == "hbm_bandwidth_utilisation") return Metric::HbmBandwidthUtilisation;
  if (name == "kernel_looping_speedup") return Metric::LoopingSpeedup;
  if (name == "speedup_over_baseline") return Metric::SpeedupOverBaseline;
  throw SpecError("unknown calibration metric '" + name + "'");
}

// A deployment and the system it is priced on (a copy whose calibrated values change).
struct Leg {
  std::shared_ptr<Deployment> deployment;
  SystemSpec system;
  std::string draft;               // a speculative run's draft whose acceptance is calibrated, or empty
};

struct Run {
  std::vector<Leg> legs;  // PerUser/Aggregate: one; the speedups: the measured one, then its reference
  std::string label;
};

struct Row {
  CalibrationRowResult header;
  Metric metric = Metric::PerUser;
  std::vector<Run> runs;
};

// The field `key` names on a system, or null when the simulator reads no such value.
double* calibrated_field(SystemSpec& s, const std::string& key) {
  DeviceSpec& d = s.device;
  if (key == "hbm_efficiency") return &d.hbm_efficiency;
  if (key == "ddr_efficiency") return &d.ddr_efficiency;
  if (key == "compute_efficiency") return &d.compute_efficiency;
  if (key == "kernel_call_seconds") return &d.kernel_call_seconds;
  if (key == "stage_fill_seconds") return &d.stage_fill_seconds;
  if (key == "link_latency_s") return &s.link_latency_s;
  if (key == "link_bytes_per_s") return &s.link_bytes_per_s;
  return nullptr;
}

CalibratedParameter parse_parameter(const json& p) {
  CalibratedParameter parameter;
  parameter.device = p.value("device", "");
  parameter.draft = p.value("draft", "");
  parameter.key = p.at("key").get<std::string>();
  parameter.values = p.at("values").get<std::vector<double>>();
  if (parameter.values.empty()) throw SpecError("calibrated parameter '" + parameter.key + "' has no values to try");
  if (parameter.device.empty() == parameter.draft.empty())
    throw SpecError("calibrated parameter '" + parameter.key + "' names neither or both of a device and a draft");
  if (!parameter.draft.empty()) {
    if (parameter.key != "acceptance") throw SpecError("a draft's calibrated parameter is its 'acceptance', not '" + parameter.key + "'");
    parameter.value = p.at("value").get<double>();
    for (const double a : parameter.values)
      if (!(a >= 0 && a <= 1)) throw SpecError("the acceptance rates " + parameter.draft + " may try must lie in [0, 1]");
  } else {
    SystemSpec probe;
    if (calibrated_field(probe, parameter.key) == nullptr) throw SpecError("'" + parameter.key + "' is not a calibrated value");
  }
  return parameter;
}

// ", 3.41 tokens per round": what a speculative run yields.
std::string tokens_per_round_text(double tokens) {
  char text[48];
  std::snprintf(text, sizeof text, ", %.2f tokens per round", tokens);
  return text;
}

std::string run_label(const graph::ModelShape& m, const SystemSpec& s, const SimulationOptions& o, const nlohmann::json& spec) {
  std::string label = m.name + " on " + s.name;
  if (spec.contains("baseline")) label += " against " + spec["baseline"].get<std::string>();
  label += o.max_batch ? ", largest batch" : ", batch " + std::to_string(o.batch);
  if (o.tp > 0) label += ", TP " + std::to_string(o.tp);
  if (o.attention_split == graph::AttentionSplit::Sequences) label += ", data-parallel attention";
  if (m.moe.enabled())
    label += o.experts.placement == ExpertPlacement::ExpertParallel ? ", whole experts per socket" : ", experts split by columns";
  if (o.speculative) label += ", drafted by " + o.speculative->draft.name + " (k=" + std::to_string(o.speculative->draft_tokens) + ")";
  return label;
}

}  // namespace

std::string CalibratedParameter::label() const {
  return draft.empty() ? device + " " + key : draft + " draft " + key;
}

bool set_calibrated_value(SystemSpec& s, const std::string& key, double value) {
  double* field = calibrated_field(s, key);
  if (field == nullptr) return false;
  *field = value;
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
    for (const json& p : c.at("parameters")) prepared_->parameters.push_back(parse_parameter(p));
    auto model = [&](const std::string& name) { return graph::read_model_config(configs / "models" / (name + ".json")); };
    auto system = [&](const std::string& name) { return load_system(configs / "hardware" / (name + ".json")); };
    for (const json& r : c.at("rows")) {
      Row row;
      row.header.name = r.at("name").get<std::string>();
      row.header.source = r.value("source", "");
      row.header.fit = r.value("fit", false);
      row.header.published = r.at("published").get<double>();
      row.metric = parse_metric(r.at("metric").get<std::string>());
      row.header.mechanisms = r.value("mechanisms", "");
      for (const json& spec : r.at("runs")) {
        SimulationOptions o;
        o.context = spec.at("context").get<int64_t>();
        const std::string batch = spec.value("batch", "1");
        o.max_batch = batch == "max";
        o.batch = o.max_batch ? 1 : std::stoll(batch);
        o.kv_capacity = spec.value("full_cache", false) ? 0 : spec.value("kv_capacity", int64_t{0});
        o.tp = spec.value("tp", 0);
        const std::string attention = spec.value("attention_parallelism", "tensor");
        if (attention != "tensor" && attention != "data")
          throw SpecError("a run's attention_parallelism is 'tensor' or 'data', not '" + attention + "'");
        o.attention_split = attention == "data" ? graph::AttentionSplit::Sequences : graph::AttentionSplit::Heads;
        if (spec.contains("experts")) {
          const json& e = spec["experts"];
          o.experts.placement = parse_expert_placement(e.value("placement", "column"));
          o.experts.router_skew = e.value("router_skew", 0.0);
          o.experts.replicated_experts = e.value("replicated", int64_t{0});
        }
        const graph::ModelShape m = model(spec.at("model").get<std::string>());
        const SystemSpec s = system(spec.at("system").get<std::string>());
        std::string calibrated_draft;
        if (spec.contains("speculative")) {
          const json& d = spec["speculative"];
          const std::string draft = d.at("draft").get<std::string>();
          std::vector<double> acceptance;
          if (d.contains("acceptance")) {
            acceptance = {d["acceptance"].get<double>()};
          } else {
            const auto& ps = prepared_->parameters;
            const auto found = std::find_if(ps.begin(), ps.end(), [&](const CalibratedParameter& p) { return p.draft == draft; });
            if (found == ps.end())
              throw SpecError("the speculative run of '" + m.name + "' drafted by " + draft +
                              " states no acceptance, and no parameter calibrates that draft's");
            acceptance = {found->value};
            calibrated_draft = draft;
          }
          o.speculative = SpeculativeSpec{model(draft), d.at("draft_tokens").get<int64_t>(), acceptance};
        }
        const std::string label = run_label(m, s, o, spec);
        try {
          Run run;
          run.label = label;
          run.legs.push_back({std::make_shared<Deployment>(m, s, o), s, calibrated_draft});
          if (row.metric == Metric::LoopingSpeedup) {
            SimulationOptions unlooped = o;
            unlooped.kernel_looping = false;
            run.legs.push_back({std::make_shared<Deployment>(m, s, unlooped), s, calibrated_draft});
          } else if (row.metric == Metric::SpeedupOverBaseline) {
            const SystemSpec baseline = system(spec.at("baseline").get<std::string>());
            run.legs.push_back({std::make_shared<Deployment>(m, baseline, o), baseline, calibrated_draft});
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

std::vector<double> Calibration::current_values() const {
  std::vector<double> values;
  for (const CalibratedParameter& p : prepared_->parameters) {
    double value = p.draft.empty() ? p.values.front() : p.value;
    if (p.draft.empty())
      for (const Row& row : prepared_->rows)
        for (const Run& run : row.runs)
          for (const Leg& leg : run.legs)
            if (leg.system.device.name == p.device) {
              SystemSpec system = leg.system;
              value = *calibrated_field(system, p.key);
            }
    values.push_back(value);
  }
  return values;
}

std::vector<CalibrationRowResult> Calibration::evaluate() const { return evaluate(current_values()); }

std::vector<CalibrationRowResult> Calibration::evaluate(const std::vector<double>& values) const {
  const auto& parameters = prepared_->parameters;
  if (values.size() != parameters.size())
    throw SpecError("calibration needs " + std::to_string(parameters.size()) + " values, one per parameter, not " +
                    std::to_string(values.size()));
  auto priced = [&](const Leg& leg) {
    SystemSpec system = leg.system;
    std::optional<double> acceptance;
    for (size_t i = 0; i < parameters.size(); ++i) {
      if (parameters[i].draft.empty() && system.device.name == parameters[i].device) set_calibrated_value(system, parameters[i].key, values[i]);
      if (!leg.draft.empty() && parameters[i].draft == leg.draft) acceptance = values[i];
    }
    return leg.deployment->price(system, acceptance);
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
        case Metric::HbmBandwidthUtilisation: value = measured.hbm_bandwidth_utilisation; break;
        case Metric::LoopingSpeedup:
        case Metric::SpeedupOverBaseline: value = priced(run.legs.back()).step_seconds / measured.step_seconds; break;
      }
      if (value > best) {
        best = value;
        result.best_run = run.label;
        if (measured.draft_tokens > 0) result.best_run += tokens_per_round_text(measured.tokens_per_round);
      }
    }
    result.emulated = best;
    result.error = (best - result.published) / result.published;
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace snapstream::dataflow_sim
