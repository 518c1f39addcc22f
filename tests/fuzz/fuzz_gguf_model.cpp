// Fuzz target: arbitrary bytes as a GGUF model file, through the header, metadata and tensor
// table to a loaded model with every check. Refusal must be a ModelFileError (or another
// InputError), never a crash, a hang or another exception.
#include "runtime/errors.h"
#include "runtime/model.h"
#include "tests/fuzz/fuzz_support.h"

using namespace snapstream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = (fuzz::quiet_logs(), true);
  (void)quiet;
  static fuzz::ScratchFile file(".gguf");
  try {
    const auto model = runtime::load_model(file.write(data, size));
    // A file that loads must be usable: its tokenizer round-trips a short text.
    (void)model->tokenizer.decode(model->tokenizer.encode("Once upon a time"));
  } catch (const runtime::InputError&) {
  }
  return 0;
}
