// Bad requests against the real server: each kind gets its status and an OpenAI-style error
// body, and the server keeps serving good requests afterwards.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using json = nlohmann::json;

namespace {

constexpr const char* kKey = "Authorization: Bearer s3cret";

struct BadRequest {
  std::string name;
  std::string method;
  std::string target;
  std::string body;
  int status;
  std::vector<std::string> headers = {kKey};
};

std::string long_prompt() {
  json ids = json::array();
  for (int i = 0; i < 600; ++i) ids.push_back(300);
  return json{{"prompt", ids}}.dump();
}

}  // namespace

TEST_CASE("bad requests get the right status and error body, and the server carries on", "[e2e][server]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", (*models / "stories260K.gguf").string(), "--api-key", "s3cret", "--body-limit",
                              "65536"});
  const std::string c = "/v1/completions", chat = "/v1/chat/completions";
  const std::vector<BadRequest> cases = {
      {"malformed JSON", "POST", c, R"({"prompt": "a",})", 400},
      {"truncated JSON", "POST", c, R"({"prompt": "Once upon)", 400},
      {"empty body", "POST", c, "", 400},
      {"body not an object", "POST", c, "[1, 2, 3]", 400},
      {"missing prompt", "POST", c, R"({"max_tokens": 5})", 400},
      {"prompt of the wrong type", "POST", c, R"({"prompt": 42})", 400},
      {"empty prompt array", "POST", c, R"({"prompt": []})", 400},
      {"token id out of range", "POST", c, R"({"prompt": [99999]})", 400},
      {"negative token id", "POST", c, R"({"prompt": [-1]})", 400},
      {"max_tokens as a string", "POST", c, R"({"prompt": "a", "max_tokens": "10"})", 400},
      {"negative max_tokens", "POST", c, R"({"prompt": "a", "max_tokens": -5})", 400},
      {"huge max_tokens", "POST", c, R"({"prompt": "a", "max_tokens": 1e30})", 400},
      {"max_tokens past 64 bits", "POST", c, R"({"prompt": "a", "max_tokens": 99999999999999999999})", 400},
      {"negative temperature", "POST", c, R"({"prompt": "a", "temperature": -1})", 400},
      {"temperature as a string", "POST", c, R"({"prompt": "a", "temperature": "hot"})", 400},
      {"temperature too high", "POST", c, R"({"prompt": "a", "temperature": 5})", 400},
      {"top_p of zero", "POST", c, R"({"prompt": "a", "top_p": 0})", 400},
      {"top_p above one", "POST", c, R"({"prompt": "a", "top_p": 1.5})", 400},
      {"negative top_k", "POST", c, R"({"prompt": "a", "top_k": -5})", 400},
      {"n past 128", "POST", c, R"({"prompt": "a", "n": 129})", 400},
      {"n of zero", "POST", c, R"({"prompt": "a", "n": 0})", 400},
      {"stop as a number", "POST", c, R"({"prompt": "a", "stop": 5})", 400},
      {"stop array with a number", "POST", c, R"({"prompt": "a", "stop": ["x", 1]})", 400},
      {"stream as a string", "POST", c, R"({"prompt": "a", "stream": "yes"})", 400},
      {"stream_options not an object", "POST", c, R"({"prompt": "a", "stream": true, "stream_options": 1})", 400},
      {"too many logprobs", "POST", c, R"({"prompt": "a", "logprobs": 100})", 400},
      {"echo as a string", "POST", c, R"({"prompt": "a", "echo": "true"})", 400},
      {"ignore_eos as a number", "POST", c, R"({"prompt": "a", "ignore_eos": 1})", 400},
      {"fractional seed", "POST", c, R"({"prompt": "a", "seed": 1.5})", 400},
      {"user as a number", "POST", c, R"({"prompt": "a", "user": 7})", 400},
      {"invalid UTF-8", "POST", c, "{\"prompt\": \"bad \xff\xfe bytes\"}", 400},
      {"prompt beyond the context", "POST", c, long_prompt(), 400},
      {"unknown model", "POST", c, R"({"model": "gpt-9", "prompt": "a"})", 404},
      {"missing API key", "POST", c, R"({"prompt": "a"})", 401, {}},
      {"wrong API key", "POST", c, R"({"prompt": "a"})", 401, {"Authorization: Bearer s3crex"}},
      {"key without Bearer", "POST", c, R"({"prompt": "a"})", 401, {"Authorization: s3cret"}},
      {"empty messages", "POST", chat, R"({"messages": []})", 400},
      {"messages not an array", "POST", chat, R"({"messages": "hi"})", 400},
      {"unknown role", "POST", chat, R"({"messages": [{"role": "wizard", "content": "hi"}]})", 400},
      {"image content part", "POST", chat, R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", 400},
      {"top_logprobs without logprobs", "POST", chat, R"({"messages": [{"role": "user", "content": "hi"}], "top_logprobs": 2})", 400},
      {"max_completion_tokens negative", "POST", chat, R"({"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": -1})", 400},
      {"oversized body", "POST", c, R"({"prompt": ")" + std::string(100000, 'a') + R"("})", 413},
      {"unknown route", "POST", "/v1/embeddings", R"({"input": "a"})", 404},
      {"wrong method", "GET", c, "", 405},
      {"detokenize of bad ids", "POST", "/detokenize", R"({"tokens": [1, "x"]})", 400},
      {"tokenize with a non-boolean flag", "POST", "/tokenize", R"({"content": "a", "parse_special": "yes"})", 400},
  };
  REQUIRE(cases.size() >= 30);
  for (const auto& bad : cases) {
    INFO(bad.name);
    const auto reply = test::http_call(server.port(), bad.method, bad.target, bad.body, bad.headers);
    CHECK(reply.status == bad.status);
    const auto body = json::parse(reply.body, nullptr, false);
    REQUIRE(body.is_object());
    const auto& error = body.at("error");
    CHECK(error.at("message").is_string());
    CHECK(!error.at("message").get<std::string>().empty());
    CHECK(error.at("type").is_string());
    CHECK(error.contains("param"));
    CHECK(error.contains("code"));
    if (bad.status == 401) CHECK(error.at("type") == "authentication_error");
  }

  // Health and metrics stay open without the key; a good request still works.
  CHECK(test::http_call(server.port(), "GET", "/health", "", {}).status == 200);
  CHECK(test::http_call(server.port(), "GET", "/metrics", "", {}).status == 200);
  const auto good = test::http_call(server.port(), "POST", c, R"({"prompt": "Once upon a time", "max_tokens": 8})", {kKey});
  REQUIRE(good.status == 200);
  CHECK(json::parse(good.body).at("usage").at("completion_tokens") == 8);
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}
