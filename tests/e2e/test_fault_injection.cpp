// Engine faults made on purpose (SNAPSTREAM_INJECT_FAULT, in test builds only), against the real
// server: a failed decode ends its requests with an error and the engine carries on; a fault of
// the engine itself ends every request it holds, turns /health to 503 and refuses new work,
// and the server still exits cleanly. Nothing may hang.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/http_client.h"
#include "tests/support/metric_sample.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using json = nlohmann::json;

namespace {

std::string completion(int max_tokens, bool stream) {
  return json{{"prompt", "Once upon a time"}, {"max_tokens", max_tokens}, {"temperature", 0}, {"stream", stream}}.dump();
}

// The error object of an SSE stream's last event before [DONE]; null when the stream has none.
json stream_error(const std::string& body) {
  const auto events = test::sse_events(body);
  if (events.size() < 2 || events.back() != "[DONE]") return nullptr;
  const json last = json::parse(events[events.size() - 2]);
  return last.contains("error") ? last.at("error") : json(nullptr);
}

double errors_counted(int port) {
  return test::metric_sample(test::http_call(port, "GET", "/metrics").body, "snapstream:request_success_total",
                             "finished_reason=\"error\"");
}

}  // namespace

TEST_CASE("a failed decode step ends its requests with an error and the engine carries on", "[e2e][fault]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const std::string model = (*models / "stories260K.gguf").string();

  SECTION("streaming: the error is the stream's last event") {
    test::ServerProcess server({"--model", model}, {"SNAPSTREAM_INJECT_FAULT=decode:3"});
    const auto failed = test::http_call(server.port(), "POST", "/v1/completions", completion(40, true));
    CHECK(failed.status == 200);  // the headers went out before the fault
    const json error = stream_error(failed.body);
    INFO(failed.body);
    REQUIRE(!error.is_null());
    CHECK(error.at("code") == 500);
    CHECK(error.at("message").get<std::string>().find("injected fault at engine step 3") != std::string::npos);
    CHECK(errors_counted(server.port()) == 1.0);
    CHECK(test::http_call(server.port(), "GET", "/health").status == 200);
    const auto after = test::http_call(server.port(), "POST", "/v1/completions", completion(20, false));
    CHECK(after.status == 200);
    CHECK(json::parse(after.body).at("usage").at("completion_tokens") == 20);
    const std::string metrics = test::http_call(server.port(), "GET", "/metrics").body;
    CHECK(test::metric_sample(metrics, "snapstream:num_requests_running") == 0.0);
    CHECK(test::metric_sample(metrics, "snapstream:kv_cache_usage_perc") == 0.0);
    CHECK(server.stop() == 0);
  }
  SECTION("not streaming: the request answers 500") {
    test::ServerProcess server({"--model", model}, {"SNAPSTREAM_INJECT_FAULT=decode:3"});
    const auto failed = test::http_call(server.port(), "POST", "/v1/completions", completion(40, false));
    INFO(failed.body);
    CHECK(failed.status == 500);
    CHECK(json::parse(failed.body).at("error").at("type") == "server_error");
    CHECK(errors_counted(server.port()) == 1.0);
    CHECK(test::http_call(server.port(), "POST", "/v1/completions", completion(20, false)).status == 200);
    CHECK(server.stop() == 0);
  }
}

TEST_CASE("a fault of the engine ends every request it holds, health turns 503, and the server exits cleanly", "[e2e][fault]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  // One slot: the second request waits behind the first until the engine fails, unless the
  // engine failed before it arrived, when submitting it is refused; either way it ends.
  test::ServerProcess server({"--model", (*models / "stories260K.gguf").string(), "--slots", "1"},
                             {"SNAPSTREAM_INJECT_FAULT=engine:150"});
  test::TcpConnection streaming(server.port());
  const std::string body = completion(300, true);
  streaming.send("POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body);
  const auto first = streaming.first_events(1);
  REQUIRE(first.size() == 1);
  const auto waiting = test::http_call(server.port(), "POST", "/v1/completions", completion(20, false));
  INFO(waiting.body);
  CHECK((waiting.status == 500 || waiting.status == 503));
  const auto whole = streaming.read_reply();  // the stream from its start to its end
  INFO(whole.body);
  const json error = stream_error(whole.body);
  REQUIRE(!error.is_null());
  CHECK(error.at("message").get<std::string>().find("the engine failed: injected fault at engine step 150") != std::string::npos);

  const auto health = test::http_call(server.port(), "GET", "/health");
  CHECK(health.status == 503);
  const auto refused = test::http_call(server.port(), "POST", "/v1/completions", completion(5, false));
  CHECK(refused.status == 503);
  CHECK(errors_counted(server.port()) >= 1.0);
  const std::string metrics = test::http_call(server.port(), "GET", "/metrics").body;
  CHECK(test::metric_sample(metrics, "snapstream:num_requests_running") == 0.0);
  CHECK(test::metric_sample(metrics, "snapstream:num_requests_waiting") == 0.0);
  const int exit_code = server.stop();
  INFO(server.log());
  CHECK(exit_code == 0);
}
