// The known chat template families written out by hand, as llama.cpp's built-in templates do,
// rather than by running the file's Jinja.
#include "server/api/chat_template.h"

namespace snapstream::server::api {
namespace {

std::string capitalised(const std::string& role) {
  std::string out = role;
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

std::string trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\n\r\f\v";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(kSpace) - first + 1));
}

// The spelling of a special token, or `fallback` when the vocabulary has no such id.
std::string token_text(const runtime::Tokenizer& tokenizer, int32_t id, std::string_view fallback) {
  return id >= 0 && id < tokenizer.vocab_size() ? tokenizer.piece(id) : std::string(fallback);
}

std::string llama2_prompt(const ChatTemplate& t, std::span<const ChatMessage> messages, const std::string& bos,
                          const std::string& eos) {
  std::string text = "[INST] ";
  bool inside_turn = true;
  for (const auto& m : messages) {
    const std::string content = t.strip_content ? trimmed(m.content) : m.content;
    if (!inside_turn) {
      text += t.bos_between_turns ? bos + "[INST] " : "[INST] ";
      inside_turn = true;
    }
    if (m.role == "system")
      text += t.system_block ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
    else if (m.role == "user")
      text += content + " [/INST]";
    else {
      text += content + eos;
      inside_turn = false;
    }
  }
  return text;
}

}  // namespace

ChatTemplate detect_chat_template(std::string_view jinja) {
  auto has = [&](std::string_view marker) { return jinja.find(marker) != std::string_view::npos; };
  ChatTemplate t;
  if (has("<|im_start|>")) {
    t.format = ChatFormat::ChatML;
  } else if (has("[INST]")) {
    if (has("[AVAILABLE_TOOLS]") || has("' [INST] ' + system_message")) {
      t.format = ChatFormat::MistralV3;
    } else {
      t.format = ChatFormat::Llama2;
      t.system_block = has("<<SYS>>");
      t.bos_between_turns = has("bos_token + '[INST]");
      t.strip_content = has("content.strip()");
    }
  } else if (has("<|assistant|>") && has("<|end|>")) {
    t.format = ChatFormat::Phi3;
  } else if (has("<|start_header_id|>") && has("<|end_header_id|>")) {
    t.format = ChatFormat::Llama3;
  } else if (has("<|user|>")) {
    t.format = ChatFormat::Zephyr;
  }
  return t;
}

std::string_view chat_format_name(ChatFormat format) {
  switch (format) {
    case ChatFormat::Llama2: return "llama-2";
    case ChatFormat::Llama3: return "llama-3";
    case ChatFormat::ChatML: return "chatml";
    case ChatFormat::MistralV3: return "mistral-v3";
    case ChatFormat::Zephyr: return "zephyr";
    case ChatFormat::Phi3: return "phi-3";
    case ChatFormat::Plain: return "plain";
  }
  return "plain";
}

std::string chat_prompt(const ChatTemplate& chat_template, std::span<const ChatMessage> messages,
                        const runtime::Tokenizer& tokenizer) {
  const std::string bos = token_text(tokenizer, tokenizer.bos_id(), "<s>");
  const std::string eos = token_text(tokenizer, tokenizer.eos_id(), "</s>");
  std::string text;
  switch (chat_template.format) {
    case ChatFormat::Llama3:
      for (const auto& m : messages)
        text += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trimmed(m.content) + "<|eot_id|>";
      return text + "<|start_header_id|>assistant<|end_header_id|>\n\n";
    case ChatFormat::ChatML:
      for (const auto& m : messages) text += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      return text + "<|im_start|>assistant\n";
    case ChatFormat::MistralV3: {
      // [INST] system\n\nuser[/INST] reply</s>[INST] ...
      bool inside_turn = false;
      for (const auto& m : messages) {
        if (!inside_turn) {
          text += "[INST] ";
          inside_turn = true;
        }
        if (m.role == "system")
          text += m.content + "\n\n";
        else if (m.role == "user")
          text += m.content + "[/INST]";
        else {
          text += ' ';
          text += trimmed(m.content) + eos;
          inside_turn = false;
        }
      }
      return text;
    }
    case ChatFormat::Llama2: return llama2_prompt(chat_template, messages, bos, eos);
    case ChatFormat::Zephyr:
      for (const auto& m : messages) text += "<|" + m.role + "|>\n" + m.content + eos + "\n";
      return text + "<|assistant|>\n";
    case ChatFormat::Phi3:
      for (const auto& m : messages) text += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
      return text + "<|assistant|>\n";
    case ChatFormat::Plain:
      for (const auto& m : messages) text += capitalised(m.role) + ": " + m.content + "\n";
      return text + "Assistant:";
  }
  return text;
}

std::vector<int32_t> render_chat(const ChatTemplate& chat_template, std::span<const ChatMessage> messages,
                                 const runtime::Tokenizer& tokenizer) {
  const bool markers = chat_template.format != ChatFormat::Plain;
  return tokenizer.encode(chat_prompt(chat_template, messages, tokenizer), true, markers);
}

}  // namespace snapstream::server::api
