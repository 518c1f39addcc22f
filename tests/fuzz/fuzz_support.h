// What the libFuzzer targets share: where the real model and vocabulary files are, a scratch
// file for inputs that the code under test reads from disk, and quiet logs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tokenizer.h"

namespace snapstream::fuzz {

// $SNAPSTREAM_MODELS, else ../shared/models beside the source tree; exits with a message when
// it is missing (a target without its inputs must not pass as fuzzed).
std::filesystem::path models_dir();
// vocab/ beside the models folder.
std::filesystem::path vocab_dir();

// The vocabulary-only GGUF files of ../shared/vocab with these names, loaded.
std::vector<runtime::Tokenizer> load_vocabularies(const std::vector<std::string>& names);

// Turns logging off once: the code under test logs every refused input.
void quiet_logs();

// A file in the temp folder that holds the current input, for readers that take a path.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  // Replaces the file's bytes; returns its path.
  const std::string& write(const uint8_t* data, size_t size);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string_view as_text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

}  // namespace snapstream::fuzz
