// Rendering of the known chat template families, written out by hand rather than by running
// the file's Jinja: the three families cover the models this server loads.
#include "server/api/chat_template.h"

namespace snapstream::server::api {
namespace {

// Appends `text` to `ids`, turning each of `markers` found in it into its control token when
// the vocabulary has one (and leaving it as text otherwise).
void append(std::vector<int32_t>& ids, std::string_view text, std::span<const std::string_view> markers, const runtime::Tokenizer& tokenizer) {
  while (!text.empty()) {
    size_t first = std::string_view::npos;
    std::string_view marker;
    for (const std::string_view m : markers) {
      const size_t at = text.find(m);
      if (at != std::string_view::npos && at < first && tokenizer.lookup(m) >= 0 &&
          tokenizer.kind(tokenizer.lookup(m)) == runtime::TokenKind::Control) {
        first = at;
        marker = m;
      }
    }
    const std::string_view plain = text.substr(0, first);
    if (!plain.empty()) {
      const auto piece = tokenizer.encode(plain, false);
      ids.insert(ids.end(), piece.begin(), piece.end());
    }
    if (first == std::string_view::npos) break;
    ids.push_back(tokenizer.lookup(marker));
    text.remove_prefix(first + marker.size());
  }
}

std::string capitalised(const std::string& role) {
  std::string out = role;
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

}  // namespace

ChatFormat detect_chat_format(std::string_view jinja) {
  if (jinja.find("<|start_header_id|>") != std::string_view::npos) return ChatFormat::Llama3;
  if (jinja.find("<|im_start|>") != std::string_view::npos) return ChatFormat::ChatML;
  if (jinja.find("[INST]") != std::string_view::npos) return ChatFormat::Llama2;
  return ChatFormat::Plain;
}

std::string_view chat_format_name(ChatFormat format) {
  switch (format) {
    case ChatFormat::Llama2: return "llama-2";
    case ChatFormat::Llama3: return "llama-3";
    case ChatFormat::ChatML: return "chatml";
    case ChatFormat::Plain: return "plain";
  }
  return "plain";
}

std::vector<int32_t> render_chat(ChatFormat format, std::span<const ChatMessage> messages, const runtime::Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  if (tokenizer.bos_id() >= 0) ids.push_back(tokenizer.bos_id());
  switch (format) {
    case ChatFormat::Llama3: {
      static constexpr std::string_view kMarkers[] = {"<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
      for (const auto& m : messages)
        append(ids, "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>", kMarkers, tokenizer);
      append(ids, "<|start_header_id|>assistant<|end_header_id|>\n\n", kMarkers, tokenizer);
      return ids;
    }
    case ChatFormat::ChatML: {
      static constexpr std::string_view kMarkers[] = {"<|im_start|>", "<|im_end|>"};
      for (const auto& m : messages) append(ids, "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n", kMarkers, tokenizer);
      append(ids, "<|im_start|>assistant\n", kMarkers, tokenizer);
      return ids;
    }
    case ChatFormat::Llama2: {
      // [INST] user [/INST] reply </s><s>[INST] ...; a system message joins the first user turn.
      std::string system;
      bool first_turn = true;
      for (const auto& m : messages) {
        if (m.role == "system") {
          system = "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n";
        } else if (m.role == "user") {
          if (!first_turn && tokenizer.bos_id() >= 0) ids.push_back(tokenizer.bos_id());
          append(ids, "[INST] " + system + m.content + " [/INST]", {}, tokenizer);
          system.clear();
          first_turn = false;
        } else {
          append(ids, " " + m.content + " ", {}, tokenizer);
          if (tokenizer.eos_id() >= 0) ids.push_back(tokenizer.eos_id());
        }
      }
      return ids;
    }
    case ChatFormat::Plain: {
      std::string text;
      for (const auto& m : messages) text += capitalised(m.role) + ": " + m.content + "\n";
      append(ids, text + "Assistant:", {}, tokenizer);
      return ids;
    }
  }
  return ids;
}

std::vector<int32_t> end_of_turn_ids(ChatFormat format, const runtime::Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  const std::string_view marker = format == ChatFormat::Llama3 ? "<|eot_id|>" : format == ChatFormat::ChatML ? "<|im_end|>" : "";
  if (!marker.empty() && tokenizer.lookup(marker) >= 0) ids.push_back(tokenizer.lookup(marker));
  return ids;
}

}  // namespace snapstream::server::api
