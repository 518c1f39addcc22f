// Engine flags and the start-up plan report.
#include "server/engine_options.h"

#include <fmt/format.h>

#include "server/cache_options.h"

namespace snapstream::server {

void add_engine_options(CLI::App* command, EngineFlags& flags) {
  command->add_option("--tp", flags.graphs.shards, "tensor-parallel shards (run one after another on the CPU)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--no-kernel-looping{false}", flags.graphs.kernel_looping, "compile one kernel per layer instead of a loop");
  command->add_flag("--list-graphs", flags.list_graphs, "print the compiled graphs and the KV memory plan, then exit");
  add_cache_options(command, flags.cache);
}

std::string describe_plan(const Model& model, const GraphRunner& runner, const SlotKvCache& cache) {
  const SnapStreamConfig& config = cache.config();
  const int64_t context = model.config.context_length;
  const int64_t full = SlotKvCache::full_cache_bytes(model.config, context);
  std::string text = fmt::format("compiled graphs ({} compiles, arena {} bytes):\n", runner.graphs().compiles(), runner.arena_bytes());
  text += runner.graphs().describe();
  text += fmt::format("KV cache: {}\n", config.describe());
  text += fmt::format("  {} slots x {} bytes = {} bytes; a full cache of {} positions would hold {} bytes per slot ({:.2f}x)\n",
                      cache.slots(), cache.bytes_per_slot(), cache.total_bytes(), context, full,
                      static_cast<double>(full) / static_cast<double>(cache.bytes_per_slot()));
  return text;
}

}  // namespace snapstream::server
