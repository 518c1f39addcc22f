// Chat prompts: the template families llama.cpp knows (Llama 2, Llama 3, ChatML, Mistral v3,
// Zephyr, Phi-3) recognised in a model file's tokenizer.chat_template and written out here, or
// a plain documented fallback.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tokenizer.h"

namespace snapstream::server::api {

enum class ChatFormat { Llama2, Llama3, ChatML, MistralV3, Zephyr, Phi3, Plain };

// A template family and the variations within it that its Jinja source reveals.
struct ChatTemplate {
  ChatFormat format = ChatFormat::Plain;
  // Llama 2 variants: a <<SYS>> block for the system prompt (else it is prepended as a line),
  // <s> before each later [INST], message contents stripped of surrounding white space.
  bool system_block = true;
  bool bos_between_turns = false;
  bool strip_content = false;
};

struct ChatMessage {
  std::string role;  // system, user or assistant
  std::string content;
};

// The family of a Jinja chat template, checked in llama.cpp's order; Plain when it is empty or
// not a known family.
ChatTemplate detect_chat_template(std::string_view jinja);
std::string_view chat_format_name(ChatFormat format);

// The prompt text for `messages`, ending where the assistant's reply begins, with markers such
// as <|im_start|> written as text. BOS is not in it: the tokenizer adds it where the file says.
// The Plain fallback is "System: ...\nUser: ...\nAssistant: ...\n" ... "Assistant:".
std::string chat_prompt(const ChatTemplate& chat_template, std::span<const ChatMessage> messages,
                        const runtime::Tokenizer& tokenizer);

// The prompt ids: chat_prompt tokenised with BOS/EOS as the vocabulary's flags say and with
// special parsing on (markers become their tokens); the Plain fallback parses no markers.
std::vector<int32_t> render_chat(const ChatTemplate& chat_template, std::span<const ChatMessage> messages,
                                 const runtime::Tokenizer& tokenizer);

}  // namespace snapstream::server::api
