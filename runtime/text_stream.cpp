// The detokenizer's three stages, in order: token bytes, UTF-8 assembly, stop strings.
#include "runtime/text_stream.h"

namespace snapstream::runtime {

TextStream::TextStream(const Tokenizer& tokenizer, int32_t previous, std::vector<std::string> stops)
    : tokenizer_(&tokenizer), previous_(previous), stop_(std::move(stops)) {}

std::string TextStream::push(int32_t id) {
  const std::string bytes = tokenizer_->token_bytes(id, previous_);
  previous_ = id;
  return stop_.push(utf8_.push(bytes));
}

std::string TextStream::finish() {
  std::string text = stop_.push(utf8_.finish());
  return text + stop_.finish();
}

std::string detokenize(const Tokenizer& tokenizer, std::span<const int32_t> ids, int32_t previous) {
  TextStream stream(tokenizer, previous);
  std::string text;
  for (const int32_t id : ids) text += stream.push(id);
  return text + stream.finish();
}

}  // namespace snapstream::runtime
