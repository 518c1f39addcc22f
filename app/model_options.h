// The options every model-loading command shares (--model, --tokenizer, --threads), and loading
// with the one-line description the commands log.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "runtime/model.h"

namespace snapstream::app {

struct ModelFlags {
  std::string path;       // --model: a GGUF file or llama2.c checkpoint
  std::string tokenizer;  // --tokenizer: a llama2.c tokenizer file
  int threads = 0;        // --threads: compute threads, 0 for one per core
};

void add_model_options(CLI::App* command, ModelFlags& flags);

// load_model(), logging the file and the model's shape.
std::unique_ptr<runtime::Model> load_model_logged(const ModelFlags& flags);

// The model file's name without its folder, as reports name the model.
std::string model_file_name(const ModelFlags& flags);

}  // namespace snapstream::app
