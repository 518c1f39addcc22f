// `snapstream info`: a model file's metadata and tensor table (GGUF) or header (llama2.c).
#include <iostream>

#include "app/commands.h"
#include "runtime/gguf_file.h"
#include "runtime/model.h"

namespace snapstream::app {
namespace {

void print_gguf(const runtime::GgufFile& gguf) {
  std::cout << gguf.path() << ": GGUF v" << gguf.version() << ", " << gguf.metadata().size() << " metadata keys, "
            << gguf.tensors().size() << " tensors, alignment " << gguf.alignment() << ", data at byte " << gguf.data_offset()
            << "\n\nmetadata:\n";
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
