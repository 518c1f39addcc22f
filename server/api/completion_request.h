// The body of POST /v1/completions and /v1/chat/completions, parsed and checked: every field
// has the right type and range, or an ApiError (400) names it. Unknown fields are ignored and
// named in ignored_fields.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sampler.h"
#include "runtime/tokenizer.h"
#include "server/api/chat_template.h"

namespace snapstream::server::api {

enum class Endpoint { Completions, Chat };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::Completions;
  std::string model;                          // as asked; empty when not given
  std::vector<std::vector<int32_t>> prompts;  // completions may batch prompts
  int64_t n = 1;                              // choices per prompt, each sampled with its own seed
  int64_t max_tokens = 16;                    // per prompt; already within the context
  runtime::SamplingParams sampling;
  std::vector<std::string> stop;              // stop strings, never returned
  int64_t top_logprobs = -1;                  // alternatives per token to report; -1: no logprobs
  bool echo = false;                          // completions: return the prompt before the text
  bool ignore_eos = false;                    // as vLLM's and llama.cpp's servers: only max_tokens or a stop string ends
  bool stream = false;
  bool include_usage = false;                 // stream_options.include_usage
  std::vector<std::string> ignored_fields;    // in the body but not read: for the server's log
};

struct ParseContext {
  const runtime::Tokenizer& tokenizer;
  int64_t context_length;
  ChatTemplate chat_template;
};

// The body as a JSON object; ApiError (400) when it is not valid JSON or not an object.
nlohmann::json parse_json_object(std::string_view body);

// Throws ApiError (400) for malformed JSON and for any field of the wrong type or range, a
// prompt that does not fit the context, or an empty messages array.
CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint, const ParseContext& context);

}  // namespace snapstream::server::api
