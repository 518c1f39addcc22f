// Before the model is loaded every request is answered 503 with a Retry-After header.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/api/api_server.h"

using namespace snapstream::server;

namespace {
// Keeps what a handler answered.
class RecordingResponder final : public http::Responder {
 public:
  void send(int s, std::string type, std::string b, http::HeaderList h) override {
    status = s;
    content_type = std::move(type);
    body = std::move(b);
    headers = std::move(h);
  }
  void begin_stream(int s, std::string, http::HeaderList) override { status = s; }
  void write(std::string data) override { body += data; }
  void end_stream() override {}
  void on_disconnect(std::function<void()>) override {}

  int status = 0;
  std::string content_type, body;
  http::HeaderList headers;
};
}  // namespace

TEST_CASE("requests get 503 while the model loads", "[serving_handler]") {
  api::ServingHandler handler;
  for (const char* target : {"/health", "/v1/completions", "/metrics"}) {
    http::Request request{boost::beast::http::verb::get, target, 11};
    auto responder = std::make_shared<RecordingResponder>();
    handler.handle(request, responder);
    CHECK(responder->status == 503);
    CHECK(responder->content_type == "application/json");
    CHECK(nlohmann::json::parse(responder->body).at("error").at("message") == "the model is still loading");
    CHECK(responder->headers == http::HeaderList{{"Retry-After", "1"}});
  }
}
