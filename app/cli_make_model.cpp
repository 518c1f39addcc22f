// `snapstream make-model`: a random-weight GGUF of a named shape from configs/models/.
#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/config_files.h"
#include "runtime/errors.h"
#include "runtime/synthetic_model.h"

namespace snapstream::app {
namespace {

struct MakeModelArgs {
  std::string shape;
  std::string dtype = "f32";
  std::string out;
  uint64_t seed = 0;
};

// One dtype for every matrix, or "q4_k_m" for llama.cpp's mix.
void set_weight_types(const std::string& name, runtime::SyntheticModelOptions& options) {
  if (name == "q4_k_m") {
    options.q4_k_m = true;
    return;
  }
  const auto dtype = kernels::dtype_from_name(name);
  if (!dtype) throw runtime::ConfigError("unknown dtype '" + name + "' (" + std::string(kernels::kDTypeNames) + " or q4_k_m)");
  options.dtype = *dtype;
}

void run_make_model(const MakeModelArgs& args) {
  runtime::SyntheticModelOptions options;
  options.shape = load_model_config(args.shape);
  if (!options.shape.runs_on_cpu())
    throw runtime::ConfigError(options.shape.name +
                               " is not a Llama-family shape (grouped attention, dense MLPs): the CPU engine cannot run it");
  set_weight_types(args.dtype, options);
  options.seed = args.seed;
  spdlog::info("writing {} ({} weights, seed {}) to {}", args.shape, args.dtype, args.seed, args.out);
  runtime::write_synthetic_model(options, args.out);
  spdlog::info("wrote {}; its weights are random, so the text it generates is meaningless", args.out);
}

}  // namespace

void add_make_model_command(CLI::App& app) {
  auto args = std::make_shared<MakeModelArgs>();
  CLI::App* cmd = app.add_subcommand("make-model", "Write a random-weight Llama or Qwen2 GGUF of a realistic shape");
  cmd->add_option("--shape", args->shape, "a name from configs/models (llama-110m, llama-1b, qwen2-0.5b, ...)")->required();
  cmd->add_option("--dtype", args->dtype, "weight type: " + std::string(kernels::kDTypeNames) + ", or q4_k_m (llama.cpp's mix)");
  cmd->add_option("--out", args->out, "output .gguf path")->required();
  cmd->add_option("--seed", args->seed, "random seed");
  cmd->callback([args] { run_make_model(*args); });
}

}  // namespace snapstream::app
