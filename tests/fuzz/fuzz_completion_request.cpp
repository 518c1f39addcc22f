// Fuzz target: arbitrary bytes as a /v1/completions or /v1/chat/completions body (first byte
// picks), through JSON parsing, every field check and the chat template. Refusal must be an
// ApiError (the 4xx the client sees), never a crash or another exception.
#include "runtime/model.h"
#include "server/api/api_error.h"
#include "server/api/completion_request.h"
#include "tests/fuzz/fuzz_support.h"

using namespace snapstream;
using namespace snapstream::server::api;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto model = (fuzz::quiet_logs(), runtime::load_model((fuzz::models_dir() / "stories260K.gguf").string()));
  static const ChatTemplate chatml = detect_chat_template("{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}");
  if (size == 0) return 0;
  const Endpoint endpoint = data[0] % 2 == 0 ? Endpoint::Completions : Endpoint::Chat;
  const ChatTemplate chat_template = (data[0] / 2) % 2 == 0 ? ChatTemplate{} : chatml;
  const ParseContext context{model->tokenizer, model->shape.context_length, chat_template};
  try {
    (void)parse_completion_request(fuzz::as_text(data + 1, size - 1), endpoint, context);
  } catch (const ApiError&) {
  }
  return 0;
}
