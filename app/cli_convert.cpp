// `snapstream convert`: writes a model (a llama2.c checkpoint with its tokenizer, or a GGUF
// file) as one GGUF file with its shape and vocabulary.
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "app/model_options.h"
#include "runtime/model_to_gguf.h"

namespace snapstream::app {
namespace {

struct ConvertArgs {
  ModelFlags model;
  std::string out;
  std::string name;
};

void run_convert_command(const ConvertArgs& a) {
  const auto model = load_model_logged(a.model);
  const std::string name = a.name.empty() ? std::filesystem::path(a.model.path).stem().string() : a.name;
  runtime::write_model_gguf(*model, name, a.out);
  std::cout << "wrote " << a.out << " (" << model->format << " model '" << name << "', " << model->shape.layers << " layers, "
            << model->tokenizer.vocab_size() << " tokens)\n";
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand("convert", "Write a model (llama2.c checkpoint and tokenizer, or GGUF) as one GGUF file");
  add_model_options(cmd, args->model);
  cmd->add_option("--out", args->out, "the GGUF file to write")->required();
  cmd->add_option("--name", args->name, "general.name (default: the input file's name)");
  cmd->callback([args] { run_convert_command(*args); });
}

}  // namespace snapstream::app
