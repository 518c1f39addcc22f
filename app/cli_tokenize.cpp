// `snapstream tokenize`: the token ids of a text under a model's tokenizer, from any GGUF file
// (vocabulary-only files too) or a llama2.c checkpoint with its tokenizer.
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "runtime/errors.h"
#include "runtime/gguf_file.h"
#include "runtime/model.h"
#include "runtime/tokenizer_gguf.h"

namespace snapstream::app {
namespace {

struct TokenizeArgs {
  std::string model;
  std::string tokenizer;
  std::string text;
  std::string file;
  bool add_special = false;
  bool parse_special = false;
  bool json = false;
};

runtime::Tokenizer load_tokenizer(const TokenizeArgs& args) {
  auto mapping = std::make_shared<const runtime::MappedFile>(args.model);
  if (runtime::has_gguf_magic(*mapping)) return runtime::read_gguf_tokenizer(runtime::GgufFile(mapping));
  return std::move(runtime::load_model(args.model, args.tokenizer)->tokenizer);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw runtime::InputError(path + ": cannot open the text file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw runtime::InputError(path + ": cannot read the text file");
  return bytes;
}

void run_tokenize(const TokenizeArgs& args) {
  const runtime::Tokenizer tokenizer = load_tokenizer(args);
  const std::string text = args.file.empty() ? args.text : read_file(args.file);
  const std::vector<int32_t> ids = tokenizer.encode(text, args.add_special, args.parse_special);
  if (args.json) {
    std::cout << nlohmann::json{{"ids", ids}}.dump() << "\n";
    return;
  }
  for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text under a model file's tokenizer");
  cmd->add_option("--model", args->model, "GGUF file (vocabulary-only files too) or llama2.c checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--tokenizer", args->tokenizer, "llama2.c tokenizer file")->check(CLI::ExistingFile);
  auto* text = cmd->add_option("--text", args->text, "the text to tokenise");
  auto* file = cmd->add_option("--file", args->file, "a file holding the text, read as bytes")->check(CLI::ExistingFile);
  text->excludes(file);
  cmd->add_flag("--add-special", args->add_special, "add BOS/EOS as the vocabulary's flags say");
  cmd->add_flag("--parse-special", args->parse_special, "turn control tokens written in the text into those tokens");
  cmd->add_flag("--json", args->json, "print {\"ids\": [...]}");
  cmd->callback([args, text, file] {
    if (text->count() == 0 && file->count() == 0) throw runtime::InputError("tokenize needs --text or --file");
    run_tokenize(*args);
  });
}

}  // namespace snapstream::app
