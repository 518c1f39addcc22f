// Request bodies: defaults, each field's type and range, and errors that name the field.
#include <catch2/catch.hpp>

#include "runtime/model.h"
#include "server/api/api_error.h"
#include "server/api/completion_request.h"
#include "tests/support/stories_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;
using namespace snapstream::server::api;

TEST_CASE("completion requests get OpenAI's defaults and keep what they ask for", "[completion_request]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const ParseContext context{model->tokenizer, 512, {ChatFormat::Plain}};

  const auto plain = parse_completion_request(R"({"prompt": "Once upon a time", "unknown_field": [1]})", Endpoint::Completions, context);
  CHECK(plain.prompts == std::vector<std::vector<int32_t>>{{1, 403, 407, 261, 378}});
  CHECK(plain.max_tokens == 16);
  CHECK(plain.sampling.temperature == 1.0f);
  CHECK(plain.top_logprobs == -1);
  CHECK_FALSE(plain.stream);

  const auto full = parse_completion_request(
      R"({"model": "m", "prompt": [[1, 2], "hi"], "max_tokens": 5, "temperature": 0, "top_p": 0.5, "top_k": -1,
          "seed": -3, "stop": "x", "logprobs": 2, "echo": false, "stream": true, "stream_options": {"include_usage": true},
          "n": 1, "user": "u", "ignore_eos": true})",
      Endpoint::Completions, context);
  CHECK(full.model == "m");
  CHECK(full.prompts.size() == 2);
  CHECK(full.prompts[0] == std::vector<int32_t>{1, 2});
  CHECK(full.max_tokens == 5);
  CHECK(full.sampling.top_k == 0);
  CHECK(full.sampling.seed == static_cast<uint64_t>(-3));
  CHECK(full.stop == std::vector<std::string>{"x"});
  CHECK(full.top_logprobs == 2);
  CHECK_FALSE(full.echo);
  CHECK(full.ignore_eos);
  CHECK_FALSE(plain.ignore_eos);
  CHECK(full.include_usage);

  const auto chat = parse_completion_request(R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3,
                                                 "max_completion_tokens": 7, "logprobs": true})",
                                             Endpoint::Chat, context);
  CHECK(chat.max_tokens == 7);
  CHECK(chat.top_logprobs == 0);
  const auto chat_default = parse_completion_request(R"({"messages": [{"role": "user", "content": "Hi"}]})", Endpoint::Chat, context);
  CHECK(chat_default.max_tokens == 512 - static_cast<int64_t>(chat_default.prompts[0].size()));
}

TEST_CASE("a bad field is refused with its name", "[completion_request]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const ParseContext context{model->tokenizer, 512, {ChatFormat::Plain}};
  auto param_of = [&](const std::string& body, Endpoint endpoint = Endpoint::Completions) {
    try {
      parse_completion_request(body, endpoint, context);
    } catch (const ApiError& e) {
      CHECK(e.status() == 400);
      return e.param();
    }
    FAIL("accepted: " << body);
    return std::string();
  };
  CHECK(param_of(R"({"prompt": "a", "max_tokens": -1})") == "max_tokens");
  CHECK(param_of(R"({"prompt": "a", "temperature": "x"})") == "temperature");
  CHECK(param_of(R"({"prompt": "a", "top_p": 0})") == "top_p");
  CHECK(param_of(R"({"prompt": [600]})") == "prompt");
  CHECK(param_of(R"({"prompt": "a", "n": 129})") == "n");
  CHECK(param_of(R"({"messages": [{"role": "user"}]})", Endpoint::Chat) == "messages[0].content");
  CHECK(param_of(R"({"messages": []})", Endpoint::Chat) == "messages");
  CHECK(param_of("{\"prompt\": \"a\", \"seed\": 1.5}") == "seed");
  CHECK(param_of(R"({"prompt": "a", "ignore_eos": "yes"})") == "ignore_eos");
  CHECK(param_of(R"({"prompt": "a", "stream_options": {"include_usage": true}})") == "stream_options");
  CHECK(param_of(R"({"prompt": "a", "stream": false, "stream_options": {}})") == "stream_options");
  CHECK(param_of(R"({"prompt": "a", "stream": true, "stream_options": 1})") == "stream_options");
  CHECK(param_of(R"([])").empty());
  // Found by fuzz_completion_request: a number past a double's range is refused, not a crash.
  CHECK(param_of("1E111111111111111111111111111").empty());
  CHECK(param_of(R"({"prompt": "a", "temperature": 1E400})").empty());
}
