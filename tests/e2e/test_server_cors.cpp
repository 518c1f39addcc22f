// `snapstream serve` and browser clients over real TCP: preflights answered without the API
// key, responses (whole and streamed) readable by admitted origins only.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;

namespace {
std::string header(const test::HttpReply& reply, const std::string& name) {
  const auto it = reply.headers.find(name);
  return it == reply.headers.end() ? std::string() : it->second;
}

const std::vector<std::string> kPreflight = {"Origin: http://ui.example", "Access-Control-Request-Method: POST",
                                             "Access-Control-Request-Headers: authorization, content-type"};
}  // namespace

TEST_CASE("serve admits the listed origins' preflights and responses, and no others", "[e2e][server][cors]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::ServerProcess server({"--model", (*models / "stories260K.gguf").string(), "--api-key", "k3y", "--allowed-origins",
                              "http://ui.example,http://other.example"});
  const auto preflight = test::http_call(server.port(), "OPTIONS", "/v1/chat/completions", "", kPreflight);
  CHECK(preflight.status == 204);
  CHECK(header(preflight, "access-control-allow-origin") == "http://ui.example");
  CHECK(header(preflight, "access-control-allow-headers") == "authorization, content-type");
  CHECK(header(preflight, "access-control-allow-methods").find("POST") != std::string::npos);
  CHECK(header(preflight, "content-length").empty());

  const auto stranger = test::http_call(server.port(), "OPTIONS", "/v1/chat/completions", "",
                                        {"Origin: http://evil.example", "Access-Control-Request-Method: POST"});
  // Not a preflight this server answers: it goes to the API like any request, keyless, so 401.
  CHECK(stranger.status == 401);
  CHECK(header(stranger, "access-control-allow-origin").empty());

  const std::string body = R"({"prompt": "Once", "max_tokens": 3})";
  const auto whole = test::http_call(server.port(), "POST", "/v1/completions", body, {"Origin: http://other.example", "Authorization: Bearer k3y"});
  CHECK(whole.status == 200);
  CHECK(header(whole, "access-control-allow-origin") == "http://other.example");
  CHECK(header(whole, "vary") == "Origin");
  // An error is readable too, so a page can show why it was refused.
  const auto no_key = test::http_call(server.port(), "POST", "/v1/completions", body, {"Origin: http://ui.example"});
  CHECK(no_key.status == 401);
  CHECK(header(no_key, "access-control-allow-origin") == "http://ui.example");
  const auto streamed = test::http_call(server.port(), "POST", "/v1/completions",
                                        R"({"prompt": "Once", "max_tokens": 3, "stream": true})",
                                        {"Origin: http://ui.example", "Authorization: Bearer k3y"});
  CHECK(streamed.status == 200);
  CHECK(header(streamed, "access-control-allow-origin") == "http://ui.example");
  CHECK(test::sse_events(streamed.body).back() == "[DONE]");
  const auto elsewhere = test::http_call(server.port(), "POST", "/v1/completions", body, {"Origin: http://evil.example", "Authorization: Bearer k3y"});
  CHECK(elsewhere.status == 200);
  CHECK(header(elsewhere, "access-control-allow-origin").empty());
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}

TEST_CASE("serve admits any origin by default, as vLLM and llama.cpp's server do, and none with 'none'", "[e2e][server][cors]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  for (const bool off : {false, true}) {
    std::vector<std::string> args{"--model", (*models / "stories260K.gguf").string()};
    if (off) args.insert(args.end(), {"--allowed-origins", "none"});
    test::ServerProcess server(args);
    const auto preflight = test::http_call(server.port(), "OPTIONS", "/v1/models", "", kPreflight);
    const auto models_list = test::http_call(server.port(), "GET", "/v1/models", "", {"Origin: http://ui.example"});
    CHECK(models_list.status == 200);
    if (off) {
      CHECK(preflight.status == 405);
      CHECK(header(models_list, "access-control-allow-origin").empty());
    } else {
      CHECK(preflight.status == 204);
      CHECK(header(models_list, "access-control-allow-origin") == "*");
      CHECK(header(models_list, "vary").empty());
    }
    CHECK(server.stop() == 0);
  }
}
