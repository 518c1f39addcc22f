// The options every model-loading command shares (--model, --tokenizer, --threads), and loading
// with the one-line description the commands log.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "runtime/model.h"

namespace snapstream::app {

void add_model_options(CLI::App* command, std::string& model, std::string& tokenizer, int& threads);

// load_model(), logging the file and the model's shape.
std::unique_ptr<runtime::Model> load_model_logged(const std::string& model, const std::string& tokenizer);

}  // namespace snapstream::app
