// `snapstream simulate`: prices a model's decode step on a system of SN40L sockets (or a GPU
// node) from configs alone, and prints the time and memory breakdown.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/config_files.h"
#include "app/deployment_options.h"
#include "app/simulation_report.h"
#include "app/simulation_sweep.h"
#include "dataflow_sim/simulation.h"
#include "kernels/dtype.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

struct SimulateArgs {
  std::string model;
  std::string system;
  int64_t context = 0;
  std::string batch = "1";
  int64_t kv_capacity = 0;
  bool full_cache = false;
  bool no_kernel_looping = false;
  int32_t tp = 0;
  std::string weight_dtype;  // empty: the config's
  std::string format = "table";
  int64_t time_pricing = 0;
  SweepSpec sweep{"", {}, "sweep"};
  DeploymentArgs deployment;
};

// Median wall time of pricing the already-built deployment (graph compiled, memory planned),
// which is what the engine pays per compiled graph.
double median_pricing_seconds(const dataflow_sim::Deployment& deployment, const dataflow_sim::SystemSpec& system, int64_t runs) {
  std::vector<double> seconds;
  for (int64_t i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto result = deployment.price(system);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (result.step_seconds <= 0) throw runtime::ConfigError("a priced step took no time");
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

dataflow_sim::SimulationOptions options_from(const SimulateArgs& a) {
  dataflow_sim::SimulationOptions o;
  o.context = a.context;
  if (a.batch == "max") {
    o.max_batch = true;
  } else {
    try {
      size_t used = 0;
      o.batch = std::stoll(a.batch, &used);
      if (used != a.batch.size() || o.batch < 1) throw std::invalid_argument("batch");
    } catch (const std::exception&) {
      throw runtime::ConfigError("--batch takes a positive number or 'max', not '" + a.batch + "'");
    }
  }
  // SnapStream's default capacity is a quarter of the context, as in serving.
  o.kv_capacity = a.full_cache ? 0 : (a.kv_capacity > 0 ? a.kv_capacity : std::max<int64_t>(1, a.context / 4));
  o.kernel_looping = !a.no_kernel_looping;
  o.tp = a.tp;
  apply_deployment_options(a.deployment, o);
  return o;
}

void run(const SimulateArgs& a) {
  auto model = load_model_config(a.model);
  if (!a.weight_dtype.empty()) {
    const auto dtype = kernels::dtype_from_name(a.weight_dtype);
    if (!dtype) throw runtime::ConfigError("--weight-dtype '" + a.weight_dtype + "' is not a weight type (" + std::string(kernels::kDTypeNames) + ")");
    model.weight_dtype = *dtype;
  }
  const auto system = dataflow_sim::load_system(resolve_config("hardware", a.system));
  if (!a.sweep.axis.empty()) {
    SweepSpec sweep = a.sweep;
    sweep.kv_capacity = a.full_cache ? 0 : a.kv_capacity;
    run_sweep(model, system, options_from(a), sweep);
    return;
  }
  const dataflow_sim::Deployment deployment(model, system, options_from(a));
  const auto result = deployment.price(system);
  if (a.time_pricing > 0)
    std::cerr << "pricing one step took " << median_pricing_seconds(deployment, system, a.time_pricing) * 1e6
              << " us (median of " << a.time_pricing << ")\n";
  if (a.format == "json")
    std::cout << simulation_json(result).dump(2) << "\n";
  else if (a.format == "csv")
    std::cout << simulation_csv_header() << simulation_csv_row(result);
  else
    std::cout << simulation_table(result);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand("simulate", "Price a decode step of a model config on a hardware config");
  cmd->add_option("--model", args->model, "model config: a name under configs/models or a file")->required();
  cmd->add_option("--system", args->system, "hardware config: a name under configs/hardware or a file")->required();
  cmd->add_option("--context", args->context, "tokens per sequence when the step runs")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--batch", args->batch, "sequences decoding together, or 'max' for the most that fit")->capture_default_str();
  auto* capacity = cmd->add_option("--kv-capacity", args->kv_capacity, "SnapStream cache positions per sequence, C (default: context / 4)")
                       ->check(CLI::PositiveNumber);
  cmd->add_flag("--full-cache", args->full_cache, "keep every position: the uncompressed baseline")->excludes(capacity);
  cmd->add_flag("--no-kernel-looping", args->no_kernel_looping, "one kernel call per layer instead of one per run of layers");
  cmd->add_option("--tp", args->tp, "tensor-parallel devices (default: all of the system's)")->check(CLI::PositiveNumber);
  cmd->add_option("--weight-dtype", args->weight_dtype, "price the weights stored as this type (default: the model config's)");
  cmd->add_option("--format", args->format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--time-pricing", args->time_pricing, "price the step N times and print the median time pricing took")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--sweep", args->sweep.axis, "price a range of 'context' or 'batch' values, full cache against SnapStream")
      ->check(CLI::IsMember({"context", "batch"}));
  cmd->add_option("--sweep-values", args->sweep.values, "the values to sweep (default: powers of two)")->delimiter(',');
  add_deployment_options(cmd, args->deployment);
  cmd->add_option("--out", args->sweep.out, "sweep output prefix: writes PREFIX.csv and PREFIX.png")->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace snapstream::app
