// `snapstream info`: a model file's metadata and tensor table (GGUF) or header (llama2.c), with
// a summary of its tokenizer and tensor types.
#include <iostream>
#include <map>

#include "app/commands.h"
#include "runtime/errors.h"
#include "runtime/gguf_file.h"
#include "runtime/model.h"
#include "runtime/tokenizer_gguf.h"

namespace snapstream::app {
namespace {

std::string token_name(const runtime::Tokenizer& tokenizer, int32_t id) {
  if (id < 0 || id >= tokenizer.vocab_size()) return "none";
  return std::to_string(id) + " '" + tokenizer.piece(id) + "'";
}

void print_tokenizer(const runtime::Tokenizer& tokenizer) {
  const runtime::Vocabulary& v = tokenizer.vocabulary();
  const bool bpe = v.model == runtime::TokenizerModel::BytePairs;
  std::cout << std::boolalpha << "tokenizer: " << (bpe ? "byte-level BPE (gpt2), pre-tokenizer " + v.pre : std::string("SentencePiece BPE (llama)"))
            << ", " << tokenizer.vocab_size() << " tokens" << (bpe ? ", " + std::to_string(v.merges.size()) + " merges" : "") << "\n"
            << "  BOS " << token_name(tokenizer, v.bos_id) << ", EOS " << token_name(tokenizer, v.eos_id) << ", unknown "
            << token_name(tokenizer, v.unknown_id) << "\n"
            << "  add_bos " << v.add_bos << ", add_eos " << v.add_eos << ", add_space_prefix " << v.add_space_prefix
            << ", ignore_merges " << v.ignore_merges << "\n  end of generation:";
  for (const int32_t id : tokenizer.end_of_generation_ids()) std::cout << " " << token_name(tokenizer, id);
  std::cout << "\n";
}

void print_summary(const runtime::GgufFile& gguf) {
  const runtime::GgufValue* architecture = gguf.find("general.architecture");
  const std::string* name = architecture != nullptr ? architecture->as_string() : nullptr;
  std::cout << "architecture: " << (name != nullptr ? *name : "none") << "\n";
  if (gguf.find("tokenizer.ggml.model") == nullptr) {
    std::cout << "tokenizer: none\n";
  } else {
    try {
      print_tokenizer(runtime::read_gguf_tokenizer(gguf));
    } catch (const runtime::ModelFileError& e) {
      std::cout << "tokenizer: cannot be used: " << e.what() << "\n";
    }
  }
  std::map<std::string, int, std::less<>> types;
  for (const auto& tensor : gguf.tensors()) ++types[std::string(tensor.type->name)];
  std::cout << "tensor types:";
  for (const auto& [type, count] : types) std::cout << " " << type << " x" << count;
  std::cout << (types.empty() ? " none (a vocabulary-only file)\n" : "\n");
}

void print_gguf(const runtime::GgufFile& gguf) {
  std::cout << gguf.path() << ": GGUF v" << gguf.version() << ", " << gguf.metadata().size() << " metadata keys, "
            << gguf.tensors().size() << " tensors, alignment " << gguf.alignment() << ", data at byte " << gguf.data_offset()
            << "\n\n";
  print_summary(gguf);
  std::cout << "\nmetadata:\n";
  for (const auto& [key, value] : gguf.metadata())
    std::cout << "  " << key << " (" << runtime::gguf_value_type_name(value.type()) << ") = " << value.to_display() << "\n";
  std::cout << "\ntensors:\n";
  uint64_t total = 0;
  for (const auto& tensor : gguf.tensors()) {
    std::string shape;
    for (size_t i = 0; i < tensor.dims.size(); ++i) shape += (i ? " x " : "") + std::to_string(tensor.dims[i]);
    std::cout << "  " << tensor.name << "  " << tensor.type->name << "  [" << shape << "]  offset " << tensor.offset << "  "
              << tensor.bytes << " bytes\n";
    total += tensor.bytes;
  }
  std::cout << "\ntotal tensor bytes: " << total << "\n";
}

void print_config(const runtime::Model& model) {
  const graph::ModelShape& c = model.shape;
  std::cout << model.path << ": " << model.format << " checkpoint\n"
            << "  dim " << c.dim << ", hidden_dim " << c.hidden_dim << ", layers " << c.layers << ", heads " << c.heads
            << ", kv_heads " << c.kv_heads << ", head_dim " << c.head_dim << "\n"
            << "  vocab " << c.vocab << ", context " << c.context_length << ", rope_theta " << c.rope_theta << ", norm_eps "
            << c.norm_eps << ", embeddings " << (c.tied_embeddings ? "tied" : "untied") << "\n"
            << "  weight bytes read per decode step: " << model.weights.bytes_read_per_token() << "\n";
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto file = std::make_shared<std::string>();
  auto tokenizer = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("info", "Print a model file's metadata and tensor table");
  cmd->add_option("file", *file, "GGUF file or llama2.c checkpoint")->required()->check(CLI::ExistingFile);
  cmd->add_option("--tokenizer", *tokenizer, "llama2.c tokenizer file")->check(CLI::ExistingFile);
  cmd->callback([file, tokenizer] {
    auto mapping = std::make_shared<const runtime::MappedFile>(*file);
    if (runtime::has_gguf_magic(*mapping)) {
      print_gguf(runtime::GgufFile(mapping));
      return;
    }
    print_config(*runtime::load_model(*file, *tokenizer));
  });
}

}  // namespace snapstream::app
