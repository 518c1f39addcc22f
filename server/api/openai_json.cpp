// OpenAI response shapes for completions and chat.
#include "server/api/openai_json.h"

#include <chrono>
#include <random>

namespace snapstream::server::api {

using json = nlohmann::json;

AnswerHeader new_answer_header(Endpoint endpoint, std::string model) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  AnswerHeader header{endpoint, endpoint == Endpoint::Chat ? "chatcmpl-" : "cmpl-", 0, std::move(model)};
  for (int i = 0; i < 24; ++i) header.id += kHex[random() % 16];
  header.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return header;
}

json stream_chunk(const AnswerHeader& header, json choices) {
  return {{"id", header.id},
          {"object", header.chat() ? "chat.completion.chunk" : "text_completion"},
          {"created", header.created},
          {"model", header.model},
          {"choices", std::move(choices)}};
}

json opening_choice(const AnswerHeader& header, size_t index, const std::string& prompt_text) {
  if (header.chat())
    return {{"index", index}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  return {{"index", index}, {"text", prompt_text}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
}

json stream_choice(const AnswerHeader& header, size_t index, const std::string& text, json logprobs,
                   const std::optional<std::string>& finish_reason) {
  json choice = {{"index", index}, {"logprobs", std::move(logprobs)}, {"finish_reason", finish_reason ? json(*finish_reason) : json(nullptr)}};
  if (header.chat())
    choice["delta"] = text.empty() ? json::object() : json{{"content", text}};
  else
    choice["text"] = text;
  return choice;
}

json whole_choice(const AnswerHeader& header, size_t index, const std::string& text, json logprobs, const std::string& finish_reason) {
  json choice = {{"index", index}, {"logprobs", std::move(logprobs)}, {"finish_reason", finish_reason}};
  if (header.chat())
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  return choice;
}

json response_body(const AnswerHeader& header, json choices, json usage) {
  return {{"id", header.id},
          {"object", header.chat() ? "chat.completion" : "text_completion"},
          {"created", header.created},
          {"model", header.model},
          {"choices", std::move(choices)},
          {"usage", std::move(usage)}};
}

json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}, {"total_tokens", prompt_tokens + completion_tokens}};
}

json logprobs_json(const AnswerHeader& header, const runtime::Tokenizer& tokenizer, std::span<const runtime::TokenEvent> events,
                   int32_t previous, int64_t& text_offset) {
  auto bytes_of = [](const std::string& s) {
    json b = json::array();
    for (const unsigned char c : s) b.push_back(c);
    return b;
  };
  if (header.chat()) {
    json content = json::array();
    for (const auto& e : events) {
      const std::string token = tokenizer.token_bytes(e.id, previous);
      json top = json::array();
      for (const auto& t : e.top) {
        const std::string alt = tokenizer.token_bytes(t.id, previous);
        top.push_back({{"token", alt}, {"logprob", t.logprob}, {"bytes", bytes_of(alt)}});
      }
      content.push_back({{"token", token}, {"logprob", e.logprob}, {"bytes", bytes_of(token)}, {"top_logprobs", top}});
      previous = e.id;
    }
    return {{"content", content}};
  }
  json tokens = json::array(), values = json::array(), tops = json::array(), offsets = json::array();
  for (const auto& e : events) {
    const std::string token = tokenizer.token_bytes(e.id, previous);
    tokens.push_back(token);
    offsets.push_back(text_offset);
    text_offset += static_cast<int64_t>(token.size());
    values.push_back(e.logprob);
    json top = json::object();
    for (const auto& t : e.top) top[tokenizer.token_bytes(t.id, previous)] = t.logprob;
    tops.push_back(top);
    previous = e.id;
  }
  return {{"tokens", tokens}, {"token_logprobs", values}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

void append_logprobs(json& into, const json& more) {
  if (into.is_null()) {
    into = more;
    return;
  }
  for (auto& [key, value] : more.items())
    for (const auto& item : value) into[key].push_back(item);
}

json emulation_json(const runtime::EmulatedFootprint& device, const EmulatedTimings& t) {
  json e = {{"device", device.description}, {"system", device.system}, {"proxy", device.proxy}, {"tp", device.tp}};
  if (device.proxy) e["priced_as_model"] = device.model;
  if (t.first_token >= 0) {
    e["time_to_first_token_seconds"] = t.first_token - t.submitted;
    e["device_seconds"] = t.last_token - t.submitted;
    // Each choice's first token comes from prefill; the rest are decode steps.
    if (t.last_token > t.first_token && t.tokens > 1)
      e["tokens_per_second"] = static_cast<double>(t.tokens - t.choices) / (t.last_token - t.first_token);
  }
  return e;
}

std::string dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace snapstream::server::api
