// OpenAI conformance of request fields, as a table of field × value → accepted or 400 naming
// the field. The values follow OpenAI's API reference for /v1/completions and
// /v1/chat/completions: the types and ranges it documents, and for fields whose output this
// server does not produce (tools, JSON modes, best_of, suffix), a refusal instead of silence.
// vLLM's extras (min_p, repetition_penalty) take vLLM's ranges.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "server/api/api_error.h"
#include "server/api/completion_request.h"
#include "tests/support/stories_model.h"

using namespace snapstream;
using namespace snapstream::server::api;

namespace {

struct Case {
  Endpoint endpoint;
  std::string field;
  std::string value;  // JSON text
  int status;         // 200: accepted; 400: refused with `field` as the error's param
};

constexpr auto C = Endpoint::Completions;
constexpr auto Chat = Endpoint::Chat;

const std::vector<Case> kCases = {
    // Sampling, on both endpoints.
    {C, "temperature", "0", 200}, {C, "temperature", "2", 200}, {C, "temperature", "2.01", 400}, {C, "temperature", "-0.1", 400},
    {C, "temperature", "\"1\"", 400}, {C, "temperature", "null", 200},
    {C, "top_p", "1", 200}, {C, "top_p", "0.5", 200}, {C, "top_p", "0", 400}, {C, "top_p", "1.01", 400}, {C, "top_p", "true", 400},
    {C, "frequency_penalty", "0", 200}, {C, "frequency_penalty", "-2", 200}, {C, "frequency_penalty", "2", 200},
    {C, "frequency_penalty", "2.5", 400}, {C, "frequency_penalty", "\"high\"", 400},
    {Chat, "presence_penalty", "1.5", 200}, {Chat, "presence_penalty", "-2.01", 400}, {Chat, "presence_penalty", "[]", 400},
    {C, "logit_bias", "{}", 200}, {C, "logit_bias", R"({"5": -100, "7": 100})", 200}, {C, "logit_bias", R"({"5": 101})", 400},
    {C, "logit_bias", R"({"x": 1})", 400}, {C, "logit_bias", R"({"-1": 1})", 400}, {C, "logit_bias", R"({"512": 1})", 400},
    {C, "logit_bias", R"({"5": "1"})", 400}, {C, "logit_bias", "[1]", 400}, {Chat, "logit_bias", R"({"1": 0.5})", 200},
    // vLLM's extras.
    {C, "min_p", "0", 200}, {C, "min_p", "1", 200}, {Chat, "min_p", "0.05", 200}, {C, "min_p", "1.1", 400}, {C, "min_p", "-0.1", 400},
    {C, "min_p", "\"0.1\"", 400},
    {C, "repetition_penalty", "1.1", 200}, {Chat, "repetition_penalty", "0.8", 200}, {C, "repetition_penalty", "0", 400},
    {C, "repetition_penalty", "-1", 400}, {C, "repetition_penalty", "101", 400}, {C, "repetition_penalty", "true", 400},
    // Both endpoints: JSON modes are refused, plain text accepted.
    {C, "response_format", R"({"type": "text"})", 200}, {C, "response_format", R"({"type": "json_schema"})", 400},
    {C, "seed", "-5", 200}, {C, "seed", "1.5", 400}, {C, "seed", "\"7\"", 400},
    {C, "n", "1", 200}, {C, "n", "2", 200}, {Chat, "n", "128", 200}, {C, "n", "129", 400}, {C, "n", "0", 400},
    {Chat, "n", "1.0", 400},
    {C, "stop", "\"\\n\"", 200}, {C, "stop", R"(["a", "b"])", 200}, {C, "stop", "[1]", 400}, {C, "stop", "{}", 400},
    {C, "max_tokens", "0", 200}, {C, "max_tokens", "512", 200}, {C, "max_tokens", "513", 400}, {C, "max_tokens", "-1", 400},
    {C, "max_tokens", "1.5", 400},
    {Chat, "max_completion_tokens", "5", 200}, {Chat, "max_completion_tokens", "\"5\"", 400},
    {C, "stream", "false", 200}, {C, "stream", "1", 400},
    {C, "user", "\"u-1\"", 200}, {C, "user", "7", 400},
    {C, "model", "7", 400},
    // Completions only.
    {C, "logprobs", "0", 200}, {C, "logprobs", "5", 200}, {C, "logprobs", "21", 400}, {C, "logprobs", "true", 400},
    {C, "echo", "true", 200}, {C, "echo", "\"yes\"", 400},
    {C, "best_of", "1", 200}, {C, "best_of", "2", 400}, {C, "best_of", "0", 400},
    {C, "suffix", "\"\"", 200}, {C, "suffix", "\" the end\"", 400}, {C, "suffix", "3", 400},
    // Chat only.
    {Chat, "logprobs", "true", 200}, {Chat, "logprobs", "1", 400},
    {Chat, "response_format", R"({"type": "text"})", 200}, {Chat, "response_format", R"({"type": "json_object"})", 400},
    {Chat, "response_format", "\"json\"", 400}, {Chat, "response_format", "{}", 400},
    {Chat, "tools", "[]", 200}, {Chat, "tools", R"([{"type": "function", "function": {"name": "f"}}])", 400}, {Chat, "tools", "{}", 400},
    {Chat, "tool_choice", "\"none\"", 200}, {Chat, "tool_choice", "\"auto\"", 400},
    {Chat, "parallel_tool_calls", "false", 200}, {Chat, "parallel_tool_calls", "\"no\"", 400},
};

std::string body_with(const Case& c) {
  const std::string base = c.endpoint == Chat ? R"("messages": [{"role": "user", "content": "Hi"}])" : R"("prompt": "Once")";
  return "{" + base + ", \"" + c.field + "\": " + c.value + "}";
}

}  // namespace

TEST_CASE("each request field takes OpenAI's values and refuses others with 400 naming it", "[completion_request][conformance]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const ParseContext context{model->tokenizer, 512, {ChatFormat::Plain}};
  for (const auto& c : kCases) {
    const std::string body = body_with(c);
    INFO(body);
    int status = 200;
    std::string param;
    try {
      parse_completion_request(body, c.endpoint, context);
    } catch (const ApiError& e) {
      status = e.status();
      param = e.param();
    }
    CHECK(status == c.status);
    if (c.status == 400) CHECK(param == c.field);
  }
}

TEST_CASE("message fields take OpenAI's types", "[completion_request][conformance]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const ParseContext context{model->tokenizer, 512, {ChatFormat::Plain}};
  CHECK_NOTHROW(parse_completion_request(R"({"messages": [{"role": "user", "content": "Hi", "name": "ann"}]})", Chat, context));
  CHECK_THROWS_AS(parse_completion_request(R"({"messages": [{"role": "user", "content": "Hi", "name": 3}]})", Chat, context), ApiError);
  const auto parsed = parse_completion_request(R"({"prompt": "a", "frequency_penalty": 0.5, "presence_penalty": -1, "logit_bias": {"9": 3}})", C,
                                               context);
  CHECK(parsed.sampling.frequency_penalty == 0.5f);
  CHECK(parsed.sampling.presence_penalty == -1.0f);
  REQUIRE(parsed.sampling.logit_bias.size() == 1);
  CHECK(parsed.sampling.logit_bias[0] == std::pair<int32_t, float>{9, 3.0f});
}

TEST_CASE("min_p and repetition_penalty reach the sampler; unknown fields are named, not refused", "[completion_request][conformance]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const ParseContext context{model->tokenizer, 512, {ChatFormat::Plain}};
  const auto parsed = parse_completion_request(R"({"prompt": "a", "min_p": 0.05, "repetition_penalty": 1.2, "foo": 1, "mirostat": 2})",
                                               C, context);
  CHECK(parsed.sampling.min_p == 0.05f);
  CHECK(parsed.sampling.repetition_penalty == 1.2f);
  CHECK(parsed.ignored_fields == std::vector<std::string>{"foo", "mirostat"});
  // Each endpoint's own fields are unknown to the other.
  const auto chat = parse_completion_request(
      R"({"messages": [{"role": "user", "content": "Hi"}], "max_completion_tokens": 3, "echo": true, "top_logprobs": null})", Chat,
      context);
  CHECK(chat.ignored_fields == std::vector<std::string>{"echo"});
  const auto completion = parse_completion_request(R"({"prompt": "a", "max_completion_tokens": 3, "echo": true})", C, context);
  CHECK(completion.ignored_fields == std::vector<std::string>{"max_completion_tokens"});
  CHECK(completion.max_tokens == 16);
}

TEST_CASE("echo with logprobs, which asks for the prompt's log-probabilities, is refused naming echo", "[completion_request][conformance]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const ParseContext context{model->tokenizer, 512, {ChatFormat::Plain}};
  CHECK_NOTHROW(parse_completion_request(R"({"prompt": "a", "echo": true, "logprobs": null})", C, context));
  CHECK_NOTHROW(parse_completion_request(R"({"prompt": "a", "echo": false, "logprobs": 1})", C, context));
  try {
    parse_completion_request(R"({"prompt": "a", "echo": true, "logprobs": 0, "max_tokens": 0})", C, context);
    FAIL("accepted");
  } catch (const ApiError& e) {
    CHECK(e.status() == 400);
    CHECK(e.param() == "echo");
  }
}
