// Chat template families: detection from the Jinja source, and rendering with control tokens.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>

#include "server/api/chat_template.h"

using namespace snapstream;
using namespace snapstream::runtime;
using namespace snapstream::server::api;

namespace {
// A byte-level vocabulary with BOS, EOS and the ChatML markers as control tokens.
Tokenizer chat_tokenizer() {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"};
  std::vector<TokenKind> kinds = {TokenKind::Unknown, TokenKind::Control, TokenKind::Control, TokenKind::Control,
                                  TokenKind::Control};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    pieces.push_back(name);
    kinds.push_back(TokenKind::Byte);
  }
  std::vector<float> scores(pieces.size(), 0.0f);
  return Tokenizer(pieces, scores, kinds, 1, 2, 0);
}
}  // namespace

TEST_CASE("chat templates are recognised by their markers", "[chat_template]") {
  CHECK(detect_chat_format("{% for m in messages %}<|im_start|>{{ m.role }}") == ChatFormat::ChatML);
  CHECK(detect_chat_format("<|start_header_id|>{{ role }}<|end_header_id|>") == ChatFormat::Llama3);
  CHECK(detect_chat_format("{{ bos_token + '[INST] ' + content + ' [/INST]' }}") == ChatFormat::Llama2);
  CHECK(detect_chat_format("") == ChatFormat::Plain);
  CHECK(detect_chat_format("{{ messages | tojson }}") == ChatFormat::Plain);
}

TEST_CASE("ChatML renders markers as control tokens and ends at the assistant's turn", "[chat_template]") {
  const Tokenizer tok = chat_tokenizer();
  const std::vector<ChatMessage> messages = {{"system", "Be brief."}, {"user", "Hi"}};
  const auto ids = render_chat(ChatFormat::ChatML, messages, tok);
  REQUIRE(ids.size() > 4);
  CHECK(ids[0] == 1);
  CHECK(ids[1] == 3);
  CHECK(std::count(ids.begin(), ids.end(), 3) == 3);  // two messages and the assistant's opening
  CHECK(std::count(ids.begin(), ids.end(), 4) == 2);
  CHECK(tok.decode(ids).find("Be brief.") != std::string::npos);
  CHECK(tok.decode(ids).substr(tok.decode(ids).size() - 10) == "assistant\n");
  CHECK(end_of_turn_ids(ChatFormat::ChatML, tok) == std::vector<int32_t>{4});
  CHECK(end_of_turn_ids(ChatFormat::Plain, tok).empty());
}

TEST_CASE("Llama 2 folds the system prompt into the first turn; the fallback is plain text", "[chat_template]") {
  const Tokenizer tok = chat_tokenizer();
  const std::vector<ChatMessage> messages = {{"system", "Sys"}, {"user", "Hi"}, {"assistant", "Hello"}, {"user", "More"}};
  const auto llama2 = render_chat(ChatFormat::Llama2, messages, tok);
  CHECK(tok.decode(llama2) == "[INST] <<SYS>>\nSys\n<</SYS>>\n\nHi [/INST] Hello [INST] More [/INST]");
  CHECK(std::count(llama2.begin(), llama2.end(), 1) == 2);  // BOS opens each exchange
  CHECK(std::count(llama2.begin(), llama2.end(), 2) == 1);  // EOS closes the assistant's reply
  const std::vector<ChatMessage> plain_messages = {{"user", "Hi"}};
  CHECK(tok.decode(render_chat(ChatFormat::Plain, plain_messages, tok)) == "User: Hi\nAssistant:");
}
