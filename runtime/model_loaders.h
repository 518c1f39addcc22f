// The per-format model loaders behind load_model(); each fills a Model or throws ModelFileError.
#pragma once

#include <memory>
#include <string>

#include "runtime/model.h"

namespace snapstream::runtime {

std::unique_ptr<Model> load_gguf_model(std::shared_ptr<const MappedFile> file);
std::unique_ptr<Model> load_llama2c_model(std::shared_ptr<const MappedFile> file, const std::string& tokenizer_path);
Tokenizer load_llama2c_tokenizer(const std::string& path, int64_t vocab_size);

}  // namespace snapstream::runtime
