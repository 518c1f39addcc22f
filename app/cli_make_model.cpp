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

kernels::DType parse_dtype(const std::string& name) {
  if (const auto dtype = kernels::dtype_from_name(name)) return *dtype;
  throw runtime::ConfigError("unknown dtype '" + name + "' (" + std::string(kernels::kDTypeNames) + ")");
}

void run_make_model(const MakeModelArgs& args) {
  runtime::SyntheticModelOptions options;
  options.shape = load_model_config(args.shape);
  if (!options.shape.runs_on_cpu())
    throw runtime::ConfigError(options.shape.name +
                               " is not a Llama-family shape (grouped attention, dense MLPs): the CPU engine cannot run it");
  options.dtype = parse_dtype(args.dtype);
  options.seed = args.seed;
  spdlog::info("writing {} ({} weights, seed {}) to {}", args.shape, args.dtype, args.seed, args.out);
  runtime::write_synthetic_model(options, args.out);
  spdlog::info("wrote {}; its weights are random, so the text it generates is meaningless", args.out);
}

}  // namespace

void add_make_model_command(CLI::App& app) {
  auto args = std::make_shared<MakeModelArgs>();
  CLI::App* cmd = app.add_subcommand("make-model", "Write a random-weight Llama GGUF of a realistic shape");
  cmd->add_option("--shape", args->shape, "a name from configs/models (llama-110m, llama-1b, ...)")->required();
  cmd->add_option("--dtype", args->dtype, "weight type")->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0"}));
  cmd->add_option("--out", args->out, "output .gguf path")->required();
  cmd->add_option("--seed", args->seed, "random seed");
  cmd->callback([args] { run_make_model(*args); });
}

}  // namespace snapstream::app
