// Fuzz target: arbitrary bytes as a settings file. Refusal must be a ConfigError with the
// file's name and a line, never a crash.
#include <string>

#include "app/settings_file.h"
#include "runtime/errors.h"
#include "tests/fuzz/fuzz_support.h"

using namespace snapstream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    for (const auto& setting : app::parse_settings(std::string(fuzz::as_text(data, size)), "fuzz.toml"))
      if (setting.name.empty() || setting.line < 1) __builtin_trap();
  } catch (const runtime::ConfigError& e) {
    if (std::string(e.what()).rfind("fuzz.toml:", 0) != 0) __builtin_trap();  // every refusal names FILE:LINE
  }
  return 0;
}
