// Model file options and the load log line.
#include "app/model_options.h"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace snapstream::app {

void add_model_options(CLI::App* command, ModelFlags& flags) {
  command->add_option("--model", flags.path, "GGUF file or llama2.c checkpoint")->required()->check(CLI::ExistingFile);
  command->add_option("--tokenizer", flags.tokenizer, "llama2.c tokenizer file (default: tok<vocab>.bin beside the model)")
      ->check(CLI::ExistingFile);
  command->add_option("--threads", flags.threads, "compute threads (0: one per core)")->check(CLI::NonNegativeNumber);
}

std::unique_ptr<runtime::Model> load_model_logged(const ModelFlags& flags) {
  auto loaded = runtime::load_model(flags.path, flags.tokenizer);
  const graph::ModelShape& c = loaded->shape;
  spdlog::info("loaded {} ({}): dim {}, {} layers, {} heads ({} kv), vocab {}, context {}", flags.path, loaded->format, c.dim,
               c.layers, c.heads, c.kv_heads, c.vocab, c.context_length);
  return loaded;
}

std::string model_file_name(const ModelFlags& flags) { return std::filesystem::path(flags.path).filename().string(); }

}  // namespace snapstream::app
