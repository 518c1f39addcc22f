// Fuzz target: arbitrary bytes as a llama2.c checkpoint (first byte even) read with the real
// tok512 tokenizer, or as a llama2.c tokenizer file (first byte odd). Refusal must be an
// InputError, never a crash.
#include "runtime/errors.h"
#include "runtime/model.h"
#include "runtime/model_loaders.h"
#include "tests/fuzz/fuzz_support.h"

using namespace snapstream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string tokenizer = (fuzz::quiet_logs(), (fuzz::models_dir() / "tok512.bin").string());
  static fuzz::ScratchFile file(".bin");
  if (size == 0) return 0;
  try {
    if (data[0] % 2 == 0) {
      const auto model = runtime::load_model(file.write(data + 1, size - 1), tokenizer);
      (void)model->tokenizer.encode("Once upon a time");
    } else {
      const auto loaded = runtime::load_llama2c_tokenizer(file.write(data + 1, size - 1), 512);
      (void)loaded.decode(loaded.encode("Once upon a time"));
    }
  } catch (const runtime::InputError&) {
  }
  return 0;
}
