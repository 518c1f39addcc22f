// Paths, scratch files and logging for the fuzz targets.
#include "tests/fuzz/fuzz_support.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "runtime/tokenizer_gguf.h"

namespace snapstream::fuzz {

std::filesystem::path models_dir() {
  const char* configured = std::getenv("SNAPSTREAM_MODELS");
  const std::filesystem::path dir = configured ? std::filesystem::path(configured)
                                               : std::filesystem::path(SNAPSTREAM_SOURCE_DIR) / ".." / "shared" / "models";
  if (!std::filesystem::exists(dir / "stories260K.gguf")) {
    std::cerr << "fuzz: no test models in " << dir << " (set SNAPSTREAM_MODELS)\n";
    std::exit(2);
  }
  return dir;
}

std::filesystem::path vocab_dir() { return models_dir() / ".." / "vocab"; }

std::vector<runtime::Tokenizer> load_vocabularies(const std::vector<std::string>& names) {
  std::vector<runtime::Tokenizer> tokenizers;
  for (const auto& name : names) tokenizers.push_back(runtime::load_gguf_tokenizer((vocab_dir() / name).string()));
  return tokenizers;
}

void quiet_logs() { spdlog::set_level(spdlog::level::off); }

ScratchFile::ScratchFile(const std::string& suffix) {
  path_ = (std::filesystem::temp_directory_path() / ("snapstream-fuzz-" + std::to_string(getpid()) + suffix)).string();
}

ScratchFile::~ScratchFile() { std::remove(path_.c_str()); }

const std::string& ScratchFile::write(const uint8_t* data, size_t size) {
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path_;
}

}  // namespace snapstream::fuzz
