// Engine flags and the start-up plan report.
#include "app/engine_options.h"

#include <fmt/format.h>

#include "app/cache_options.h"
#include "app/config_files.h"
#include "app/emulated_device.h"
#include "runtime/errors.h"

namespace snapstream::app {

void add_row_groups_flag(CLI::App* command, runtime::GraphPlan& plan) {
  command->add_flag("--no-row-groups{false}", plan.row_groups,
                    "read Q4_K, Q8_0, f32 and f16 weights as stored instead of a copy regrouped sixteen rows at a time");
}

void add_engine_options(CLI::App* command, EngineFlags& flags) {
  command->add_option("--tp", flags.graphs.shards, "tensor-parallel shards (run one after another on the CPU)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--no-kernel-looping{false}", flags.graphs.kernel_looping, "compile one kernel per layer instead of a loop");
  add_row_groups_flag(command, flags.graphs);
  command->add_flag("--list-graphs", flags.list_graphs, "print the compiled graphs and the KV memory plan, then exit");
  add_cache_options(command, flags.cache);
}

void add_emulation_options(CLI::App* command, EngineFlags& flags) {
  command->add_option("--system", flags.system, "hardware config every step is priced on, for the emulated clock ('none': off)")
      ->capture_default_str()
      ->each([&flags](const std::string&) { flags.system_given = true; });
  command->add_option("--emulate", flags.emulate,
                      "model config to price steps as (a proxy: tokens still come from --model), e.g. deepseek-r1-671b");
  command->add_flag("--pace", flags.pace, "hold each step's tokens until the emulated device would have produced them");
}

void apply_emulation(const EngineFlags& flags, runtime::EngineOptions& options) {
  options.pace = flags.pace;
  if (flags.system == "none") {
    if (!flags.emulate.empty() || flags.pace) throw runtime::ConfigError("--emulate and --pace need a --system to price steps on");
    return;
  }
  EmulationOptions emulation;
  emulation.system = dataflow_sim::load_system(resolve_config("hardware", flags.system));
  if (!flags.emulate.empty()) emulation.proxy = load_model_config(flags.emulate);
  emulation.kernel_looping = options.graphs.kernel_looping;
  options.step_clock = emulated_step_clock(emulation);
  options.step_clock_optional = !flags.system_given && flags.emulate.empty();
}

std::string describe_plan(const runtime::Model& model, const runtime::GraphRunner& runner, const runtime::SlotKvCache& cache) {
  const runtime::SnapStreamConfig& config = cache.config();
  const int64_t context = model.shape.context_length;
  const int64_t full = runtime::SlotKvCache::full_cache_bytes(model.shape, context, config.kv_dtype);
  std::string text = fmt::format("compiled graphs ({} compiles, arena {} bytes):\n", runner.graphs().compiles(), runner.arena_bytes());
  text += runner.graphs().describe();
  text += fmt::format("KV cache: {}\n", config.describe());
  text += fmt::format("  {} slots x {} bytes = {} bytes; a full cache of {} positions would hold {} bytes per slot ({:.2f}x)\n",
                      cache.slots(), cache.bytes_per_slot(), cache.total_bytes(), context, full,
                      static_cast<double>(full) / static_cast<double>(cache.bytes_per_slot()));
  return text;
}

}  // namespace snapstream::app
