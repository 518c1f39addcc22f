// The OpenAI shapes of a completion's answer, apart from how it is sent: whole response bodies,
// stream chunks, the two shapes of logprobs (chat and completions), usage, and SnapStream's
// report of the emulated device's timings. Pure functions of their arguments.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "runtime/request_stream.h"
#include "runtime/step_clock.h"
#include "runtime/tokenizer.h"
#include "server/api/completion_request.h"

namespace snapstream::server::api {

// What every body and chunk of one answer carries.
struct AnswerHeader {
  Endpoint endpoint = Endpoint::Completions;
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;

  bool chat() const { return endpoint == Endpoint::Chat; }
};

// A header with a fresh random id and the current time.
AnswerHeader new_answer_header(Endpoint endpoint, std::string model);

// A stream chunk holding `choices`.
nlohmann::json stream_chunk(const AnswerHeader& header, nlohmann::json choices);
// The first streamed choice, before any token: the assistant's role (chat), or the echoed prompt.
nlohmann::json opening_choice(const AnswerHeader& header, size_t index, const std::string& prompt_text);
// A streamed choice with the text since the last one; `finish_reason` once it is done.
nlohmann::json stream_choice(const AnswerHeader& header, size_t index, const std::string& text, nlohmann::json logprobs,
                             const std::optional<std::string>& finish_reason);
// A whole choice of a non-streamed body.
nlohmann::json whole_choice(const AnswerHeader& header, size_t index, const std::string& text, nlohmann::json logprobs,
                            const std::string& finish_reason);
// A non-streamed body.
nlohmann::json response_body(const AnswerHeader& header, nlohmann::json choices, nlohmann::json usage);

nlohmann::json usage_json(int64_t prompt_tokens, int64_t completion_tokens);

// The logprobs of `events`, which follow the token `previous`: chat's {"content": [...]}, or the
// completions' parallel arrays, whose text offsets count on from `text_offset` (advanced).
nlohmann::json logprobs_json(const AnswerHeader& header, const runtime::Tokenizer& tokenizer, std::span<const runtime::TokenEvent> events,
                             int32_t previous, int64_t& text_offset);
// Appends the logprobs of later events to those of earlier ones (null: none yet).
void append_logprobs(nlohmann::json& into, const nlohmann::json& more);

// A request's timings on the emulated device's clock.
struct EmulatedTimings {
  double submitted = -1;     // device time when the request was submitted
  double first_token = -1;   // the earliest first token of its choices; < 0: none
  double last_token = -1;
  int64_t tokens = 0;        // generated, over all choices
  int64_t choices = 0;
};
// What the emulated device is and the request's timings on it; a proxy says which model its
// timings are.
nlohmann::json emulation_json(const runtime::EmulatedFootprint& device, const EmulatedTimings& timings);

// JSON text, with invalid UTF-8 replaced rather than refused.
std::string dump(const nlohmann::json& value);

}  // namespace snapstream::server::api
