// Fuzz target: arbitrary bytes split into a Jinja chat template (detected into a family) and a
// conversation of messages, rendered and tokenised with the llama-spm and gpt-2 vocabularies.
#include <vector>

#include "runtime/tokenizer.h"
#include "server/api/chat_template.h"
#include "tests/fuzz/fuzz_support.h"

using namespace snapstream;
using namespace snapstream::server::api;

namespace {

const std::vector<runtime::Tokenizer>& tokenizers() {
  static const std::vector<runtime::Tokenizer> all = (fuzz::quiet_logs(), fuzz::load_vocabularies({"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"}));
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // Parts separated by NUL bytes: the template, then role/content pairs.
  std::vector<std::string_view> parts;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  for (size_t start = 0;;) {
    const size_t end = text.find('\0', start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  static constexpr const char* kRoles[] = {"system", "user", "assistant"};
  std::vector<ChatMessage> messages;
  for (size_t i = 1; i < parts.size(); ++i) messages.push_back({kRoles[(data[0] + i) % 3], std::string(parts[i])});
  const ChatTemplate chat_template = detect_chat_template(parts[0]);
  (void)chat_format_name(chat_template.format);
  const auto& tokenizer = tokenizers()[data[0] % tokenizers().size()];
  (void)render_chat(chat_template, messages, tokenizer);
  return 0;
}
