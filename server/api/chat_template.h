// Chat prompts: the well-known template families (Llama 2, Llama 3, ChatML) recognised in a
// model file's tokenizer.chat_template and rendered here, or a plain documented fallback.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tokenizer.h"

namespace snapstream::server::api {

enum class ChatFormat { Llama2, Llama3, ChatML, Plain };

struct ChatMessage {
  std::string role;  // system, user or assistant
  std::string content;
};

// The family of a Jinja chat template; Plain when it is empty or not one of the known three.
ChatFormat detect_chat_format(std::string_view jinja);
std::string_view chat_format_name(ChatFormat format);

// The prompt ids for `messages`, ending where the assistant's reply begins. Markers such as
// <|im_start|> become their control tokens when the vocabulary has them. The Plain fallback is
//   "System: ...\nUser: ...\nAssistant: ...\n" ... "Assistant:"
// after a BOS token.
std::vector<int32_t> render_chat(ChatFormat format, std::span<const ChatMessage> messages, const runtime::Tokenizer& tokenizer);

// Tokens that end an assistant turn in `format`, besides EOS (e.g. <|im_end|>), where the
// vocabulary has them.
std::vector<int32_t> end_of_turn_ids(ChatFormat format, const runtime::Tokenizer& tokenizer);

}  // namespace snapstream::server::api
