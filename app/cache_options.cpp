// Command-line spelling of SnapStreamConfig; defaults are SNAPSTREAM.md's.
#include "app/cache_options.h"

#include "app/choice_option.h"

#include <map>

namespace snapstream::app {

void add_cache_options(CLI::App* command, runtime::SnapStreamConfig& config) {
  command->add_option("--kv-capacity", config.capacity, "cache entries per sequence, C (default: context / 4)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--sink", config.sink, "attention-sink entries, S")->check(CLI::NonNegativeNumber);
  command->add_option("--ring", config.ring, "ring-buffer entries for recent tokens, R (default: C / 2)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--window", config.window, "observation window of SnapKV, W")->check(CLI::PositiveNumber);
  command->add_option("--pool-kernel", config.pool_kernel, "odd width of SnapKV's score pooling")->check(CLI::PositiveNumber);
  static const std::map<std::string, kernels::PoolKind> pools = {{"max", kernels::PoolKind::Max}, {"avg", kernels::PoolKind::Avg}};
  command->add_option("--pool", config.pool, "score pooling: max or avg")
      ->transform(one_of(pools))
      ->option_text("max|avg");
  static const std::map<std::string, runtime::PositionMode> modes = {{"original", runtime::PositionMode::Original},
                                                            {"reindexed", runtime::PositionMode::Reindexed}};
  command->add_option("--positions", config.positions, "RoPE positions of cached keys: original or reindexed")
      ->transform(one_of(modes))
      ->option_text("original|reindexed");
  command->add_flag("--full-cache", config.full_cache, "keep every position (no compression): the baseline");
  add_kv_dtype_option(command, config.kv_dtype, "f16 by default");
}

void add_kv_dtype_option(CLI::App* command, kernels::DType& kv_dtype, const std::string& default_note) {
  static const std::map<std::string, kernels::DType> kv_dtypes = {
      {"f32", kernels::DType::F32}, {"f16", kernels::DType::F16}, {"q8_0", kernels::DType::Q8_0}};
  command->add_option("--kv-dtype", kv_dtype,
                      "how cached keys and values are stored: f16, f32 at twice its memory, or q8_0 (8-bit values "
                      "with an f16 scale per 32; heads a multiple of 32 wide) at 17/32 of it; " + default_note)
      ->transform(one_of(kv_dtypes))
      ->option_text("f16|f32|q8_0");
}

}  // namespace snapstream::app
